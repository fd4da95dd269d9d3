"""Cost article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

from typing import Callable


def engine_counts_prompt_once_for_n(d: dict) -> None:
    """billing.n-computes-prompt-once: the engine prefills the prompt once and forks the n answers from it,
    so its prompt-token counter rises by the same amount for n=3 as for n=1."""
    d["n3"]["engine"]["prompt_tokens_total"] = d["n1"]["engine"]["prompt_tokens_total"]


def throughput_saturates_at_the_top(d: dict) -> None:
    """throughput.rises-with-concurrency: the machine is saturated one level below the top: the last
    doubling doubles the batch's wall time, so tokens per second stay where they were."""
    for levels in d["rounds"]:
        top, below = levels[-1], levels[-2]
        top["seconds"] = round(below["seconds"] * top["tokens"] / below["tokens"], 3)


def no_gain_from_concurrency(d: dict) -> None:
    """throughput.cost-falls: requests sent together gain nothing: every level generates tokens at the
    rate of one request at a time, and the page's snippet prices them accordingly."""
    import statistics

    from snippets.cost.cost_per_million import cost_per_million
    for levels in d["rounds"]:
        rate = levels[0]["tokens"] / levels[0]["seconds"]
        for level in levels[1:]:
            level["seconds"] = level["tokens"] / rate
    for i, level in enumerate(sorted(d["cost_per_million"], key=int)):
        tps = statistics.median(r[i]["tokens"] / r[i]["seconds"] for r in d["rounds"])
        d["cost_per_million"][level] = round(cost_per_million(d["price_per_hour"], tps), 4)


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "billing.n-computes-prompt-once": engine_counts_prompt_once_for_n,
    "throughput.rises-with-concurrency": throughput_saturates_at_the_top,
    "throughput.cost-falls": no_gain_from_concurrency,
}
