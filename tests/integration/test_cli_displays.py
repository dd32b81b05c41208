"""The CLI's displays: --json's "displays" array, --display-dir's files,
and the note text mode prints."""
import base64
import os

import pytest

import conftest

from conftest import cli, ev

PNG = b"\x89PNG\r\n\x1a\n"
CHART = """
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)
_ = ax.plot([1, 3, 2])
display({'text/html': '<b>total</b>'}, raw=True)
6
"""


def _mpl():
    conftest.need("matplotlib", "python3-matplotlib (scripts/install-deps) is needed")


def test_json_displays_python_chart():
    _mpl()
    r = ev("python", CHART)
    assert (r.rc, r.value) == (0, 6), r
    html, fig = r.json["displays"]
    assert html == {"text/html": "<b>total</b>"}
    assert base64.b64decode(fig["image/png"]).startswith(PNG)
    assert fig["text/plain"].startswith("<Figure")


def test_json_displays_javascript_svg_and_empty_list():
    r = ev("javascript", "display('<svg xmlns=\"http://www.w3.org/2000/svg\"/>', 'image/svg+xml'); 2")
    assert r.json["displays"] == [{"image/svg+xml": '<svg xmlns="http://www.w3.org/2000/svg"/>'}]
    assert ev("javascript", "1").json["displays"] == []


def test_json_displays_on_error():
    r = ev("python", "display('kept')\n1/0")
    assert r.rc == 1 and r.kind == "guest_error"
    assert r.json["displays"] == [{"text/plain": "'kept'"}]


def test_display_dir_writes_files(tmp_path):
    _mpl()
    out = tmp_path / "charts"
    r = cli("eval", "--lang", "python", "--display-dir", str(out), "--", CHART)
    assert r.rc == 0, r
    assert r.stdout == "6\n"
    assert sorted(os.listdir(out)) == ["display-1.html", "display-2.png"]
    assert (out / "display-1.html").read_text() == "<b>total</b>"
    assert (out / "display-2.png").read_bytes().startswith(PNG)
    assert "saved as %s/display-2.png" % out in r.stderr


def test_display_dir_with_json_and_every_kind(tmp_path):
    code = ("display('<svg/>', 'image/svg+xml'); display({a: 1}); display('hi');"
            "display(new Uint8Array([0x89, 80, 78, 71, 13, 10, 26, 10]), 'image/png')")
    r = cli("eval", "--lang", "js", "--json", "--display-dir", str(tmp_path), "--", code)
    assert r.rc == 0 and len(r.json["displays"]) == 4, r
    assert sorted(os.listdir(tmp_path)) == ["display-1.svg", "display-2.json",
                                            "display-3.txt", "display-4.png"]
    assert (tmp_path / "display-2.json").read_text() == '{"a":1}'


def test_display_dir_never_follows_a_symlink(tmp_path):
    target = tmp_path / "victim"
    target.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(target, out / "display-1.txt")
    r = cli("eval", "--lang", "js", "--display-dir", str(out), "--", "display('x'); 1")
    assert r.rc == 2 and "cannot write" in r.stderr, r
    assert target.read_text() == "keep"


def test_text_mode_names_the_displays_and_the_flag():
    r = cli("eval", "--lang", "js", "--", "display('<b>x</b>', 'text/html'); 1")
    assert r.rc == 0 and r.stdout == "1\n"
    assert "display 1 (text/html, 8 bytes); pass --display-dir DIR to save it" in r.stderr


def test_display_dir_needs_a_value():
    r = cli("eval", "--lang", "js", "--display-dir", "", "--", "1")
    assert r.rc == 2 and "--display-dir wants a folder" in r.stderr
