"""The cases of test_web_polyfills.py: JavaScript async-function bodies that
return a JSON-able value, by piece of WEB_POLYFILLS. NODE cases run in node
(which has each API natively) and in codecage with --web-polyfills, and must
give the same JSON; SPEC cases cover what node lacks (FileReader) and hold
the value the specification gives."""

SLEEP = "const sleep = (ms) => new Promise((r) => setTimeout(r, ms));\n"

NODE = {}
SPEC = {}

# ---- TextDecoder: windows-1252 (latin1), UTF-16 ----
# Named difference: node 20 decodes every windows-1252 label as ISO-8859-1
# (bytes 0x80-0x9f as U+0080-U+009F); the Encoding Standard and browsers map
# them to windows-1252 (0x80 is the euro sign). The cases below avoid those
# bytes against node, and SPEC["text.windows_1252"] checks them.
SPEC["text.windows_1252"] = ("""
  const s = new TextDecoder('latin1').decode(Uint8Array.from({ length: 32 }, (_, i) => 0x80 + i));
  return Array.from(s, (c) => c.charCodeAt(0));""", [
    0x20AC, 0x81, 0x201A, 0x192, 0x201E, 0x2026, 0x2020, 0x2021, 0x2C6, 0x2030, 0x160, 0x2039,
    0x152, 0x8D, 0x17D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x2DC, 0x2122, 0x161, 0x203A, 0x153, 0x9D, 0x17E, 0x178])
NODE["text.latin1_all_bytes"] = """
  const s = new TextDecoder('latin1').decode(Uint8Array.from({ length: 224 }, (_, i) => (i < 128 ? i : i + 32)));
  return Array.from(s, (c) => c.charCodeAt(0));"""
NODE["text.labels"] = """
  return ['latin1', 'ascii', 'ISO-8859-1', 'windows-1252', 'cp1252', 'us-ascii', 'utf-16',
          'UTF-16LE', ' utf-16be\\n', 'utf8', 'unicode-1-1-utf-8', 'l1']
    .map((l) => new TextDecoder(l).encoding);"""
NODE["text.unknown_label"] = """
  try { new TextDecoder('klingon'); return 'made'; } catch (e) { return e.name; }"""
NODE["text.utf16le"] = """
  const d = new TextDecoder('utf-16le');
  const b = new Uint8Array([0xff, 0xfe, 0x41, 0, 0x3d, 0xd8, 0, 0xde, 0x00, 0xd8, 0x42, 0, 0x00, 0xdc, 0x43]);
  return Array.from(d.decode(b), (c) => c.codePointAt(0));"""
NODE["text.utf16be"] = """
  const b = new Uint8Array([0xfe, 0xff, 0, 0x41, 0xd8, 0x3d, 0xde, 0]);
  return new TextDecoder('utf-16be').decode(b);"""
NODE["text.utf16_ignore_bom"] = """
  const b = new Uint8Array([0xff, 0xfe, 0x41, 0]);
  return new TextDecoder('utf-16le', { ignoreBOM: true }).decode(b).length;"""
NODE["text.utf16_fatal"] = """
  const d = new TextDecoder('utf-16le', { fatal: true });
  const out = [d.fatal];
  try { d.decode(new Uint8Array([0x00, 0xd8, 0x41, 0])); out.push('decoded'); } catch (e) { out.push(e.name); }
  try { d.decode(new Uint8Array([0x41])); out.push('decoded'); } catch (e) { out.push(e.name); }
  out.push(d.decode(new Uint8Array([0x41, 0])));
  return out;"""
NODE["text.utf16_stream"] = """
  const d = new TextDecoder('utf-16le');
  const all = [0x3d, 0xd8, 0, 0xde, 0x41, 0];
  let s = '';
  for (const x of all) s += d.decode(new Uint8Array([x]), { stream: true });
  s += d.decode();
  return Array.from(s, (c) => c.codePointAt(0));"""
NODE["text.latin1_view"] = """
  const buf = new Uint8Array([0x41, 0xa0, 0xff, 0x42]).buffer;
  return new TextDecoder('latin1').decode(new DataView(buf, 1, 2));"""

