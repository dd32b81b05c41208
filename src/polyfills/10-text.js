// WEB_POLYFILLS piece: TextEncoder, TextDecoder (UTF-8, windows-1252, UTF-16).
// Not a script on its own: the pieces, joined in name order, are one
// function (00-base.js opens it, 99-end.js closes it) sharing define, now
// and report.
  // ---- TextEncoder (UTF-8) / TextDecoder ----
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

  // The WHATWG Encoding labels of the encodings decoded here: UTF-8,
  // windows-1252 (what "latin1", "ascii" and "iso-8859-1" mean on the web),
  // UTF-16LE and UTF-16BE.
  const labels = {};
  const label = (name, list) => { for (const l of list.split(' ')) labels[l] = name; };
  label('utf-8', 'unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8');
  label('windows-1252', 'ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 ' +
    'iso-ir-100 iso8859-1 iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252');
  label('utf-16le', 'csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le');
  label('utf-16be', 'unicodefffe utf-16be');
  const encodingOf = (l) => labels[String(l).replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '').toLowerCase()];
  // windows-1252 bytes 0x80-0x9f; every other byte is its own code point.
  const cp1252 = [0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030,
    0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022,
    0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178];

  class TextDecoder {
    #encoding; #fatal; #ignoreBOM; #pending = []; #bomSeen = false;
    constructor(label = 'utf-8', options = {}) {
      const enc = encodingOf(label);
      if (!enc) {
        throw new RangeError(`TextDecoder: the "${label}" encoding is not supported ` +
          '(utf-8, windows-1252/latin1, utf-16le and utf-16be are)');
      }
      this.#encoding = enc;
      this.#fatal = Boolean(options && options.fatal);
      this.#ignoreBOM = Boolean(options && options.ignoreBOM);
    }
    get encoding() { return this.#encoding; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    #single(b) {
      let out = '';
      for (let i = 0; i < b.length; i += 8192) {
        const part = Array.from(b.subarray(i, i + 8192), (c) => (c >= 0x80 && c < 0xa0 ? cp1252[c - 0x80] : c));
        out += String.fromCharCode.apply(null, part);
      }
      return out;
    }
    #utf16(b, stream, be) {
      const units = [];
      let end = b.length - (b.length & 1);
      for (let i = 0; i < end; i += 2) units.push(be ? (b[i] << 8) | b[i + 1] : b[i] | (b[i + 1] << 8));
      // Keep an odd byte, and a lead surrogate at the end, for the next call.
      let keep = Array.from(b.subarray(end));
      const last = units[units.length - 1];
      if (stream && last >= 0xd800 && last <= 0xdbff) {
        units.pop();
        end -= 2;
        keep = Array.from(b.subarray(end));
      }
      if (stream) this.#pending = keep;
      let out = '';
      for (let i = 0; i < units.length; i++) {
        const c = units[i];
        if (c >= 0xd800 && c <= 0xdbff && i + 1 < units.length && units[i + 1] >= 0xdc00 && units[i + 1] <= 0xdfff) {
          out += String.fromCharCode(c, units[++i]);
        } else if (c >= 0xd800 && c <= 0xdfff) {
          out += this.#bad();
        } else {
          out += String.fromCharCode(c);
        }
      }
      if (!stream && keep.length) out += this.#bad();
      return out;
    }
    #bad() {
      if (this.#fatal) {
        this.#pending = [];
        this.#bomSeen = false;
        throw new TypeError(`The encoded data was not valid ${this.#encoding}`);
      }
      return '\ufffd';
    }
    #bom(out, stream) {
      if (!this.#bomSeen && out.length) {
        this.#bomSeen = true;
        if (!this.#ignoreBOM && out.charCodeAt(0) === 0xfeff) out = out.slice(1);
      }
      if (!stream) this.#bomSeen = false;
      return out;
    }
    decode(input, options = {}) {
      const stream = Boolean(options && options.stream);
      const fresh = bytesOf(input);
      let b = this.#pending.length ? Uint8Array.from([...this.#pending, ...fresh]) : fresh;
      this.#pending = [];
      if (this.#encoding === 'windows-1252') return this.#single(b);
      if (this.#encoding !== 'utf-8') return this.#bom(this.#utf16(b, stream, this.#encoding === 'utf-16be'), stream);
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
