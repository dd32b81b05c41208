// codecage WEB_POLYFILLS: browser basics for QuickJS, run as bootstrap code
// (Python: WEB_POLYFILLS; C, CLI and MCP: the web_polyfills option, which
// runs the same text built into the JavaScript worker). Never defines window
// or document. The pieces in this folder, joined in name order, are one
// function: this one opens it (define, DOMException, the timers and their
// virtual clock `now`, report), 99-end.js closes it. See _polyfills.py for
// the timer model: callbacks run through Promise jobs in due-time order on
// a virtual clock, which Date and performance (40-clock.js) follow.
(() => {
  'use strict';
  const g = globalThis;
  const define = (name, value) => {
    if (!(name in g)) {
      Object.defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });
    }
  };

  // ---- DOMException (structuredClone's DataCloneError) ----
  // The legacy code of each name the polyfills throw (WebIDL's table).
  const domCodes = { InvalidCharacterError: 5, NotSupportedError: 9, InvalidStateError: 11,
    SyntaxError: 12, TypeMismatchError: 17, AbortError: 20, QuotaExceededError: 22,
    TimeoutError: 23, DataCloneError: 25 };
  class DOMException extends Error {
    constructor(message = '', name = 'Error') {
      super(message);
      Object.defineProperty(this, 'name', { value: String(name), writable: true, configurable: true });
    }
    get code() { return domCodes[this.name] || 0; }
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
