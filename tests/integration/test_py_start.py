"""What a new Python worker does before the first eval (issue 19, item 2).

The glue (src/engine/cpython/py_helper.c) is compiled at build time and the worker
only unmarshals it (py_glue.h): its source is not in the worker at all. A
new worker imports only what every eval needs: traceback, linecache (with
tokenize, re, enum) and json come when a traceback or a display needs
them, os when the guest imports it (the write hints patch posix),
datetime.py never (the value codec takes _datetime's C API); a fork
server's template imports traceback for its sessions. The
lazy imports change nothing the guest sees: a guest that imports
traceback itself gets its source lines, in the same eval."""
import json
import os
import subprocess

import pytest

from conftest import BUILD, ev

WORKER = os.path.join(BUILD, "codecage-worker-py")
DRIVER = os.path.join(BUILD, "tests", "security", "cc-checklist-driver")

# Imported by the old start (PyDateTime_IMPORT, the glue's imports); none
# is needed before the guest or a traceback asks for it.
LAZY = ("traceback", "linecache", "tokenize", "re", "enum", "json", "datetime", "weakref",
        "signal", "collections", "functools", "contextlib", "textwrap", "os")


def test_worker_does_not_carry_the_glue_source():
    with open(WORKER, "rb") as f:
        data = f.read()
    assert b"_remember" in data  # a name in the frozen code objects
    # A line of the helper's source as C embeds it (tabs, newline): only
    # the frozen code objects are in the worker, never the text to compile.
    assert b"def compile_src(src):\n" not in data
    assert b"class _Text(io.TextIOBase):\n" not in data


def test_a_new_worker_imports_only_what_an_eval_needs():
    r = ev("python", "import sys\nsorted(m for m in sys.modules if m in %r)" % (LAZY,))
    assert r.kind == "ok", r
    assert r.value == [], r


def test_first_traceback_after_the_lazy_import():
    r = ev("python", "def f():\n    return {}['k']\nf()")
    assert r.kind == "guest_error", r
    tb = r.json["error"]["traceback"]
    assert tb == ('Traceback (most recent call last):\n'
                  '  File "<code>", line 3, in <module>\n'
                  '    f()\n'
                  '  File "<code>", line 2, in f\n'
                  "    return {}['k']\n"
                  '           ~~^^^^^\n'
                  "KeyError: 'k'\n"), tb


def test_guest_traceback_module_sees_the_source_in_the_same_eval():
    # linecache is imported here, after the source was compiled: it must
    # still have this eval's lines (py_helper.c's _LinecacheFinder).
    code = ("import traceback, linecache, io\n"
            "def g():\n"
            "    raise ValueError('x')\n"
            "s = io.StringIO()\n"
            "try:\n"
            "    g()\n"
            "except ValueError:\n"
            "    traceback.print_exc(file=s)\n"
            "[s.getvalue().count(\"raise ValueError('x')\"), linecache.getline('<code>', 2)]")
    r = ev("python", code)
    assert r.kind == "ok", r
    assert r.value == [1, "def g():\n"], r


def test_datetime_values_without_datetime_py():
    code = ("import sys\n"
            "before = 'datetime' in sys.modules\n"
            "import datetime\n"
            "[before, datetime.datetime(2020, 1, 2, tzinfo=datetime.timezone.utc)]")
    r = ev("python", code)
    assert r.kind == "ok", r
    assert r.value == [False, {"$date": "2020-01-02T00:00:00.000000Z"}], r


@pytest.mark.userns
@pytest.mark.seccomp
def test_a_forked_session_has_the_traceback_modules_from_its_template():
    # The template imports what the glue imports lazily (py_fork.c), so a
    # forked session's first traceback costs no import.
    p = subprocess.run([DRIVER, "--fork", "python",
                        "import sys\nprint('traceback' in sys.modules, 'linecache' in sys.modules)\n"
                        "def f():\n    1/0\nf()"],
                       capture_output=True, text=True, timeout=60)
    out = json.loads(p.stdout)
    assert out["stdout"] == "True True\n", out
    assert out["kind"] == "guest_error" and out["type"] == "ZeroDivisionError", out
