"""A process group whose processes were stopped (SIGSTOP, as the health article's jobs stop an engine
core) is still stopped at once: stop_group continues it before it asks it to terminate."""

from __future__ import annotations

import os
import signal
import sys
import time

from verify.live import processes

# A parent that starts a child and both wait: the shape of an API server and its engine core.
TREE = ("import subprocess, sys, time; "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); time.sleep(600)")


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_stopped_group_is_stopped_within_a_second(tmp_path):
    proc = processes.spawn([sys.executable, "-c", TREE], tmp_path / "log")
    deadline = time.monotonic() + 10
    while not _children(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    child = _children(proc.pid)[0]
    # Both stopped: a stopped child alone is continued by the kernel once its parent exits (an
    # orphaned group with a stopped member gets SIGHUP and SIGCONT), so that case proves nothing.
    os.kill(child, signal.SIGSTOP)
    os.kill(proc.pid, signal.SIGSTOP)
    t0 = time.monotonic()
    processes.stop_group(proc, grace_s=10.0)
    took = time.monotonic() - t0
    assert not _alive(proc.pid) and not _alive(child)
    # Without SIGCONT the stopped child would sit out the whole grace period and need SIGKILL.
    assert took < 3.0, f"stopping took {took:.1f} s"
