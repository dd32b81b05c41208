// The guest's fetch (WHATWG subset): Headers, Request, Response, fetch.
// Run once in a JavaScript runtime given a network policy
// (cc_runtime_set_net); embedded into libcodecage by net_guest.c. Every
// request is one call of the reserved host tool, which checks it and
// performs it on the host: nothing here is trusted by the host.
(() => {
  'use strict';
  const net = tools.__codecage_net;
  delete tools.__codecage_net;
  delete globalThis.__codecage_net;
  const define = (name, value) => Object.defineProperty(globalThis, name,
    { value, writable: true, configurable: true, enumerable: false });

  const utf8Encode = (s) => {
    s = String(s);
    const out = [];
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d < 0xe000) { c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00); i++; }
        else c = 0xfffd;
      } else if (c >= 0xd800 && c < 0xe000) c = 0xfffd;
      if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
      else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
    return new Uint8Array(out);
  };
  // UTF-8 to a string, U+FFFD for each bad sequence; code units are
  // flushed with String.fromCharCode in chunks (string concatenation per
  // character is slow in QuickJS).
  const latin1 = (b) => {
    const parts = [];
    for (let i = 0; i < b.length; i += 8192)
      parts.push(String.fromCharCode.apply(null, b.subarray(i, i + 8192)));
    return parts.join('');
  };
  const utf8Decode = (b) => {
    b = b || new Uint8Array(0);
    // Valid UTF-8 (nearly always): the engine's own decoder, in C.
    try { return decodeURIComponent(escape(latin1(b))); } catch (e) { /* below */ }
    const parts = [];
    let units = [];
    const flush = () => { parts.push(String.fromCharCode.apply(null, units)); units = []; };
    for (let i = 0; i < b.length;) {
      const c = b[i];
      if (c < 0x80) { units.push(c); i++; if (units.length >= 8192) flush(); continue; }
      const n = c >= 0xc2 && c < 0xe0 ? 1 : c >= 0xe0 && c < 0xf0 ? 2 : c >= 0xf0 && c < 0xf5 ? 3 : -1;
      let cp = n === 1 ? c & 31 : n === 2 ? c & 15 : c & 7;
      let ok = n > 0 && i + n < b.length + 0 && i + n <= b.length - 1;
      for (let k = 1; ok && k <= n; k++) {
        const d = b[i + k];
        if ((d & 0xc0) !== 0x80) ok = false; else cp = (cp << 6) | (d & 63);
      }
      if (ok && ((n === 2 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) || (n === 3 && (cp < 0x10000 || cp > 0x10ffff)))) ok = false;
      if (!ok) { units.push(0xfffd); i++; }
      else {
        if (cp >= 0x10000) { cp -= 0x10000; units.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff)); }
        else units.push(cp);
        i += n + 1;
      }
      if (units.length >= 8192) flush();
    }
    flush();
    return parts.join('');
  };

  const norm = (name) => {
    name = String(name);
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) throw new TypeError(`invalid header name: ${JSON.stringify(name)}`);
    return name.toLowerCase();
  };
  const normValue = (v) => {
    v = String(v).replace(/^[\t ]+|[\t ]+$/g, '');
    if (/[\r\n\0]/.test(v)) throw new TypeError('invalid header value: it has a CR, LF or NUL');
    return v;
  };

  class Headers {
    #list = [];
    constructor(init) {
      if (init == null) return;
      if (init instanceof Headers) { for (const [k, v] of init) this.append(k, v); return; }
      if (typeof init[Symbol.iterator] === 'function') {
        for (const p of init) {
          const a = [...p];
          if (a.length !== 2) throw new TypeError('Headers: each pair needs a name and a value');
          this.append(a[0], a[1]);
        }
        return;
      }
      for (const k of Object.keys(init)) this.append(k, init[k]);
    }
    append(k, v) { this.#list.push([norm(k), normValue(v)]); }
    set(k, v) { k = norm(k); v = normValue(v); this.#list = this.#list.filter((p) => p[0] !== k); this.#list.push([k, v]); }
    get(k) { k = norm(k); const vs = this.#list.filter((p) => p[0] === k).map((p) => p[1]); return vs.length ? vs.join(', ') : null; }
    has(k) { k = norm(k); return this.#list.some((p) => p[0] === k); }
    delete(k) { k = norm(k); this.#list = this.#list.filter((p) => p[0] !== k); }
    getSetCookie() { return this.#list.filter((p) => p[0] === 'set-cookie').map((p) => p[1]); }
    *entries() {
      const names = [...new Set(this.#list.map((p) => p[0]))].sort();
      for (const n of names) yield [n, this.get(n)];
    }
    keys() { return [...this.entries()].map((p) => p[0])[Symbol.iterator](); }
    values() { return [...this.entries()].map((p) => p[1])[Symbol.iterator](); }
    forEach(fn, self) { for (const [k, v] of this.entries()) fn.call(self, v, k, this); }
    [Symbol.iterator]() { return this.entries(); }
    get [Symbol.toStringTag]() { return 'Headers'; }
    static _raw(h) { return h.#list.map((p) => [p[0], p[1]]); }
  }

  const toBytes = (body) => {
    if (body == null) return null;
    if (typeof body === 'string') return utf8Encode(body);
    if (body instanceof ArrayBuffer) return new Uint8Array(body.slice(0));
    if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
    if (typeof URLSearchParams !== 'undefined' && body instanceof URLSearchParams) return utf8Encode(body.toString());
    return utf8Encode(String(body));
  };

  class Body {
    #bytes; #used = false;
    constructor(bytes) { this.#bytes = bytes; }
    get bodyUsed() { return this.#used; }
    #take() {
      if (this.#used) return Promise.reject(new TypeError('the body was already read'));
      this.#used = true;
      return Promise.resolve(this.#bytes || new Uint8Array(0));
    }
    bytes() { return this.#take().then((b) => new Uint8Array(b)); }
    arrayBuffer() { return this.#take().then((b) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)); }
    text() { return this.#take().then(utf8Decode); }
    json() { return this.text().then(JSON.parse); }
    static _peek(b) { return b.#bytes; }
  }

  class Request extends Body {
    constructor(input, init = {}) {
      const base = input instanceof Request ? input : null;
      const body = init.body !== undefined ? toBytes(init.body) : base ? Body._peek(base) : null;
      super(body);
      this.url = base ? base.url : String(input);
      this.method = String(init.method || (base ? base.method : 'GET')).toUpperCase();
      this.headers = new Headers(init.headers || (base ? base.headers : undefined));
      this.signal = init.signal || (base ? base.signal : null);
      this.redirect = init.redirect || 'follow';
      if (body && (this.method === 'GET' || this.method === 'HEAD')) throw new TypeError('a GET or HEAD request cannot have a body');
      if (typeof init.body === 'string' && !this.headers.has('content-type')) this.headers.set('content-type', 'text/plain;charset=UTF-8');
    }
    get [Symbol.toStringTag]() { return 'Request'; }
  }

  class Response extends Body {
    constructor(body = null, init = {}) {
      super(toBytes(body));
      this.status = init.status === undefined ? 200 : init.status;
      this.statusText = init.statusText === undefined ? '' : String(init.statusText);
      this.headers = new Headers(init.headers);
      this.ok = this.status >= 200 && this.status < 300;
      this.url = init._url || '';
      this.redirected = !!init._redirected;
      this.type = 'basic';
    }
    static json(data, init = {}) {
      const h = new Headers(init.headers);
      if (!h.has('content-type')) h.set('content-type', 'application/json');
      return new Response(JSON.stringify(data), { ...init, headers: h });
    }
    get [Symbol.toStringTag]() { return 'Response'; }
  }

  const abortError = (signal) => {
    if (signal && signal.reason !== undefined) return signal.reason;
    const e = new Error('the request was aborted');
    e.name = 'AbortError';
    return e;
  };

  // At most MAX_IN_FLIGHT requests wait on the host at once (the host
  // refuses calls past limits.max_pending_calls, 64 by default); the rest
  // queue here, so Promise.all over many fetches just works.
  const MAX_IN_FLIGHT = 32;
  let inFlight = 0;
  const queue = [];
  const slot = () => {
    if (inFlight < MAX_IN_FLIGHT) { inFlight++; return Promise.resolve(); }
    return new Promise((resolve) => queue.push(resolve));
  };
  const release = () => {
    const next = queue.shift();
    if (next) next(); else inFlight--;
  };

  function fetch(input, init = {}) {
    let req;
    try { req = new Request(input, init); } catch (e) { return Promise.reject(e); }
    const signal = req.signal;
    if (signal && signal.aborted) return Promise.reject(abortError(signal));
    const sent = slot().then(() => net({ method: req.method, url: req.url,
      headers: Headers._raw(req.headers), body: Body._peek(req) })).finally(release);
    const answer = sent.then((r) => {
      if (r.error !== undefined) throw new TypeError(`fetch failed: ${r.error}`);
      return new Response(r.body, { status: r.status, statusText: r.statusText,
        headers: r.headers, _url: r.url, _redirected: r.redirected });
    });
    if (!signal || typeof signal.addEventListener !== 'function') return answer;
    return new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => reject(abortError(signal)));
      answer.then(resolve, reject);
    });
  }

  define('Headers', Headers);
  define('Request', Request);
  define('Response', Response);
  define('fetch', fetch);
})();
