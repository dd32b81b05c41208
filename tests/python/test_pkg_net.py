"""Network by allow-list, brokered by the host (README, "Network"): fetch in
JavaScript, urllib and requests in Python reach allow-listed hosts and
nothing else. Local servers only (127.0.0.0/8); names are mapped by the
test-only resolver (RuntimeConfig(net_test_resolve=...))."""
import json
import time

import pytest

import ccpkg  # noqa: F401  (builds the package)
import netsrv

from codecage import GuestError, InvalidInputError, IsolatedRuntime, RuntimeConfig


@pytest.fixture(scope="module")
def srv():
    s = netsrv.Server("127.0.0.1")
    yield s
    s.close()


@pytest.fixture(scope="module")
def srv2():
    s = netsrv.Server("127.0.0.2")
    yield s
    s.close()


def js(cfg):
    return IsolatedRuntime(cfg, language="javascript")


def py(cfg):
    return IsolatedRuntime(cfg, language="python")


def fetch_js(rt, url, init="{}"):
    """[status, body text] of a fetch, or raises GuestError."""
    return rt.eval(f"(async () => {{ const r = await fetch({json.dumps(url)}, {init}); "
                   "return [r.status, await r.text()]; })()")


# ---- reaching allow-listed hosts, unchanged code ----

def test_js_fetch_reaches_an_allowed_host(srv):
    with js(RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])) as rt:
        got = rt.eval(f"""(async () => {{
            const r = await fetch('{srv.url("/echo?q=1")}', {{method: 'POST',
                headers: new Headers({{'X-Thing': 'v'}}), body: 'hello'}});
            const j = await r.json();
            return [r.status, r.ok, r.statusText, r.headers.get('Content-Type'), r.url,
                    r.redirected, j.method, j.path, j.headers['x-thing'], j.body,
                    r instanceof Response, typeof Request];
        }})()""")
        assert got == [200, True, "OK", "application/json", srv.url("/echo?q=1"), False,
                       "POST", "/echo?q=1", "v", "hello", True, "function"]
        got = rt.eval(f"""(async () => {{
            const r = await fetch(new Request('{srv.url("/big?n=5")}'));
            const b = await r.bytes();
            return [b instanceof Uint8Array, b.length, (await fetch('{srv.url("/big?n=3")}')
                .then(r => r.arrayBuffer())).byteLength];
        }})()""")
        assert got == [True, 5, 3]


def test_fetch_takes_an_abort_signal(srv):
    """Any object with aborted/addEventListener (AbortController's signal,
    or this stand-in) aborts a fetch with an AbortError."""
    with js(RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])) as rt:
        assert rt.eval(f"""(async () => {{
            const sig = {{aborted: false, fns: [],
                          addEventListener(t, fn) {{ if (t === 'abort') this.fns.push(fn); }}}};
            const p = fetch('{srv.url("/slow")}', {{signal: sig}});
            sig.aborted = true;
            sig.fns.forEach(f => f());
            const a = await p.then(() => 'done', e => e.name);
            const b = await fetch('{srv.url()}', {{signal: {{aborted: true}}}})
                .then(() => 'done', e => e.name);
            const c = await fetch('{srv.url()}', {{signal: sig}}).then(() => 'done', e => e.name);
            const d = await fetch('{srv.url()}', {{signal: {{aborted: false,
                addEventListener() {{}}}}}}).then(r => r.status);
            return [a, b, c, d];
        }})()""") == ["AbortError", "AbortError", "AbortError", 200]


def test_python_urllib_requests_and_pandas(srv):
    with py(RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])) as rt:
        assert rt.eval(f"""
import urllib.request, json
r = urllib.request.urlopen(urllib.request.Request('{srv.url()}', data=b'abc',
                           headers={{'X-K': 'v'}}))
j = json.loads(r.read())
(r.status, r.getheader('Content-Type'), j['method'], j['body'], j['headers']['x-k'])
""") == [200, "application/json", "POST", "abc", "v"]
        assert rt.eval(f"""
import requests
r = requests.post('{srv.url()}', json={{'a': 1}}, headers={{'X-R': 'w'}})
(r.status_code, r.ok, r.json()['body'], r.json()['headers']['x-r'], r.headers['content-type'])
""") == [200, True, '{"a": 1}', "w", "application/json"]
        assert rt.eval(f"""
import pandas
pandas.read_csv('{srv.url("/csv")}')['b'].tolist()
""") == [2, 4]