# ---- the clock: Date and performance move with the timers ----
NODE["clock.date_passes_timer"] = SLEEP + """
  const t = Date.now(), p = performance.now();
  await sleep(50);
  return [Date.now() - t >= 50, performance.now() - p >= 50, new Date().getTime() - t >= 50];"""
# lodash.debounce's shape: re-arm until Date.now() has passed the wait.
NODE["clock.debounce"] = SLEEP + """
  let armed = 0, fired = 0;
  function debounce(fn, wait) {
    let last, timer;
    const check = () => {
      const since = Date.now() - last;
      if (since >= wait) { timer = undefined; fn(); }
      else { armed++; timer = setTimeout(check, wait - since); }
    };
    return () => { last = Date.now(); if (!timer) { armed++; timer = setTimeout(check, wait); } };
  }
  const d = debounce(() => fired++, 50);
  d(); d(); d();
  await sleep(200);
  return [fired, armed <= 3];"""
NODE["clock.date_api"] = """
  return [typeof Date(), Date.length, Date.name, new Date(0).toISOString(),
          new Date(2020, 1, 3, 4, 5).getMonth(), Date.UTC(2020, 0, 1), Date.parse('2020-01-01T00:00:00Z'),
          new Date() instanceof Date, Object.prototype.toString.call(new Date()),
          Date.prototype.constructor === Date, new Date(8.64e15 + 1).getTime(),
          new Date('2001-02-03T04:05:06Z').getTime(), typeof Date.now()];"""
NODE["clock.performance"] = """
  return [typeof performance.now(), performance.now() >= 0, typeof performance.timeOrigin,
          Math.abs(performance.timeOrigin + performance.now() - Date.now()) < 1000,
          Object.prototype.toString.call(performance)];"""

# ---- Event, CustomEvent, EventTarget ----
NODE["events.order_once_remove"] = """
  const t = new EventTarget(), log = [];
  const a = (e) => log.push('a:' + e.type);
  t.addEventListener('x', a);
  t.addEventListener('x', a);            // a duplicate: ignored
  t.addEventListener('x', { handleEvent(e) { log.push('obj:' + (this !== t)); } });
  t.addEventListener('x', () => log.push('once'), { once: true });
  t.addEventListener('y', () => log.push('y'));
  t.dispatchEvent(new Event('x'));
  t.removeEventListener('x', a);
  t.dispatchEvent(new Event('x'));
  t.addEventListener('x', null);
  return log;"""
NODE["events.fields"] = """
  const t = new EventTarget();
  const e = new Event('go', { cancelable: true, bubbles: true });
  let seen;
  t.addEventListener('go', (ev) => {
    ev.preventDefault();
    seen = [ev.eventPhase, ev.target === t, ev.currentTarget === t, ev.defaultPrevented,
            ev.composedPath().length, ev.isTrusted, ev.type, ev.bubbles, ev.cancelable];
  });
  const ret = t.dispatchEvent(e);
  return [seen, ret, e.eventPhase, e.currentTarget, e.target === t, e.defaultPrevented,
          e.returnValue, typeof e.timeStamp, Event.AT_TARGET, e.composedPath().length];"""
NODE["events.not_cancelable"] = """
  const t = new EventTarget();
  t.addEventListener('a', (e) => e.preventDefault());
  return [t.dispatchEvent(new Event('a')), t.dispatchEvent(new Event('a', { cancelable: true }))];"""
# Named difference: node 20 lets a passive listener cancel; the DOM Standard
# ignores preventDefault there (as browsers do). Constants on the prototype too.
SPEC["events.passive"] = ("""
  const t = new EventTarget();
  t.addEventListener('b', (e) => e.preventDefault(), { passive: true });
  return [t.dispatchEvent(new Event('b', { cancelable: true })), new Event('x').AT_TARGET];""", [True, 2])
NODE["events.stop_immediate"] = """
  const t = new EventTarget(), log = [];
  t.addEventListener('x', (e) => { log.push(1); e.stopImmediatePropagation(); });
  t.addEventListener('x', () => log.push(2));
  t.dispatchEvent(new Event('x'));
  return log;"""
