"""The tree keeps one format (.clang-format, kernel style) and files of
modest size (STYLE.md: under about 1,000 lines)."""
import os
import re
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


# ---- the include graph between folders (README "Tour of the source") ----
# Every folder of src/, from the top down, with the folders it includes
# (the public headers, include/, are open to all). An arrow points down
# only: to a folder later in this list. The table is the graph, exactly:
# a new arrow (or a new folder) is a decision made here, in review.
LAYERS = [
    ("cli", {"mcp/server", "frontend", "common"}),  # the codecage command
    ("mcp/server", {"mcp/client", "frontend", "common"}),  # codecage mcp
    ("mcp/client", {"common"}),  # code mode's MCP client (upstreams)
    ("frontend", {"common"}),  # what the CLI and the MCP server share
    ("python", {"common"}),  # the extension codecage._codecage
    ("lib", {"net", "common"}),  # libcodecage: the supervisor
    ("net", {"common"}),  # the network broker
    ("engine/quickjs", {"worker", "confine", "polyfills", "common"}),
    ("engine/cpython", {"worker", "confine", "common"}),
    ("worker", {"confine", "common"}),  # the worker's core
    ("confine", {"common"}),  # everything that confines a worker
    ("polyfills", set()),  # WEB_POLYFILLS (JavaScript) and the call that gives it
    ("common", set()),  # pure helpers both sides share
]
# Headers made at build time or by a dependency, found by no folder.
GENERATED = {"quickjs.h", "net_guest_src.h", "py_data_dirs.h"}
INCLUDE = re.compile(r'\s*#\s*include\s*"([^"]+)"')
TWO_LEVEL = ("engine", "mcp")  # src/engine/quickjs/, src/mcp/server/: folders of their own


def folder_of(rel):
    """'engine/quickjs/js_fs.c' -> 'engine/quickjs'; 'lib/runtime.c' -> 'lib'."""
    parts = rel.split("/")
    return "/".join(parts[:2]) if parts[0] in TWO_LEVEL else parts[0]


def include_arrows(root):
    """Read every #include "..." of root/src. Returns
    ({(from folder, to folder): first 'file:line'}, [problems]): an
    include resolves to the including file's folder, to include/, or to
    the one header of that name in src/ (the compiler's search, with
    meson.build's include directories); a name two folders hold, or none,
    is a problem."""
    src = os.path.join(root, "src")
    headers = {}
    for d, _, names in os.walk(src):
        for n in names:
            if n.endswith(".h"):
                headers.setdefault(n, []).append(os.path.relpath(os.path.join(d, n), src))
    public = set(os.listdir(os.path.join(root, "include")))
    arrows, problems = {}, []
    for d, _, names in os.walk(src):
        for n in sorted(names):
            if not n.endswith((".c", ".h")):
                continue
            path = os.path.join(d, n)
            rel = os.path.relpath(path, src)
            here = folder_of(rel)
            with open(path, encoding="utf-8") as f:
                for ln, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    name = m.group(1)
                    where = "src/%s:%d" % (rel, ln)
                    if os.path.exists(os.path.join(d, name)) and "/" not in name:
                        continue
                    if name in public or name in GENERATED:
                        continue
                    found = headers.get(name, []) if "/" not in name else []
                    if len(found) != 1:
                        problems.append("%s: \"%s\" %s" % (
                            where, name, "is in %s: ambiguous, rename one" % found
                            if found else "is no header of src/ (a generated one goes "
                            "in GENERATED)"))
                        continue
                    there = folder_of(found[0])
                    if there != here:
                        arrows.setdefault((here, there), where)
    return arrows, problems


def check_include_graph(root, layers):
    """What is wrong with root's include graph against layers ([] when
    nothing)."""
    order = [name for name, _ in layers]
    allowed = {(a, b) for a, outs in layers for b in outs}
    bad = ["table: %s -> %s points up (or to no folder)" % (a, b) for a, b in sorted(allowed)
           if b not in order or order.index(b) <= order.index(a)]
    arrows, problems = include_arrows(root)
    bad += problems
    bad += ["%s: %s includes %s, an arrow the table does not allow" % (where, a, b)
            for (a, b), where in sorted(arrows.items()) if (a, b) not in allowed]
    bad += ["table: %s -> %s, which no include uses: remove it" % ab
            for ab in sorted(allowed - set(arrows))]
    folders = {folder_of(os.path.relpath(os.path.join(d, n), os.path.join(root, "src")))
               for d, _, names in os.walk(os.path.join(root, "src")) for n in names}
    bad += ["src/%s/ is in no layer: place it in LAYERS" % f for f in sorted(folders - set(order))]
    return bad


def test_folders_include_only_the_folders_below_them():
    bad = check_include_graph(ROOT, LAYERS)
    assert not bad, "\n".join(bad)


def test_the_include_check_refuses_an_upward_include(tmp_path):
    """The checker on a small tree: common including the worker's header
    is an arrow up, and a header name two folders hold is ambiguous."""
    def write(rel, text):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    write("include/codecage.h", "")
    write("src/common/error.h", '#include "codecage.h"\n')
    write("src/worker/worker.h", '#include "error.h"\n')
    write("src/worker/main.c", '#include "worker.h"\n#include "files.h"\n')
    write("src/worker/files.h", "")
    write("src/cli/files.h", "")
    layers = [("cli", set()), ("worker", {"common"}), ("common", set())]
    assert check_include_graph(str(tmp_path), layers) == []
    write("src/common/error.c", '#include "error.h"\n#include "worker.h"\n')
    write("src/cli/main.c", '#include "files.h"\n#include "worker.h"\n')
    os.remove(tmp_path / "src/cli/files.h")
    write("src/frontend/files.h", "")
    bad = check_include_graph(str(tmp_path), layers)
    assert "src/common/error.c:2: common includes worker, an arrow the table does not allow" in bad
    assert any(b.startswith('src/cli/main.c:1: "files.h" is in ') for b in bad), bad
    assert "src/frontend/ is in no layer: place it in LAYERS" in bad
    bad = check_include_graph(str(tmp_path), [("common", {"worker"}), ("worker", set())] +
                              [("cli", {"worker"}), ("frontend", set())])
    assert "table: common -> worker points up (or to no folder)" not in bad
    assert "table: cli -> worker points up (or to no folder)" in bad