def test_without_allow_net_nothing_is_there(srv):
    with js(RuntimeConfig()) as rt:
        assert rt.eval("[typeof fetch, typeof tools]") == ["undefined", "undefined"]
    with py(RuntimeConfig()) as rt:
        with pytest.raises(GuestError, match="Operation not permitted"):
            rt.eval(f"import urllib.request\nurllib.request.urlopen('{srv.url()}')")


def test_socket_create_connection_names_the_way(srv):
    with py(RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])) as rt:
        with pytest.raises(GuestError, match="use urllib.request or requests.*allow_net"):
            rt.eval(f"import socket\nsocket.create_connection(('127.0.0.1', {srv.port}))")
        # The raw socket stays closed: the worker has no network at all.
        with pytest.raises(GuestError, match="Operation not permitted|Network is unreachable"):
            rt.eval(f"import socket\ns = socket.socket()\ns.connect(('127.0.0.1', {srv.port}))")


def test_refused_destinations_raise_the_usual_errors(srv, srv2):
    cfg = RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])
    with js(cfg) as rt:
        assert rt.eval(f"""fetch('{srv2.url()}').then(() => 'reached',
            e => [e instanceof TypeError, e.message])""") == [
            True, f"fetch failed: refused: http://127.0.0.2:{srv2.port} is not in allow_net "
                  "(allow_net decides which hosts and ports the guest may reach)"]
        # Same host, other port.
        with pytest.raises(GuestError, match="not in allow_net"):
            fetch_js(rt, f"http://127.0.0.1:{srv2.port}/")
    with py(cfg) as rt:
        assert rt.eval(f"""
import urllib.request, urllib.error
try:
    urllib.request.urlopen('{srv2.url()}')
except urllib.error.URLError as e:
    out = str(e.reason)
out""").startswith(f"refused: http://127.0.0.2:{srv2.port} is not in allow_net")
        assert "allow_net" in rt.eval(f"""
import requests
try:
    requests.get('{srv2.url()}')
except requests.exceptions.ConnectionError as e:
    out = str(e)
out""")
    # In reverse: with the entry, the same request reaches the server.
    with js(RuntimeConfig(allow_net=[f"127.0.0.2:{srv2.port}"])) as rt:
        assert fetch_js(rt, srv2.url())[0] == 200


def test_concurrent_fetches_run_concurrently(srv):
    """Five fetches under Promise.all are in the server at the same time
    (the server counts them); one after another, at most one would be."""
    with js(RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])) as rt:
        fetch_js(rt, srv.url("/peak"))
        got = rt.eval(f"Promise.all([1,2,3,4,5].map(() => fetch('{srv.url('/slow')}')"
                      ".then(r => r.status)))")
        assert got == [200] * 5
        assert fetch_js(rt, srv.url("/peak")) == [200, "5"]
        # More than the host's max_pending_calls (64) queue in the guest.
        assert rt.eval(f"Promise.all(Array.from({{length: 100}}, () => fetch('{srv.url()}')"
                       ".then(r => r.status)))") == [200] * 100
        # In reverse: awaited one by one, they never overlap.
        rt.eval(f"(async () => {{ for (let i = 0; i < 3; i++) await fetch('{srv.url('/slow')}'); }})()")
        assert fetch_js(rt, srv.url("/peak")) == [200, "1"]


# ---- SSRF: private ranges, names and rebinding ----

@pytest.mark.parametrize("addr,kind", [
    ("127.0.0.2", "loopback"), ("10.1.2.3", "private"), ("172.16.0.1", "private"),
    ("192.168.1.1", "private"), ("169.254.169.254", "cloud-metadata"),
    ("169.254.1.1", "link-local"), ("100.64.0.1", "CGNAT"), ("224.0.0.1", "multicast"),
    ("0.0.0.0", "unspecified"), ("::1", "loopback"), ("fe80::1", "link-local"),
    ("fd00:ec2::254", "private"), ("::ffff:127.0.0.1", "loopback"), ("ff02::1", "multicast"),
    ("::", "unspecified"), ("64:ff9b::a00:1", "private"),
])
def test_wildcard_names_never_reach_private_ranges(addr, kind):
    cfg = RuntimeConfig(allow_net=["*.example.test"],
                        net_test_resolve={"svc.example.test": addr})
    with js(cfg) as rt:
        with pytest.raises(GuestError, match=f"resolves to .*, a {kind} address; allow_net "
                                             "decides"):
            fetch_js(rt, "http://svc.example.test/")


