"""Child processes that never outlive the run.

Servers and proxies are started in their own process group so that stopping
them also stops anything they spawned (vLLM starts an engine process; nginx
starts workers). Every started group is also registered for an atexit and
signal-time cleanup, so an exception or Ctrl-C anywhere leaves nothing behind.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

_live_groups: set[int] = set()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False


PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    # If the verify process itself is killed outright (SIGKILL, OOM), nothing of ours can run;
    # the kernel then sends the child SIGTERM, and it stops its own children in turn.
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def spawn(argv: list[str], log_path: Path, env: dict[str, str] | None = None,
          cwd: Path | None = None) -> subprocess.Popen:
    """Start argv in a new process group, stdout and stderr to log_path."""
    log = open(log_path, "ab")
    try:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, cwd=cwd, start_new_session=True, preexec_fn=_die_with_parent)
    finally:
        log.close()
    _live_groups.add(proc.pid)
    return proc


def stop_group(proc: subprocess.Popen, grace_s: float = 10.0) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after grace_s."""
    pgid = proc.pid
    # A stopped process (a job may SIGSTOP an engine) acts on SIGTERM only once continued.
    _signal_group(pgid, signal.SIGCONT)
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if proc.poll() is not None and not _group_alive(pgid):
            break
        time.sleep(0.05)
    _signal_group(pgid, signal.SIGKILL)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    # Reap grandchildren that are still being torn down by the kernel.
    deadline = time.monotonic() + 5
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    _live_groups.discard(pgid)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_all_groups() -> None:
    for pgid in list(_live_groups):
        _signal_group(pgid, signal.SIGKILL)  # SIGKILL ends stopped processes too
        _live_groups.discard(pgid)


def _on_terminate(signum, frame):
    raise KeyboardInterrupt


def unwind_on_signals() -> None:
    """Make Ctrl-C and SIGTERM unwind the stack, so context managers stop their children.

    SIGINT is reset too: a shell starts background commands with it ignored.
    """
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _on_terminate)


atexit.register(_kill_all_groups)


class Exited(Exception):
    """The process ended before it was ready."""

    def __init__(self, code: int):
        super().__init__(f"exited with code {code}")
        self.code = code


class TimedOut(Exception):
    """The process did not get ready in time."""


def log_tail(path: Path, lines: int = 15) -> str:
    """The last lines of a log, "" when there is none (yet)."""
    try:
        text = path.read_text("utf-8", "replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def wait_until(proc: subprocess.Popen, ready, timeout_s: float, progress=None, waiting_for: str = "",
               log_path: Path | None = None, poll_s: float = 0.25, note_every_s: float = 10.0) -> None:
    """Poll ready() until it is true; Exited if proc ends first, TimedOut after timeout_s.

    The one start-up loop of the live parts (a server's /health, a proxy's port, the
    offline child's next result). Every note_every_s, progress gets a line saying what is
    awaited, for how long, and the log's last line, so a long start is never silent.
    """
    t0 = last_note = time.monotonic()
    while True:
        if ready():
            return
        code = proc.poll()
        if code is not None:
            raise Exited(code)
        now = time.monotonic()
        if now - t0 > timeout_s:
            raise TimedOut(f"not ready after {timeout_s:.0f} s")
        if progress and now - last_note >= note_every_s:
            last_note = now
            line = log_tail(log_path, 1) if log_path else ""
            line = (line[:100] + "...") if len(line) > 100 else line
            progress(f"  ... waiting for {waiting_for} ({now - t0:.0f} s{'; ' + line if line else ''})")
        time.sleep(poll_s)
