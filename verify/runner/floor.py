"""`verify floor`: the least wall time a full re-measure could take, read from the committed records.

A run cannot be faster than the work its claims need, whatever the runner does:

- one engine start per configuration the run needs (each server start the runner groups jobs into,
  and each offline engine built from a fresh configuration), at the start time its records name;
  a server started as the second engine, beside another (its records say `two_engines`), shared
  the two cores, so its start counts at half, as the other jobs do;
- every job with a timing claim (verify/config/timing.py) alone on the machine, at its recorded time
  without the engine starts inside it: sharing the machine would change what it measures;
- every other job at half its recorded time: on two cores, two of them could run at once.

The floor is that sum. It is computed from each job's recorded time, so it moves when a job's
own work changes (fewer trials, concurrent requests), and not when the runner gets better at
scheduling; `verify run --all` prints its own wall time beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median

from verify.config.profiles import Profile
from verify.config.timing import timing_claims
from verify.evidence.record import Record
from verify.runner.grouping import grouped
from verify.runner.selection import select_jobs


@dataclass
class Floor:
    starts: dict[str, float] = field(default_factory=dict)  # configuration -> seconds
    alone: dict[str, float] = field(default_factory=dict)   # timing job -> seconds
    other: dict[str, float] = field(default_factory=dict)   # other job -> seconds (before halving)
    missing: list[str] = field(default_factory=list)        # jobs without a committed record
    # article page -> seconds its jobs add to the floor
    by_article: dict[str, float] = field(default_factory=dict)
    # article page -> {job: seconds it adds to the floor}
    jobs_by_article: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return sum(self.starts.values()) + sum(self.alone.values()) + sum(self.other.values()) / 2

    def over_budget(self) -> list[str]:
        """What exceeds its budget (verify/config/budgets.py), one line each, naming the jobs."""
        from verify.config import budgets
        out = []
        starts = sum(self.starts.values())
        if starts > budgets.STARTS_S:
            out.append(f"engine starts: {starts:.0f} s over their budget of {budgets.STARTS_S} s "
                       f"({', '.join(f'{k} {v:.0f} s' for k, v in sorted(self.starts.items(), key=lambda kv: -kv[1]))})")
        for page, seconds in sorted(self.by_article.items()):
            budget = budgets.ARTICLES_S.get(page)
            if budget is None or seconds > budget:
                jobs = sorted(self.jobs_by_article[page].items(), key=lambda kv: -kv[1])
                limit = "no budget" if budget is None else f"its budget of {budget} s"
                out.append(f"{page}: {seconds:.0f} s over {limit} "
                           f"({', '.join(f'{j} {s:.0f} s' for j, s in jobs)})")
        return out

    def lines(self) -> list[str]:
        out = [f"floor of a full re-measure: {_minutes(self.seconds)} "
               f"(engine starts {sum(self.starts.values()):.0f} s for {len(self.starts)} configuration(s); "
               f"timing jobs alone {sum(self.alone.values()):.0f} s ({len(self.alone)} jobs); "
               f"other jobs {sum(self.other.values()):.0f} s ({len(self.other)} jobs), halved on two cores)"]
        from verify.config import budgets
        out.append("by article (the jobs' share of the floor, engine starts not included; its budget):")
        out += [f"  {s:7.0f} s  {page}  (budget {budgets.ARTICLES_S.get(page, 'none')} s)"
                for page, s in sorted(self.by_article.items(), key=lambda kv: -kv[1])]
        out.append(f"budgets (verify/config/budgets.py): {_minutes(budgets.total_s())} with engine starts "
                   f"{budgets.STARTS_S} s; the goal is {_minutes(budgets.TARGET_S)}")
        out += [f"over budget: {line}" for line in self.over_budget()]
        if self.missing:
            out.append(f"no committed record (not counted): {', '.join(self.missing)}")
        return out


def _minutes(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m} min {s:02d} s"


def _inside_starts(record: Record) -> float:
    """Seconds of a job's recorded time spent building engines or starting servers of its own."""
    engine = record.provenance.get("offline_engine") or {}
    built = sum(e.get("fresh_process_start_seconds") or e.get("start_seconds") or 0.0
                for e in engine.get("engines", []) if not e.get("shared"))
    return built + sum(s.get("start_seconds") or 0.0 for s in engine.get("servers", []))


def _own_start(record: Record) -> float | None:
    """The server start a record names, at half when that server was the second engine beside another."""
    seconds = record.provenance.get("server", {}).get("start_seconds")
    beside = "this_engine_bound_to_cpus" in (record.provenance.get("two_engines") or {})
    return seconds / 2 if seconds and beside else seconds


def floor(profile: Profile, root=None) -> Floor:
    out = Floor()
    jobs = select_jobs(None, profile)
    records = {j.id: Record.load(j.id, profile.name, root) for j in jobs}
    out.missing = sorted(i for i, r in records.items() if r is None)
    for group, members in grouped([j for j in jobs if records[j.id]]).items():
        if group == "offline engine":
            for job in members:  # each offline engine built from a fresh configuration, with its servers
                out.starts[f"offline engine ({job.id})"] = _inside_starts(records[job.id])
            out.starts = {k: v for k, v in out.starts.items() if v}
            continue
        seconds = [_own_start(records[j.id]) for j in members]
        seconds = [s for s in seconds if s]
        if seconds:
            out.starts[group] = median(seconds)
    for job in jobs:
        record = records[job.id]
        if record is None:
            continue
        own = max(0.0, float(record.provenance.get("duration_s") or 0.0) - _inside_starts(record))
        share = own if timing_claims(job) else own / 2
        (out.alone if timing_claims(job) else out.other)[job.id] = own
        page = job.pages[0] if job.pages else "(no page)"
        out.by_article[page] = out.by_article.get(page, 0.0) + share
        out.jobs_by_article.setdefault(page, {})[job.id] = share
    return out

