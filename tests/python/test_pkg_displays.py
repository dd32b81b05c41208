"""Displays (rich results) through the Python package: display() with
_repr_*_ objects and Pillow images, matplotlib figures left open or shown,
a DataFrame's HTML table, JavaScript's display(value, mimeType), and the
caps (count, and bytes toward max_result)."""
import ccpkg  # noqa: F401  (builds the package)
import pytest

import conftest

from codecage import ForkServer, IsolatedRuntime, OutputLimitError, RuntimeConfig

PNG = b"\x89PNG\r\n\x1a\n"


def py(**kw):
    return IsolatedRuntime(language="python", **kw)


def test_display_of_repr_objects_in_order():
    with py() as rt:
        r = rt.run("""
class Chart:
    def _repr_svg_(self):
        return '<svg xmlns="http://www.w3.org/2000/svg"/>'
class Table:
    def _repr_html_(self):
        return '<table><tr><td>1</td></tr></table>'
    def __repr__(self):
        return 'Table()'
display(Chart())
display(Table(), {'a': 1})
7
""")
    assert r.value == 7
    assert [sorted(d) for d in r.displays] == [
        ["image/svg+xml", "text/plain"], ["text/html", "text/plain"], ["text/plain"]]
    assert r.displays[0]["image/svg+xml"].startswith("<svg")
    assert r.displays[1] == {"text/html": "<table><tr><td>1</td></tr></table>",
                             "text/plain": "Table()"}
    assert r.displays[2] == {"text/plain": "{'a': 1}"}


def test_display_raw_bundle_and_json():
    with py() as rt:
        r = rt.run("display({'application/json': {'x': [1, 2]}, 'text/plain': 'x'}, raw=True)")
    assert r.displays == ({"application/json": '{"x": [1, 2]}', "text/plain": "x"},)


def test_display_refuses_bad_bundles():
    with py() as rt:
        with pytest.raises(Exception) as e:
            rt.eval("display({'image/png': b'not a png'}, raw=True)")
        assert "not a PNG file" in str(e.value)
        with pytest.raises(Exception) as e:
            rt.eval("display({'application/x-evil': 'x'}, raw=True)")
        assert "unknown or repeated MIME type" in str(e.value)
        with pytest.raises(Exception) as e:
            rt.eval("class B:\n    def _repr_html_(self): return 3\ndisplay(B())")
        assert "returned int, not str" in str(e.value)
        assert rt.eval("1 + 1") == 2  # the runtime is still usable


def test_pillow_image():
    conftest.need("PIL", "python3-pil (scripts/install-deps) is needed")
    with py() as rt:
        r = rt.run("from PIL import Image\ndisplay(Image.new('RGB', (4, 3), 'red'))")
    png = r.displays[0]["image/png"]
    assert png.startswith(PNG)
    from PIL import Image
    import io
    assert Image.open(io.BytesIO(png)).size == (4, 3)


def test_displays_made_before_an_error_are_kept():
    with py() as rt:
        with pytest.raises(Exception) as e:
            rt.eval("display('before')\n1 / 0")
    assert e.value.name == "ZeroDivisionError"
    assert e.value.displays == ({"text/plain": "'before'"},)


def test_displays_do_not_leak_into_the_next_eval():
    with py() as rt:
        assert len(rt.run("display(1)").displays) == 1
        assert rt.run("2").displays == ()


def test_count_cap_is_output_limit_and_keeps_the_first():
    with py() as rt:
        with pytest.raises(OutputLimitError) as e:
            rt.eval("for i in range(70):\n    display(i)")
        assert "made 70 displays" in str(e.value) and "at most 64" in str(e.value)
        assert [d["text/plain"] for d in e.value.displays] == [str(i) for i in range(64)]
        assert len(rt.run("display(1)").displays) == 1


def test_bytes_count_toward_max_result():
    # a 10 MB image against a 1 MiB result cap
    with py(config=RuntimeConfig(max_result=1 << 20)) as rt:
        with pytest.raises(OutputLimitError) as e:
            rt.eval("display({'image/png': b'\\x89PNG\\r\\n\\x1a\\n' + bytes(10_000_000)}, raw=True)")
        assert "larger than the limit of 1048576 bytes" in str(e.value)
        assert "raise RuntimeConfig(max_result=BYTES)" in str(e.value)
        # value and displays together: each fits, both do not
        with pytest.raises(OutputLimitError):
            rt.eval("display('x' * 600_000)\n'y' * 600_000")
        assert len(rt.eval("'y' * 600_000")) == 600_000


def test_javascript_display():
    with IsolatedRuntime(language="javascript") as rt:
        r = rt.run("""
display('<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>', 'image/svg+xml');
display('<b>hi</b>', 'text/html');
display({a: [1, 2]});
display('plain');
display(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10, 0]), 'image/png');
1
""")
    assert r.value == 1
    assert r.displays == (
        {"image/svg+xml": '<svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>'},
        {"text/html": "<b>hi</b>"},
        {"application/json": '{"a":[1,2]}'},
        {"text/plain": "plain"},
        {"image/png": PNG + b"\0"},
    )


