"""The JavaScript guest's `fs` (src/engine/quickjs/js_fs.c, js_fs_boot.c) and its
`require`/`import` forms (js_import.c): Node's synchronous file API
subset plus fs.promises, with Node's error codes.

The API itself is tested in a worker with sandbox "off" on a host temporary
directory (any path works there); what the confinement lets it reach is
tested with the sandbox on (test_pkg_js_fs_confined.py, and here the
reverse pair for a host file)."""
import json
import os

import pytest

import ccpkg  # noqa: F401  (builds the package)

from codecage import GuestError, GuestSyntaxError, IsolatedRuntime, MemoryLimitError


@pytest.fixture
def rt():
    with IsolatedRuntime(language="javascript", sandbox="off", max_file_size=1 << 20,
                         max_memory=64 << 20) as r:
        yield r


@pytest.fixture
def d(tmp_path, rt):
    rt.set_global("D", str(tmp_path))
    return tmp_path


def test_write_then_read_text_and_bytes(rt, d):
    assert rt.eval("""
        fs.writeFileSync(D + '/a.txt', 'h\\u00e9llo\\n');
        fs.appendFileSync(D + '/a.txt', 'more');
        fs.writeFileSync(D + '/b.bin', new Uint8Array([1, 2, 3, 255]));
        [fs.readFileSync(D + '/a.txt', 'utf8'), fs.readFileSync(D + '/a.txt', {encoding: 'utf-8'}),
         fs.readFileSync(D + '/b.bin'), fs.readFileSync(D + '/b.bin') instanceof Uint8Array,
         fs.readFileSync(D + '/a.txt').toString(), fs.readFileSync(D + '/b.bin', 'hex'),
         fs.readFileSync(D + '/b.bin', 'base64'), fs.readFileSync(D + '/b.bin', 'latin1').length]
    """) == ["h\u00e9llo\nmore", "h\u00e9llo\nmore", b"\x01\x02\x03\xff", True,
             "h\u00e9llo\nmore", "010203ff", "AQID/w==", 4]
    assert (d / "a.txt").read_text() == "h\u00e9llo\nmore"
    assert (d / "b.bin").read_bytes() == b"\x01\x02\x03\xff"


def test_write_encodings_and_views(rt, d):
    rt.eval("""
        fs.writeFileSync(D + '/h', '00ff41', 'hex');
        fs.writeFileSync(D + '/b', 'AQID/w==', {encoding: 'base64'});
        const big = new Uint8Array([9, 8, 7, 6, 5]);
        fs.writeFileSync(D + '/v', big.subarray(1, 4));
        fs.writeFileSync(D + '/ab', big.buffer);
        fs.writeFileSync(D + '/x', 'one');
        let code; try { fs.writeFileSync(D + '/x', 'two', {flag: 'wx'}); } catch (e) { code = e.code; }
        code
    """) == "EEXIST"
    assert (d / "h").read_bytes() == b"\x00\xffA"
    assert (d / "b").read_bytes() == b"\x01\x02\x03\xff"
    assert (d / "v").read_bytes() == b"\x08\x07\x06"
    assert (d / "ab").read_bytes() == b"\x09\x08\x07\x06\x05"
    assert (d / "x").read_text() == "one"


def test_stat_readdir_exists(rt, d):
    (d / "f.txt").write_bytes(b"12345")
    (d / "sub").mkdir()
    (d / "B").write_text("")
    os.symlink("f.txt", d / "link")
    mtime = os.stat(d / "f.txt").st_mtime * 1000
    got = rt.eval("""
        const s = fs.statSync(D + '/f.txt'), l = fs.lstatSync(D + '/link');
        ({file: [s.isFile(), s.isDirectory(), s.size, s.mtimeMs, s.mtime instanceof Date],
          dir: fs.statSync(D + '/sub').isDirectory(), link: [l.isSymbolicLink(), fs.statSync(D + '/link').size],
          names: fs.readdirSync(D), types: fs.readdirSync(D, {withFileTypes: true}).map(
              (e) => [e.name, e.isFile(), e.isDirectory(), e.isSymbolicLink()]),
          exists: [fs.existsSync(D + '/f.txt'), fs.existsSync(D + '/nope'), fs.existsSync(5)],
          missing: fs.statSync(D + '/nope', {throwIfNoEntry: false})})
    """)
    assert got["file"][:3] == [True, False, 5] and got["file"][4] is True
    assert abs(got["file"][3] - mtime) < 1
    assert got["dir"] is True and got["link"] == [True, 5]
    assert got["names"] == ["B", "f.txt", "link", "sub"]
    assert got["types"] == [["B", True, False, False], ["f.txt", True, False, False],
                            ["link", False, False, True], ["sub", False, True, False]]
    assert got["exists"] == [True, False, False]
    assert got["missing"] is None


