// WEB_POLYFILLS piece: structuredClone.
// Not a script on its own: the pieces, joined in name order, are one
// function (00-base.js opens it, 99-end.js closes it) sharing define, now
// and report.
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
