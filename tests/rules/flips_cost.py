"""Cost article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

from typing import Callable


def engine_counts_prompt_once_for_n(d: dict) -> None:
    """billing.n-computes-prompt-once: the engine prefills the prompt once and forks the n answers from it,
    so its prompt-token counter rises by the same amount for n=3 as for n=1."""
    d["n3"]["engine"]["prompt_tokens_total"] = d["n1"]["engine"]["prompt_tokens_total"]


def throughput_saturates_at_the_top(d: dict) -> None:
    """throughput.rises-with-concurrency: the machine is saturated one level below the top: the last
    doubling doubles the batch's wall time, so tokens per second stay at the level below's slowest round
    (no further round could make the top level rise past it)."""
    from tests.rules._sweep_edits import rate, retime, rounds_of
    slowest = min(rate(levels[-2]) for levels in rounds_of(d))
    for levels in rounds_of(d):
        retime(levels[-1], slowest)


def no_gain_from_concurrency(d: dict) -> None:
    """throughput.cost-falls: requests sent together gain nothing: every level generates tokens at the
    rate of one request at a time, and the page's snippet prices them accordingly."""
    from snippets.cost.cost_per_million import cost_per_million
    from tests.rules._sweep_edits import rate, retime, rounds_of
    from verify.jobs.cost.throughput import throughput
    for levels in rounds_of(d):
        for level in levels[1:]:
            retime(level, rate(levels[0]))
    d["cost_per_million"] = {str(c): round(cost_per_million(d["price_per_hour"], t["median"]), 4)
                             for c, t in throughput(d).items()}


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "billing.n-computes-prompt-once": engine_counts_prompt_once_for_n,
    "throughput.rises-with-concurrency": throughput_saturates_at_the_top,
    "throughput.cost-falls": no_gain_from_concurrency,
}
