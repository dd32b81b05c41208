// WEB_POLYFILLS piece: URL, URLSearchParams.
// Not a script on its own: the pieces, joined in name order, are one
// function (00-base.js opens it, 99-end.js closes it) sharing define, now
// and report.
  // ---- URL, URLSearchParams (the WHATWG URL Standard's parser) ----
  // A non-ASCII host name goes through a small IDNA: NFKC, lower case, the
  // ideographic full stops as dots, then punycode per label (RFC 3492).
  // UTS #46's full mapping table and its validity checks are not here.
  const special = { 'ftp:': 21, 'file:': null, 'http:': 80, 'https:': 443, 'ws:': 80, 'wss:': 443 };
  const isSpecial = (scheme) => Object.prototype.hasOwnProperty.call(special, scheme + ':');
  const C0 = (c) => c < 0x20 || c > 0x7e;
  const setOf = (base, extra) => { const s = new Set(extra.split('').map((ch) => ch.charCodeAt(0))); return (c) => base(c) || s.has(c); };
  const fragmentSet = setOf(C0, ' "<>`');
  const querySet = setOf(C0, ' "#<>');
  const specialQuerySet = setOf(querySet, "'");
  // No '^': node and Chrome leave it as is in a path.
  const pathSet = setOf(querySet, '?`{}');
  const userinfoSet = setOf(pathSet, '/:;=@[\\]^|');
  const hex2 = (b) => '%' + (b < 16 ? '0' : '') + b.toString(16).toUpperCase();
  const encodeCp = (cp, set) => {
    if (!set(cp)) return String.fromCodePoint(cp);
    return Array.from(utf8.encode(String.fromCodePoint(cp)), hex2).join('');
  };
  const encodeStr = (s, set) => { let o = ''; for (const ch of s) o += encodeCp(ch.codePointAt(0), set); return o; };
  const isHex = (c) => /^[0-9a-fA-F]$/.test(c);
  const percentDecode = (s) => {
    const b = utf8.encode(s);
    const out = [];
    for (let i = 0; i < b.length; i++) {
      if (b[i] === 0x25 && i + 2 < b.length && isHex(String.fromCharCode(b[i + 1])) && isHex(String.fromCharCode(b[i + 2]))) {
        out.push(parseInt(String.fromCharCode(b[i + 1], b[i + 2]), 16));
        i += 2;
      } else {
        out.push(b[i]);
      }
    }
    return new Uint8Array(out);
  };
  const fail = () => { throw new TypeError('Invalid URL'); };

  const ipv4Number = (s) => {
    if (s === '') return NaN;
    let r = 10;
    if (/^0[xX]/.test(s)) { s = s.slice(2); r = 16; } else if (s.length > 1 && s[0] === '0') { s = s.slice(1); r = 8; }
    if (s === '') return 0;
    const ok = r === 16 ? /^[0-9a-fA-F]+$/ : r === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
    return ok.test(s) ? parseInt(s, r) : NaN;
  };
  const endsInNumber = (s) => {
    const parts = s.split('.');
    if (parts[parts.length - 1] === '') { if (parts.length === 1) return false; parts.pop(); }
    const last = parts[parts.length - 1];
    return /^[0-9]+$/.test(last) || !Number.isNaN(ipv4Number(last));
  };
  const parseIPv4 = (s) => {
    const parts = s.split('.');
    if (parts[parts.length - 1] === '' && parts.length > 1) parts.pop();
    if (parts.length > 4) fail();
    const n = parts.map(ipv4Number);
    if (n.some(Number.isNaN)) fail();
    for (let i = 0; i < n.length - 1; i++) if (n[i] > 255) fail();
    if (n[n.length - 1] >= 256 ** (5 - n.length)) fail();
    let v = n[n.length - 1];
    for (let i = 0; i < n.length - 1; i++) v += n[i] * 256 ** (3 - i);
    return { v4: v };
  };
  const parseIPv6 = (s) => {
    const a = [0, 0, 0, 0, 0, 0, 0, 0];
    let piece = 0, compress = null, i = 0;
    const at = (k) => s[k];
    if (at(0) === ':') { if (at(1) !== ':') fail(); i = 2; compress = ++piece; }
    while (i < s.length) {
      if (piece === 8) fail();
      if (at(i) === ':') { if (compress !== null) fail(); i++; compress = ++piece; continue; }
      let v = 0, len = 0;
      while (len < 4 && i < s.length && isHex(at(i))) { v = v * 16 + parseInt(at(i), 16); i++; len++; }
      if (at(i) === '.') {
        if (len === 0) fail();
        i -= len;
        if (piece > 6) fail();
        let seen = 0;
        while (i < s.length) {
          let v4 = null;
          if (seen > 0) { if (at(i) === '.' && seen < 4) i++; else fail(); }
          if (!/[0-9]/.test(at(i) || '')) fail();
          while (/[0-9]/.test(at(i) || '')) {
            const d = Number(at(i));
            if (v4 === null) v4 = d; else if (v4 === 0) fail(); else v4 = v4 * 10 + d;
            if (v4 > 255) fail();
            i++;
          }
          a[piece] = a[piece] * 256 + v4;
          seen++;
          if (seen === 2 || seen === 4) piece++;
        }
        if (seen !== 4) fail();
        break;
      } else if (at(i) === ':') {
        i++;
        if (i >= s.length) fail();
      } else if (i < s.length) {
        fail();
      }
      a[piece++] = v;
    }
    if (compress !== null) {
      let swaps = piece - compress;
      piece = 7;
      while (piece !== 0 && swaps > 0) {
        const t = a[piece]; a[piece] = a[compress + swaps - 1]; a[compress + swaps - 1] = t;
        piece--; swaps--;
      }
    } else if (piece !== 8) {
      fail();
    }
    return { v6: a };
  };
  const punycode = (label) => {
    const cps = Array.from(label, (ch) => ch.codePointAt(0));
    const base = 36, tMin = 1, tMax = 26;
    const adapt = (d, num, first) => {
      d = first ? Math.floor(d / 700) : d >> 1;
      d += Math.floor(d / num);
      let k = 0;
      for (; d > ((base - tMin) * tMax) >> 1; k += base) d = Math.floor(d / (base - tMin));
      return k + Math.floor(((base - tMin + 1) * d) / (d + 38));
    };
    const digit = (d) => String.fromCharCode(d + 22 + 75 * (d < 26));
    let out = cps.filter((c) => c < 0x80).map((c) => String.fromCharCode(c)).join('');
    const basic = out.length;
    let h = basic, n = 0x80, delta = 0, bias = 72;
    if (basic) out += '-';
    while (h < cps.length) {
      let m = Infinity;
      for (const c of cps) if (c >= n && c < m) m = c;
      delta += (m - n) * (h + 1);
      n = m;
      for (const c of cps) {
        if (c < n) delta++;
        if (c !== n) continue;
        let q = delta;
        for (let k = base; ; k += base) {
          const t = k <= bias ? tMin : k >= bias + tMax ? tMax : k - bias;
          if (q < t) break;
          out += digit(t + ((q - t) % (base - t)));
          q = Math.floor((q - t) / (base - t));
        }
        out += digit(q);
        bias = adapt(delta, h + 1, h === basic);
        delta = 0;
        h++;
      }
      delta++;
      n++;
    }
    return 'xn--' + out;
  };
  const toASCII = (domain) => {
    if (!/[^\x00-\x7f]/.test(domain)) return domain.toLowerCase();
    const mapped = domain.normalize('NFKC').toLowerCase().replace(/[\u3002\uff0e\uff61]/g, '.');
    return mapped.split('.').map((l) => (/[^\x00-\x7f]/.test(l) ? punycode(l) : l)).join('.');
  };
  const forbiddenHost = /[\0\t\n\r #/:<>?@[\\\]^|]/;
  const forbiddenDomain = /[\0-\x1f #%/:<>?@[\\\]^|\x7f]/;
  const parseHost = (s, opaque) => {
    if (s[0] === '[') { if (s[s.length - 1] !== ']') fail(); return parseIPv6(s.slice(1, -1)); }
    if (opaque) { if (forbiddenHost.test(s)) fail(); return encodeStr(s, C0); }
    const ascii = toASCII(new TextDecoder().decode(percentDecode(s)));
    if (ascii === '' || forbiddenDomain.test(ascii)) fail();
    return endsInNumber(ascii) ? parseIPv4(ascii) : ascii;
  };
  const hostText = (h) => {
    if (h === null) return '';
    if (typeof h === 'string') return h;
    if (h.v4 !== undefined) { const v = h.v4; return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.'); }
    const a = h.v6;
    let best = -1, bestLen = 1;
    for (let i = 0; i < 8;) {
      if (a[i] !== 0) { i++; continue; }
      let j = i; while (j < 8 && a[j] === 0) j++;
      if (j - i > bestLen) { best = i; bestLen = j - i; }
      i = j;
    }
    let out = '';
    for (let i = 0; i < 8; i++) {
      if (i === best) { out += i === 0 ? '::' : ':'; i += bestLen - 1; continue; }
      out += a[i].toString(16) + (i < 7 ? ':' : '');
    }
    return '[' + out + ']';
  };
  const winLetter = (s, normalizedOnly) => /^[a-zA-Z]$/.test(s[0] || '') && (s[1] === ':' || (!normalizedOnly && s[1] === '|'));
  const startsWinLetter = (cps, i) => {
    const s = String.fromCodePoint(...cps.slice(i, i + 3));
    return s.length >= 2 && winLetter(s, false) && (s.length === 2 || '/\\?#'.includes(s[2]));
  };
  const shorten = (u) => {
    if (u.scheme === 'file' && u.path.length === 1 && winLetter(u.path[0], true) && u.path[0].length === 2) return;
    u.path.pop();
  };
  const single = (s) => s === '.' || s.toLowerCase() === '%2e';
  const double = (s) => ['..', '.%2e', '%2e.', '%2e%2e'].includes(s.toLowerCase());

  // The basic URL parser. `over` is the state override of a setter, with
  // `u` the record it changes; returns the record, or throws TypeError.
  function parseURL(input, base, u, over) {
    if (!u) {
      u = { scheme: '', username: '', password: '', host: null, port: null, path: [], opaque: false, query: null, fragment: null };
      input = input.replace(/^[\0-\x20]+|[\0-\x20]+$/g, '');
    }
    input = input.replace(/[\t\n\r]/g, '');
    const cps = Array.from(input, (ch) => ch.codePointAt(0));
    let state = over || 'schemeStart';
    let buf = '', atSign = false, inBrackets = false, passwordSeen = false;
    for (let p = 0; p <= cps.length; p++) {
      const c = p < cps.length ? cps[p] : -1; // -1: the end
      const ch = c < 0 ? '' : String.fromCodePoint(c);
      const rest = (k) => (p + k < cps.length ? String.fromCodePoint(cps[p + k]) : '');
      switch (state) {
        case 'schemeStart':
          if (/[a-zA-Z]/.test(ch)) { buf += ch.toLowerCase(); state = 'scheme'; } else if (!over) { state = 'noScheme'; p--; } else fail();
          break;
        case 'scheme':
          if (/[a-zA-Z0-9+\-.]/.test(ch) && ch) { buf += ch.toLowerCase(); break; }
          if (ch === ':') {
            if (over) {
              if (isSpecial(u.scheme) !== isSpecial(buf)) return u;
              if ((u.username || u.password || u.port !== null) && buf === 'file') return u;
              if (u.scheme === 'file' && u.host === '') return u;
            }
            u.scheme = buf;
            if (over) { if (u.port === special[u.scheme + ':']) u.port = null; return u; }
            buf = '';
            if (u.scheme === 'file') state = 'file';
            else if (isSpecial(u.scheme) && base && base.scheme === u.scheme) state = 'specialRelativeOrAuthority';
            else if (isSpecial(u.scheme)) state = 'specialAuthoritySlashes';
            else if (rest(1) === '/') { state = 'pathOrAuthority'; p++; } else { u.opaque = true; u.path = ''; state = 'opaquePath'; }
          } else if (!over) { buf = ''; state = 'noScheme'; p = -1; } else fail();
          break;
        case 'noScheme':
          if (!base || (base.opaque && ch !== '#')) fail();
          if (base.opaque && ch === '#') {
            Object.assign(u, { scheme: base.scheme, path: base.path, opaque: true, query: base.query, fragment: '' });
            state = 'fragment';
          } else if (base.scheme !== 'file') { state = 'relative'; p--; } else { state = 'file'; p--; }
          break;
        case 'specialRelativeOrAuthority':
          if (ch === '/' && rest(1) === '/') { state = 'specialAuthorityIgnoreSlashes'; p++; } else { state = 'relative'; p--; }
          break;
        case 'pathOrAuthority':
          if (ch === '/') state = 'authority'; else { state = 'path'; p--; }
          break;
        case 'relative':
          u.scheme = base.scheme;
          if (ch === '/') state = 'relativeSlash';
          else if (isSpecial(u.scheme) && ch === '\\') state = 'relativeSlash';
          else {
            Object.assign(u, { username: base.username, password: base.password, host: base.host, port: base.port, path: base.path.slice(), query: base.query });
            if (ch === '?') { u.query = ''; state = 'query'; } else if (ch === '#') { u.fragment = ''; state = 'fragment'; } else if (c >= 0) {
              u.query = null; shorten(u); state = 'path'; p--;
            }
          }
          break;
        case 'relativeSlash':
          if (isSpecial(u.scheme) && (ch === '/' || ch === '\\')) state = 'specialAuthorityIgnoreSlashes';
          else if (ch === '/') state = 'authority';
          else { Object.assign(u, { username: base.username, password: base.password, host: base.host, port: base.port }); state = 'path'; p--; }
          break;
        case 'specialAuthoritySlashes':
          if (ch === '/' && rest(1) === '/') { state = 'specialAuthorityIgnoreSlashes'; p++; } else { state = 'specialAuthorityIgnoreSlashes'; p--; }
          break;
        case 'specialAuthorityIgnoreSlashes':
          if (ch !== '/' && ch !== '\\') { state = 'authority'; p--; }
          break;
        case 'authority':
          if (ch === '@') {
            if (atSign) buf = '%40' + buf;
            atSign = true;
            for (const x of buf) {
              if (x === ':' && !passwordSeen) { passwordSeen = true; continue; }
              const e = encodeCp(x.codePointAt(0), userinfoSet);
              if (passwordSeen) u.password += e; else u.username += e;
            }
            buf = '';
          } else if (c < 0 || ch === '/' || ch === '?' || ch === '#' || (isSpecial(u.scheme) && ch === '\\')) {
            if (atSign && buf === '') fail();
            p -= Array.from(buf).length + 1;
            buf = '';
            state = 'host';
          } else buf += ch;
          break;
        case 'host':
        case 'hostname':
          if (over && u.scheme === 'file') { p--; state = 'fileHost'; break; }
          if (ch === ':' && !inBrackets) {
            if (buf === '') fail();
            if (over === 'hostname') fail();
            u.host = parseHost(buf, !isSpecial(u.scheme)); buf = ''; state = 'port';
          } else if (c < 0 || ch === '/' || ch === '?' || ch === '#' || (isSpecial(u.scheme) && ch === '\\')) {
            p--;
            if (isSpecial(u.scheme) && buf === '') fail();
            if (over && buf === '' && (u.username || u.password || u.port !== null)) return u;
            u.host = parseHost(buf, !isSpecial(u.scheme)); buf = ''; state = 'pathStart';
            if (over) return u;
          } else {
            if (ch === '[') inBrackets = true;
            if (ch === ']') inBrackets = false;
            buf += ch;
          }
          break;
        case 'port':
          if (/[0-9]/.test(ch) && ch) buf += ch;
          else if (c < 0 || ch === '/' || ch === '?' || ch === '#' || (isSpecial(u.scheme) && ch === '\\') || over) {
            if (buf !== '') {
              const port = parseInt(buf, 10);
              if (port > 65535) fail();
              u.port = special[u.scheme + ':'] === port ? null : port;
              buf = '';
            }
            if (over) return u;
            state = 'pathStart'; p--;
          } else fail();
          break;
        case 'file':
          u.scheme = 'file';
          u.host = '';
          if (ch === '/' || ch === '\\') state = 'fileSlash';
          else if (base && base.scheme === 'file') {
            Object.assign(u, { host: base.host, path: base.path.slice(), query: base.query });
            if (ch === '?') { u.query = ''; state = 'query'; } else if (ch === '#') { u.fragment = ''; state = 'fragment'; } else if (c >= 0) {
              u.query = null;
              if (!startsWinLetter(cps, p)) shorten(u); else u.path = [];
              state = 'path'; p--;
            }
          } else { state = 'path'; p--; }
          break;
        case 'fileSlash':
          if (ch === '/' || ch === '\\') state = 'fileHost';
          else {
            if (base && base.scheme === 'file') {
              u.host = base.host;
              if (!startsWinLetter(cps, p) && base.path.length && winLetter(base.path[0], true) && base.path[0].length === 2) u.path.push(base.path[0]);
            }
            state = 'path'; p--;
          }
          break;
        case 'fileHost':
          if (c < 0 || ch === '/' || ch === '\\' || ch === '?' || ch === '#') {
            p--;
            if (!over && buf.length === 2 && winLetter(buf, false)) state = 'path';
            else if (buf === '') { u.host = ''; if (over) return u; state = 'pathStart'; } else {
              let h = parseHost(buf, false);
              if (h === 'localhost') h = '';
              u.host = h;
              if (over) return u;
              buf = ''; state = 'pathStart';
            }
          } else buf += ch;
          break;
        case 'pathStart':
          if (isSpecial(u.scheme)) { state = 'path'; if (ch !== '/' && ch !== '\\') p--; } else if (!over && ch === '?') { u.query = ''; state = 'query'; } else if (!over && ch === '#') { u.fragment = ''; state = 'fragment'; } else if (c >= 0) { state = 'path'; if (ch !== '/') p--; } else if (over && u.host === null) u.path.push('');
          break;
        case 'path':
          if (c < 0 || ch === '/' || (isSpecial(u.scheme) && ch === '\\') || (!over && (ch === '?' || ch === '#'))) {
            const slash = ch === '/' || (isSpecial(u.scheme) && ch === '\\');
            if (double(buf)) { shorten(u); if (!slash) u.path.push(''); } else if (single(buf) && !slash) u.path.push('');
            else if (!single(buf)) {
              if (u.scheme === 'file' && u.path.length === 0 && winLetter(buf, false)) buf = buf[0] + ':';
              u.path.push(buf);
            }
            buf = '';
            if (ch === '?') { u.query = ''; state = 'query'; }
            if (ch === '#') { u.fragment = ''; state = 'fragment'; }
          } else buf += encodeCp(c, pathSet);
          break;
        case 'opaquePath':
          if (ch === '?') { u.query = ''; state = 'query'; } else if (ch === '#') { u.fragment = ''; state = 'fragment'; } else if (c >= 0) u.path += encodeCp(c, C0);
          break;
        case 'query':
          if ((!over && ch === '#') || c < 0) {
            u.query = (u.query || '') + encodeStr(buf, isSpecial(u.scheme) ? specialQuerySet : querySet);
            buf = '';
            if (ch === '#') { u.fragment = ''; state = 'fragment'; }
          } else buf += ch;
          break;
        case 'fragment':
          if (c >= 0) u.fragment += encodeCp(c, fragmentSet);
          break;
      }
    }
    return u;
  }
  const serializePath = (u) => (u.opaque ? u.path : u.path.map((s) => '/' + s).join(''));
  const serialize = (u, noFragment) => {
    let out = u.scheme + ':';
    if (u.host !== null) {
      out += '//';
      if (u.username || u.password) out += u.username + (u.password ? ':' + u.password : '') + '@';
      out += hostText(u.host);
      if (u.port !== null) out += ':' + u.port;
    } else if (!u.opaque && u.path.length > 1 && u.path[0] === '') out += '/.';
    out += serializePath(u);
    if (u.query !== null) out += '?' + u.query;
    if (!noFragment && u.fragment !== null) out += '#' + u.fragment;
    return out;
  };

  const formEncode = (s) => Array.from(utf8.encode(s), (b) => (b === 0x20 ? '+' : /[*\-._0-9A-Za-z]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : hex2(b))).join('');
  const formDecode = (s) => new TextDecoder().decode(percentDecode(s.replace(/\+/g, ' ')));
  const formParse = (s) => {
    const out = [];
    for (const seq of s.split('&')) {
      if (seq === '') continue;
      const i = seq.indexOf('=');
      out.push(i < 0 ? [formDecode(seq), ''] : [formDecode(seq.slice(0, i)), formDecode(seq.slice(i + 1))]);
    }
    return out;
  };
  // A USVString: lone surrogates become U+FFFD.
  const usv = (v) => String(v).replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

  let setSearchOwner;
  class URLSearchParams {
    #list = []; #url = null;
    constructor(init = undefined) {
      if (init instanceof URLSearchParams) this.#list = init.#list.map((x) => x.slice());
      else if (init !== null && typeof init === 'object' || typeof init === 'function') {
        if (typeof init[Symbol.iterator] === 'function') {
          for (const pair of init) {
            const a = Array.from(pair);
            if (a.length !== 2) throw new TypeError('Each query pair must be an iterable [name, value] tuple');
            this.#list.push([usv(a[0]), usv(a[1])]);
          }
        } else {
          for (const k of Reflect.ownKeys(init)) {
            if (typeof k !== 'string' || !Object.prototype.propertyIsEnumerable.call(init, k)) continue;
            this.#list.push([usv(k), usv(init[k])]);
          }
        }
      } else if (init !== undefined) {
        const s = usv(init);
        this.#list = formParse(s[0] === '?' ? s.slice(1) : s);
      }
    }
    #update() {
      if (!this.#url) return;
      const s = this.toString();
      this.#url.query = s === '' ? null : s;
    }
    get size() { return this.#list.length; }
    append(name, value) { this.#list.push([usv(name), usv(value)]); this.#update(); }
    delete(name, value = undefined) {
      const n = usv(name), v = value === undefined ? undefined : usv(value);
      this.#list = this.#list.filter(([k, x]) => !(k === n && (v === undefined || x === v)));
      this.#update();
    }
    get(name) { const n = usv(name); const e = this.#list.find(([k]) => k === n); return e ? e[1] : null; }
    getAll(name) { const n = usv(name); return this.#list.filter(([k]) => k === n).map((e) => e[1]); }
    has(name, value = undefined) {
      const n = usv(name), v = value === undefined ? undefined : usv(value);
      return this.#list.some(([k, x]) => k === n && (v === undefined || x === v));
    }
    set(name, value) {
      const n = usv(name), v = usv(value);
      const i = this.#list.findIndex(([k]) => k === n);
      if (i < 0) this.#list.push([n, v]);
      else { this.#list[i][1] = v; this.#list = this.#list.filter(([k], j) => j <= i || k !== n); }
      this.#update();
    }
    sort() {
      // Stable, by UTF-16 code units (Array.prototype.sort is stable).
      this.#list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      this.#update();
    }
    forEach(fn, thisArg = undefined) { for (const [k, v] of this.#list.slice()) fn.call(thisArg, v, k, this); }
    *entries() { for (let i = 0; i < this.#list.length; i++) yield this.#list[i].slice(); }
    *keys() { for (const [k] of this.entries()) yield k; }
    *values() { for (const [, v] of this.entries()) yield v; }
    [Symbol.iterator]() { return this.entries(); }
    toString() { return this.#list.map(([k, v]) => formEncode(k) + '=' + formEncode(v)).join('&'); }
    get [Symbol.toStringTag]() { return 'URLSearchParams'; }
    static {
      setSearchOwner = (sp, rec, query) => { sp.#url = rec; sp.#list = query === null ? [] : formParse(query); };
    }
  }

  const records = new WeakMap(); // URL -> {rec, params}
  const recOf = (url) => {
    const r = records.get(url);
    if (!r) throw new TypeError('Illegal invocation');
    return r.rec;
  };
  const blobURLs = new Map();
  class URL {
    constructor(url, base = undefined) {
      if (arguments.length === 0) throw new TypeError('The "url" argument must be specified');
      let b = null;
      if (base !== undefined) b = parseURL(usv(base), null);
      const rec = parseURL(usv(url), b);
      const params = new URLSearchParams();
      setSearchOwner(params, rec, rec.query);
      records.set(this, { rec, params });
    }
    static canParse(url, base = undefined) {
      try { new URL(url, base); return true; } catch { return false; }
    }
    static parse(url, base = undefined) {
      try { return new URL(url, base); } catch { return null; }
    }
    static createObjectURL(blob) {
      if (!(blob instanceof Blob)) throw new TypeError('URL.createObjectURL needs a Blob');
      const id = 'blob:nodedata:' + g.crypto.randomUUID();
      blobURLs.set(id, blob);
      return id;
    }
    static revokeObjectURL(id) { blobURLs.delete(String(id)); }
    get href() { return serialize(recOf(this)); }
    set href(v) {
      const rec = parseURL(usv(v), null);
      const r = records.get(this);
      Object.assign(r.rec, rec);
      setSearchOwner(r.params, r.rec, r.rec.query);
    }
    get origin() {
      const u = recOf(this);
      if (u.scheme === 'blob') {
        try {
          const inner = parseURL(serializePath(u), null);
          if (inner.scheme === 'http' || inner.scheme === 'https') return new URL(serialize(inner)).origin;
        } catch { /* an opaque origin */ }
        return 'null';
      }
      if (!isSpecial(u.scheme) || u.scheme === 'file') return 'null';
      return u.scheme + '://' + hostText(u.host) + (u.port !== null ? ':' + u.port : '');
    }
    get protocol() { return recOf(this).scheme + ':'; }
    set protocol(v) {
      const u = recOf(this);
      try { parseURL(usv(v) + ':', null, u, 'schemeStart'); } catch { /* left as it was */ }
    }
    get username() { return recOf(this).username; }
    set username(v) {
      const u = recOf(this);
      if (u.host === null || u.host === '' || u.scheme === 'file') return;
      u.username = encodeStr(usv(v), userinfoSet);
    }
    get password() { return recOf(this).password; }
    set password(v) {
      const u = recOf(this);
      if (u.host === null || u.host === '' || u.scheme === 'file') return;
      u.password = encodeStr(usv(v), userinfoSet);
    }
    get host() { const u = recOf(this); return hostText(u.host) + (u.host !== null && u.port !== null ? ':' + u.port : ''); }
    set host(v) { this.#setHost(v, 'host'); }
    get hostname() { return hostText(recOf(this).host); }
    set hostname(v) { this.#setHost(v, 'hostname'); }
    #setHost(v, over) {
      const u = recOf(this);
      if (u.opaque) return;
      const copy = { ...u, path: u.path.slice() };
      try { parseURL(usv(v), null, copy, over); } catch { return; }
      Object.assign(u, copy);
    }
    get port() { const p = recOf(this).port; return p === null ? '' : String(p); }
    set port(v) {
      const u = recOf(this);
      if (u.host === null || u.host === '' || u.scheme === 'file') return;
      const s = usv(v);
      if (s === '') { u.port = null; return; }
      const copy = { ...u };
      try { parseURL(s, null, copy, 'port'); } catch { return; }
      u.port = copy.port;
    }
    get pathname() { return serializePath(recOf(this)); }
    set pathname(v) {
      const u = recOf(this);
      if (u.opaque) return;
      u.path = [];
      parseURL(usv(v), null, u, 'pathStart');
    }
    get search() { const q = recOf(this).query; return q === null || q === '' ? '' : '?' + q; }
    set search(v) {
      const r = records.get(this);
      let s = usv(v);
      if (s === '') { r.rec.query = null; setSearchOwner(r.params, r.rec, null); return; }
      if (s[0] === '?') s = s.slice(1);
      r.rec.query = '';
      parseURL(s, null, r.rec, 'query');
      setSearchOwner(r.params, r.rec, r.rec.query);
    }
    get searchParams() { recOf(this); return records.get(this).params; }
    get hash() { const f = recOf(this).fragment; return f === null || f === '' ? '' : '#' + f; }
    set hash(v) {
      const u = recOf(this);
      let s = usv(v);
      if (s === '') { u.fragment = null; return; }
      if (s[0] === '#') s = s.slice(1);
      u.fragment = '';
      parseURL(s, null, u, 'fragment');
    }
    toString() { return this.href; }
    toJSON() { return this.href; }
    get [Symbol.toStringTag]() { return 'URL'; }
  }
  define('URL', URL);
  define('URLSearchParams', URLSearchParams);
