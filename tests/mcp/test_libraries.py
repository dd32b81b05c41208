"""`codecage mcp --library`: every JavaScript runtime starts with the
bundle loaded, the run_javascript description names it, and a bundle that
fails to load is reported to the model (the server keeps serving)."""
import json

from mcp_util import Stdio


def test_library_is_loaded_and_named(tmp_path):
    lib = tmp_path / "helper.js"
    lib.write_text("var helper = { twice: function (x) { return 2 * x; } };\n")
    s = Stdio("--library", str(lib))
    tools = s.request({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})["result"]["tools"]
    js = [t for t in tools if t["name"] == "run_javascript"][0]
    assert "Loaded before your code, as browser globals: " + str(lib) in js["description"]
    py = [t for t in tools if t["name"] == "run_python"][0]
    assert "Loaded before your code" not in py["description"]
    r = s.call("run_javascript", "helper.twice(21)", id=2)
    assert r["structuredContent"]["value"] == 42, r
    r = s.call("run_python", "41 + 1", id=3)  # Python runtimes load no libraries
    assert r["structuredContent"]["value"] == 42, r
    s.close()


def test_broken_library_is_reported(tmp_path):
    lib = tmp_path / "broken.js"
    lib.write_text("this is not javascript\n")
    s = Stdio("--library", str(lib))
    r = s.call("run_javascript", "1", id=2)
    assert r["isError"] is True
    text = json.dumps(r)
    assert "loading library" in text and "broken.js" in text and "syntax_error" in text
    assert s.call("run_python", "1", id=3)["structuredContent"]["value"] == 1
    s.close()
