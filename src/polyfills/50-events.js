// WEB_POLYFILLS piece: Event, CustomEvent, EventTarget, AbortController, AbortSignal.
// Not a script on its own: the pieces, joined in name order, are one
// function (00-base.js opens it, 99-end.js closes it) sharing define, now
// and report.
  // ---- Event, CustomEvent, EventTarget ----
  let evBegin, evPassive, evStopped, evEnd;
  class Event {
    #type; #bubbles; #cancelable; #composed; #canceled = false; #phase = 0;
    #target = null; #current = null; #stop = false; #stopNow = false; #passive = false;
    #stamp = g.performance ? g.performance.now() : 0;
    constructor(type, init = undefined) {
      if (arguments.length === 0) throw new TypeError('The "type" argument must be specified');
      this.#type = String(type);
      this.#bubbles = Boolean(init && init.bubbles);
      this.#cancelable = Boolean(init && init.cancelable);
      this.#composed = Boolean(init && init.composed);
    }
    get type() { return this.#type; }
    get bubbles() { return this.#bubbles; }
    get cancelable() { return this.#cancelable; }
    get composed() { return this.#composed; }
    get defaultPrevented() { return this.#canceled; }
    get returnValue() { return !this.#canceled; }
    get eventPhase() { return this.#phase; }
    get target() { return this.#target; }
    get srcElement() { return this.#target; }
    get currentTarget() { return this.#current; }
    get timeStamp() { return this.#stamp; }
    get isTrusted() { return false; }
    get cancelBubble() { return this.#stop; }
    set cancelBubble(v) { if (v) this.#stop = true; }
    composedPath() { return this.#current ? [this.#current] : []; }
    preventDefault() { if (this.#cancelable && !this.#passive) this.#canceled = true; }
    stopPropagation() { this.#stop = true; }
    stopImmediatePropagation() { this.#stop = true; this.#stopNow = true; }
    get [Symbol.toStringTag]() { return 'Event'; }
    // For EventTarget.dispatchEvent only (the fields are private).
    static {
      evBegin = (e, target) => {
        if (e.#phase !== 0) throw new DOMException('The event is already being dispatched.', 'InvalidStateError');
        e.#target = target; e.#current = target; e.#phase = 2; e.#stopNow = false;
      };
      evPassive = (e, p) => { e.#passive = p; };
      evStopped = (e) => e.#stopNow;
      evEnd = (e) => { e.#current = null; e.#phase = 0; e.#stop = false; };
    }
  }
  for (const [k, v] of [['NONE', 0], ['CAPTURING_PHASE', 1], ['AT_TARGET', 2], ['BUBBLING_PHASE', 3]]) {
    Object.defineProperty(Event, k, { value: v, enumerable: true });
    Object.defineProperty(Event.prototype, k, { value: v, enumerable: true });
  }

  class CustomEvent extends Event {
    #detail;
    constructor(type, init = undefined) {
      super(type, init);
      this.#detail = init && init.detail !== undefined ? init.detail : null;
    }
    get detail() { return this.#detail; }
    get [Symbol.toStringTag]() { return 'CustomEvent'; }
  }

  const listenersOf = new WeakMap(); // target -> Map(type -> [{fn, capture, once, passive, gone}])
  class EventTarget {
    constructor() { listenersOf.set(this, new Map()); }
    addEventListener(type, fn, options = undefined) {
      if (fn === null || fn === undefined) return;
      if (typeof fn !== 'function' && (typeof fn !== 'object')) {
        throw new TypeError('The "listener" argument must be a function or an object with handleEvent');
      }
      const o = typeof options === 'object' && options !== null ? options : { capture: Boolean(options) };
      const capture = Boolean(o.capture);
      const signal = o.signal;
      if (signal && signal.aborted) return;
      const map = listenersOf.get(this);
      if (!map) throw new TypeError('Illegal invocation');
      const t = String(type);
      let list = map.get(t);
      if (!list) map.set(t, list = []);
      if (list.some((l) => l.fn === fn && l.capture === capture)) return;
      const entry = { fn, capture, once: Boolean(o.once), passive: Boolean(o.passive), gone: false };
      list.push(entry);
      if (signal) signal.addEventListener('abort', () => this.removeEventListener(t, fn, { capture }));
    }
    removeEventListener(type, fn, options = undefined) {
      const map = listenersOf.get(this);
      const list = map && map.get(String(type));
      if (!list) return;
      const capture = typeof options === 'object' && options !== null ? Boolean(options.capture) : Boolean(options);
      const i = list.findIndex((l) => l.fn === fn && l.capture === capture);
      if (i >= 0) { list[i].gone = true; list.splice(i, 1); }
    }
    dispatchEvent(event) {
      if (!(event instanceof Event)) throw new TypeError('The "event" argument must be an instance of Event');
      const map = listenersOf.get(this);
      if (!map) throw new TypeError('Illegal invocation');
      evBegin(event, this);
      try {
        const handler = this['on' + event.type];
        const list = (map.get(event.type) || []).slice();
        for (const l of list) {
          if (l.gone) continue;
          if (l.once) this.removeEventListener(event.type, l.fn, { capture: l.capture });
          evPassive(event, l.passive);
          try {
            if (typeof l.fn === 'function') l.fn.call(this, event);
            else if (typeof l.fn.handleEvent === 'function') l.fn.handleEvent(event);
          } catch (e) {
            report(e);
          }
          evPassive(event, false);
          if (evStopped(event)) break;
        }
        // An on<type> attribute (FileReader.onload, AbortSignal.onabort)
        // runs after the listeners added with addEventListener.
        if (typeof handler === 'function' && !evStopped(event) && [...handlerTypes].some((T) => this instanceof T)) {
          try { handler.call(this, event); } catch (e) { report(e); }
        }
      } finally {
        evEnd(event);
      }
      return !event.defaultPrevented;
    }
    get [Symbol.toStringTag]() { return 'EventTarget'; }
  }
  // Classes whose on<type> properties are event handlers.
  const handlerTypes = new Set();
  define('Event', Event);
  define('CustomEvent', CustomEvent);
  define('EventTarget', EventTarget);

  // ---- AbortController, AbortSignal ----
  const signalKey = Symbol('AbortSignal');
  let fireAbort;
  class AbortSignal extends EventTarget {
    #aborted = false; #reason = undefined;
    constructor(key) {
      if (key !== signalKey) throw new TypeError('Illegal constructor');
      super();
      this.onabort = null;
    }
    get aborted() { return this.#aborted; }
    get reason() { return this.#reason; }
    throwIfAborted() { if (this.#aborted) throw this.#reason; }
    static abort(reason = undefined) {
      const s = new AbortSignal(signalKey);
      s.#aborted = true;
      s.#reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
      return s;
    }
    static timeout(ms) {
      const s = new AbortSignal(signalKey);
      setTimeout(() => fireAbort(s, new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
      return s;
    }
    static any(signals) {
      const s = new AbortSignal(signalKey);
      for (const x of signals) {
        if (x.aborted) { fireAbort(s, x.reason); return s; }
      }
      for (const x of signals) x.addEventListener('abort', () => fireAbort(s, x.reason), { once: true });
      return s;
    }
    static {
      fireAbort = (s, reason) => {
        if (s.#aborted) return;
        s.#aborted = true;
        s.#reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
        s.dispatchEvent(new Event('abort'));
      };
    }
    get [Symbol.toStringTag]() { return 'AbortSignal'; }
  }
  handlerTypes.add(AbortSignal);
  class AbortController {
    #signal = new AbortSignal(signalKey);
    get signal() { return this.#signal; }
    abort(reason = undefined) { fireAbort(this.#signal, reason); }
    get [Symbol.toStringTag]() { return 'AbortController'; }
  }
  define('AbortSignal', AbortSignal);
  define('AbortController', AbortController);
