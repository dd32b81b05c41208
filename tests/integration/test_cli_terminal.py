"""The CLI's text mode on a terminal: guest text is made inert.

Through a pty (python's pty module, the slave in raw mode so the line
discipline adds no CR) the guest's control sequences (OSC 52 clipboard
writes, title changes, cursor movement, a lone C1 CSI, bidi overrides, CR)
arrive escaped as `cat -v`/`less` show them, and a guest line that starts
with "codecage" is marked "[guest] " so it cannot pass for codecage's own
diagnostics. Through a pipe, and with --raw on a terminal, the bytes are
unchanged; --json is unchanged."""
import json
import os
import pty
import subprocess
import tty

from conftest import CLI

HOSTILE_PY = (r"print('\x1b]52;c;aGk=\x07|\x1b]0;pwn\x07|\x9b|\u202e|\x1b[2J|\r|\x7f|\x00|ok\tü');"
              r"print('codecage: timeout: fake'); print('  codecage: indented');"
              r"import sys; sys.stderr.write('codecage: internal: from stderr\x1b[1A');"
              r"'\x1b[31mred'")
# What the hostile output looks like raw (a pipe) and escaped (a terminal).
RAW_STDOUT = ("\x1b]52;c;aGk=\x07|\x1b]0;pwn\x07|\x9b|\u202e|\x1b[2J|\r|\x7f|\x00|ok\tü\n"
              "codecage: timeout: fake\n  codecage: indented\n\x1b[31mred\n").encode()
RAW_STDERR = "codecage: internal: from stderr\x1b[1A".encode()
TTY_STDOUT = ("^[]52;c;aGk=^G|^[]0;pwn^G|<U+009B>|<U+202E>|^[[2J|^M|^?|^@|ok\tü\n"
              "[guest] codecage: timeout: fake\n[guest]   codecage: indented\n^[[31mred\n")
TTY_STDERR = "[guest] codecage: internal: from stderr^[[1A\n"


def run_on_pty(args, stdout_tty=True, stderr_tty=True):
    """Run the CLI with stdout and/or stderr on a pty; returns (rc, what
    the terminal got, what the pipe got)."""
    master, slave = pty.openpty()
    tty.setraw(slave)
    p = subprocess.Popen([CLI] + args, stdin=subprocess.DEVNULL,
                         stdout=slave if stdout_tty else subprocess.PIPE,
                         stderr=slave if stderr_tty else subprocess.PIPE)
    os.close(slave)
    got = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the slave
            break
        if not chunk:
            break
        got += chunk
    os.close(master)
    piped = (p.stdout or p.stderr).read() if not (stdout_tty and stderr_tty) else b""
    p.wait(timeout=60)
    return p.returncode, got, piped


def test_terminal_gets_guest_output_escaped():
    rc, term, _ = run_on_pty(["eval", "--lang", "python", "--sandbox", "auto", "--",
                              HOSTILE_PY], stderr_tty=False)
    assert rc == 0
    assert term.decode() == TTY_STDOUT, term
    assert b"\x1b" not in term and b"\x07" not in term and b"\r" not in term
    rc, term, _ = run_on_pty(["eval", "--lang", "python", "--sandbox", "auto", "--",
                              HOSTILE_PY], stdout_tty=False)
    assert term.decode() == TTY_STDERR, term


def test_guest_error_text_cannot_start_a_codecage_line():
    # The message is guest text inside codecage's own line: its newline is
    # shown as ^J, so "codecage: fake" never starts a line.
    rc, term, _ = run_on_pty(["eval", "--lang", "js", "--sandbox", "auto", "--",
                              "throw 'x\\ncodecage: fake\\x1b[2K'"])
    assert rc == 1
    assert term.decode() == "codecage: guest_error: Uncaught: x^Jcodecage: fake^[[2K\n", term
    # A traceback is guest text: its lines are marked like output.
    rc, term, _ = run_on_pty(["eval", "--lang", "js", "--sandbox", "auto", "--",
                              "throw new Error('x\\ncodecage: fake')"])
    lines = term.decode().splitlines()
    assert "[guest] codecage: fake" in lines and "codecage: fake" not in lines, lines


def test_a_pipe_gets_the_bytes_unchanged():
    p = subprocess.run([CLI, "eval", "--lang", "python", "--sandbox", "auto", "--", HOSTILE_PY],
                       capture_output=True, timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (0, RAW_STDOUT, RAW_STDERR), p


def test_raw_flag_passes_a_terminal_the_bytes():
    rc, term, _ = run_on_pty(["eval", "--raw", "--lang", "python", "--sandbox", "auto", "--",
                              HOSTILE_PY], stderr_tty=False)
    assert (rc, term) == (0, RAW_STDOUT), term


def test_json_is_unchanged_on_a_terminal():
    rc, term, _ = run_on_pty(["eval", "--json", "--lang", "python", "--sandbox", "auto", "--",
                              HOSTILE_PY], stderr_tty=False)
    o = json.loads(term)
    assert o["stdout"].encode() + o["value"].encode() + b"\n" == RAW_STDOUT, o