def test_mkdir_rm_rename_unlink(rt, d):
    got = rt.eval("""
        const first = fs.mkdirSync(D + '/p/q/r', {recursive: true});
        const again = fs.mkdirSync(D + '/p/q/r', {recursive: true});
        fs.writeFileSync(D + '/p/q/r/f', 'x');
        fs.renameSync(D + '/p/q/r/f', D + '/p/g');
        const codes = [];
        for (const f of [() => fs.mkdirSync(D + '/p'), () => fs.rmSync(D + '/p'),
                         () => fs.rmdirSync(D + '/p'), () => fs.unlinkSync(D + '/none'),
                         () => fs.readFileSync(D + '/p'), () => fs.mkdirSync(D + '/p/g/h', {recursive: true}),
                         () => fs.renameSync(D + '/none', D + '/other')])
            try { f(); codes.push(null); } catch (e) { codes.push(e.code); }
        fs.unlinkSync(D + '/p/g');
        fs.rmSync(D + '/p', {recursive: true});
        fs.rmSync(D + '/p', {recursive: true, force: true});
        [first, again === undefined, codes, fs.existsSync(D + '/p')]
    """)
    assert got == [str(d / "p"), True,
                   ["EEXIST", "ERR_FS_EISDIR", "ENOTEMPTY", "ENOENT", "EISDIR", "ENOTDIR", "ENOENT"],
                   False]


def test_node_error_shape(rt, d):
    got = rt.eval("""
        let e; try { fs.readFileSync(D + '/nope'); } catch (x) { e = x; }
        let r; try { fs.renameSync(D + '/nope', D + '/b'); } catch (x) { r = x; }
        [e instanceof Error, e.code, e.errno, e.syscall, e.path, e.message, r.message, r.dest]
    """)
    p = str(d / "nope")
    assert got == [True, "ENOENT", -2, "open", p,
                   f"ENOENT: no such file or directory, open '{p}'",
                   f"ENOENT: no such file or directory, rename '{p}' -> '{d}/b'", f"{d}/b"]


def test_bad_arguments_are_type_errors(rt, d):
    got = rt.eval("""
        const out = [];
        for (const f of [() => fs.readFileSync(42), () => fs.readFileSync(D + '/a\\0b'),
                         () => fs.writeFileSync(D + '/x', 42), () => fs.readFileSync(D, 'klingon'),
                         () => fs.writeFileSync(D + '/x', 'a', {flag: 'zz'})])
            try { f(); out.push(null); } catch (e) { out.push([e.name, e.code]); }
        out
    """)
    assert got == [["TypeError", "ERR_INVALID_ARG_TYPE"], ["TypeError", "ERR_INVALID_ARG_VALUE"],
                   ["TypeError", "ERR_INVALID_ARG_TYPE"], ["TypeError", "ERR_INVALID_ARG_VALUE"],
                   ["TypeError", None]]


def test_promises(rt, d):
    got = rt.eval("""
        const p = fs.promises;
        await p.mkdir(D + '/m', {recursive: true});
        await p.writeFile(D + '/m/a', 'A');
        await p.appendFile(D + '/m/a', 'B');
        const r = [await p.readFile(D + '/m/a', 'utf8'), (await p.stat(D + '/m/a')).size,
                   await p.readdir(D + '/m'), await p.readFile(D + '/zz').catch((e) => e.code),
                   require('fs/promises') === p, require('node:fs/promises') === p];
        await p.rename(D + '/m/a', D + '/m/b');
        await p.unlink(D + '/m/b');
        await p.rm(D + '/m', {recursive: true});
        r
    """)
    assert got == ["AB", 2, ["a"], "ENOENT", True, True]
    assert not (d / "m").exists()


