"""Greedy and seeded sampling: reproducible one after another, and inside a concurrent batch?"""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if

SNIPPET = "sampling/repeat_and_batch.py"
IN_A_ROW = 5
BATCHES = 3
SEED = 1234


def collect(ctx) -> dict:
    from openai import OpenAI

    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    data = {}
    for name, params in (("greedy", {"temperature": 0}), ("seeded", {"temperature": 1.0, "seed": SEED}),
                         ("unseeded", {"temperature": 1.0})):
        row = snippet.in_a_row(client, IN_A_ROW, **params)
        batched = [snippet.among_others(client, **params) for _ in range(BATCHES)]
        # One event per answer that holds text (the client raises on an HTTP error).
        data[name] = capture.results("answers", [a for a in row + batched if a], params=params,
                                     in_a_row=row, among_others=batched)
    return data


def distinct_count(xs) -> int:
    """Distinct answers; empty answers prove nothing about reproducibility, so they fail the rule."""
    if not xs or any(not x for x in xs):
        raise ValueError(f"{sum(1 for x in xs if not x)} of {len(xs)} answers are empty")
    return len(set(xs))


def _equal_to_alone(group: dict) -> list[bool]:
    distinct_count(group["in_a_row"] + group["among_others"])  # no empty answer on either side
    return [a == group["in_a_row"][0] for a in group["among_others"]]


def decide_greedy_row(d):
    row = d["greedy"]["in_a_row"]
    return verdict_if(distinct_count(row) == 1,
                      f"temperature 0, {len(row)} requests in a row: {distinct_count(row)} distinct answer(s)")


def decide_greedy_batch(d):
    same = _equal_to_alone(d["greedy"])
    return verdict_if(all(same), f"temperature 0 among five other running requests: {sum(same)} of {len(same)} answers "
                                 f"equal the answer given alone")


def decide_seed_row(d):
    row = d["seeded"]["in_a_row"]
    return verdict_if(distinct_count(row) == 1, f"temperature 1.0, seed {SEED}, {len(row)} requests in a row: "
                                           f"{distinct_count(row)} distinct answer(s)")


def decide_seed_batch(d):
    same = _equal_to_alone(d["seeded"])
    return verdict_if(all(same), f"temperature 1.0, seed {SEED}, among five other running requests: {sum(same)} of "
                                 f"{len(same)} answers equal the answer given alone")


def decide_unseeded(d):
    row = d["unseeded"]["in_a_row"]
    return verdict_if(distinct_count(row) > 1, f"temperature 1.0 without a seed, {len(row)} requests in a row: "
                                          f"{distinct_count(row)} distinct answers")


JOB = Job(
    id="reproducibility",
    title="Reproducible sampling: greedy, seeded, unseeded",
    question="Is temperature 0 deterministic, in a row and inside a concurrent batch? Does a fixed seed reproduce a "
             "sampled answer? What varies without one?",
    pages=("sampling.md",),
    collect=collect,
    claims=(
        Claim("reproducibility.greedy-in-a-row", "With temperature 0, the same request gives the same answer every "
              "time when requests come one after another.", decide_greedy_row),
        Claim("reproducibility.greedy-among-others", "With temperature 0, the answer stays the same when the request "
              "shares the engine with other running requests.", decide_greedy_batch),
        Claim("reproducibility.seed-in-a-row", "A fixed seed reproduces a sampled (temperature 1.0) answer.",
              decide_seed_row),
        Claim("reproducibility.seed-among-others", "A fixed seed reproduces the sampled answer even when the request "
              "runs among other requests.", decide_seed_batch),
        Claim("reproducibility.unseeded-varies", "Without a seed, the same sampled request gives different answers.",
              decide_unseeded),
    ),
)
