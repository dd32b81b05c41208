"""`codecage mcp`: displays come back as content blocks after the text
block (images as image blocks, HTML as embedded text resources), checked
raw over stdio and by the official SDK's schema; a DataFrame last value
gives its HTML table; an image over the server's 1 MiB result cap is an
output_limit error, not a failed server."""
import base64

import pytest

import conftest

from conftest import CLI
from mcp_util import Stdio, node

PNG = b"\x89PNG\r\n\x1a\n"


def test_blocks_after_the_text_in_order():
    s = Stdio()
    r = s.call("run_javascript",
               "display('<svg/>', 'image/svg+xml'); display({k: 1});"
               "display(new Uint8Array([0x89, 80, 78, 71, 13, 10, 26, 10]), 'image/png');"
               "display('<b>b</b>', 'text/html'); display('words'); 5")
    assert r["isError"] is False and r["structuredContent"]["value"] == 5
    c = r["content"]
    assert c[0]["type"] == "text" and c[0]["text"].startswith("status: ok\nvalue: 5")
    assert c[1] == {"type": "image", "mimeType": "image/svg+xml",
                    "data": base64.b64encode(b"<svg/>").decode()}
    assert c[2] == {"type": "resource", "resource": {"uri": "codecage://display/2.json",
                                                     "mimeType": "application/json",
                                                     "text": '{"k":1}'}}
    assert c[3] == {"type": "image", "mimeType": "image/png",
                    "data": base64.b64encode(PNG).decode()}
    assert c[4] == {"type": "resource", "resource": {"uri": "codecage://display/4.html",
                                                     "mimeType": "text/html", "text": "<b>b</b>"}}
    assert c[5] == {"type": "text", "text": "words"}
    assert len(c) == 6
    # no displays: the text block alone
    assert len(s.call("run_javascript", "1", id=2)["content"]) == 1
    assert s.close() == []


def test_python_chart_and_dataframe_table():
    conftest.need("matplotlib", "python3-matplotlib is needed")
    conftest.need("pandas", "python3-pandas is needed")
    s = Stdio()
    r = s.call("run_python", "import matplotlib.pyplot as plt\n_ = plt.plot([1, 2])\n7")
    assert r["structuredContent"]["value"] == 7
    assert [b["type"] for b in r["content"]] == ["text", "image"]
    assert base64.b64decode(r["content"][1]["data"]).startswith(PNG)
    # a DataFrame last value cannot cross as a value; its table still comes back
    r = s.call("run_python", "import pandas as pd\npd.DataFrame({'a': [1, 2]})", id=2)
    html = [b for b in r["content"] if b["type"] == "resource"]
    assert len(html) == 1 and "<table" in html[0]["resource"]["text"]
    assert html[0]["resource"]["mimeType"] == "text/html"
    assert s.close() == []


def test_image_over_the_result_cap_is_output_limit():
    s = Stdio()
    r = s.call("run_python",
               "display({'image/png': b'\\x89PNG\\r\\n\\x1a\\n' + bytes(10_000_000)}, raw=True)")
    assert r["isError"] is True
    assert r["structuredContent"]["error"]["kind"] == "output_limit"
    msg = r["structuredContent"]["error"]["message"]
    assert "larger than the limit of 1048576 bytes" in msg
    assert "the server's 1 MiB cap is fixed" in msg and "cc_limits" not in msg
    assert len(r["content"]) == 1
    assert s.call("run_python", "1 + 1", id=2)["structuredContent"]["value"] == 2
    assert s.close() == []


def test_sdk_parses_the_blocks():
    conftest.need("matplotlib", "python3-matplotlib is needed")
    proc = node("sdk_displays.mjs", CLI)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
