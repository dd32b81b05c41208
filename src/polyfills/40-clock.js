// WEB_POLYFILLS piece: Date and performance on the virtual clock.
// Not a script on its own: the pieces, joined in name order, are one
// function (00-base.js opens it, 99-end.js closes it) sharing define, now
// and report.
  // ---- the clock: Date and performance follow the virtual timers ----
  // Date.now(), new Date() and performance.now() are the real time plus
  // how far the timers have moved the virtual clock (`now` above), so a
  // library that waits for Date.now() to pass a mark (lodash.debounce)
  // sees it pass when its timer fires.
  // Run twice (the web_polyfills option and the WEB_POLYFILLS bootstrap),
  // the first run's Date and timers stay.
  const clockMark = Symbol.for('codecage.virtualClock');
  const RealDate = g.Date;
  const realNow = RealDate.now;
  const clockNow = () => realNow() + now;
  function Date(...args) {
    if (new.target === undefined) return new RealDate(clockNow()).toString();
    return Reflect.construct(RealDate, args.length ? args : [clockNow()], new.target);
  }
  if (!RealDate[clockMark]) {
    Object.defineProperty(Date, 'length', { value: 7 });
    Object.defineProperty(Date, 'prototype', { value: RealDate.prototype, writable: false });
    Object.defineProperty(Date, clockMark, { value: true });
    Date.now = function now() { return clockNow(); };
    Date.parse = RealDate.parse;
    Date.UTC = RealDate.UTC;
    Object.defineProperty(RealDate.prototype, 'constructor', { value: Date, writable: true, configurable: true });
    Object.defineProperty(g, 'Date', { value: Date, writable: true, configurable: true, enumerable: false });
  }

  // Where the polyfills ran: in a fork server's template, so a forked
  // session's performance.now() counts from the template's start (as
  // node's counts from its process's).
  const timeOrigin = realNow();
  class Performance {
    get timeOrigin() { return timeOrigin; }
    now() { return clockNow() - timeOrigin; }
    toJSON() { return { timeOrigin }; }
    get [Symbol.toStringTag]() { return 'Performance'; }
  }
  define('Performance', Performance);
  define('performance', new Performance());
