// WEB_POLYFILLS piece: crypto.getRandomValues, crypto.randomUUID.
// Not a script on its own: the pieces, joined in name order, are one
// function (00-base.js opens it, 99-end.js closes it) sharing define, now
// and report.
  // ---- crypto.getRandomValues, crypto.randomUUID ----
  // Bytes from the host kernel at every call (src/engine/quickjs/js_web.c), so each
  // session, forked or not, has its own.
  const randomFill = g[Symbol.for('codecage.randomFill')];
  const integerArrays = ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
    'Int32Array', 'Uint32Array', 'BigInt64Array', 'BigUint64Array'].map((n) => g[n]).filter(Boolean);
  class Crypto {
    getRandomValues(view) {
      if (!integerArrays.some((T) => view instanceof T)) {
        throw new DOMException('The data argument must be an integer-type TypedArray', 'TypeMismatchError');
      }
      const n = view.byteLength;
      if (n > 65536) {
        throw new DOMException('The requested length exceeds 65,536 bytes', 'QuotaExceededError');
      }
      if (typeof randomFill !== 'function') throw new DOMException('no random source in this runtime', 'NotSupportedError');
      if (n) {
        const buf = new ArrayBuffer(n);
        randomFill(buf);
        new Uint8Array(view.buffer, view.byteOffset, n).set(new Uint8Array(buf));
      }
      return view;
    }
    randomUUID() {
      const b = this.getRandomValues(new Uint8Array(16));
      b[6] = (b[6] & 0x0f) | 0x40;
      b[8] = (b[8] & 0x3f) | 0x80;
      const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    }
    get [Symbol.toStringTag]() { return 'Crypto'; }
  }
  define('Crypto', Crypto);
  define('crypto', new Crypto());
