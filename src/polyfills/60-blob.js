// WEB_POLYFILLS piece: Blob, File, ProgressEvent, FileReader.
// Not a script on its own: the pieces, joined in name order, are one
// function (00-base.js opens it, 99-end.js closes it) sharing define, now
// and report.
  // ---- Blob, File, FileReader ----
  const utf8 = new TextEncoder();
  const blobBytes = new WeakMap(); // Blob -> Uint8Array (never handed out)
  const blobType = new WeakMap();
  const copyBytes = (p) => {
    if (p instanceof ArrayBuffer) return new Uint8Array(p.slice(0));
    if (ArrayBuffer.isView(p)) return new Uint8Array(p.buffer.slice(p.byteOffset, p.byteOffset + p.byteLength));
    return null;
  };
  const mimeType = (t) => {
    const s = t === undefined ? '' : String(t);
    return /^[\x20-\x7e]*$/.test(s) ? s.toLowerCase() : '';
  };
  class Blob {
    constructor(parts = undefined, options = undefined) {
      const chunks = [];
      if (parts !== undefined) {
        if (parts === null || typeof parts !== 'object' || typeof parts[Symbol.iterator] !== 'function') {
          throw new TypeError("Failed to construct 'Blob': The provided value cannot be converted to a sequence.");
        }
        const native = options && options.endings === 'native';
        for (const p of parts) {
          if (p instanceof Blob) chunks.push(blobBytes.get(p));
          else chunks.push(copyBytes(p) || utf8.encode(native ? String(p).replace(/\r\n?/g, '\n') : String(p)));
        }
      }
      let size = 0;
      for (const c of chunks) size += c.length;
      const bytes = new Uint8Array(size);
      let at = 0;
      for (const c of chunks) { bytes.set(c, at); at += c.length; }
      blobBytes.set(this, bytes);
      blobType.set(this, mimeType(options && options.type));
    }
    get size() { return blobBytes.get(this).length; }
    get type() { return blobType.get(this); }
    slice(start = 0, end = undefined, type = '') {
      const b = blobBytes.get(this);
      const at = (x, dflt) => {
        if (x === undefined) return dflt;
        const n = Math.trunc(Number(x)) || 0;
        return n < 0 ? Math.max(b.length + n, 0) : Math.min(n, b.length);
      };
      const from = at(start, 0), to = Math.max(at(end, b.length), from);
      const out = new Blob([], { type });
      blobBytes.set(out, b.slice(from, to));
      return out;
    }
    arrayBuffer() { return Promise.resolve(blobBytes.get(this).slice().buffer); }
    bytes() { return Promise.resolve(blobBytes.get(this).slice()); }
    text() { return Promise.resolve(new TextDecoder().decode(blobBytes.get(this))); }
    get [Symbol.toStringTag]() { return 'Blob'; }
  }
  class File extends Blob {
    #name; #lastModified;
    constructor(bits, name, options = undefined) {
      if (arguments.length < 2) throw new TypeError("Failed to construct 'File': 2 arguments required.");
      super(bits, options);
      this.#name = String(name);
      const lm = options && options.lastModified;
      this.#lastModified = lm === undefined ? Date.now() : Math.trunc(Number(lm)) || 0;
    }
    get name() { return this.#name; }
    get lastModified() { return this.#lastModified; }
    get webkitRelativePath() { return ''; }
    get [Symbol.toStringTag]() { return 'File'; }
  }
  define('Blob', Blob);
  define('File', File);

  class ProgressEvent extends Event {
    #init;
    constructor(type, init = undefined) {
      super(type, init);
      this.#init = { lengthComputable: Boolean(init && init.lengthComputable),
        loaded: Number(init && init.loaded) || 0, total: Number(init && init.total) || 0 };
    }
    get lengthComputable() { return this.#init.lengthComputable; }
    get loaded() { return this.#init.loaded; }
    get total() { return this.#init.total; }
    get [Symbol.toStringTag]() { return 'ProgressEvent'; }
  }
  define('ProgressEvent', ProgressEvent);

  // A read finishes in a later job (loadstart, progress, load, loadend, as
  // a browser fires them), never inside the read call.
  const binary = (b) => {
    let s = '';
    for (let i = 0; i < b.length; i += 8192) s += String.fromCharCode.apply(null, b.subarray(i, i + 8192));
    return s;
  };
  class FileReader extends EventTarget {
    #state = 0; #result = null; #error = null; #run = 0;
    constructor() {
      super();
      for (const t of ['loadstart', 'progress', 'load', 'abort', 'error', 'loadend']) this['on' + t] = null;
    }
    get readyState() { return this.#state; }
    get result() { return this.#result; }
    get error() { return this.#error; }
    #read(blob, make) {
      if (!(blob instanceof Blob)) throw new TypeError("Failed to execute 'read' on 'FileReader': parameter 1 is not of type 'Blob'.");
      if (this.#state === 1) throw new DOMException('The object is already busy reading Blobs.', 'InvalidStateError');
      this.#state = 1;
      this.#result = null;
      this.#error = null;
      const run = ++this.#run;
      const bytes = blobBytes.get(blob);
      const fire = (type) => this.dispatchEvent(new ProgressEvent(type, { lengthComputable: true, loaded: type === 'loadstart' ? 0 : bytes.length, total: bytes.length }));
      Promise.resolve().then(() => {
        if (run !== this.#run) return;
        fire('loadstart');
        if (run !== this.#run) return;
        let value;
        try {
          value = make(bytes, blob);
        } catch (e) {
          this.#state = 2;
          this.#error = e;
          fire('error');
          fire('loadend');
          return;
        }
        fire('progress');
        if (run !== this.#run) return;
        this.#state = 2;
        this.#result = value;
        fire('load');
        if (this.#state === 2) fire('loadend');
      });
    }
    readAsArrayBuffer(blob) { this.#read(blob, (b) => b.slice().buffer); }
    readAsBinaryString(blob) { this.#read(blob, (b) => binary(b)); }
    readAsText(blob, encoding = 'utf-8') {
      this.#read(blob, (b) => new TextDecoder(encodingOf(encoding) ? encoding : 'utf-8').decode(b));
    }
    readAsDataURL(blob) {
      this.#read(blob, (b, bl) => `data:${bl.type || 'application/octet-stream'};base64,${g.btoa(binary(b))}`);
    }
    abort() {
      if (this.#state !== 1) { return; }
      this.#run++;
      this.#state = 2;
      this.#result = null;
      this.dispatchEvent(new ProgressEvent('abort'));
      this.dispatchEvent(new ProgressEvent('loadend'));
    }
    get [Symbol.toStringTag]() { return 'FileReader'; }
  }
  for (const [k, v] of [['EMPTY', 0], ['LOADING', 1], ['DONE', 2]]) {
    Object.defineProperty(FileReader, k, { value: v, enumerable: true });
    Object.defineProperty(FileReader.prototype, k, { value: v, enumerable: true });
  }
  handlerTypes.add(FileReader);
  define('FileReader', FileReader);