NODE["events.custom_event"] = """
  const t = new EventTarget();
  let d;
  t.addEventListener('c', (e) => { d = e.detail; });
  t.dispatchEvent(new CustomEvent('c', { detail: { n: 1 } }));
  return [d, new CustomEvent('c').detail, new CustomEvent('c') instanceof Event];"""
NODE["events.errors"] = """
  const out = [];
  try { new Event(); } catch (e) { out.push(e.name); }
  try { new EventTarget().dispatchEvent({ type: 'x' }); } catch (e) { out.push(e.name); }
  return out;"""
NODE["events.signal_option"] = """
  const t = new EventTarget(), ac = new AbortController(), log = [];
  t.addEventListener('x', () => log.push('x'), { signal: ac.signal });
  t.dispatchEvent(new Event('x'));
  ac.abort();
  t.dispatchEvent(new Event('x'));
  t.addEventListener('x', () => log.push('late'), { signal: ac.signal });
  t.dispatchEvent(new Event('x'));
  return log;"""
NODE["events.remove_during_dispatch"] = """
  const t = new EventTarget(), log = [];
  const b = () => log.push('b');
  t.addEventListener('x', () => { log.push('a'); t.removeEventListener('x', b); });
  t.addEventListener('x', b);
  t.dispatchEvent(new Event('x'));
  return log;"""

# ---- AbortController, AbortSignal ----
NODE["abort.default_reason"] = """
  const ac = new AbortController(), log = [];
  ac.signal.addEventListener('abort', (e) => log.push(e.type));
  ac.signal.onabort = () => log.push('onabort');
  const before = ac.signal.aborted;
  ac.abort();
  ac.abort('again');
  const r = ac.signal.reason;
  let thrown;
  try { ac.signal.throwIfAborted(); } catch (e) { thrown = e === r; }
  return [before, ac.signal.aborted, r.name, r.message, r.code, r instanceof Error, log, thrown];"""
NODE["abort.custom_reason"] = """
  const ac = new AbortController();
  ac.abort({ why: 1 });
  return [ac.signal.reason, AbortSignal.abort('r').reason, AbortSignal.abort().reason.name];"""
NODE["abort.timeout"] = SLEEP + """
  const s = AbortSignal.timeout(10);
  const before = s.aborted;
  await sleep(30);
  return [before, s.aborted, s.reason.name, s.reason.message, s.reason.code];"""
NODE["abort.any"] = """
  const a = new AbortController(), b = new AbortController();
  const s = AbortSignal.any([a.signal, b.signal]);
  const before = s.aborted;
  b.abort('b went');
  return [before, s.aborted, s.reason, AbortSignal.any([AbortSignal.abort('x')]).reason];"""
NODE["abort.illegal_constructor"] = """
  try { new AbortSignal(); return 'made'; } catch (e) { return e.name; }"""
NODE["abort.tags"] = """
  const ac = new AbortController();
  return [Object.prototype.toString.call(ac), Object.prototype.toString.call(ac.signal),
          ac.signal instanceof EventTarget];"""

# ---- Blob, File ----
NODE["blob.parts"] = """
  const inner = new Blob(['in']);
  const buf = new Uint8Array([0x61, 0x62, 0x63, 0x64]).buffer;
  const b = new Blob(['h\\u00e9', new Uint8Array([0x21]), buf, inner, new DataView(buf, 1, 2), 7, '\\ud800'],
                     { type: 'Text/HTML;Charset=UTF-8' });
  return [b.size, b.type, Array.from(new Uint8Array(await b.arrayBuffer())), await b.text(),
          Object.prototype.toString.call(b)];"""
NODE["blob.slice"] = """
  const b = new Blob(['0123456789'], { type: 'text/plain' });
  const cuts = [[], [2], [2, 5], [-3], [-3, -1], [5, 2], [0, 100], [-100, 3]];
  const out = [];
  for (const c of cuts) { const s = b.slice(...c); out.push([s.size, s.type, await s.text()]); }
  const typed = b.slice(0, 2, 'Image/PNG');
  out.push(typed.type, b.slice(0, 2, '\\u00e9').type);
  return out;"""
