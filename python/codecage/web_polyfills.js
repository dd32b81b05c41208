// codecage WEB_POLYFILLS: browser basics for QuickJS, run as bootstrap code.
// Never defines window or document. See _polyfills.py for the timer model:
// no real clock; callbacks run through Promise jobs in due-time order on a
// virtual clock.
(() => {
  'use strict';
  const g = globalThis;
  const define = (name, value) => {
    if (!(name in g)) {
      Object.defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });
    }
  };

  // ---- DOMException (structuredClone's DataCloneError) ----
  class DOMException extends Error {
    constructor(message = '', name = 'Error') {
      super(message);
      Object.defineProperty(this, 'name', { value: String(name), writable: true, configurable: true });
    }
  }
  define('DOMException', DOMException);

  // ---- timers ----
  let seq = 0;        // timer ids, and the tie-break for equal due times
  let now = 0;        // the virtual clock, ms
  let queued = false; // a tick is scheduled
  const timers = new Map(); // id -> {id, due, order, fn, args, interval}

  const next = () => {
    let best = null;
    for (const t of timers.values()) {
      if (!best || t.due < best.due || (t.due === best.due && t.order < best.order)) best = t;
    }
    return best;
  };
  const schedule = () => {
    if (queued || timers.size === 0) return;
    queued = true;
    Promise.resolve().then(tick);
  };
  const report = (e) => {
    if (g.console && typeof g.console.error === 'function') g.console.error('Uncaught', e);
  };
  function tick() {
    queued = false;
    const t = next();
    if (!t) return;
    if (t.due > now) now = t.due;
    if (t.interval === null) {
      timers.delete(t.id);
    } else {
      t.due = now + t.interval;
      t.order = ++seq;
    }
    try {
      t.fn.apply(g, t.args);
    } catch (e) {
      report(e);
    }
    schedule();
  }
  const delayOf = (ms) => {
    const d = Number(ms);
    return Number.isFinite(d) && d > 0 ? Math.floor(d) : 0;
  };
  const add = (fn, ms, args, repeat) => {
    if (typeof fn !== 'function') {
      throw new TypeError('setTimeout/setInterval need a function (string code is not supported)');
    }
    const id = ++seq;
    const delay = delayOf(ms);
    timers.set(id, { id, due: now + delay, order: id, fn, args, interval: repeat ? Math.max(delay, 1) : null });
    schedule();
    return id;
  };
  const clear = (id) => { timers.delete(Number(id)); };
  define('setTimeout', function setTimeout(fn, ms, ...args) { return add(fn, ms, args, false); });
  define('setInterval', function setInterval(fn, ms, ...args) { return add(fn, ms, args, true); });
  define('clearTimeout', function clearTimeout(id) { clear(id); });
  define('clearInterval', function clearInterval(id) { clear(id); });
  define('queueMicrotask', function queueMicrotask(fn) {
    if (typeof fn !== 'function') throw new TypeError('queueMicrotask needs a function');
    Promise.resolve().then(() => { try { fn(); } catch (e) { report(e); } });
  });

  // ---- TextEncoder / TextDecoder (UTF-8 only) ----
  class TextEncoder {
    get encoding() { return 'utf-8'; }
    encode(input = '') {
      const s = String(input);
      const out = [];
      for (let i = 0; i < s.length; i++) {
        let c = s.charCodeAt(i);
        if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
          const d = s.charCodeAt(i + 1);
          if (d >= 0xdc00 && d <= 0xdfff) { c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00); i++; }
        }
        if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // lone surrogate
        if (c < 0x80) out.push(c);
        else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
        else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
        else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      }
      return new Uint8Array(out);
    }
    encodeInto(input, dest) {
      const s = String(input);
      let read = 0, written = 0;
      for (const ch of s) {
        const b = this.encode(ch);
        if (written + b.length > dest.length) break;
        dest.set(b, written);
        written += b.length;
        read += ch.length;
      }
      return { read, written };
    }
  }

  const bytesOf = (input) => {
    if (input === undefined) return new Uint8Array(0);
    if (input instanceof ArrayBuffer) return new Uint8Array(input);
    if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    throw new TypeError('TextDecoder.decode needs an ArrayBuffer or a view of one');
  };

  class TextDecoder {
    #fatal; #ignoreBOM; #pending = []; #bomSeen = false;
    constructor(label = 'utf-8', options = {}) {
      const l = String(label).trim().toLowerCase();
      if (l !== 'utf-8' && l !== 'utf8' && l !== 'unicode-1-1-utf-8') {
        throw new RangeError(`TextDecoder: only utf-8 is supported, not "${label}"`);
      }
      this.#fatal = Boolean(options && options.fatal);
      this.#ignoreBOM = Boolean(options && options.ignoreBOM);
    }
    get encoding() { return 'utf-8'; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    decode(input, options = {}) {
      const stream = Boolean(options && options.stream);
      const fresh = bytesOf(input);
      let b = this.#pending.length ? Uint8Array.from([...this.#pending, ...fresh]) : fresh;
      this.#pending = [];
      if (stream) {
        // Keep an incomplete sequence at the end for the next call.
        for (let back = 1; back <= 3 && back <= b.length; back++) {
          const c = b[b.length - back];
          if ((c & 0xc0) === 0x80) continue;
          const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
          if (need > back) {
            this.#pending = Array.from(b.subarray(b.length - back));
            b = b.subarray(0, b.length - back);
          }
          break;
        }
      }
      let out = '';
      let i = 0;
      const bad = () => {
        if (this.#fatal) {
          this.#pending = [];
          this.#bomSeen = false;
          throw new TypeError('The encoded data was not valid utf-8');
        }
        out += '\ufffd';
      };
      // The WHATWG UTF-8 decoder: a bad sequence is one U+FFFD, and the
      // byte that broke it starts the next sequence.
      while (i < b.length) {
        const c = b[i];
        if (c < 0x80) { out += String.fromCharCode(c); i++; continue; }
        let need, cp, lo = 0x80, hi = 0xbf;
        if (c >= 0xc2 && c <= 0xdf) { need = 1; cp = c & 0x1f; }
        else if (c >= 0xe0 && c <= 0xef) {
          need = 2; cp = c & 0x0f;
          if (c === 0xe0) lo = 0xa0;
          if (c === 0xed) hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
          need = 3; cp = c & 0x07;
          if (c === 0xf0) lo = 0x90;
          if (c === 0xf4) hi = 0x8f;
        } else { bad(); i++; continue; }
        let k = 1;
        for (; k <= need && i + k < b.length; k++) {
          const d = b[i + k];
          if (d < lo || d > hi) break;
          lo = 0x80; hi = 0xbf;
          cp = (cp << 6) | (d & 0x3f);
        }
        if (k <= need) { bad(); i += k; continue; }
        out += String.fromCodePoint(cp);
        i += need + 1;
      }
      if (!this.#bomSeen && out.length) {
        this.#bomSeen = true;
        if (!this.#ignoreBOM && out.charCodeAt(0) === 0xfeff) out = out.slice(1);
      }
      if (!stream) {
        this.#bomSeen = false;
        if (this.#pending.length) { this.#pending = []; bad(); }
      }
      return out;
    }
  }
  define('TextEncoder', TextEncoder);
  define('TextDecoder', TextDecoder);

  // ---- structuredClone ----
  const cloneError = (what) => new DOMException(`${what} could not be cloned.`, 'DataCloneError');
  const typedArrays = ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
    'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']
    .filter((n) => typeof g[n] === 'function').map((n) => g[n]);
  const errorTypes = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };

  function clone(v, memo) {
    if (typeof v === 'function') throw cloneError(String(v).slice(0, 60));
    if (typeof v === 'symbol') throw cloneError(String(v));
    if (v === null || typeof v !== 'object') return v;
    if (memo.has(v)) return memo.get(v);
    const set = (c) => { memo.set(v, c); return c; };
    const tag = Object.prototype.toString.call(v).slice(8, -1);
    if (tag === 'Date') return set(new Date(v.getTime()));
    if (tag === 'RegExp') return set(new RegExp(v.source, v.flags));
    if (tag === 'Boolean' || tag === 'Number' || tag === 'String' || tag === 'BigInt') return set(Object(v.valueOf()));
    if (tag === 'ArrayBuffer') return set(v.slice(0));
    if (tag === 'DataView') {
      const buf = clone(v.buffer, memo);
      return set(new DataView(buf, v.byteOffset, v.byteLength));
    }
    for (const T of typedArrays) {
      if (v instanceof T) {
        const buf = clone(v.buffer, memo);
        return set(new T(buf, v.byteOffset, v.length));
      }
    }
    if (tag === 'Map') {
      const m = set(new Map());
      for (const [k, x] of v) m.set(clone(k, memo), clone(x, memo));
      return m;
    }
    if (tag === 'Set') {
      const s = set(new Set());
      for (const x of v) s.add(clone(x, memo));
      return s;
    }
    if (tag === 'Error' || v instanceof Error) {
      const T = errorTypes[v.name] || Error;
      const e = set(new T(v.message));
      if (v.stack !== undefined) e.stack = String(v.stack);
      if ('cause' in v) e.cause = clone(v.cause, memo);
      return e;
    }
    if (tag === 'Promise' || tag === 'WeakMap' || tag === 'WeakSet' || tag === 'WeakRef' ||
        tag === 'Proxy' || typeof v.then === 'function' && tag === 'Promise') {
      throw cloneError(`#<${tag}>`);
    }
    if (Array.isArray(v)) {
      const a = set(new Array(v.length));
      for (const k of Object.keys(v)) a[k] = clone(v[k], memo);
      return a;
    }
    const o = set({});
    for (const k of Object.keys(v)) o[k] = clone(v[k], memo);
    return o;
  }
  define('structuredClone', function structuredClone(value, options = undefined) {
    if (arguments.length === 0) throw new TypeError("structuredClone: 1 argument required, but only 0 present.");
    if (options && options.transfer && options.transfer.length) {
      throw cloneError('transfer lists are not supported; the value');
    }
    return clone(value, new Map());
  });

  // ---- base64 ----
  const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  define('btoa', function btoa(data) {
    const s = String(data);
    let out = '';
    for (let i = 0; i < s.length; i += 3) {
      const a = s.charCodeAt(i), b = s.charCodeAt(i + 1), c = s.charCodeAt(i + 2);
      if (a > 255 || b > 255 || c > 255) throw new DOMException('The string to be encoded contains characters outside of the Latin1 range.', 'InvalidCharacterError');
      const n = (a << 16) | ((b || 0) << 8) | (c || 0);
      out += b64[n >> 18] + b64[(n >> 12) & 63] + (i + 1 < s.length ? b64[(n >> 6) & 63] : '=') + (i + 2 < s.length ? b64[n & 63] : '=');
    }
    return out;
  });
  define('atob', function atob(data) {
    let s = String(data).replace(/[\t\n\f\r ]/g, '');
    if (s.length % 4 === 0) s = s.replace(/==?$/, '');
    if (s.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(s)) throw new DOMException('The string to be decoded is not correctly encoded.', 'InvalidCharacterError');
    let out = '', bits = 0, acc = 0;
    for (const ch of s) {
      acc = (acc << 6) | b64.indexOf(ch);
      bits += 6;
      if (bits >= 8) { bits -= 8; out += String.fromCharCode((acc >> bits) & 255); }
    }
    return out;
  });

  // Libraries look for a global object under this name; it is not a window.
  define('self', g);
})();
