"""README.md runs as written, and README.md and HACKING.md name only paths
that exist.

What runs, from the fenced blocks of README.md:
- ```sh: each command (a line that is not a `# ...` comment) runs with
  `sh -c` from the repository root, against build/ as `scripts/setup`
  leaves it. It must exit 0, unless its own comment says `exit status N`.
  The `# text` lines right under a command are output it prints: each must
  appear in its stdout or stderr (a trailing " ..." marks text cut short).
- ```python: each block runs as its own program, outside the source tree,
  with the package built by tests/python/ccpkg.py importable. Its output
  must be exactly the lines that its `print(...)  # text` comments show.
- ```c: excerpts of examples/hello.c; every code line (comments aside) must
  be in that file, which the ```sh block of "From C" compiles and runs.
- ```json: must parse.
A block under a `<!-- readme-test: skip: REASON -->` line is not run, and
neither are the commands in SKIPPED_COMMANDS; both say why. A command
that installs or runs the suite (INSTALLS) is never run: outside a skipped
block it fails test_readme_installs_are_marked instead (run, scripts/test
would start this test again and pip would install into the machine)."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

README = os.path.join(ROOT, "README.md")
HACKING = os.path.join(ROOT, "HACKING.md")
EXAMPLE_C = os.path.join(ROOT, "examples", "hello.c")

SKIP_MARK = re.compile(r"^<!-- readme-test: skip: (.+) -->$")

# Commands inside run blocks that are not run, with the reason.
SKIPPED_COMMANDS = {
    "npm ci --prefix tests/mcp --no-audit --no-fund":
        "installs the pinned Node packages (needs the npm registry); scripts/test runs it,"
        " and the commands using them fail with a message when they are missing",
}


# Commands that change the machine or run the whole suite.
INSTALLS = re.compile(r"^\s*(sudo |scripts/(setup|test|install-deps)\b|\S*pip3? install|"
                      r"\S*python3? -m pip install|apt(-get)? |npm (ci|install)\b)")


def fenced_blocks(path):
    """[(lang, first line number, [lines], skip reason or None)] of a
    Markdown file's fenced blocks."""
    blocks, block, last_text = [], None, ""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f.read().split("\n"), 1):
            if block is None and line.startswith("```"):
                m = SKIP_MARK.match(last_text)
                block = (line[3:].strip(), n + 1, [], m.group(1) if m else None)
            elif block is not None and line.startswith("```"):
                blocks.append(block)
                block = None
            elif block is not None:
                block[2].append(line)
            elif line.strip():
                last_text = line.strip()
    assert block is None, "%s: unclosed fenced block at line %d" % (path, block[1])
    return blocks


def sh_commands(unmarked_installs=None):
    """[(block's line, line number, command, expected output lines, exit
    status)] of every README ```sh block that is not skipped; installing
    commands go to unmarked_installs (a list) instead."""
    cmds = []
    for lang, first, lines, skip in fenced_blocks(README):
        if lang != "sh" or skip:
            continue
        for i, line in enumerate(lines):
            if not line.strip() or line.startswith("#"):
                continue
            if re.sub(r"\s+# .*$", "", line).strip() in SKIPPED_COMMANDS:
                continue
            if INSTALLS.match(line):
                if unmarked_installs is not None:
                    unmarked_installs.append((first + i, line))
                continue
            want = []
            for follow in lines[i + 1:]:
                if not follow.startswith("# "):
                    break
                want.append(follow[2:].removesuffix(" ..."))  # "..." marks a cut
            m = re.search(r"#.*\bexit status (\d+)", line)
            cmds.append((first, first + i, line, want, int(m.group(1)) if m else 0))
    return cmds


def python_blocks():
    return [(first, "\n".join(lines)) for lang, first, lines, skip in fenced_blocks(README)
            if lang == "python" and not skip]


SH = sh_commands()
# Commands by block: a block runs in order (hello.c's is built, then run).
SH_BLOCKS = sorted({c[0] for c in SH})


def test_readme_has_what_this_test_runs():
    """Guards the extractor itself: if it found nothing, nothing was checked."""
    assert len(SH) >= 10, SH
    assert len(python_blocks()) >= 2
    langs = {lang for lang, _, _, _ in fenced_blocks(README)}
    assert {"sh", "python", "c", "json"} <= langs


