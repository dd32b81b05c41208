"""skills/codecage/SKILL.md, the Agent Skills file for coding agents, is
tested as README is (tests/test_readme.py, whose block reader this uses):
its front matter is the format's (`name` as the folder, a `description`
within the format's 1024 characters), every ```python block prints what
its `print(...)  # text` comments show, and every ```sh command runs from
the root with build/ first on PATH (the skill says `codecage`, as an
installed codecage is called) and prints its `# text` lines."""
import os
import re
import subprocess

import pytest

from conftest import BUILD, ROOT
from test_readme import INSTALLS, check_python_block, fenced_blocks, package_dir  # noqa: F401

SKILL = os.path.join(ROOT, "skills", "codecage", "SKILL.md")


def front_matter():
    with open(SKILL, encoding="utf-8") as f:
        text = f.read()
    m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert m, "SKILL.md must start with a --- front matter block"
    fields = {}
    for line in m.group(1).split("\n"):
        key, _, value = line.partition(": ")
        fields[key] = value
    return fields


def test_front_matter_is_agent_skills():
    fields = front_matter()
    assert set(fields) == {"name", "description"}, fields
    assert fields["name"] == os.path.basename(os.path.dirname(SKILL))
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", fields["name"]) and len(fields["name"]) <= 64
    assert 20 <= len(fields["description"]) <= 1024, len(fields["description"])


def blocks(lang):
    return [(first, lines) for kind, first, lines, skip in fenced_blocks(SKILL)
            if kind == lang and not skip]


def test_skill_has_what_this_test_runs():
    assert len(blocks("python")) >= 4 and len(blocks("sh")) >= 1


@pytest.mark.parametrize("first,lines", blocks("python"), ids=["L%d" % b[0] for b in blocks("python")])
def test_skill_python_block_prints_what_it_shows(first, lines, package_dir, tmp_path):  # noqa: F811
    check_python_block("SKILL.md", first, "\n".join(lines), package_dir, tmp_path)


@pytest.mark.parametrize("first,lines", blocks("sh"), ids=["L%d" % b[0] for b in blocks("sh")])
def test_skill_sh_block_runs_as_written(first, lines):
    env = dict(os.environ, PATH=BUILD + os.pathsep + os.environ.get("PATH", ""))
    for i, line in enumerate(lines):
        if not line.strip() or line.startswith("#"):
            continue
        assert not INSTALLS.match(line), "SKILL.md line %d installs: %s" % (first + i, line)
        want = []
        for follow in lines[i + 1:]:
            if not follow.startswith("# "):
                break
            want.append(follow[2:])
        proc = subprocess.run(["sh", "-c", line], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL)
        where = "SKILL.md line %d: %s\nexit %d\n%s%s" % (first + i, line, proc.returncode,
                                                         proc.stdout, proc.stderr)
        assert proc.returncode == 0, where
        for text in want:
            assert text in proc.stdout, "missing %r\n%s" % (text, where)
