"""The network API from C (cc_net_options, cc_runtime_set_net, the request
and response hooks, cc_net_add_header): build/tests/cc-netdriver against a
local server."""
import conftest
import netsrv


def test_network_from_c():
    s = netsrv.Server("127.0.0.1")
    try:
        out = conftest.drive("cc-netdriver", str(s.port), timeout=120)
        assert "javascript fetch with the hook's header" in out
    finally:
        s.close()
