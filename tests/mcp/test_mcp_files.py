"""`codecage mcp` and files (src/mcp/server/files.c): --scratch and --mount, the
`files` argument written before the code runs, the files a call created
or changed in its result, the session's files as MCP resources, and each
HTTP session's scratch of its own."""
import base64
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from conftest import CLI
from mcp_util import Stdio, http_server
from test_http_raw import Conn


def rpc(s, id, method, params=None):
    msg = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return s.request(msg)


@pytest.fixture
def tmp_path():
    """Not pytest's: its folder (/tmp/pytest-of-USER) is mode 0700, which a
    grant's path cannot cross in the worker's user namespace."""
    d = tempfile.mkdtemp(prefix="cc-mcp-files-")
    os.chmod(d, 0o755)
    yield pathlib.Path(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    (d / "sales.csv").write_text("region,amount\nEast,1000\nWest,900\n")
    return d


@pytest.mark.parametrize("tool,code", [
    ("run_javascript", "const t = fs.readFileSync('/tmp/in/a.txt', 'utf8');\n"
                       "fs.writeFileSync('/tmp/out.txt', t.toUpperCase());\n"
                       "fs.readFileSync('/tmp/b.bin').length"),
    ("run_python", "t = open('/tmp/in/a.txt').read()\n"
                   "open('/tmp/out.txt', 'w').write(t.upper())\n"
                   "len(open('/tmp/b.bin', 'rb').read())"),
])
def test_files_in_changed_files_out_and_resources(tool, code):
    s = Stdio()
    lang = tool.split("_")[1]
    r = s.call(tool, code, id=1, files={"in/a.txt": "abc", "/tmp/b.bin": {"$bytes": "AAEC/w=="}})
    sc = r["structuredContent"]
    assert r["isError"] is False, r
    assert sc["value"] == 4
    assert sc["files"] == [{"path": "/tmp/b.bin", "size": 4}, {"path": "/tmp/in/a.txt", "size": 3},
                           {"path": "/tmp/out.txt", "size": 3}]
    assert "files created or changed:\n  /tmp/b.bin (4 bytes)\n" in r["content"][0]["text"]
    # a call that changes nothing lists nothing; one that rewrites a file lists it
    assert s.call(tool, "1 + 1", id=2)["structuredContent"]["files"] == []
    again = "fs.appendFileSync('/tmp/out.txt', 'D')" if lang == "javascript" else \
        "open('/tmp/out.txt', 'a').write('D')"
    assert s.call(tool, again, id=3)["structuredContent"]["files"] == \
        [{"path": "/tmp/out.txt", "size": 4}]
    res = rpc(s, 4, "resources/list")["result"]["resources"]
    uri = "codecage://%s/tmp/out.txt" % lang
    assert {"uri": uri, "name": "out.txt", "title": "/tmp/out.txt", "mimeType": "text/plain",
            "size": 4} in res
    got = rpc(s, 5, "resources/read", {"uri": uri})["result"]["contents"]
    assert got == [{"uri": uri, "mimeType": "text/plain", "text": "ABCD"}]
    blob = rpc(s, 6, "resources/read", {"uri": "codecage://%s/tmp/b.bin" % lang})
    assert base64.b64decode(blob["result"]["contents"][0]["blob"]) == b"\x00\x01\x02\xff"
    s.close()


def test_resources_bad_uris_and_no_host_files():
    s = Stdio()
    s.call("run_javascript", "1", id=1)
    for uri in ["codecage://javascript/etc/passwd", "codecage://javascript/tmp/../etc/passwd",
                "codecage://python/tmp/x", "file:///etc/passwd", "codecage://javascript/tmp/none"]:
        r = rpc(s, 2, "resources/read", {"uri": uri})
        assert r["error"]["code"] == -32002, (uri, r)
        assert "root:" not in json.dumps(r)
    assert rpc(s, 3, "resources/read", {})["error"]["code"] == -32602
    s.close()


@pytest.mark.parametrize("files,why", [
    ([1], "must be an object"),
    ({"a": 5}, "text or {\"$bytes\": base64}"),
    ({"a": {"$bytes": 5}}, "text or {\"$bytes\": base64}"),
    ({"../etc/x": "t"}, "'..'"),
    ({"/tmp/a/../../b": "t"}, "'..'"),
    ({"": "t"}, "non-empty"),
])
def test_bad_files_are_invalid_params(files, why):
    s = Stdio()
    r = s.request({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "run_python", "arguments": {"code": "1", "files": files}}})
    assert r["error"]["code"] == -32602 and why in r["error"]["message"], r
    s.close()


