"""What a verification job is.

A job has one stable identifier. The same identifier names its module
(verify/jobs/<article>/<id with underscores>.py), its evidence files
(docs/evidence/<id>/<profile>.json), its CI job and its row on the status page.
A job collects data from a live engine; each of its claims turns that recorded
data into a verdict. Verdicts are computed from the data, never written in, and
a failed capture anywhere in the data makes every claim of the job
inconclusive before any rule runs (verify/captures.py).

Job modules import only the standard library at module level, so the site
build can read them (to decide verdicts and detect staleness) without the server
or client stack. A job returns data and never presents it: how its evidence looks
on a page (tables, transcripts, charts, generated pages) is site code, its view in
verify/site/views/<article>.py, which is not an input of any record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from verify.captures import failed_captures
from verify.headline import Headline

CONFIRMED = "confirmed"
REFUTED = "refuted"
INCONCLUSIVE = "inconclusive"
VERDICTS = (CONFIRMED, REFUTED, INCONCLUSIVE)

# Where a job runs: against an HTTP server started with its variant, or in-process
# with vllm.LLM (the offline engine), in a child process of its own.
SERVER = "server"
OFFLINE = "offline"


@dataclass(frozen=True)
class Verdict:
    verdict: str
    because: str

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, not {self.verdict!r}")

    def as_record(self) -> dict:
        return {"verdict": self.verdict, "because": self.because}


def verdict_if(condition: bool | None, because: str) -> Verdict:
    """confirmed when condition is true, refuted when false, inconclusive when None."""
    if condition is None:
        return Verdict(INCONCLUSIVE, because)
    return Verdict(CONFIRMED if condition else REFUTED, because)


@dataclass(frozen=True)
class Claim:
    id: str  # "<job-id>" or "<job-id>.<name>"
    text: str
    decide: Callable[[dict], Verdict]
    # A timing claim (set by keyword, `timing=True`): its verdict rests on how fast the machine is, so
    # a CPU with fewer cores or without AVX-512 can flip it although no sentence is wrong. Where a
    # record from other hardware than the committed one decides it otherwise, the verdicts layer
    # reports a hardware difference instead of a contradiction (verify/verdicts/hardware.py), the
    # release bisection measures both ends on one machine first, the live sample notes it, and its
    # job never runs beside a second engine (verify/config/timing.py). It says how a differing
    # verdict is read, never how it is decided: the code hash leaves it out (verify/evidence/inputs.py),
    # so marking a claim timing leaves every record fresh.
    timing: bool = False

    @property
    def anchor(self) -> str:
        return "claim-" + self.id.replace(".", "--")


@dataclass(frozen=True)
class Job:
    id: str
    title: str
    # The checklist item or question this job settles, in words.
    question: str
    # Pages (relative to docs/) that make the job's claims.
    pages: tuple[str, ...]
    collect: Callable[[Any], dict]
    claims: tuple[Claim, ...]
    profiles: tuple[str, ...] = ("cpu", "cpu-oldest", "t4")
    engine: str = SERVER
    # The server variant (verify.config.profiles.VARIANTS) the job needs; server jobs only.
    variant: str = "default"
    # The numbers a comparison of two records watches (verify/headline.py), read from the data.
    headline: Headline | None = None
    # Server jobs: the job observes only what the API answers (shapes, validation, text), not
    # timings, /metrics deltas or log lines, so it can run side by side with other such jobs
    # on one server. Every other job has the server to itself.
    shares_server: bool = False
    # Offline jobs: the job starts an engine or server of its own (a copy of the model), so
    # it runs after the jobs that share the run's offline engine.
    starts_own_engine: bool = False
    # Offline jobs that compare with the run's own default server: server_phase(ctx, data)
    # runs on that server after the offline part and returns the data to add. The record
    # is written once both parts ran, with every engine start the run made.
    server_phase: Callable[[Any, dict], dict] | None = None
    module_file: str = ""

    @property
    def article(self) -> str:
        """The article folder the job lives in (verify/jobs/<article>/)."""
        from pathlib import Path
        return Path(self.module_file).parent.name

    @property
    def runs_on(self) -> str:
        """What the job needs started: 'offline engine' or 'server, variant X'."""
        if self.engine == OFFLINE:
            return "offline engine" + (", then the run's default server" if self.server_phase else "")
        return f"server, variant {self.variant}" + (", shared with other jobs" if self.shares_server else "")

    def claim(self, claim_id: str) -> Claim:
        for c in self.claims:
            if c.id == claim_id:
                return c
        raise KeyError(claim_id)

    def decide(self, data: dict) -> dict[str, dict]:
        failures = failed_captures(data)
        if failures:
            because = "a capture failed, so nothing can be concluded: " + "; ".join(failures[:3]) + \
                      (f" (and {len(failures) - 3} more)" if len(failures) > 3 else "")
            return {c.id: Verdict(INCONCLUSIVE, because).as_record() for c in self.claims}
        out = {}
        for c in self.claims:
            try:
                out[c.id] = c.decide(data).as_record()
            except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError, StopIteration) as e:
                # Data that cannot settle a claim is a finding, not a crash.
                out[c.id] = Verdict(INCONCLUSIVE, f"the recorded data cannot decide this ({type(e).__name__}: {e})").as_record()
        return out