def test_javascript_display_refuses_bad_input():
    with IsolatedRuntime(language="javascript") as rt:
        for code, text in [("display('x', 'application/x-evil')", "unknown MIME type"),
                           ("display('x', 'image/png')", "Uint8Array"),
                           ("display(new Uint8Array([1, 2]), 'image/png')", "not a PNG file"),
                           ("display(1, 'text/html')", "a string")]:
            with pytest.raises(Exception) as e:
                rt.eval(code)
            assert text in str(e.value), code
        with pytest.raises(OutputLimitError):
            rt.eval("for (let i = 0; i < 65; i++) display('x' + i)")


def _mpl():
    conftest.need("matplotlib", "python3-matplotlib (scripts/install-deps) is needed")


FIG = """
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)
_ = ax.plot([1, 3, 2])
"""


def test_figure_left_open_is_captured_and_closed():
    _mpl()
    with py() as rt:
        r = rt.run(FIG + "'done'")
        assert r.value == "done"
        assert len(r.displays) == 1
        assert r.displays[0]["image/png"].startswith(PNG)
        assert r.displays[0]["text/plain"].startswith("<Figure")
        # closed once shown: the next eval shows nothing again
        assert rt.run("plt.get_fignums()").value == []


def test_plt_show_displays_at_once_in_order():
    _mpl()
    with py() as rt:
        r = rt.run(FIG + "plt.show()\ndisplay('between')\n" + FIG + "plt.show()\n")
    assert [sorted(d) for d in r.displays] == [
        ["image/png", "text/plain"], ["text/plain"], ["image/png", "text/plain"]]


def test_figure_drawn_before_an_error_is_shown():
    _mpl()
    with py() as rt:
        with pytest.raises(Exception) as e:
            rt.eval(FIG + "raise ValueError('late')")
    assert e.value.name == "ValueError"
    assert e.value.displays[0]["image/png"].startswith(PNG)


def test_many_figures_over_the_cap():
    _mpl()
    with py() as rt:
        with pytest.raises(OutputLimitError) as e:
            rt.eval("import matplotlib.pyplot as plt\n"
                    "for i in range(70):\n    plt.figure(figsize=(1, 1), dpi=10)")
        assert "made 70 displays" in str(e.value) and "plt.close()" in str(e.value)
        assert len(e.value.displays) == 64
        assert rt.run("plt.get_fignums()").value == []


def test_figure_in_a_forked_session_with_matplotlib_preloaded():
    _mpl()
    with ForkServer(language="python", preload="matplotlib") as fs:
        for _ in range(2):
            with fs.session() as rt:
                r = rt.run(FIG)
                assert len(r.displays) == 1 and r.displays[0]["image/png"].startswith(PNG)


def test_dataframe_value_gives_an_html_display():
    conftest.need("pandas", "python3-pandas is needed")
    with py() as rt:
        with pytest.raises(Exception) as e:
            rt.eval("import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})")
        # the strict rule stays (the value cannot cross); the table is there
        assert "DataFrame" in str(e.value)
        (d,) = e.value.displays
        assert "<table" in d["text/html"] and "<td>x</td>" in d["text/html"]
        assert "a  b" in d["text/plain"]
        with pytest.raises(Exception) as e:
            rt.eval("pd.Series([5, 6], name='s')")
        assert "<table" in e.value.displays[0]["text/html"]
        assert ">6</td>" in e.value.displays[0]["text/html"]
        r = rt.run("df = pd.DataFrame({'a': [1]})\nlen(df)")
        assert r.displays == ()  # only a last value that is a frame


def test_dataframe_with_value_fallback_gives_its_text_and_its_table():
    """16a's fallback and the displays together: the value is the frame's
    text with value_type, and its HTML table is a display as well."""
    conftest.need("pandas", "python3-pandas is needed")
    with IsolatedRuntime(RuntimeConfig(value_fallback=True), language="python") as rt:
        r = rt.run("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})\ndf")
        assert r.value_type == "DataFrame" and r.value == rt.eval("repr(df)")
        (d,) = r.displays
        assert "<table" in d["text/html"] and "<td>x</td>" in d["text/html"]
        r = rt.run("df['a']")
        assert r.value_type == "Series" and ">2</td>" in r.displays[0]["text/html"]
        r = rt.run("len(df)")
        assert (r.value, r.value_type, r.displays) == (2, None, ())


def test_javascript_display_in_forked_sessions_and_after_await():
    with ForkServer(language="javascript") as fs:
        for i in range(2):
            with fs.session() as rt:
                r = rt.run("await Promise.resolve(); display('<b>%d</b>', 'text/html'); %d"
                           % (i, i))
                assert r.value == i and r.displays == ({"text/html": "<b>%d</b>" % i},)
