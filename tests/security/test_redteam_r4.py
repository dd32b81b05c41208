"""Red-team round 4: cases kept from attacking file grants, scratch, --out,
libraries, the network broker and agent sessions. Each case asserts the
exact outcome; where it is a security claim it also runs in reverse (the
same attack with the trap or the layer taken away must land), so the probe
can see a breach."""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from conftest import CLI

pytestmark = [pytest.mark.userns, pytest.mark.landlock, pytest.mark.seccomp]


@pytest.fixture
def base():
    d = pathlib.Path(tempfile.mkdtemp(prefix="cc-red4-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def run(*args, timeout=30):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout)


# --- --out: DIR's own symlinks, FIFOs and hard links ---------------------

OUT_GUEST = (
    "import os\n"
    "os.makedirs('/tmp/sub/deep', exist_ok=True)\n"
    "open('/tmp/sub/pwned', 'w').write('from the guest')\n"
    "open('/tmp/fifo', 'w').write('x')\n"
    "open('/tmp/hl', 'w').write('from the guest')\n"
    "open('/tmp/ok', 'w').write('fine')\n"
    "1")


def out_dir(base, traps):
    """DIR for --out and a victim directory outside it. With traps, DIR
    already holds sub -> victim, a FIFO and a hard link to victim/hl, as
    an existing project directory might; without, plain names."""
    out, victim = base / "out", base / "victim"
    out.mkdir()
    victim.mkdir()
    (victim / "hl").write_text("original")
    if traps:
        (out / "sub").symlink_to(victim)
        os.mkfifo(out / "fifo")
        os.link(victim / "hl", out / "hl")
    return out, victim


def test_out_never_writes_through_dirs_own_symlinks_fifos_or_links(base):
    # Before the fix: the guest's /tmp/sub/pwned landed in victim/ through
    # DIR's symlink, and the CLI hung for ever opening DIR's FIFO.
    out, victim = out_dir(base, traps=True)
    r = run("eval", "--lang", "python", "--json", "--scratch", "4", "--out", str(out),
            "--", OUT_GUEST)
    assert r.returncode == 0, r
    assert json.loads(r.stdout)["value"] == 1
    assert sorted(p.name for p in victim.iterdir()) == ["hl"]
    assert (victim / "hl").read_text() == "original"
    assert (out / "ok").read_text() == "fine"
    assert (out / "fifo").is_fifo()
    for name in ("/tmp/sub/pwned", "/tmp/fifo", "/tmp/hl"):
        assert "skipped %s" % name in r.stderr, r.stderr


def test_out_reverse_plain_dir_takes_every_file(base):
    out, victim = out_dir(base, traps=False)
    r = run("eval", "--lang", "python", "--json", "--scratch", "4", "--out", str(out),
            "--", OUT_GUEST)
    assert r.returncode == 0, r
    assert (out / "sub" / "pwned").read_text() == "from the guest"
    assert (out / "hl").read_text() == "from the guest"
    assert (out / "fifo").read_text() == "x"
    assert (victim / "hl").read_text() == "original"
