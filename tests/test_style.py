"""The tree keeps one format (.clang-format, kernel style) and files of
modest size (STYLE.md: under about 1,000 lines)."""
import os
import subprocess

from conftest import ROOT


def tracked(*patterns):
    out = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    return [os.path.join(ROOT, p) for p in out]


def test_c_sources_follow_clang_format():
    files = tracked("*.c", "*.h")
    assert files
    proc = subprocess.run(["clang-format", "--dry-run", "--Werror", *files], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, "run clang-format -i on:\n" + proc.stderr[-3000:]


def test_gil_macros_stand_on_their_own_lines():
    """.clang-format declares Py_BEGIN/END_ALLOW_THREADS a macro block:
    without that, clang-format glued the next statement onto each macro's
    line ("Py_END_ALLOW_THREADS return NULL;")."""
    bad = []
    for path in tracked("*.c"):
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                words = line.split()
                if any(w in ("Py_BEGIN_ALLOW_THREADS", "Py_END_ALLOW_THREADS") for w in words) \
                        and len(words) > 1:
                    bad.append("%s:%d: %s" % (os.path.relpath(path, ROOT), n, line.strip()))
    assert not bad, "\n".join(bad)


def test_files_stay_modest():
    for path in tracked("*.c", "*.h", "*.py"):
        with open(path, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        assert n <= 1000, "%s has %d lines; split it by role" % (path, n)


# Package registries' and mirrors' host names, spelled in pieces so that this
# file does not hold them either: the build reads the mirror from the
# machine's apt sources (scripts/fetch-quickjs.sh), npm from its own config.
REGISTRY_HOSTS = [".".join(p) for p in (("deb", "debian", "org"), ("registry", "npmjs", "org"),
                                        ("pypi", "org"), ("files", "pythonhosted", "org"),
                                        ("security", "debian", "org"))]


def test_no_registry_host_names_in_the_tree():
    hits = []
    for path in tracked():
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except (IsADirectoryError, FileNotFoundError):
            continue
        hits += ["%s: %s" % (os.path.relpath(path, ROOT), h) for h in REGISTRY_HOSTS if h in text]
    assert not hits, "registry host names in the tree:\n" + "\n".join(hits)


def test_no_test_skips_itself():
    """CI must not skip (tests/conftest.py): a test whose feature or package
    is missing fails (conftest.need), and a laptop deselects its tag. So
    no test file calls pytest.skip, importorskip or a skip mark."""
    files = subprocess.run(["git", "ls-files", "tests/*.py", "tests/**/*.py"], cwd=ROOT,
                           check=True, capture_output=True, text=True).stdout.split()
    words = ("pytest." + "skip(", "pytest." + "importorskip(", "mark." + "skip")
    found = []
    for f in files:
        with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if any(w in line for w in words):
                    found.append("%s:%d: %s" % (f, n, line.strip()))
    assert files and not found, "\n".join(found)