# node 20 aborts on a fractional position; WebIDL's long long truncates it.
SPEC["blob.slice_fraction"] = ("""
  return await new Blob(['0123456789']).slice(1.7, 4.2).text();""", "123")
NODE["blob.types"] = """
  return [new Blob([]).size, new Blob().type, new Blob([], { type: 'A/B' }).type,
          new Blob([], { type: 'caf\\u00e9' }).type, new Blob([], { type: undefined }).type];"""
NODE["blob.bad_parts"] = """
  const out = [];
  for (const p of [1, 'str', {}, null]) {
    try { new Blob(p); out.push('made'); } catch (e) { out.push(e.name); }
  }
  return out;"""
NODE["blob.file"] = """
  const f = new File(['ab', 'c'], 'n.txt', { type: 'text/plain', lastModified: 42 });
  const g = new File([], 'x');
  return [f.name, f.size, f.type, f.lastModified, f instanceof Blob, await f.text(),
          Object.prototype.toString.call(f), typeof g.lastModified, g.lastModified > 0];"""
NODE["blob.copies"] = """
  const u = new Uint8Array([1, 2, 3]);
  const b = new Blob([u]);
  u[0] = 9;
  const ab = await b.arrayBuffer();
  new Uint8Array(ab)[1] = 9;
  return Array.from(new Uint8Array(await b.arrayBuffer()));"""

# ---- crypto ----
NODE["crypto.get_random_values"] = """
  const a = new Uint8Array(64);
  const same = crypto.getRandomValues(a) === a;
  const sub = new Uint8Array(8);
  crypto.getRandomValues(sub.subarray(2, 4));
  const kinds = [Int8Array, Uint16Array, Int32Array, Uint32Array, BigInt64Array, Uint8ClampedArray]
    .map((T) => crypto.getRandomValues(new T(4)).length);
  return [same, a.some((x) => x !== 0), sub[0] === 0 && sub[1] === 0 && sub[4] === 0, kinds,
          crypto.getRandomValues(new Uint8Array(0)).length,
          crypto.getRandomValues(new Uint8Array(65536)).length];"""
NODE["crypto.errors"] = """
  const out = [];
  for (const v of [new Float32Array(2), new Float64Array(1), new DataView(new ArrayBuffer(4)), [1, 2]]) {
    try { crypto.getRandomValues(v); out.push('filled'); } catch (e) { out.push(e.name); }
  }
  try { crypto.getRandomValues(new Uint8Array(65537)); } catch (e) { out.push(e.name, e.code, e.message); }
  try { crypto.getRandomValues(new Float32Array(1)); } catch (e) { out.push(e.code); }
  return out;"""
NODE["crypto.random_uuid"] = """
  const ids = new Set();
  let shaped = true;
  for (let i = 0; i < 500; i++) {
    const u = crypto.randomUUID();
    ids.add(u);
    shaped = shaped && /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u);
  }
  return [ids.size, shaped];"""
# Named differences from node: no SubtleCrypto; the WebCrypto tag is 'Crypto'.
SPEC["crypto.no_subtle"] = ('''
  return [Object.prototype.toString.call(crypto), typeof crypto.subtle];''', ["[object Crypto]", "undefined"])

