"""Run a snippet command and record when each line of its output arrived.

Output is read either through a pipe or through a pseudo-terminal, because
programs such as curl buffer differently when they write to a terminal (what a
reader trying the command sees) than to a pipe (what a script sees).
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time


def timed_output(argv: list[str], env: dict[str, str], terminal: bool, timeout_s: float = 120.0) -> dict:
    """Run argv; return its output lines, each with the time (s after start) the line was complete."""
    if terminal:
        master, slave = pty.openpty()
        proc = subprocess.Popen(argv, stdout=slave, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
        os.close(slave)
        fd = master
    else:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
        fd = proc.stdout.fileno()
    t0 = time.perf_counter()
    reads: list[tuple[float, bytes]] = []
    try:
        while time.perf_counter() - t0 < timeout_s:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:  # a pty reports EIO once the child has closed it
                break
            if not data:
                break
            reads.append((round(time.perf_counter() - t0, 4), data))
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if terminal:
            os.close(master)
    lines, buf = [], b""
    for t, data in reads:
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            lines.append({"t": t, "line": line.decode("utf-8", "replace").rstrip("\r")})
    if buf:
        lines.append({"t": reads[-1][0], "line": buf.decode("utf-8", "replace")})
    return {"capture": "command", "exit_code": proc.returncode, "reads": len(reads), "lines": lines,
            "mode": "terminal" if terminal else "pipe"}
