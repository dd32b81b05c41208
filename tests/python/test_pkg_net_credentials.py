"""The broker and what a guest sends where (issue 27, E4 and E6): its
credential-like headers stay behind on a redirect to another origin (the
built-in names and words, and those RuntimeConfig(net_credential_headers)
names); the most specific allow_net entry decides, not the first listed;
pip's vendored requests and urllib3, and the public urllib3, go through the
broker like the public requests. Local servers (tests/netsrv.py) only."""
import json
import urllib.parse

import pytest

import ccpkg  # noqa: F401  (builds the package)
from codecage import GuestError, IsolatedRuntime, RuntimeConfig


# the servers of test_pkg_net.py: 127.0.0.1 and, another origin, 127.0.0.2
from test_pkg_net import srv, srv2  # noqa: E402,F401  (fixtures)

ALLOW = ["127.0.0.1", "127.0.0.2"]


def redir(srv, target):
    return srv.url("/redir?to=" + urllib.parse.quote(target, ""))


# guest-set headers that must not follow a redirect to another origin
CREDENTIALS = ["X-Api-Key", "Api-Key", "X-Auth-Token", "Cookie", "Authorization",
               "X-Goog-Api-Key", "Private-Token", "X-Amz-Security-Token", "X-Session-Id",
               "X-Client-Secret"]


def headers_seen(rt, lang, url, sent):
    """The headers the server saw for a request with `sent` that may be
    redirected, lower-cased names."""
    if lang == "javascript":
        text = rt.eval("(async () => (await fetch(%s, {headers: %s})).text())()"
                       % (json.dumps(url), json.dumps(sent)))
    else:
        text = rt.eval("import requests\nrequests.get(%r, headers=%r).text" % (url, sent))
    return json.loads(text)["headers"]


@pytest.mark.parametrize("lang", ["javascript", "python"])
def test_credential_headers_stay_behind_on_a_redirect_to_another_origin(srv, srv2, lang):
    # Before the fix: only Authorization and Cookie were dropped; X-Api-Key
    # and the like went on to whatever origin a redirect named.
    sent = {h: "s3cret-" + h for h in CREDENTIALS}
    sent["X-Plain"] = "ordinary"
    with IsolatedRuntime(RuntimeConfig(allow_net=ALLOW), language=lang) as rt:
        got = headers_seen(rt, lang, redir(srv, srv2.url("/echo")), sent)
        assert got.get("x-plain") == "ordinary", got
        leaked = [h for h in CREDENTIALS if h.lower() in got]
        assert leaked == [], got
        # reverse: the same origin keeps every one
        got = headers_seen(rt, lang, redir(srv, srv.url("/echo")), sent)
        assert all(got.get(h.lower()) == sent[h] for h in CREDENTIALS), got


def test_the_host_names_more_credential_headers(srv, srv2):
    cfg = RuntimeConfig(allow_net=ALLOW, net_credential_headers=["X-Tenant"])
    sent = {"X-Tenant": "acme", "X-Plain": "ordinary"}
    with IsolatedRuntime(cfg, language="javascript") as rt:
        got = headers_seen(rt, "javascript", redir(srv, srv2.url("/echo")), sent)
        assert "x-tenant" not in got and got["x-plain"] == "ordinary", got
        assert headers_seen(rt, "javascript", redir(srv, srv.url("/echo")), sent)["x-tenant"] == "acme"
    # reverse: without it, X-Tenant is an ordinary header and goes on
    with IsolatedRuntime(RuntimeConfig(allow_net=ALLOW), language="javascript") as rt:
        assert headers_seen(rt, "javascript", redir(srv, srv2.url("/echo")), sent)["x-tenant"] == "acme"


@pytest.mark.parametrize("bad", [["X Bad"], ["X-Bad\r\n"], [""]])
def test_a_bad_credential_header_name_is_refused(bad):
    from codecage import InvalidInputError
    with pytest.raises(InvalidInputError, match="credential_headers\\[0\\].*not a header name"):
        RuntimeConfig(allow_net=["127.0.0.1"], net_credential_headers=bad)


@pytest.mark.parametrize("order", [1, -1])
def test_the_most_specific_entry_decides(srv, order):
    # Before the fix: the first entry that matched decided. With the
    # wildcard listed first, in.example.test (a loopback address) was
    # refused although an entry names it exactly, which allows that.
    url = srv.url("/echo", host="in.example.test")
    entries = ["*.example.test", f"in.example.test:{srv.port}"][::order]
    cfg = RuntimeConfig(allow_net=entries, net_test_resolve={"in.example.test": "127.0.0.1"})
    with IsolatedRuntime(cfg, language="javascript") as rt:
        assert json.loads(rt.eval("fetch(%s).then(r => r.text())" % json.dumps(url)))["path"] \
            == "/echo"
    # reverse: the wildcard alone does not reach a loopback address
    cfg = RuntimeConfig(allow_net=["*.example.test"],
                        net_test_resolve={"in.example.test": "127.0.0.1"})
    with IsolatedRuntime(cfg, language="javascript") as rt:
        with pytest.raises(GuestError, match="a loopback address"):
            rt.eval("fetch(%s).then(r => r.text())" % json.dumps(url))


# ---- E4: pip's vendored requests and urllib3 ----

VENDORED = {
    "pip requests": "import pip._vendor.requests as r\nr.get(%r).json()['path']",
    "pip urllib3": ("import pip._vendor.urllib3 as u, json\n"
                    "json.loads(u.PoolManager().request('GET', %r).data)['path']"),
    "urllib3": ("import urllib3, json\n"
                "json.loads(urllib3.PoolManager().request('GET', %r).data)['path']"),
    "requests": "import requests\nrequests.get(%r).json()['path']",
}


@pytest.mark.parametrize("name", sorted(VENDORED))
def test_vendored_requests_and_urllib3_go_through_the_broker(srv, name):
    # Before the fix: pip._vendor.requests (and urllib3 itself) opened a
    # socket of its own, and the PermissionError told the user to set
    # allow_net, which was set.
    with IsolatedRuntime(RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"]),
                         language="python") as rt:
        assert rt.eval(VENDORED[name] % srv.url("/echo?v"), timeout=60) == "/echo?v"


def test_a_socket_of_the_guest_is_explained_as_it_is(srv):
    # With allow_net set, a library that opens its own socket is told why
    # that cannot work, not to set allow_net.
    code = ("import socket\ntry:\n    socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
            "except OSError as e:\n    r = str(e)\nr")
    with IsolatedRuntime(RuntimeConfig(allow_net=[f"127.0.0.1:{srv.port}"]),
                         language="python") as rt:
        text = rt.eval(code)
        assert "even with allow_net" in text and "urllib3" in text, text
        assert "RuntimeConfig(allow_net=" not in text, text
    # reverse: without a policy the guest is told how to get one
    with IsolatedRuntime(language="python") as rt:
        assert "RuntimeConfig(allow_net=" in rt.eval(code)