# ---- URL (the WHATWG parser) ----
URL_CASES = [
    ("http://example.com/a/b/../c?q=1#f", None),
    ("HTTP://EXAMPLE.COM:80/", None),
    ("https://user:pa ss@host:443/p", None),
    ("https://us@er:p:w@host/", None),
    ("http://a^b:c`d{e}@h/", None),
    ("http://[::1]/", None),
    ("http://[2001:db8::1:0:0:1]:8080/", None),
    ("http://[0:0:0:0:0:ffff:192.168.0.1]/", None),
    ("http://[::ffff:1.2.3.4]/", None),
    ("http://[1:0::]/", None),
    ("http://[::]/", None),
    ("http://[1::2::3]/", None),
    ("http://[1:2:3:4:5:6:7:8:9]/", None),
    ("http://[::1.2.3.256]/", None),
    ("http://0x7f.0.0.1/", None),
    ("http://127.1/", None),
    ("http://0300.0250.0.1/", None),
    ("http://4294967295/", None),
    ("http://4294967296/", None),
    ("http://1.2.3.4.5/", None),
    ("http://1.2.3.09/", None),
    ("http://foo.0x/", None),
    ("http://a b/", None),
    ("http://exa%41mple.com/", None),
    ("http://%30%78%37%66.1/", None),
    ("http://ExAmPlE.CoM./", None),
    ("http://a^b/", None),
    ("http://user@/", None),
    ("http://a:65535/", None),
    ("http://a:65536/", None),
    ("http://a:0x/", None),
    ("http://a:/", None),
    ("ws://a:80/", None),
    ("wss://a:443/x", None),
    ("ftp://a:21/", None),
    ("file:///C:/x/../y", None),
    ("file:///C:/../../y", None),
    ("file://localhost/etc/passwd", None),
    ("file://host/share/x", None),
    ("file:c:\\foo\\bar", None),
    ("file:/a/b", None),
    ("../../x?y#z", "http://a/b/c/d;p?q"),
    ("//other/x", "https://a/b"),
    ("?q", "http://a/b/c?x#y"),
    ("#h", "http://a/b?c"),
    ("", "http://a/b?c#d"),
    ("/abs", "http://a/b/c"),
    ("g;x=1/../y", "http://a/b/c/d;p?q"),
    ("x", "file:///C:/a/b"),
    ("/x", "file:///C:/a/b"),
    ("x", "mailto:a@b"),
    ("#f", "mailto:a@b"),
    ("http:a/b", "http://x/y"),
    ("http:/a/b", None),
    ("\\\\x\\y", "http://a/b"),
    ("mailto:someone@example.com", None),
    ("data:text/plain,hello world", None),
    ("javascript:alert(1)", None),
    ("foo://host/p%20a th?q r#f g", None),
    ("foo://Host:99/p", None),
    ("foo://[::1]:5/", None),
    ("foo://a b/", None),
    ("foo:/.//p", None),
    ("sc:\\../", None),
    ("blob:https://a.com:8/uuid", None),
    ("blob:foo://a/b", None),
    ("http://a/%2e%2E/b", None),
    ("http://a/b/%2e", None),
    ("http://a/b/./", None),
    ("http://a/b/..", None),
    ("http://a\\b\\c", None),
    ("  http://a/\t\nb  ", None),
    ("http://a/?'quote\"", None),
    ("sc://a/?'quote", None),
    ("http://a/p?q=%zz&x=\u00e9", None),
    ("http://a/\u00e9?\u00e9#\u00e9", None),
    ("http://a/`{}^|<>\"", None),
    ("http://a/#`<> \"", None),
    ("http://a/b;c", None),
    ("https://ex.com/a?b=1&b=2", None),
    ("ht tp://a/", None),
    ("1http://a/", None),
    ("//a/b", None),
    ("", None),
    ("relative", None),
    ("http://", None),
    ("https://a\u0000b/", None),
    ("non-spec:/", None),
    ("HTTPS://A.COM:0443/", None),
    ("http://\u00df.de/", None),
    ("http://M\u00fcnchen.de/", None),
    ("http://\uff25\uff38\uff21\uff2d\uff30\uff2c\uff25\u3002com/", None),
    ("http://\u4f8b\u3048.\u30c6\u30b9\u30c8/", None),
    ("http://%C3%BC.de/", None),
    ("http://b\u00fccher-\u00e4rger.example/", None),
    ("http://xn--mnchen-3ya.de/", None),
    ("http://\u0627\u0644\u0639\u0631\u0628\u064a\u0629.eg/", None),
    ("http://\ud83d\ude00.ws/", None),
]
URL_PARTS = """
  const parts = (u) => [u.href, u.origin, u.protocol, u.username, u.password, u.host, u.hostname,
                        u.port, u.pathname, u.search, u.hash, String(u), u.toJSON()];"""
