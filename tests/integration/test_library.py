"""The C library through tests/integration/libdriver.c: every value type
host -> guest -> host, state across evals, soft stops that keep the runtime,
dead runtimes, bad options, and 500 runtimes in a row without leaks."""
import os
import re
import subprocess

import pytest

import conftest
from conftest import BUILD

DRIVER = os.path.join(BUILD, "tests", "cc-libdriver")


def drive(*args, checks, timeout=300):
    return conftest.drive("cc-libdriver", *args, checks=checks, timeout=timeout)


# (scenario, language) -> the checks it makes (language None: either);
# test_sanitized.py runs the same scenarios.
CHECKS = {("roundtrip", None): 45, ("state", None): 2, ("afterstop", None): 17,
          ("dead", "javascript"): 3, ("dead", "python"): 5, ("thread", None): 2,
          ("stream", None): 5, ("badopts", None): 7, ("many", None): 4,
          ("subreaper", None): 1, ("files", None): 37, ("shared", None): 13, ("grants", None): 8,
          ("deadlines", None): 6}


def checks(scenario, lang=None):
    return CHECKS.get((scenario, lang), CHECKS.get((scenario, None)))


def test_value_roundtrip(lang):
    drive("roundtrip", lang, checks=checks("roundtrip", lang))


def test_shared_fork_server_option(lang):
    """cc_options.fork_server (the C API's default path): one lazily
    started server per template-fixed options, the fallback, the close."""
    drive("shared", lang, checks=checks("shared", lang))


def test_state_persists(lang):
    drive("state", lang, checks=checks("state", lang))


def test_soft_stops_keep_the_runtime(lang):
    drive("afterstop", lang, checks=checks("afterstop", lang))


def test_each_eval_keeps_its_own_deadline(lang):
    """Issue 19: the Python worker no longer re-arms its stop timer for
    every eval; a short timeout after a long one still stops in time, and
    stale ticks of short ones do not stop a long one."""
    drive("deadlines", lang, checks=checks("deadlines", lang))


def test_dead_runtime_then_new(lang):
    drive("dead", lang, checks=checks("dead", lang))


def test_runtime_outlives_the_thread_that_made_it(lang):
    drive("thread", lang, checks=checks("thread", lang))


def test_output_streams_and_values_fall_back_through_the_c_api(lang):
    """cc_runtime_set_output_handler sees a line while the eval runs (the
    handler stops the eval; the guest would wait 120 s, past the driver's
    60 s test timeout); cc_runtime_set_value_fallback (issue 16)."""
    drive("stream", lang, checks=checks("stream", lang))


def test_bad_options():
    drive("badopts", checks=checks("badopts"))


def test_drive_counts_the_checks():
    """conftest.drive refuses a scenario that made fewer checks than it
    should (one that stopped early, or ran none), and every call must say
    how many."""
    with pytest.raises(AssertionError, match="7 checks ran, 8 expected"):
        drive("badopts", checks=8)
    with pytest.raises(TypeError):
        conftest.drive("cc-libdriver", "badopts")


@pytest.mark.slow
def test_500_runtimes_no_leak(lang):
    drive("many", lang, "500", checks=checks("many", lang), timeout=600)


def test_subreaper_host_collects_no_zombies(lang):
    """Regression (red team): a host that is a subreaper got every closed
    runtime's namespace child as a zombie."""
    drive("subreaper", lang, "5", checks=checks("subreaper", lang))


