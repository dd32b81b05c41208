// WEB_POLYFILLS piece: atob, btoa.
// Not a script on its own: the pieces, joined in name order, are one
// function (00-base.js opens it, 99-end.js closes it) sharing define, now
// and report.
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
