"""Another process's CPU time, to the nanosecond: the kernel's per-process CPU clock.

/proc/<pid>/stat (and psutil's cpu_times, which reads it) counts CPU time in clock ticks of
10 ms, too coarse to compare the API server's CPU over a few requests. Linux gives every process
a CPU-time clock that clock_gettime reads to the nanosecond, summed over all its threads, exited
ones included (clock_getcpuclockid(3)); Python has no wrapper for a process other than its own,
but the clock's id is fixed by the kernel's ABI: ((~pid) << 3) | CPUCLOCK_SCHED.
"""

from __future__ import annotations

import time

_CPUCLOCK_SCHED = 2  # include/linux/posix-timers.h: the scheduler's precise runtime


def process_cpu_s(pid: int) -> float:
    """Seconds of CPU the process has used, user and system, over all its threads."""
    return time.clock_gettime(((~pid) << 3) | _CPUCLOCK_SCHED)
