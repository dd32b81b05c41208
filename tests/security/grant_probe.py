"""What the file-grant probes share (test_files.py, test_python_path.py): a
Python guest run through build/codecage, optionally under cc-degrade with a
layer taken away, and guest code that names the OSError an access raised."""
import os
import subprocess

from conftest import BUILD, CLI, Run

DEGRADE = os.path.join(BUILD, "tests", "security", "cc-degrade")


def guest(code, *flags, deny=None, sandbox="require"):
    args = [CLI, "eval", "--lang", "python", "--json", "--sandbox", sandbox, *flags, "--", code]
    if deny:
        args = [DEGRADE, "--deny", deny, "--", *args]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
    r = Run(proc)
    assert r.json is not None, r
    return r


def attempt(expr):
    """Guest code: the value of expr, or the name of the OSError it raised."""
    return ("import os\ntry:\n    r = repr(%s)\nexcept OSError as e:\n"
            "    r = 'denied:' + type(e).__name__\nr" % expr)
