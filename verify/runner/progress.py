"""The run's progress line: jobs done of total and the time left.

The time left is estimated from the durations the jobs' earlier records took, with a fixed
guess for a job that has none and for each engine start still to come.
"""

from __future__ import annotations

import time
from pathlib import Path

from verify.config.profiles import Profile
from verify.evidence.record import Record
from verify.job import Job


class Progress:
    """Jobs done of total and the time left, estimated from the durations earlier records took."""
    # Used where no earlier record tells: a job's time, and a server or offline engine start.
    UNKNOWN_JOB_S = 30.0
    START_S = 40.0

    def __init__(self, jobs: list[Job], starts: int, profile: Profile, root: Path | None, say=print):
        self.say, self.t0 = say, time.monotonic()
        self.expected: dict[str, float] = {}
        for job in jobs:
            record = Record.load(job.id, profile.name, root)
            self.expected[job.id] = float(record.provenance.get("duration_s") or self.UNKNOWN_JOB_S) \
                if record else self.UNKNOWN_JOB_S
        self.starts_left = starts
        self.done: set[str] = set()

    def started_engine(self) -> None:
        self.starts_left = max(0, self.starts_left - 1)

    def finished(self, job_id: str) -> str:
        self.done.add(job_id)
        left = sum(s for j, s in self.expected.items() if j not in self.done) + self.starts_left * self.START_S
        elapsed = time.monotonic() - self.t0
        return (f"{len(self.done)}/{len(self.expected)} jobs done, {_minutes(elapsed)} elapsed, "
                f"about {_minutes(left)} left")


def _minutes(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m} min {s:02d} s" if m else f"{s} s"
