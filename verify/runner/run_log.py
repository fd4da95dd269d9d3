"""The run's log: each engine start, each job's time and outcome, and where the wall time went.

`verify run` prints it as the run's summary; a full re-measure keeps its figures as the run's
record (verify/evidence/run_record.py). A job reads the starts made with no other engine up
from it (quiet_starts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class RunLog:
    """What the run summary prints: each engine start and each job's time."""
    # Every engine start of the run: {"name", "kind" (server or offline), "variant", "clock", "seconds"}.
    starts: list[dict] = field(default_factory=list)
    # id, group, seconds, outcome, seconds of that spent starting engines (offline jobs' own starts)
    jobs: list[tuple[str, str, float, str, float]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    # Claims whose verdict differs from the record this run replaced: (claim, before, now).
    changes: list[tuple[str, str, str]] = field(default_factory=list)
    # Each job's code and engine hashes, taken when the run started, from the code it runs:
    # a file edited while the run goes on then leaves the record stale, not falsely fresh.
    inputs_at_start: dict[str, dict[str, str]] = field(default_factory=dict)
    # Jobs measured again only to compare with their committed records (the live sample), and
    # where their records go instead of the evidence folder.
    sample: frozenset[str] = frozenset()
    sample_root: Path | None = None
    # When each engine was up (healthy to stopped) and when each job ran, on the monotonic clock:
    # (name, t_up, t_down) and (job id, t0, t1, shared with other jobs at once, engine name).
    engines_up: list[tuple[str, float, float]] = field(default_factory=list)
    spans: list[tuple[str, float, float, bool, str]] = field(default_factory=list)
    # When two engines were up at once (the second one serving jobs that judge no timing).
    beside: list[tuple[float, float]] = field(default_factory=list)
    # The offline child's engine: seconds up, and seconds its jobs used it (it reports durations only).
    offline_up_s: float = 0.0
    # Installing the tools the jobs run (verify/config/tools.py), before the first engine started.
    installs_s: float = 0.0
    # Called with (job, record) for each record written to the site's own evidence.
    on_record: object = None

    def root_for(self, job_id: str, evidence_root: Path | None) -> Path | None:
        return self.sample_root if job_id in self.sample else evidence_root

    def start(self, name: str, kind: str, seconds: float, clock: str, variant: str | None = None,
              beside: bool = False, offline_child: bool = False) -> None:
        """beside: the start ran while another engine was up (its time is not a start on a quiet machine);
        offline_child: made in the offline child (an engine, or a server an offline job started)."""
        self.starts.append({"name": name, "kind": kind, "variant": variant, "clock": clock, "seconds": seconds,
                            **({"beside": True} if beside else {}),
                            **({"offline_child": True} if offline_child else {})})

    def quiet_starts(self) -> list[dict]:
        """The starts made with no other engine up: the ones a job may read as start-up times."""
        return [dict(s) for s in self.starts if not s.get("beside")]

    def split(self, wall_s: float) -> dict[str, float]:
        """Where the wall time went: engine starts, jobs that had the engine alone, jobs that shared it
        (the time any of them ran), two engines up at once, engine time with no job running, and the
        rest (stopping engines, proxies, reading the machine); with the fraction of engine-up time a job
        was running on that engine. Time with two engines up counts once, as its own part."""
        two = _merged(self.beside)
        starts = sum(s["seconds"] for s in self.starts if not s.get("beside"))
        alone = _union(_outside([(t0, t1) for _, t0, t1, shared, _ in self.spans if not shared], two))
        shared = _union(_outside([(t0, t1) for _, t0, t1, together, _ in self.spans if together], two))

        def busy_on(name: str, t_up: float, t_down: float) -> list[tuple[float, float]]:
            return [(max(a, t_up), min(b, t_down)) for _, a, b, _, engine in self.spans
                    if engine == name and a < t_down and b > t_up]
        up = sum(t1 - t0 for _, t0, t1 in self.engines_up)
        busy = sum(_union(busy_on(*e)) for e in self.engines_up)
        up_quiet = sum(_union(_outside([(t0, t1)], two)) for _, t0, t1 in self.engines_up)
        busy_quiet = sum(_union(_outside(busy_on(*e), two)) for e in self.engines_up)
        # The offline child reports durations only. A job with a server phase counts that phase twice
        # (its span on the server, and in its seconds), and a job's seconds can hold part of an engine
        # start the run also logs: so the child's jobs get at most its time up less its starts.
        offline = {job_id for job_id, group, *_ in self.jobs if group == "offline engine"}
        phases = sum(t1 - t0 for job_id, t0, t1, *_ in self.spans if job_id in offline)
        offline_starts = sum(s["seconds"] for s in self.starts if s.get("offline_child"))
        offline_busy = min(sum(sec - inside for _, group, sec, _, inside in self.jobs if group == "offline engine")
                           - phases, max(0.0, self.offline_up_s - offline_starts))
        offline_idle = max(0.0, self.offline_up_s - offline_busy - offline_starts)
        idle = max(0.0, up_quiet - busy_quiet) + offline_idle
        engine_total = up + self.offline_up_s
        together = sum(b - a for a, b in two)
        return {"wall": wall_s, "installs": self.installs_s, "engine starts": starts,
                "jobs alone": alone + offline_busy, "jobs sharing the engine": shared,
                **({"two engines at once": together} if together else {}), "engine idle": idle,
                "other": max(0.0, wall_s - self.installs_s - starts - alone - offline_busy - shared - together - idle),
                "engine busy fraction": (busy + offline_busy) / engine_total if engine_total else 0.0}

    def summary(self, wall_s: float) -> list[str]:
        lines = [f"\nwall time {wall_s:.1f} s"]
        if self.starts:
            lines.append("engine starts:")
            lines += [f"  {s['seconds']:7.1f} s  {s['name']}" for s in self.starts]
        lines.append("jobs:")
        lines += [f"  {s:7.1f} s  {job_id:<28} [{group}] {outcome}" for job_id, group, s, outcome, _ in self.jobs]
        replaced = sum(1 for _, _, _, outcome, _ in self.jobs if outcome not in ("failed", "not run"))
        if self.changes:
            lines.append(f"verdicts changed against the records this run replaced ({len(self.changes)}):")
            lines += [f"  {claim}: {before} -> {now}" for claim, before, now in self.changes]
        elif replaced:
            lines.append("verdicts changed against the records this run replaced: none")
        split = self.split(wall_s)
        lines.append("where the wall time went: " + ", ".join(
            f"{k} {v:.1f} s" for k, v in split.items() if k not in ("wall", "engine busy fraction")))
        lines.append(f"an engine was up {_pct(split['engine busy fraction'])} of the time with a job running "
                     "(the rest: starts finished, nothing in flight)")
        return lines


def _union(intervals: list[tuple[float, float]]) -> float:
    """The length of the union of intervals."""
    return sum(b - a for a, b in _merged(intervals))


def _merged(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of intervals as sorted, disjoint intervals."""
    out: list[tuple[float, float]] = []
    for a, b in sorted(i for i in intervals if i[1] > i[0]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _outside(intervals: list[tuple[float, float]], holes: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The parts of intervals outside the (disjoint, sorted) holes."""
    out = []
    for a, b in intervals:
        for h0, h1 in holes:
            if h1 <= a or h0 >= b:
                continue
            if h0 > a:
                out.append((a, h0))
            a = max(a, h1)
        if b > a:
            out.append((a, b))
    return out


def _pct(fraction: float) -> str:
    return f"{100 * fraction:.0f} %"