def test_a_name_or_address_named_exactly_may_be_private(srv2):
    m = {"svc.example.test": "127.0.0.2"}
    # The breach the check stops, seen in reverse: named exactly, it connects.
    with js(RuntimeConfig(allow_net=[f"svc.example.test:{srv2.port}"],
                          net_test_resolve=m)) as rt:
        assert fetch_js(rt, srv2.url(host="svc.example.test"))[0] == 200
    with js(RuntimeConfig(allow_net=["*.example.test", f"127.0.0.2:{srv2.port}"],
                          net_test_resolve=m)) as rt:
        status, body = fetch_js(rt, srv2.url(host="svc.example.test"))
        assert (status, json.loads(body)["headers"]["host"]) == (
            200, f"svc.example.test:{srv2.port}")


def test_rebinding_is_checked_per_request_and_pinned(srv2):
    """The name is resolved by the host once per hop and the connection goes
    to that address (curl never resolves svc.example.test itself: the system
    resolver does not know it); a later change of the answer is checked
    again and refused."""
    allow = ["*.example.test", f"127.0.0.2:{srv2.port}"]
    cfg = RuntimeConfig(allow_net=allow, net_test_resolve={"svc.example.test": "127.0.0.2"})
    url = srv2.url(host="svc.example.test")
    with js(cfg) as rt:
        assert fetch_js(rt, url)[0] == 200
        spec = cfg._net_spec()
        spec["test_resolve"] = ["svc.example.test=127.0.0.3"]
        rt._rt.set_net(spec)
        with pytest.raises(GuestError, match="resolves to 127.0.0.3, a loopback address"):
            fetch_js(rt, url)


def test_redirects_are_checked_at_every_hop(srv, srv2):
    cfg = RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])
    with js(cfg) as rt:
        ok = srv.url("/redir?to=" + srv.url("/echo?after"))
        got = rt.eval(f"fetch('{ok}').then(async r => [r.status, r.redirected, r.url, "
                      "(await r.json()).path])")
        assert got == [200, True, srv.url("/echo?after"), "/echo?after"]
        # To a host the list does not name.
        with pytest.raises(GuestError, match=f"127.0.0.2:{srv2.port} is not in allow_net"):
            fetch_js(rt, srv.url("/redir?to=" + srv2.url()))
        with pytest.raises(GuestError, match="scheme 'file' is not http or https"):
            fetch_js(rt, srv.url("/redir?to=file:///etc/passwd"))
        chain = srv.url("/echo")
        for _ in range(6):
            chain = srv.url("/redir?to=") + __import__("urllib.parse").parse.quote(chain, "")
        with pytest.raises(GuestError, match="more than 5 redirects"):
            fetch_js(rt, chain)


# ---- bad input ----

@pytest.mark.parametrize("url,match", [
    ("http://allowed.example.test@127.0.0.1:{port}/", "user name or password"),
    ("http://2130706433:{port}/", "numeric host form"),
    ("http://0x7f.1:{port}/", "numeric host form"),
    ("http://[::ffff:127.0.0.1]:{port}/", "IPv4-mapped"),
    ("http://svc.example.test.:{port}/", "trailing dot"),
    ("http://b\u00fccher.example.test:{port}/", "xn-- \\(IDNA\\) form"),
    ("http://127.0.0.1:0/", "outside 1..65535"),
    ("http://127.0.0.1:65536/", "outside 1..65535"),
    ("http://127.0.0.1:99999999999/", "not a number in 1..65535"),
    ("ftp://127.0.0.1:{port}/", "scheme 'ftp' is not http or https"),
    ("file:///etc/passwd", "scheme 'file'"),
    ("http://127.0.0.1%2e:{port}/", "escape"),
])
def test_bad_urls_are_refused(srv, url, match):
    cfg = RuntimeConfig(allow_net=["127.0.0.1", "*.example.test"],
                        net_test_resolve={"svc.example.test": "127.0.0.1"})
    with js(cfg) as rt:
        with pytest.raises(GuestError, match=match):
            fetch_js(rt, url.format(port=srv.port))


def test_ipv6_literals_and_names_mapped_to_ipv6():
    s = netsrv.Server("::1")
    try:
        m = {"v6.example.test": "::1"}
        with js(RuntimeConfig(allow_net=[f"[::1]:{s.port}", f"v6.example.test:{s.port}"],
                              net_test_resolve=m)) as rt:
            assert fetch_js(rt, s.url())[0] == 200
            assert fetch_js(rt, s.url(host="v6.example.test"))[0] == 200
        # In reverse: a wildcard match never reaches ::1.
        with js(RuntimeConfig(allow_net=["*.example.test"], net_test_resolve=m)) as rt:
            with pytest.raises(GuestError, match="::1, a loopback address"):
                fetch_js(rt, s.url(host="v6.example.test"))
    finally:
        s.close()