def test_require_and_import_forms(rt):
    assert rt.eval("[require('fs') === fs, require('node:fs') === fs, fs.promises === require('fs').promises]") \
        == [True, True, True]
    assert rt.eval("import f1 from 'fs';\nimport * as f2 from \"node:fs\"\n"
                   "import { readFileSync, existsSync as ex } from 'fs'\n"
                   "import f3, { statSync } from 'node:fs';\n"
                   "[f1 === fs, f2 === fs, readFileSync === fs.readFileSync, ex === fs.existsSync,"
                   " f3 === fs, statSync === fs.statSync]") == [True] * 6
    # the same import again in a later eval (a notebook does this) still works
    assert rt.eval("import f1 from 'fs';\nf1 === fs") is True
    with pytest.raises(GuestError) as ei:
        rt.eval("require('child_process')")
    assert "Cannot find module 'child_process'" in ei.value.message
    assert rt.eval("try { require('os') } catch (e) { e.code }") == "MODULE_NOT_FOUND"
    # anything but fs stays a SyntaxError, reported where it is
    with pytest.raises(GuestSyntaxError):
        rt.eval("import os from 'os';\n1")
    # a real syntax error after an fs import is reported, not hidden
    with pytest.raises(GuestSyntaxError) as ei:
        rt.eval("import fs2 from 'fs';\nlet = = 1;")
    assert ":2:" in ei.value.traceback


def test_import_inside_a_string_is_left_alone(rt):
    # a valid script is never rewritten
    assert rt.eval("const s = `\nimport x from 'fs'\n`; s") == "\nimport x from 'fs'\n"


def test_rm_recursive_never_follows_a_symlink(rt, d, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "keep").write_text("precious")
    (d / "t").mkdir()
    os.symlink(outside, d / "t" / "out")
    rt.eval("fs.rmSync(D + '/t', {recursive: true})")
    assert not (d / "t").exists()
    assert (outside / "keep").read_text() == "precious"


def test_file_size_cap_names_the_setting(rt, d):
    with pytest.raises(GuestError) as ei:
        rt.eval("fs.writeFileSync(D + '/big', new Uint8Array(2 << 20))")
    assert ei.value.message.startswith("EFBIG: file too large, write")
    assert "max_file_size" in ei.value.message
    assert rt.eval("try { fs.writeFileSync(D + '/big', new Uint8Array(2 << 20)) } catch (e) { e.code }") \
        == "EFBIG"


def test_reading_more_than_the_heap_is_a_memory_limit(rt, d):
    with open(d / "huge", "wb") as f:
        f.truncate(200 << 20)
    with pytest.raises(MemoryLimitError):
        rt.eval("fs.readFileSync(D + '/huge').length")
    assert rt.eval("1 + 1") == 2


def test_fs_is_usable_for_json(rt, d):
    (d / "in.json").write_text(json.dumps({"a": [1, 2]}))
    assert rt.eval("JSON.parse(fs.readFileSync(D + '/in.json', 'utf8')).a.length") == 2


@pytest.mark.parametrize("sandbox", ["require", "off"])
def test_fs_reaches_no_host_file_when_confined(sandbox, tmp_path):
    """The same calls, confined, see nothing of the host; unconfined (the
    reverse run) they read the file, so the probe can see a breach. (A
    scratch: fs exists only with one or a mount.)"""
    secret = tmp_path / "secret"
    secret.write_text("host data")
    with IsolatedRuntime(language="javascript", sandbox=sandbox, max_file_size=1 << 20) as r:
        got = r.eval(f"""
            const out = [];
            for (const f of [() => fs.readFileSync({json.dumps(str(secret))}, 'utf8'),
                             () => fs.readdirSync({json.dumps(str(tmp_path))}),
                             () => fs.writeFileSync({json.dumps(str(tmp_path / 'w'))}, 'x')])
                try {{ out.push(f()); }} catch (e) {{ out.push(e.code); }}
            out
        """)
    if sandbox == "off":
        assert got[0] == "host data" and got[1] == ["secret"]
    else:
        assert got[0] in ("ENOENT", "EPERM", "EACCES") and got[1] in ("ENOENT", "EPERM", "EACCES")
        assert got[2] in ("ENOENT", "EPERM", "EACCES", "EROFS", "EFBIG")
        assert not (tmp_path / "w").exists()