# Lying workers (tests/integration/fake_worker.py): the supervisor ends them
# with protocol_violation or a timeout, never trusts what they claim, and
# leaves no process behind.
FAKES = {
    "huge-frame": ("new=protocol_violation", "cap"),
    "bad-ready": ("new=protocol_violation", "unknown fields"),
    "fail-internal": ("new=internal", "fake start-up failure"),
    "fail-guest-kind": ("new=protocol_violation", "kind"),
    "fail-library-claim": ("new=invalid_input", "library 1: guest_error"),
    "wrong-engine": ("new=protocol_violation", "engine"),
    "claims-require": ("new=sandbox_unavailable", "seccomp"),
    "liar-kind": ("eval=protocol_violation alive=0", "kind"),
    "wrong-id": ("eval=protocol_violation alive=0", "id mismatch"),
    "text-unasked": ("eval=protocol_violation alive=0", "not asked for"),
    "text-not-string": ("eval=protocol_violation alive=0", "wrong type"),
    "invalid-utf8": ("eval=protocol_violation alive=0", "UTF-8"),
    "truncated": ("eval=worker_crashed alive=0", ""),
    "deep": ("eval=protocol_violation alive=0", "deeper"),
    "silent": ("eval=timeout alive=0", "killed"),
    "drip": ("eval=timeout alive=0", "killed"),
    "exit": ("eval=worker_crashed alive=0", "create a new runtime"),
    "flood-out": ("eval=output_limit alive=1", "stdout exceeded"),
    "out-bad-fd": ("eval=protocol_violation alive=0", "fd 7"),
    "big-out": ("eval=protocol_violation alive=0", "at most 65536"),
    "result-over-cap": ("eval=output_limit alive=1", "larger than the limit"),
    "honest": ("eval=ok alive=1", "stdout=hi\ufffd"),
    "call-unknown": ("eval=ok alive=1", "stdout=ToolNotFoundError:1"),
    "huge-map": ("eval=ok alive=1", ""),
    "unknown-ext": ("eval=protocol_violation alive=0", "unknown ext"),
    "bind-call-in-bind": ("bind=protocol_violation", "hostcalls=0"),
    "bind-nul-name": ("eval=ok alive=1", "stdout=ToolNotFoundError"),
    "bind-replay-twice": ("eval2=protocol_violation", "hostcalls=1"),
    "reply-to-nobody": ("eval=protocol_violation alive=0", "unknown message type"),
    # 1.2 million frames: ended by the output cap or, when decoding them
    # outlasts the 1 s deadline, by the deadline
    "flood-tiny": (r"eval=(output_limit alive=1|timeout alive=0)", "children=0"),
    "no-read": ("eval=timeout alive=0", "killed"),
    "call-replay": ("eval=protocol_violation alive=0", "mismatch"),
    "call-bad-args": ("eval=protocol_violation alive=0", "wrong type"),
    "call-other-eval": ("eval=protocol_violation alive=0", "mismatch"),
    # displays (src/lib/protocol.c); the honest one checks the C accessors
    "display-honest": ("eval=ok alive=1", "displays=2 png=11 html=<b>t</b> none=1"),
    "display-on-error": ("eval=guest_error alive=1", "displays=1"),
    "display-unknown-mime": ("eval=protocol_violation alive=0", "unknown MIME type"),
    "display-not-png": ("eval=protocol_violation alive=0", "not a PNG file"),
    "display-png-as-text": ("eval=protocol_violation alive=0", "not a PNG file"),
    "display-too-many": ("eval=protocol_violation alive=0", "65 displays"),
    "display-empty": ("eval=protocol_violation alive=0", "0 displays"),
    "display-not-a-list": ("eval=protocol_violation alive=0", "wrong type"),
    "display-bytes-over": ("eval=protocol_violation alive=0", "bytes of displays"),
    "display-with-value-over": ("eval=output_limit alive=1", "with its displays"),
}


# Decoder amplification (fake_worker.py's amplifier()): the worst 16 MiB
# result frames for the host's memory. Huge declared lengths once made the
# supervisor reserve 128 MiB per map (4 GiB virtual for 31 nested ones);
# one-byte elements cost it 100 to 200 bytes each. Now a decoded value may
# take at most 3x max_result, so with the frame's own buffer the host's
# peak resident and virtual growth stay within 4x the largest frame.
AMPLIFIERS = {
    "amp-declared": "eval=protocol_violation",
    "amp-nested": "eval=protocol_violation",
    "amp-ints": "eval=output_limit",
    "amp-strings": "eval=output_limit",
    "amp-map": "eval=output_limit",
    "amp-nils": "eval=output_limit",
}
FRAME_CAP_KIB = (16 << 10) + 64  # max_result (default) + CC_FRAME_ENVELOPE, KiB