def test_no_cookies_are_kept(srv):
    """The host keeps no cookie jar: a cookie a server sets is never sent
    back by the broker (the guest sees the header and may send it itself)."""
    with js(RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])) as rt:
        got = rt.eval(f"""(async () => {{
            const a = await fetch('{srv.url("/setcookie")}');
            const b = await (await fetch('{srv.url()}')).json();
            const r = await fetch('{srv.url("/redir?to=")}' +
                                  encodeURIComponent('{srv.url("/setcookie")}'));
            const c = await (await fetch('{srv.url()}')).json();
            return [a.headers.get('set-cookie'), 'cookie' in b.headers, 'cookie' in c.headers];
        }})()""")
        assert got == ["sid=secret; Path=/", False, False]


def test_mixed_case_names_are_the_same_name(srv):
    cfg = RuntimeConfig(allow_net=[f"svc.example.test:{srv.port}"],
                        net_test_resolve={"svc.example.test": "127.0.0.1"})
    with js(cfg) as rt:
        assert fetch_js(rt, srv.url(host="SVC.Example.TEST"))[0] == 200


RAW = """
import urllib.request
def cell(f, name):
    return dict(zip(f.__code__.co_freevars, (c.cell_contents for c in f.__closure__)))[name]
call = cell(cell(urllib.request.BrokerHandler._open, 'send'), 'call')
"""


@pytest.mark.parametrize("req,match", [
    ("{'method': 'GET', 'url': U, 'headers': [['X-A', 'v\\r\\nX-B: w']], 'body': None}",
     "has a CR, LF or NUL"),
    ("{'method': 'GET', 'url': U, 'headers': [['X-A', 'v\\0']], 'body': None}",
     "has a CR, LF or NUL"),
    ("{'method': 'GET', 'url': U, 'headers': [['X A', 'v']], 'body': None}",
     "not an HTTP token"),
    ("{'method': 'GET', 'url': U, 'headers': [['Host', 'evil.example']], 'body': None}",
     "set by the host"),
    ("{'method': 'GE T', 'url': U, 'headers': [], 'body': None}", "not an HTTP token"),
    ("{'method': 'CONNECT', 'url': U, 'headers': [], 'body': None}", "not allowed"),
    ("{'method': 'GET', 'url': U, 'headers': [], 'body': 5}", "not bytes"),
    ("{'method': 'GET', 'url': U, 'headers': [], 'body': None, 'x': 1}", "unknown fields"),
    ("{'method': 'POST', 'url': U, 'headers': [], 'body': b'x' * 2000}", "max_body_bytes"),
    ("{'method': 'GET', 'url': U + '\\0', 'headers': [], 'body': None}", "NUL"),
])
def test_the_host_validates_every_field(srv, req, match):
    """A hostile guest skips the guest-side checks and calls the broker
    itself: the host refuses each malformed field."""
    cfg = RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"], net_max_body_bytes=1000)
    with py(cfg) as rt:
        rt.eval(RAW + f"U = '{srv.url()}'")
        err = rt.eval(f"call({req}).get('error')")
        assert err is not None and __import__("re").search(match, err), err
        # In reverse: a well-formed request through the same raw call works.
        assert rt.eval("call({'method': 'GET', 'url': U, 'headers': [], 'body': None})"
                       "['status']") == 200


def test_header_values_are_checked_in_the_guest_too(srv):
    with js(RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])) as rt:
        with pytest.raises(GuestError, match="TypeError: invalid header value"):
            fetch_js(rt, srv.url(), "{headers: {'X-A': 'a\\r\\nX-B: b'}}")


def test_responses_are_cut_at_their_caps(srv):
    cfg = RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"], net_max_response_bytes=100000,
                        net_timeout=1.0)
    with js(cfg) as rt:
        assert fetch_js(rt, srv.url("/big?n=100000"))[0] == 200
        with pytest.raises(GuestError, match="over 100000 bytes .*max_response_bytes"):
            fetch_js(rt, srv.url("/big?n=100001"))
        # A gzip bomb: 8 KiB on the wire, 8 MiB decompressed.
        with pytest.raises(GuestError, match="over 100000 bytes .*max_response_bytes"):
            fetch_js(rt, srv.url("/gzipbomb"))
        t = time.monotonic()
        with pytest.raises(GuestError,
                           match="did not finish in time \\(the net option timeout_s, 1 s\\)"):
            fetch_js(rt, srv.url("/drip"))
        assert time.monotonic() - t < 10
        assert rt.alive
        assert fetch_js(rt, srv.url())[0] == 200