def test_files_outside_scratch_and_bad_base64_are_tool_errors(folder):
    s = Stdio("--mount", "%s:/data" % folder)
    r = s.call("run_python", "1", id=1, files={"/data/x.txt": "no"})
    assert r["isError"] is True
    assert r["structuredContent"]["error"]["kind"] == "invalid_input"
    assert "arguments.files[/data/x.txt]" in r["structuredContent"]["error"]["message"]
    assert not (folder / "x.txt").exists()
    r = s.call("run_python", "1", id=2, files={"a.bin": {"$bytes": "!!!"}})
    assert "not base64" in r["structuredContent"]["error"]["message"]
    s.close()


def test_mounts_read_only_and_read_write(folder, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o777)  # the guest's uid is not the host user's
    s = Stdio("--mount", "%s:/data" % folder, "--mount", "%s:/out:rw" % out)
    desc = rpc(s, 1, "tools/list")["result"]["tools"][1]["description"]
    assert "/data is the user's shared folder or file (read-only)" in desc
    assert "/out is the user's shared folder or file (read-write)" in desc
    assert "/tmp is a private writable folder of 64 MiB" in desc
    r = s.call("run_javascript", """
        const rows = fs.readFileSync('/data/sales.csv', 'utf8').trim().split('\\n').slice(1);
        const total = rows.reduce((a, r) => a + Number(r.split(',')[1]), 0);
        fs.writeFileSync('/out/summary.txt', 'total ' + total);
        let ro; try { fs.writeFileSync('/data/x', 'no'); } catch (e) { ro = e.code; }
        [total, ro]
    """, id=2)
    assert r["structuredContent"]["value"] == [1900, "EROFS"], r
    assert r["structuredContent"]["files"] == [{"path": "/out/summary.txt", "size": 10}]
    assert (out / "summary.txt").read_text() == "total 1900"
    assert sorted(p.name for p in folder.iterdir()) == ["sales.csv"]
    s.close()


def test_scratch_zero_says_so_and_the_guest_error_names_the_flag():
    s = Stdio("--scratch", "0")
    desc = rpc(s, 1, "tools/list")["result"]["tools"][1]["description"]
    assert "there is no writable /tmp (the server runs with --scratch 0)" in desc
    r = s.call("run_javascript", "fs.writeFileSync('/tmp/x', 'y')", id=2)
    assert r["isError"] is True
    assert "--scratch MIB" in r["structuredContent"]["error"]["message"]
    s.close()


def test_scratch_is_size_capped():
    s = Stdio("--scratch", "1")
    r = s.call("run_javascript", "try { fs.writeFileSync('/tmp/big', new Uint8Array(2 << 20)) }"
               " catch (e) { e.code }", id=1)
    assert r["structuredContent"]["value"] in ("ENOSPC", "EFBIG"), r
    s.close()


@pytest.mark.parametrize("flag,why", [
    ("/no/such/dir:/data", "/no/such/dir"),
    ("relative", "--mount wants HOST:GUEST[:rw]"),
    ("/tmp:data", "--mount wants HOST:GUEST[:rw]"),
    ("/tmp:/usr", "/usr"),
])
def test_bad_mounts_stop_the_server_before_serving(flag, why):
    p = subprocess.run([CLI, "mcp", "--mount", flag], input=b"", capture_output=True, timeout=60)
    assert p.returncode == 2, p
    assert why in p.stderr.decode(), p.stderr
    assert p.stdout == b""


def test_two_http_sessions_have_their_own_scratch():
    with http_server() as url:
        c = Conn(url)
        a, b = c.init(), c.init()
        c.call(a, "run_javascript", "fs.writeFileSync('/tmp/secret', 'from a')")
        _, data = c.call(b, "run_javascript",
                         "[fs.existsSync('/tmp/secret'), fs.readdirSync('/tmp')]", id=2)
        assert json.loads(data)["result"]["structuredContent"]["value"] == [False, []]
        status, _, data = c.post({"jsonrpc": "2.0", "id": 3, "method": "resources/read",
                                  "params": {"uri": "codecage://javascript/tmp/secret"}}, b)
        assert json.loads(data)["error"]["code"] == -32002
        status, _, data = c.post({"jsonrpc": "2.0", "id": 4, "method": "resources/read",
                                  "params": {"uri": "codecage://javascript/tmp/secret"}}, a)
        assert json.loads(data)["result"]["contents"][0]["text"] == "from a"


