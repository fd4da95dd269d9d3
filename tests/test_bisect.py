"""`verify releases`: bisection over the releases between the oldest and the newest.

The search itself is tested with the answers of each release given as a table (which release
gives which verdict is what a live run measures; here it is the input of the search, and the
search is what is under test). The records it reads in real runs are tested in
tests/test_releases.py.
"""

from __future__ import annotations

import pytest

from verify.config.profiles import CPU_RELEASES, PROFILES, release_profile_name
from verify.runner import bisect
from verify.runner.bisect import Target, narrow


def _search(answers: dict[str, object], monkeypatch) -> tuple[Target, list[str]]:
    """Run the search to its end with `answers` as each release's measured answer; the releases run."""
    asked: list[str] = []
    measured: dict[str, object] = {CPU_RELEASES[0]: answers[CPU_RELEASES[0]], CPU_RELEASES[-1]: answers[CPU_RELEASES[-1]]}
    monkeypatch.setattr(bisect, "answer", lambda t, release, root=None: measured.get(release))
    t = Target("job", "job.claim", "claim", 0, len(CPU_RELEASES) - 1,
               answers[CPU_RELEASES[0]], answers[CPU_RELEASES[-1]])
    while (mid := narrow(t)) is not None:
        release = CPU_RELEASES[mid]
        asked.append(release)
        assert len(asked) <= len(CPU_RELEASES), "the search does not end"
        measured[release] = answers[release]  # the run of the job on that release
    return t, asked


@pytest.mark.parametrize("first_new", range(1, len(CPU_RELEASES)))
def test_bisection_finds_the_release_where_the_verdict_changed_in_few_runs(first_new, monkeypatch):
    answers = {r: ("confirmed" if i >= first_new else "refuted") for i, r in enumerate(CPU_RELEASES)}
    t, asked = _search(answers, monkeypatch)
    assert t.outcome.startswith(f"changed in {CPU_RELEASES[first_new]} ")
    # log2 of the releases between the ends, rounded up: 3 runs at most for 5 releases between.
    assert len(asked) <= 3, asked
    assert CPU_RELEASES[0] not in asked and CPU_RELEASES[-1] not in asked


def test_a_third_answer_between_the_ends_is_reported_not_forced_into_one_change(monkeypatch):
    answers = {r: "refuted" for r in CPU_RELEASES}
    answers[CPU_RELEASES[-1]] = "confirmed"
    answers[CPU_RELEASES[len(CPU_RELEASES) // 2]] = "inconclusive-looking third value"
    t, asked = _search(answers, monkeypatch)
    assert "third answer" in t.outcome and "changed more than once" in t.outcome


def test_an_exact_figure_is_bisected_by_its_value(monkeypatch):
    answers = {r: (117.0 if i >= 4 else 0.0) for i, r in enumerate(CPU_RELEASES)}
    t, _ = _search(answers, monkeypatch)
    assert t.outcome.startswith(f"changed in {CPU_RELEASES[4]} (0.0 on {CPU_RELEASES[3]}, 117.0 from")


def test_a_release_that_gives_nothing_ends_the_search_between_two_releases(monkeypatch):
    """A run that could not measure (install failed, capture failed, inconclusive) leaves the answer missing:
    the target is placed between the two releases known, never at one."""
    monkeypatch.setattr(bisect, "answer", lambda t, release, root=None: None)
    runs = []

    def run_jobs(ids, profile, run_all):
        runs.append((tuple(ids or ()), profile.name))

    monkeypatch.setattr(bisect, "_timing_differs_at_ends", lambda root=None: [])
    monkeypatch.setattr(bisect, "find_targets", lambda root=None, say=print: [
        Target("launch-path", "launch-path.deprecated", "claim", 0, len(CPU_RELEASES) - 1, "refuted", "confirmed")])
    said: list[str] = []
    targets = bisect.bisect(run_jobs, say=said.append)
    mid = CPU_RELEASES[(len(CPU_RELEASES)) // 2]
    assert runs[:2] == [((), "cpu"), ((), "cpu-oldest")], "the ends run first, in full"
    assert runs[2:] == [(("launch-path",), release_profile_name(mid))]
    assert targets[0].outcome == (f"changed between {CPU_RELEASES[0]} and {CPU_RELEASES[-1]} "
                                  f"({mid} gave nothing to decide on)")
    assert any("launch-path.deprecated: between" in line for line in said), "each run says why it runs"


def test_every_release_is_a_profile_with_its_own_environment():
    assert [PROFILES[release_profile_name(r)].release for r in CPU_RELEASES] == list(CPU_RELEASES)
    assert release_profile_name(CPU_RELEASES[-1]) == "cpu" and release_profile_name(CPU_RELEASES[0]) == "cpu-oldest"
    flags = {PROFILES[release_profile_name(r)].flags for r in CPU_RELEASES}
    assert len(flags) == 1, "every release runs the same flags, so only the release differs"


def test_a_timing_claim_decides_only_on_records_made_on_this_machine(monkeypatch):
    """The committed prefill-stall-chunked record of a release between, read on another machine, gives
    nothing to bisect on: that release runs again here rather than lend a machine difference."""
    from verify.evidence.record import Record
    record = Record.load("prefill-stall-chunked", "cpu-0.29.0")
    if record is None:
        pytest.skip("no committed prefill-stall-chunked record on 0.29.0")
    t = Target("prefill-stall-chunked", "prefill-stall-chunked.stall-bounded", "claim", 0, len(CPU_RELEASES) - 1)
    monkeypatch.setattr(bisect, "_here", lambda: record.provenance["hardware"])
    assert bisect.answer(t, "0.29.0") == record.verdict(t.name)["verdict"]
    monkeypatch.setattr(bisect, "_here", lambda: {"cpu": "Other CPU", "cores": 64, "fingerprint": "Other CPU / 64 cores"})
    assert bisect.answer(t, "0.29.0") is None
    # A claim that is not a timing claim is read whatever machine made it.
    other = Target("launch-path", "launch-path.deprecated", "claim", 0, len(CPU_RELEASES) - 1)
    assert bisect.answer(other, "0.29.0") in ("confirmed", "refuted")