def test_per_eval_limits(srv):
    cfg = RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"], net_max_requests=2,
                        net_max_total_bytes=1500)
    with js(cfg) as rt:
        got = rt.eval(f"""(async () => {{
            const out = [];
            for (let i = 0; i < 3; i++)
                out.push(await fetch('{srv.url("/big?n=10")}').then(r => r.status, e => e.message));
            return out;
        }})()""")
        assert got[:2] == [200, 200]
        assert "2 network requests are used up (the net option max_requests)" in got[2]
        # A new eval has its own count; bytes add up across its requests.
        got = rt.eval(f"""(async () => {{
            const a = await fetch('{srv.url("/big?n=1000")}').then(r => r.status);
            const b = await fetch('{srv.url("/big?n=1000")}').then(r => r.status, e => e.message);
            return [a, b];
        }})()""")
        assert got[0] == 200 and "max_total_bytes" in got[1]


def test_malformed_entries_are_invalid_input_before_anything_starts():
    for bad in ["", "http://x.test", "x.test/path", "user@x.test", "x.test:0", "x.test:99999",
                "*.127.0.0.1", "b\u00fccher.test", "x.test.", "*", "[::1"]:
        with pytest.raises(InvalidInputError, match="allow_net"):
            RuntimeConfig(allow_net=[bad])
    with pytest.raises(TypeError, match="list of str"):
        RuntimeConfig(allow_net="x.test")


# ---- host hooks ----

def test_hooks_refuse_add_headers_and_audit(srv, srv2):
    seen = []

    def on_request(req):
        if req["host"] == "127.0.0.2":
            raise PermissionError("the audit hook refuses 127.0.0.2")
        return {"Authorization": "Bearer host-secret"}

    cfg = RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}", f"127.0.0.2:{srv2.port}"],
                        on_request=on_request, on_response=seen.append)
    with js(cfg) as rt:
        status, body = fetch_js(rt, srv.url())
        assert json.loads(body)["headers"]["authorization"] == "Bearer host-secret"
        with pytest.raises(GuestError, match="refused by the host: the audit hook refuses"):
            fetch_js(rt, srv2.url())
    # The audit hook runs before the guest gets each answer, so in order.
    assert len(seen) == 2
    assert seen[0]["status"] == 200 and seen[0]["url"] == srv.url() and seen[0]["bytes"] > 0
    assert seen[0]["method"] == "GET" and seen[0]["ms"] >= 0 and seen[0]["error"] is None
    assert seen[1]["status"] == 0 and "refused by the host" in seen[1]["error"]


# ---- TLS ----

def test_https_with_a_test_ca(tmp_path):
    ca, cert, key = netsrv.make_ca(str(tmp_path), "svc.example.test")
    s = netsrv.Server("127.0.0.1", tls=(cert, key))
    try:
        url = s.url(host="svc.example.test", scheme="https")
        base = dict(allow_net=[f"https://svc.example.test:{s.port}"],
                    net_test_resolve={"svc.example.test": "127.0.0.1"})
        with js(RuntimeConfig(ca_file=ca, **base)) as rt:
            assert fetch_js(rt, url)[0] == 200
            # An https-only entry refuses plain http to the same host.
            with pytest.raises(GuestError, match="not in allow_net"):
                fetch_js(rt, url.replace("https://", "http://"))
        # In reverse: without the CA, verification fails (it is always on).
        with js(RuntimeConfig(**base)) as rt:
            with pytest.raises(GuestError, match="TLS with svc.example.test failed"):
                fetch_js(rt, url)
    finally:
        s.close()


# ---- sessions from a fork server ----

def test_forked_sessions_get_the_network(srv):
    from codecage import ForkServer
    cfg = RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])
    with ForkServer(cfg, language="javascript") as fs:
        with fs.session() as rt:
            assert fetch_js(rt, srv.url())[0] == 200
            with pytest.raises(GuestError, match="not in allow_net"):
                fetch_js(rt, "http://127.0.0.2:1/")


