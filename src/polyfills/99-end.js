// WEB_POLYFILLS piece: self, and the end of the function 00-base.js opens.
// Not a script on its own: the pieces, joined in name order, are one
// function (00-base.js opens it, 99-end.js closes it) sharing define, now
// and report.
  // Libraries look for a global object under this name; it is not a window.
  define('self', g);
})();