for i, (u, base) in enumerate(URL_CASES):
    import json as _json
    call = "new URL(%s%s)" % (_json.dumps(u), ", " + _json.dumps(base) if base else "")
    NODE["url.parse_%02d" % i] = URL_PARTS + """
  try { return parts(%s); } catch (e) { return [e.name, e.message]; }""" % call

NODE["url.can_parse"] = """
  return [URL.canParse('http://a'), URL.canParse('nope'), URL.canParse('x', 'http://a/'),
          URL.canParse('x', 'nope')];"""
NODE["url.setters"] = URL_PARTS + """
  const out = [];
  const u = new URL('http://user:pw@a.com:8080/p/q?s=1#h');
  const set = (k, v) => { u[k] = v; out.push(k + '=' + u.href); };
  set('search', 'a=1 2&b');
  set('search', '?c');
  set('search', '');
  set('hash', 'x y');
  set('hash', '#');
  set('hash', '');
  set('pathname', '/a b/../c');
  set('pathname', 'noslash');
  set('port', '8080abc');
  set('port', '80');
  set('port', '99999');
  set('port', '');
  set('host', 'ex.com:99');
  set('host', 'bad host');
  set('hostname', 'new.org');
  set('hostname', 'x:1');
  set('protocol', 'https');
  set('protocol', 'foo');
  set('protocol', 'ws:');
  set('protocol', '1bad');
  set('username', 'u s@');
  set('password', 'p@ss:');
  set('password', '');
  set('username', '');
  set('href', 'http://z/');
  try { u.href = 'no'; } catch (e) { out.push(e.name); }
  const m = new URL('mailto:a@b');
  m.pathname = '/x'; m.host = 'h'; m.port = '1'; m.username = 'u';
  out.push(parts(m));
  const f = new URL('file:///a');
  f.host = 'srv'; f.port = '2'; f.username = 'u';
  out.push(parts(f));
  const n = new URL('foo://h/p');
  n.protocol = 'http'; n.hostname = 'other';
  out.push(parts(n));
  return out;"""
NODE["url.search_params_link"] = """
  const u = new URL('https://x.org/?a=1&b=2&a=3');
  const sp = u.searchParams;
  const out = [sp === u.searchParams, sp.getAll('a'), sp.get('b'), sp.get('zz'), sp.has('a'), sp.size];
  sp.append('c', 'd e&f');
  out.push(u.href);
  sp.delete('a');
  out.push(u.href);
  u.search = '?z=9';
  out.push(sp.get('z'), sp.size);
  sp.delete('z');
  out.push(u.href, u.search);
  u.href = 'http://h/?k=v';
  out.push(sp.get('k'));
  return out;"""
NODE["url.search_params_parse"] = """
  const sp = new URLSearchParams('?a=1&b=2+3&c=%41%zz&d&=e&a=4&&f=%E2%82%AC&g=%FF');
  return [[...sp], sp.toString(), sp.size, [...sp.keys()], [...sp.values()]];"""
NODE["url.search_params_methods"] = """
  const sp = new URLSearchParams([['b', '2'], ['a', '1'], ['b', '3'], ['a', '0'], ['\\u00e9', 'x']]);
  const out = [sp.has('b', '3'), sp.has('b', '9')];
  sp.delete('b', '2');
  out.push(sp.toString());
  sp.set('a', 'new');
  out.push(sp.toString());
  sp.sort();
  out.push(sp.toString());
  const seen = [];
  sp.forEach((v, k, self) => seen.push([k, v, self === sp]));
  out.push(seen);
  return out;"""
NODE["url.search_params_encode"] = """
  const sp = new URLSearchParams();
  sp.append(' ~!*()\\'-._', '+&=?#/%\\u00e9\\ud83d\\ude00\\ud800');
  return [sp.toString(), sp.get(' ~!*()\\'-._')];"""
NODE["url.search_params_init"] = """
  const a = new URLSearchParams({ x: '1', y: 2, z: null });
  const b = new URLSearchParams(a);
  b.append('w', 'v');
  const out = [a.toString(), b.toString(), new URLSearchParams(new Map([['m', 'n']])).toString(),
               new URLSearchParams('').toString(), new URLSearchParams().size,
               Object.prototype.toString.call(a)];
  try { new URLSearchParams([['a']]); } catch (e) { out.push(e.name); }
  return out;"""