def fake_worker_dir(tmp_path, mode):
    d = tmp_path / mode
    d.mkdir()
    src = os.path.join(os.path.dirname(__file__), "fake_worker.py")
    with open(src) as f:
        (d / "codecage-worker-js").write_text(f.read())
    os.chmod(d / "codecage-worker-js", 0o755)
    return d


@pytest.mark.parametrize("mode", sorted(AMPLIFIERS))
def test_decoder_memory_is_bounded(tmp_path, mode):
    d = fake_worker_dir(tmp_path, mode)
    proc = subprocess.run([DRIVER, "fake", str(d), "60", "1"], capture_output=True, text=True,
                          timeout=120)
    assert AMPLIFIERS[mode] in proc.stdout and "children=0" in proc.stdout, proc.stdout
    if "output_limit" in AMPLIFIERS[mode]:
        assert "3x max_result" in proc.stdout, proc.stdout
    m = re.search(r"rss_growth_kib=(\d+) vm_growth_kib=(\d+)", proc.stdout)
    rss, vm = int(m.group(1)), int(m.group(2))
    assert rss <= 4 * FRAME_CAP_KIB and vm <= 4 * FRAME_CAP_KIB, (rss, vm)


@pytest.mark.parametrize("mode", sorted(FAKES))
def test_lying_worker(tmp_path, mode):
    d = fake_worker_dir(tmp_path, mode)
    # a worker that stops reading gets code too big for the socket buffers
    size = "4000000" if mode == "no-read" else "1"
    proc = subprocess.run([DRIVER, "fake", str(d), "1", size], capture_output=True, text=True,
                          timeout=60)
    want, needle = FAKES[mode]
    assert re.search(want, proc.stdout), proc.stdout[-2000:] + proc.stderr
    assert needle in proc.stdout, proc.stdout
    if "eval=" in want or "bind=" in want:
        assert "children=0" in proc.stdout, proc.stdout


@pytest.mark.userns
@pytest.mark.landlock
def test_files_from_c():
    """Grants, scratch and cc_runtime_write_file/read_file/list_files through
    the C API, spawned and forked, both languages (issue 14)."""
    files_from_c()


@pytest.mark.userns
@pytest.mark.landlock
def test_grant_rules_from_c():
    """Issue 27, C, through cc_options: the host paths never granted, the
    user's path in messages (cc_mount.name), a python_path folder a
    writable mount reaches, a root-owned 0700 folder granted as its owner
    (idmapped: the supervisor runs as root here)."""
    grants_from_c()


def grants_from_c(sanitized=False):
    """The "grants" scenario (also test_sanitized.py's, under ASan)."""
    import shutil
    import tempfile
    assert os.geteuid() == 0, "a root host (CI runs as root)"
    d = tempfile.mkdtemp(prefix="cc-libgrants-")
    try:
        os.makedirs(os.path.join(d, "d", "sub"))
        owned = os.path.join(d, "owned")
        os.mkdir(owned, 0o700)
        with open(os.path.join(owned, "in.txt"), "w") as f:
            f.write("private")
        os.chmod(os.path.join(owned, "in.txt"), 0o600)
        conftest.drive("cc-libdriver", "grants", d, checks=checks("grants"), sanitized=sanitized)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def files_from_c(sanitized=False):
    """The "files" scenario (also test_sanitized.py's, under ASan)."""
    import shutil
    import tempfile
    d = tempfile.mkdtemp(prefix="cc-libfiles-")
    try:
        os.chmod(d, 0o755)
        os.mkdir(os.path.join(d, "in"))
        os.mkdir(os.path.join(d, "out"))
        os.chmod(os.path.join(d, "out"), 0o777)
        with open(os.path.join(d, "in", "in.txt"), "w") as f:
            f.write("in")
        # (1 + 8 checks) x 4 sessions, + 1
        conftest.drive("cc-libdriver", "files", d, checks=checks("files"), sanitized=sanitized)
    finally:
        shutil.rmtree(d, ignore_errors=True)