def test_readme_installs_are_marked():
    unmarked = []
    sh_commands(unmarked)
    assert not unmarked, ("README.md commands that install or run the suite, in a block"
                          " without a `<!-- readme-test: skip: REASON -->` line: %r" % unmarked)


def test_installs_are_recognised():
    """The safety net above must catch the install lines README has."""
    for cmd in ("scripts/setup", "scripts/test -k x", "pip install .", "sudo make",
                "/usr/bin/python3 -m pip install --target DIR .", "apt-get install -y x",
                "npm ci --prefix tests/mcp"):
        assert INSTALLS.match(cmd), cmd
    for cmd in ("build/codecage doctor", "build/hello", "cc examples/hello.c -o build/hello"):
        assert not INSTALLS.match(cmd), cmd


def run_sh(cmd):
    node_modules = os.path.join(ROOT, "tests", "mcp", "node_modules")
    if "tests/mcp/node_modules" in cmd and not os.path.isdir(node_modules):
        pytest.fail("tests/mcp/node_modules is missing: run `npm ci --prefix tests/mcp`"
                    " (scripts/test does)")
    return subprocess.run(["sh", "-c", cmd], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("block", SH_BLOCKS, ids=["L%d" % b for b in SH_BLOCKS])
def test_readme_sh_block_runs_as_written(block):
    for _, line, cmd, want, status in (c for c in SH if c[0] == block):
        proc = run_sh(cmd)
        where = "README.md line %d: %s\nexit %d\nstdout:\n%s\nstderr:\n%s" % (
            line, cmd, proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
        assert proc.returncode == status, where
        for text in want:
            assert text in proc.stdout or text in proc.stderr, "missing %r\n%s" % (text, where)


@pytest.fixture(scope="module")
def package_dir():
    """The built package (tests/python/ccpkg.py builds it on import)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
    try:
        import ccpkg
    finally:
        sys.path.pop(0)
    return ccpkg.PKG_DIR


PRINT_COMMENT = re.compile(r"^\s*print\(.*\)\s+# (.*)$")


def check_python_block(doc, first, code, package_dir, tmp_path):
    """Run a doc's ```python block as its own program (from a file, not -c:
    inspect.getsource works there, and smolagents' @tool needs it) with the
    package importable; its output must be its `print(...)  # text` lines."""
    want = [m.group(1) for m in map(PRINT_COMMENT.match, code.split("\n")) if m]
    assert want, "%s line %d: a block with no `print(...)  # output` line" % (doc, first)
    env = dict(os.environ, PYTHONPATH=package_dir)
    env.pop("CODECAGE_WORKER_DIR", None)
    script = tmp_path / "doc_block.py"
    script.write_text(code, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=300)
    where = "%s line %d\nstdout:\n%s\nstderr:\n%s" % (doc, first, proc.stdout, proc.stderr)
    assert proc.returncode == 0, where
    assert proc.stdout.splitlines() == want, where


@pytest.mark.parametrize("first,code", python_blocks(),
                         ids=["L%d" % b[0] for b in python_blocks()])
def test_readme_python_block_prints_what_it_shows(first, code, package_dir, tmp_path):
    check_python_block("README.md", first, code, package_dir, tmp_path)


def c_code(line):
    """A C line without its trailing /* comment */ and surrounding space."""
    return re.sub(r"/\*.*?\*/\s*$", "", line).strip()


def test_readme_c_lines_are_in_the_example():
    with open(EXAMPLE_C, encoding="utf-8") as f:
        example = [c_code(line) for line in f]
    checked = 0
    for lang, first, lines, _ in fenced_blocks(README):
        if lang != "c":
            continue
        for i, line in enumerate(lines):
            code = c_code(line)
            if not code or code.startswith("/*"):
                continue
            assert any(code in e for e in example), (
                "README.md line %d is not in examples/hello.c: %s" % (first + i, line))
            checked += 1
    assert checked >= 20


def test_readme_json_parses():
    blocks = [b for b in fenced_blocks(README) if b[0] == "json"]
    assert blocks
    for _, first, lines, _ in blocks:
        try:
            json.loads("\n".join(lines))
        except ValueError as e:
            pytest.fail("README.md line %d: %s" % (first, e))


# ---- every path README.md and HACKING.md name exists ----

DOCS = [README, HACKING]
EXTS = {"c", "h", "py", "pyi", "js", "mjs", "md", "json", "build", "toml", "sh", "ini", "typed"}
PATH_TOKEN = re.compile(r"(\.\./)*[\w.*-]+(/[\w.*-]+)*/?")
# What the docs name that a checkout does not hold, by prefix, and why.
NOT_IN_TREE = {
    "build/": "meson's build directory (scripts/setup makes it; the sh commands run from it)",
    "build-python/": "setup.py's default build directory",
    "codecage/_bin": "inside the built package",
    "../shared/": "the team's shared folder beside the checkout",
    "tests/mcp/node_modules": "installed by npm ci",
    "bench/node_modules": "installed by npm ci",
    "bench/qjs": "a ninja target (build/bench/qjs)",
    "claude_desktop_config.json": "an MCP client's configuration file",
}


def tree_files():
    """The checkout's files: tracked, or new and not ignored."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [p for p in out.split("\n") if p and os.path.exists(os.path.join(ROOT, p))]


def path_exists(path, files):
    """path: relative to the root (a trailing / for a folder, * globs), or a
    bare file name that must exist somewhere in the tree."""
    import fnmatch
    if "/" not in path:
        return any(fnmatch.fnmatch(os.path.basename(f), path) for f in files)
    path = path.rstrip("/")
    return any(fnmatch.fnmatch(f, path) or f.startswith(path + "/") for f in files)


def is_path(tok, top):
    """A file name with a known extension, or a/b whose a is in the root
    (not "notifications/cancelled" or "TextEncoder/Decoder")."""
    if not PATH_TOKEN.fullmatch(tok) or tok.startswith(".") and "/" not in tok:
        return False
    if "/" in tok:
        return tok.split("/")[0] in top or tok.startswith("../") or has_ext(tok)
    return has_ext(tok)


def has_ext(tok):
    return "." in tok and tok.rsplit(".", 1)[-1] in EXTS


def named_paths(path, top):
    """[(line number, path)] in a doc's inline code spans and in README's
    source tour (a fenced block without a language, in two columns: folder
    lines, indented file names relative to the last folder, then what
    they hold, where file names with an extension are checked too)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    found, fence, folder, col = [], None, "", None
    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            fence = None if fence is not None else line[3:].strip()
            continue
        if fence == "":  # the tour: "name[, name]  description"
            if col is None:
                col = re.match(r"\S+\s+", line).end()
            cut = col
            if len(line) > col and not line[col - 1].isspace():  # a long first column
                m = re.search(r"\S\s{2,}", line)
                cut = m.end() if m else len(line)
            names = [c.strip() for c in line[:cut].split(",") if c.strip()]
            indented = line.startswith(" ")
            for name in names:
                if not indented and name.endswith("/"):
                    folder = name
                found.append((n, folder + name if indented else name))
            text = " ".join(t for t in line[cut:].split() if has_ext(t.strip("()[],;:")))
        elif fence is None:
            text = " ".join(re.findall(r"`([^`]+)`", line))
        else:
            continue
        for tok in text.split():
            tok = tok.strip("()[],;:'\"")
            if is_path(tok, top):
                found.append((n, tok))
    return found


def test_docs_name_only_paths_that_exist():
    files = tree_files()
    top = {f.split("/")[0] for f in files}
    missing, checked = [], 0
    for doc in DOCS:
        for n, p in named_paths(doc, top):
            if any(p.startswith(prefix) for prefix in NOT_IN_TREE):
                continue
            checked += 1
            if not path_exists(p, files):
                missing.append("%s line %d: %s" % (os.path.basename(doc), n, p))
    assert checked >= 100, checked
    assert not missing, "named but not in the tree:\n" + "\n".join(missing)


def test_examples_keep_the_default_sandbox():
    """Examples get copied: none weakens the sandbox below "require"
    (hello.c takes another mode only from its command line)."""
    for name in sorted(os.listdir(os.path.join(ROOT, "examples"))):
        if name.endswith(".c"):
            with open(os.path.join(ROOT, "examples", name), encoding="utf-8") as f:
                text = f.read()
            for weaker in ("CC_SANDBOX_AUTO", "CC_SANDBOX_OFF"):
                assert weaker not in text, "examples/%s sets %s" % (name, weaker)