NODE["url.object_url"] = """
  const id = URL.createObjectURL(new Blob(['x']));
  URL.revokeObjectURL(id);
  return [id.startsWith('blob:nodedata:'), id.length];"""
NODE["url.tags"] = """
  const u = new URL('http://a/');
  return [Object.prototype.toString.call(u), JSON.stringify({ u }), u + '', typeof URL.parse];"""

# ---- FileReader: node has none; the values are the File API's ----
FR = """
  const read = (how, blob, ...args) => new Promise((resolve) => {
    const r = new FileReader(), log = [];
    for (const t of ['loadstart', 'progress', 'load', 'loadend']) r.addEventListener(t, (e) => log.push(t));
    r.onloadend = (e) => resolve([log, r.readyState, r.result, e.loaded, e.total]);
    r[how](blob, ...args);
    log.push('sync:' + r.readyState + ':' + r.result);
  });"""
SPEC["reader.data_url"] = (FR + """
  return [await read('readAsDataURL', new Blob(['hi'], { type: 'text/plain' })),
          (await read('readAsDataURL', new Blob([new Uint8Array([0, 255, 1])])))[2]];""",
    [[["sync:1:null", "loadstart", "progress", "load", "loadend"], 2, "data:text/plain;base64,aGk=", 2, 2],
     "data:application/octet-stream;base64,AP8B"])
SPEC["reader.array_buffer"] = (FR + """
  const [log, state, result] = await read('readAsArrayBuffer', new Blob([new Uint8Array([1, 2, 3])]));
  return [state, Object.prototype.toString.call(result), Array.from(new Uint8Array(result))];""",
    [2, "[object ArrayBuffer]", [1, 2, 3]])
SPEC["reader.text"] = (FR + """
  const b = new Blob([new Uint8Array([0x63, 0x61, 0x66, 0xe9])]);
  return [(await read('readAsText', b, 'latin1'))[2], (await read('readAsText', new Blob(['caf\\u00e9'])))[2],
          (await read('readAsText', new Blob(['x']), 'no-such-encoding'))[2],
          (await read('readAsBinaryString', b))[2]];""",
    ["caf\u00e9", "caf\u00e9", "x", "caf\u00e9"])
SPEC["reader.busy_and_abort"] = ("""
  const r = new FileReader(), log = [];
  r.onabort = () => log.push('onabort');
  r.addEventListener('loadend', () => log.push('loadend'));
  r.addEventListener('load', () => log.push('load'));
  r.readAsText(new Blob(['x']));
  try { r.readAsText(new Blob(['y'])); } catch (e) { log.push(e.name); }
  r.abort();
  await new Promise((res) => setTimeout(res, 10));
  let bad;
  try { r.readAsText('not a blob'); } catch (e) { bad = e.name; }
  return [log, r.readyState, r.result, bad, FileReader.DONE, r.EMPTY];""",
    [["InvalidStateError", "onabort", "loadend"], 2, None, "TypeError", 2, 0])
SPEC["reader.subclass_handlers"] = ("""
  class Mine extends FileReader {}
  const r = new Mine();
  const t = new EventTarget();
  let plain = 'not called';
  t.onx = () => { plain = 'called'; };
  t.dispatchEvent(new Event('x'));
  const got = await new Promise((res) => { r.onload = () => res(r.result); r.readAsText(new Blob(['ok'])); });
  return [got, plain];""", ["ok", "not called"])
# three.js GLTFExporter: onloadend set, then readAsArrayBuffer
SPEC["reader.gltf_exporter_shape"] = ("""
  const blob = new Blob([new Uint8Array([0x67, 0x6c, 0x54, 0x46])], { type: 'application/octet-stream' });
  const r = new FileReader();
  const bytes = await new Promise((res) => {
    r.onloadend = function () { res(Array.from(new Uint8Array(r.result))); };
    r.readAsArrayBuffer(blob);
  });
  return [bytes, typeof window, typeof document];""",
    [[0x67, 0x6C, 0x54, 0x46], "undefined", "undefined"])
