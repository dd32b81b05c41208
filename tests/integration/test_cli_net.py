"""`codecage run/eval --allow-net`: the guest reaches the listed hosts
through the host broker and nothing else; a malformed entry is a usage
error before anything starts."""
import json

import pytest

import netsrv
from conftest import cli, ev


@pytest.fixture(scope="module")
def srv():
    s = netsrv.Server("127.0.0.1")
    yield s
    s.close()


def test_cli_allow_net_both_languages(srv):
    allow = ["--allow-net", f"127.0.0.1:{srv.port}"]
    r = ev("javascript", f"fetch('{srv.url('/echo?js')}').then(r => r.json()).then(j => j.path)",
           *allow)
    assert (r.rc, r.value) == (0, "/echo?js"), r
    r = ev("python", "import urllib.request, json\n"
           f"json.loads(urllib.request.urlopen('{srv.url('/echo?py')}').read())['path']", *allow)
    assert (r.rc, r.value) == (0, "/echo?py"), r
    # Another host is refused, with the option named.
    r = ev("javascript", "fetch('http://127.0.0.2:1/').then(() => 'reached', e => e.message)",
           *allow)
    assert r.rc == 0 and "not in allow_net" in r.value, r


def test_cli_without_allow_net_has_no_fetch(srv):
    r = ev("javascript", "typeof fetch")
    assert (r.rc, r.value) == (0, "undefined"), r


def test_cli_fetch_without_allow_net_names_the_option(srv):
    """Regression: calling fetch without --allow-net was a bare
    "'fetch' is not defined" (Python's refusals name allow_net)."""
    r = cli("eval", "--lang", "js", "--", f"fetch('{srv.url('/echo')}')")
    assert r.rc == 1 and "ReferenceError: 'fetch' is not defined" in r.stderr, r.stderr
    assert "--allow-net ENTRY" in r.stderr, r.stderr
    r = ev("javascript", f"fetch('{srv.url('/echo')}')")
    assert r.json["error"]["type"] == "ReferenceError", r
    assert "allow_net" in r.json["error"]["message"], r
    # another undefined name gets no network hint
    r = ev("javascript", "fetchh()")
    assert r.json["error"]["message"] == "'fetchh' is not defined", r


def test_cli_bad_entry_is_invalid_input():
    r = ev("javascript", "1", "--allow-net", "http://x.test")
    assert r.rc == 2, r
    assert "allow_net entry 'http://x.test'" in r.stdout + r.stderr, r


def test_cli_credential_headers_stay_behind_on_another_origin(srv):
    # Before the fix (issue 27, E6): X-Api-Key and the like the guest set
    # followed a redirect to another port; only Authorization and Cookie
    # were dropped.
    other = netsrv.Server("127.0.0.1")
    try:
        code = ("fetch(%s, {headers: {'X-Api-Key': 'k', 'X-Auth-Token': 't', 'Api-Key': 'a',"
                " 'X-Plain': 'p'}}).then(r => r.json()).then(j => j.headers)")
        to = srv.url("/redir?to=" + other.url("/echo"))
        r = ev("javascript", code % json.dumps(to), "--allow-net", "127.0.0.1")
        assert r.rc == 0 and r.value["x-plain"] == "p", r
        assert not {"x-api-key", "x-auth-token", "api-key"} & set(r.value), r
        # reverse: the same origin keeps them
        to = srv.url("/redir?to=" + srv.url("/echo"))
        r = ev("javascript", code % json.dumps(to), "--allow-net", "127.0.0.1")
        assert r.rc == 0 and r.value["x-api-key"] == "k", r
    finally:
        other.close()


def test_cli_pip_vendored_requests_go_through_the_broker(srv):
    # Before the fix (E4): pip._vendor.requests opened its own socket and
    # the PermissionError told the user to pass --allow-net, which was given.
    r = ev("python", "import pip._vendor.requests as r\n"
           f"r.get('{srv.url('/echo?pip')}').json()['path']", "--allow-net", "127.0.0.1")
    assert (r.rc, r.value) == (0, "/echo?pip"), r