def test_the_broker_name_is_reserved_and_spares_the_tool_budget(srv):
    """A user tool cannot take the broker's name, and requests do not use
    up the tool call budget."""
    from codecage import ToolBridge
    with js(RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])) as rt:
        with pytest.raises(InvalidInputError, match="reserved for the network broker"):
            rt.bind_function("__codecage_net", lambda *a: 1)
        b = ToolBridge({"f": lambda: 7}, max_calls=1)
        b.attach(rt)
        assert rt.eval(f"Promise.all([fetch('{srv.url()}'), fetch('{srv.url()}')])"
                       ".then(rs => rs.map(r => r.status).concat([f()]))") == [200, 200, 7]
        assert b.calls_made == 1


def test_response_bodies_decode_as_utf8_with_replacement():
    with js(RuntimeConfig(allow_net=["x.example.test"])) as rt:
        assert rt.eval(r"""Promise.all([
            new Response(new Uint8Array([0x68, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80])).text(),
            new Response(new Uint8Array([0x61, 0xff, 0x62, 0xed, 0xa0, 0x80, 0xc3])).text(),
            new Response('h\u00e9llo \u{1F600} ' + 'x'.repeat(20000)).text().then(t => t.length),
            new Response('{"a": [1]}').json()])""") == [
            "h\u00e9\U0001F600", "a\ufffdb\ufffd\ufffd\ufffd\ufffd", 20009, {"a": [1]}]


def test_requests_end_with_their_eval(srv):
    """A request still running when its eval ends (not awaited, or the
    eval's deadline) is cancelled on the host; the runtime serves on."""
    from codecage import TimeoutError as CCTimeout
    with js(RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"], timeout=1.0)) as rt:
        assert rt.eval(f"fetch('{srv.url('/drip')}'); 1") == 1
        with pytest.raises(CCTimeout):
            rt.eval(f"fetch('{srv.url('/drip')}').then(r => r.text())")
        assert rt.alive
        assert fetch_js(rt, srv.url())[0] == 200


def test_pooled_sessions_get_the_network(srv):
    from codecage import SessionPool
    cfg = RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])
    with SessionPool(cfg, language="python", size=1) as pool:
        with pool.checkout(timeout=30) as rt:
            assert rt.eval(f"import urllib.request\nurllib.request.urlopen('{srv.url()}')"
                           ".status") == 200


def test_no_proxy_is_taken_from_the_environment(srv, monkeypatch):
    """libcurl would use http_proxy/ALL_PROXY from the host's environment;
    the broker never does (a dead proxy here would fail every request)."""
    for k in ("http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(k, "http://127.0.0.1:9")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with js(RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])) as rt:
        assert fetch_js(rt, srv.url())[0] == 200


def test_python_pays_for_the_network_only_when_it_imports_it(srv):
    """The bootstrap imports nothing: urllib.request and requests are
    patched when the guest first imports them."""
    with py(RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"])) as rt:
        assert rt.eval("import sys\n[m in sys.modules for m in "
                       "('urllib.request', 'http.client', 'email', 'requests')]") == [
            False, False, False, False]
        assert rt.eval(f"from urllib.request import urlopen\nurlopen('{srv.url()}').status") \
            == 200


def test_a_forked_host_process_gets_a_fresh_broker_pool(srv):
    """The broker's threads stay in the parent: a host process forked after
    requests were made still makes its own (concurrently)."""
    import os
    cfg = RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"], timeout=5)
    with js(cfg) as rt:
        assert fetch_js(rt, srv.url())[0] == 200
    time.sleep(0.3)  # the parent's broker thread is idle, waiting for work
    pid = os.fork()
    if pid == 0:
        code = 4
        try:
            with js(cfg) as rt:
                one = fetch_js(rt, srv.url())[0]
                got = rt.eval(f"Promise.all([1, 2, 3].map(() => fetch('{srv.url()}')"
                              ".then(r => r.status)))")
            code = 0 if (one, got) == (200, [200] * 3) else 3
        finally:
            os._exit(code)
    _, st = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(st) == 0


def test_a_hook_header_with_cr_lf_refuses_the_request(srv):
    cfg = RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"],
                        on_request=lambda req: {"X-Key": "a\r\nInjected: 1"})
    with js(cfg) as rt:
        with pytest.raises(GuestError, match="refused by the host: the request hook returned "
                                             "a header that is not"):
            fetch_js(rt, srv.url())
    # In reverse: a clean header is sent.
    cfg = RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"],
                        on_request=lambda req: {"X-Key": "clean"})
    with js(cfg) as rt:
        assert json.loads(fetch_js(rt, srv.url())[1])["headers"]["x-key"] == "clean"
