"""The network API from C (cc_net_options, cc_runtime_set_net, the request
and response hooks, cc_net_add_header; cc_options.net for a runtime, a
pool and a fork server): build/tests/cc-netdriver and cc-netoptdriver
against a local server."""
import conftest
import netsrv

# the checks each driver makes (test_sanitized.py runs them too)
NET_CHECKS, NETOPT_CHECKS = 13, 27


def test_network_from_c():
    s = netsrv.Server("127.0.0.1")
    try:
        out = conftest.drive("cc-netdriver", str(s.port), checks=NET_CHECKS, timeout=120)
        assert "javascript fetch with the hook's header" in out
        assert "another origin gets no credential header" in out
    finally:
        s.close()


def test_network_in_options_from_c():
    """cc_options.net reaches every session of a pool and a fork server
    without cc_runtime_set_net; a bad entry is refused at their _new."""
    s = netsrv.Server("127.0.0.1")
    try:
        out = conftest.drive("cc-netoptdriver", str(s.port), checks=NETOPT_CHECKS, timeout=240)
        assert "a forked pool session reaches the server" in out
        assert "a fork server's session reaches the server" in out
        assert "cc_pool_new refuses a bad entry" in out
    finally:
        s.close()
