"""WEB_POLYFILLS, piece by piece, against node (tests/integration/
web_polyfill_cases.py): each case runs in node, which has the API natively,
and in codecage with --web-polyfills (the C option cc_options.web_polyfills,
the text built into the JavaScript worker), and both must return the same
JSON. What node lacks (FileReader) is checked against the File API's
values. Before the polyfills each case fails (the names are undefined)."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import ROOT, cli, ev
from web_polyfill_cases import NODE, SPEC

POLYFILLS = os.path.join(ROOT, "src", "polyfills")


def harness(cases):
    """One script that runs every case (an async function body) in turn and
    ends with the JSON text of {name: {ok: value} | {threw: error name}}."""
    body = ",\n".join("%s: async () => {%s\n}" % (json.dumps(k), v) for k, v in cases.items())
    return ("const __cases = {\n%s\n};\nconst __out = {};\n"
            "for (const [k, f] of Object.entries(__cases)) {\n"
            "  try { __out[k] = { ok: await f() }; }\n"
            "  catch (e) { __out[k] = { threw: String(e && e.name) + ': ' + String(e && e.message) }; }\n"
            "}\n" % body)


def run_codecage(cases):
    r = cli("eval", "--lang", "javascript", "--web-polyfills", "--json", "--",
            harness(cases) + "JSON.stringify(__out)", timeout=120)
    assert r.rc == 0, r
    return json.loads(r.value)


def run_node(cases):
    if not shutil.which("node"):
        pytest.fail("node is needed (scripts/install-deps installs nodejs)")
    script = "(async () => {\n%s\nprocess.stdout.write(JSON.stringify(__out));\n})();" % harness(cases)
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def results():
    cases = dict(NODE)
    cases.update({k: v[0] for k, v in SPEC.items()})
    return run_codecage(cases), run_node(NODE)


@pytest.mark.parametrize("name", sorted(NODE))
def test_like_node(results, name):
    ours, node = results
    assert ours[name] == node[name], "%s: codecage %r, node %r" % (name, ours[name], node[name])


@pytest.mark.parametrize("name", sorted(SPEC))
def test_like_the_spec(results, name):
    ours, _ = results
    assert ours[name] == {"ok": SPEC[name][1]}, ours[name]


def test_never_window_or_document():
    r = ev("javascript", "[typeof window, typeof document, self === globalThis, "
           "Object.keys(globalThis).length]", "--web-polyfills")
    assert r.value == ["undefined", "undefined", True, 0], r


def test_off_by_default():
    r = ev("javascript", "[typeof URL, typeof Blob, typeof crypto, typeof setTimeout]")
    assert r.value == ["undefined"] * 4, r


def test_python_refuses_the_option():
    r = cli("eval", "--lang", "python", "--web-polyfills", "--", "1")
    assert r.rc == 2 and "web_polyfills are JavaScript's" in r.stderr, r


def test_each_session_draws_its_own_random_bytes():
    code = "[crypto.randomUUID(), Array.from(crypto.getRandomValues(new Uint8Array(16)))]"
    a, b = (ev("javascript", code, "--web-polyfills").value for _ in range(2))
    assert a[0] != b[0] and a[1] != b[1]


def test_the_worker_builds_every_piece():
    """meson.build lists the pieces it joins for the worker and
    libcodecage: every piece of src/polyfills/, in name order."""
    with open(os.path.join(ROOT, "meson.build")) as f:
        text = f.read()
    listed = [w.split("/")[-1].rstrip("'") for w in text.split("'")
              if w.startswith("src/polyfills/") and w.endswith(".js")]
    assert listed == sorted(n for n in os.listdir(POLYFILLS) if n.endswith(".js"))
    r = ev("javascript", "[typeof URL, typeof FileReader, typeof AbortSignal, typeof crypto, "
           "typeof performance, typeof structuredClone, typeof self]", "--web-polyfills")
    assert r.value == ["function"] * 3 + ["object"] * 2 + ["function", "object"], r


def test_native_random_hook_refuses_what_it_cannot_fill():
    """crypto's bytes come from Symbol.for('codecage.randomFill') (js_web.c),
    present in every JavaScript runtime: anything but an ArrayBuffer of at
    most 65536 bytes is a catchable error (before the fix a non-buffer
    returned undefined with the error left pending)."""
    code = ("const f = globalThis[Symbol.for('codecage.randomFill')]; const out = [];"
            "for (const a of [{}, new Uint8Array(4), 1, new ArrayBuffer(65537), 'x']) {"
            "  try { f(a); out.push('filled'); } catch (e) { out.push(e.name); } }"
            "const b = new ArrayBuffer(0); f(b); const s = new ArrayBuffer(32); f(s);"
            "out.push([1].map((x) => x + 1)[0],"
            " new Uint8Array(s).some((x) => x !== 0)); out")
    r = ev("javascript", code)
    assert r.value == ["TypeError", "TypeError", "TypeError", "RangeError", "TypeError", 2, True], r