SCRATCH_WRITE = {
    "run_javascript": "fs.mkdirSync('/tmp/d/e', {recursive: true});\n"
                      "fs.writeFileSync('/tmp/d/e/kept.txt', 'still here');\n"
                      "fs.writeFileSync('/tmp/top.bin', new Uint8Array([0, 1, 255])); 1",
    "run_python": "import os\nos.makedirs('/tmp/d/e', exist_ok=True)\n"
                  "open('/tmp/d/e/kept.txt', 'w').write('still here')\n"
                  "open('/tmp/top.bin', 'wb').write(bytes([0, 1, 255]))",
}
SCRATCH_READ = {
    "run_javascript": "[fs.readFileSync('/tmp/d/e/kept.txt', 'utf8'),"
                      " Array.from(fs.readFileSync('/tmp/top.bin')), typeof x]",
    "run_python": "[open('/tmp/d/e/kept.txt').read(), list(open('/tmp/top.bin', 'rb').read()),"
                  " 'x' in globals()]",
}


@pytest.mark.parametrize("tool", sorted(SCRATCH_WRITE))
def test_scratch_lives_through_a_reset(tool):
    """Issue 14: the session's scratch lives as long as the session;
    reset: true used to start the new runtime with an empty /tmp."""
    s = Stdio()
    assert s.call(tool, "x = 1", id=1)["isError"] is False
    assert s.call(tool, SCRATCH_WRITE[tool], id=2)["isError"] is False
    r = s.call(tool, SCRATCH_READ[tool], id=3, reset=True)
    sc = r["structuredContent"]
    assert r["isError"] is False, r
    gone = "undefined" if tool == "run_javascript" else False
    assert sc["value"] == ["still here", [0, 1, 255], gone], r   # files kept, state reset
    assert "reset: true" in sc["note"] and "files in /tmp were kept (2)" in sc["note"], sc
    # the carried files are the new runtime's: a second reset keeps them again
    r = s.call(tool, SCRATCH_READ[tool], id=4, reset=True)
    assert r["structuredContent"]["value"][:2] == ["still here", [0, 1, 255]], r
    s.close()


def test_a_file_too_big_to_carry_is_named_in_the_note():
    s = Stdio()
    s.call("run_python", "open('/tmp/big', 'wb').write(b'x' * (2 << 20))\n"
           "open('/tmp/small', 'w').write('s')", id=1)
    r = s.call("run_python", "import os\nsorted(os.listdir('/tmp'))", id=2, reset=True)
    sc = r["structuredContent"]
    assert sc["value"] == ["small"], r
    assert "kept (1), except 1 that could not be copied" in sc["note"], sc
    s.close()


@pytest.mark.parametrize("reset", [False, True])
def test_a_crash_loses_the_scratch_and_the_note_says_so(reset):
    """A memory_limit leaves the runtime (and its /tmp) alive; a crash ends
    it, and a dead runtime's files cannot be read: they are gone, said in
    the note, also when the next call asks for reset: true."""
    s = Stdio()
    tool = "run_python"
    assert s.call(tool, SCRATCH_WRITE[tool], id=1)["isError"] is False
    r = s.call(tool, "import ctypes\nctypes.string_at(0)", id=2)
    assert r["structuredContent"]["error"]["kind"] == "worker_crashed", r
    r = s.call(tool, "import os\nos.listdir('/tmp')", id=3, reset=reset)
    sc = r["structuredContent"]
    assert sc["value"] == [], sc
    if reset:
        assert "the previous runtime had ended, so its /tmp files are gone" in sc["note"], sc
    else:
        assert "worker_crashed" in sc["note"] and "its /tmp files are gone" in sc["note"], sc
    s.close()


def test_the_tool_description_says_reset_keeps_files():
    s = Stdio()
    tools = rpc(s, 1, "tools/list")["result"]["tools"]
    for t in tools:
        assert "reset: true keeps its files" in t["description"], t["description"]
        assert "lost when a timeout, memory error or crash ends the runtime" in \
            t["description"]
    s.close()


@pytest.mark.parametrize("tool,code", [
    ("run_python", "import os\nos.makedirs('/tmp/a'); os.makedirs('/tmp/b')\n"
                   "open('/tmp/a/x', 'w').close()\nos.rename('/tmp/a/x', '/tmp/b/x')\n"
                   "sorted(os.listdir('/tmp/b'))"),
    ("run_javascript", "fs.mkdirSync('/tmp/a'); fs.mkdirSync('/tmp/b');"
                       " fs.writeFileSync('/tmp/a/x', ''); fs.renameSync('/tmp/a/x', '/tmp/b/x');"
                       " fs.readdirSync('/tmp/b')"),
])
def test_renames_between_scratch_directories(tool, code):
    """The pools' forked sessions build their whole Landlock domain
    themselves, so a rename between two directories of the default scratch
    works as in a spawned worker (it was EXDEV: the template's own layer
    denied REFER)."""
    s = Stdio()
    r = s.call(tool, code, id=1)
    assert r["isError"] is False, r
    assert r["structuredContent"]["value"] == ["x"]
    s.close()
