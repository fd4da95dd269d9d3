"""Cost article: its rules replay real records captured from a live vLLM server, edited to sit just on either side
of each threshold (billing's repeated prompt; throughput's "rises", "cost falls" and their stopping rule)."""

from __future__ import annotations


import pytest

from snippets.cost.cost_per_million import cost_per_million
from tests.rules._records import PROFILES, cases, check, decide, decide_edited, record, row
from tests.rules._sweep_edits import rate as _rate
from tests.rules._sweep_edits import last_line, retime, rounds_of, set_last
from verify.jobs.cost import throughput
from verify.jobs.cost.throughput import COST_FACTOR

LEVELS = throughput.LEVELS
TOP = LEVELS.index(LEVELS[-1])


def _costs(data: dict) -> None:
    """The recorded costs, made again by the page's snippet from the edited rounds' medians (as collect() does)."""
    data["cost_per_million"] = {str(c): round(cost_per_million(data["price_per_hour"], t["median"]), 4)
                                for c, t in throughput.throughput(data).items()}


def _rule_cost(data: dict, c: int) -> float:
    """The cost decide_cost_falls computes from the rounds (its arithmetic, to compare the snippet's with)."""
    return data["price_per_hour"] / (throughput.throughput(data)[c]["median"] * 3600) * 1_000_000


def _side(data: dict) -> dict:
    return throughput.settled(data)


# --- billing.repeat-billed-in-full ---------------------------------------------------------------------------

def no_prefix_cache_hit(data: dict) -> None:
    """The repeat took nothing from the prefix cache (its hits 0, not 512): nothing shows it was cached."""
    data["repeat_second"]["engine"]["prefix_cache_hits_total"] = 0.0


def one_token_from_the_prefix_cache(data: dict) -> None:
    """The least hit there is: one token of the repeat from the prefix cache still shows it was cached."""
    data["repeat_second"]["engine"]["prefix_cache_hits_total"] = 1.0


def usage_reports_cached_tokens(data: dict) -> None:
    """Usage that reports the 512 cached tokens (prompt_tokens_details present): not billed blind in full."""
    data["repeat_second"]["cached_tokens"] = data["repeat_second"]["engine"]["prefix_cache_hits_total"]


# --- throughput.cost-falls: 8 at once against one alone, round by round ---------------------------------------

def _top_times(factor: float):
    def edit(data: dict) -> None:
        for levels in rounds_of(data):
            retime(levels[TOP], factor * _rate(levels[0]))
        _costs(data)
    return edit


def top_level_one_and_a_half_times_one_alone(data: dict) -> None:
    """Each round's 8 at once re-timed to 1.5x the throughput of the same round's one alone: the top median
    cannot reach COST_FACTOR times one alone's whatever a third round measures, so cost falls fails (and early)."""
    _top_times(1.5)(data)


def _one_alone_spread(data: dict) -> float:
    """The fastest one-alone round over the slowest (above 1: the rounds differ)."""
    rates = [_rate(r[0]) for r in rounds_of(data)]
    assert max(rates) > min(rates), rates
    return max(rates) / min(rates)


def top_level_just_under_the_factor(data: dict) -> None:
    """8 at once just under COST_FACTOR times each round's one alone (half way to the factor over the spread
    of the one-alone rounds below it): the rounds' spread straddles the factor, so a third round decides."""
    _top_times(COST_FACTOR / _one_alone_spread(data) ** 0.5)(data)


def top_level_just_over_the_factor(data: dict) -> None:
    """8 at once just over COST_FACTOR times each round's one alone (as far above as the edit before is below):
    still straddling it (the slowest top round over the fastest one alone is under it), so a third round
    decides."""
    _top_times(COST_FACTOR * _one_alone_spread(data) ** 0.5)(data)


def top_level_two_and_a_half_times_one_alone(data: dict) -> None:
    """8 at once at 2.5x each round's one alone: above COST_FACTOR whatever a third round measures, below
    what the records hold."""
    _top_times(2.5)(data)


def _top_exactly_at_the_factor(data: dict, one_alone: float) -> None:
    for levels in rounds_of(data):
        retime(levels[TOP], COST_FACTOR * one_alone, to_the_bit=True)
        assert _rate(levels[TOP]) == COST_FACTOR * one_alone
    _costs(data)


def slowest_top_round_exactly_the_factor_over_the_fastest_one_alone(data: dict) -> None:
    """Both rounds of 8 at once at exactly COST_FACTOR times the fastest one-alone round: the least top median
    over the greatest one-alone median is exactly the factor, not above it, so a third round still decides."""
    _top_exactly_at_the_factor(data, max(_rate(r[0]) for r in rounds_of(data)))


def fastest_top_round_exactly_the_factor_over_the_slowest_one_alone(data: dict) -> None:
    """Both rounds of 8 at once at exactly COST_FACTOR times the slowest one-alone round: the greatest top
    median over the least one-alone median is exactly the factor, so no third round can make it more: cost
    falls fails."""
    _top_exactly_at_the_factor(data, min(_rate(r[0]) for r in rounds_of(data)))


def cost_exactly_the_factor_below(data: dict) -> None:
    """One alone timed alike in both rounds (the second at the first's time), 8 at once exactly COST_FACTOR
    times as fast: the cost with 8 at once is exactly one alone's over the factor, not less, so cost falls
    is refuted."""
    first, second = rounds_of(data)[:2]
    set_last(second[0], last_line(first[0]))
    _top_exactly_at_the_factor(data, _rate(first[0]))


def a_request_ended_before_max_tokens(data: dict) -> None:
    """One request of 8 at once ended by itself (finish_reason stop): the run's tokens are not 8 x max_tokens,
    so its throughput cannot be counted."""
    request = rounds_of(data)[0][TOP]["requests"][3]
    for x in request["lines"]:
        x["line"] = x["line"].replace('"finish_reason":"length"', '"finish_reason":"stop"')


def snippet_cost_off_by_the_relative_tolerance(data: dict) -> None:
    """The snippet's recorded cost for 8 at once 0.1 % off the rule's (a rounding within the tolerance)."""
    data["cost_per_million"][str(LEVELS[-1])] = _rule_cost(data, LEVELS[-1]) * 1.001


def snippet_cost_off_by_more_than_the_tolerance(data: dict) -> None:
    """The snippet's recorded cost for 8 at once 10 % beyond the tolerance (0.1 % plus $0.0001) off the rule's:
    the page's snippet is not what decided."""
    cost = _rule_cost(data, LEVELS[-1])
    data["cost_per_million"][str(LEVELS[-1])] = cost + 1.1 * (1e-3 * cost + 1e-4)


def _price_for_cost_of_one_alone(data: dict, cost: float) -> None:
    # The hourly price is an assumption, not a measurement: set it so one alone costs `cost`, costs remade.
    data["price_per_hour"] = cost * throughput.throughput(data)[LEVELS[0]]["median"] * 3600 / 1_000_000
    _costs(data)


def price_for_one_alone_just_over_a_cent_boundary(data: dict) -> None:
    """An assumed price at which one alone costs $1.4052 per million: printed $1.41 only when the hour is
    3600 s (at 3601 s it would be $1.40)."""
    _price_for_cost_of_one_alone(data, 1.4052)


def price_for_one_alone_just_under_a_cent_boundary(data: dict) -> None:
    """An assumed price at which one alone costs $1.4049995 per million: printed $1.40 only when a million is
    1,000,000 tokens (at 1,000,001 it would be $1.41)."""
    _price_for_cost_of_one_alone(data, 1.4049995)


EDITS = [
    row("billing.repeat-billed-in-full", None, "confirmed", contains="prompt_tokens_details absent in usage"),
    row("billing.repeat-billed-in-full", no_prefix_cache_hit, "refuted"),
    row("billing.repeat-billed-in-full", one_token_from_the_prefix_cache, "confirmed"),
    row("billing.repeat-billed-in-full", usage_reports_cached_tokens, "refuted",
        ends="prompt_tokens_details present in usage"),
    row("throughput.cost-falls", None, "confirmed"),
    row("throughput.cost-falls", top_level_one_and_a_half_times_one_alone, "refuted", contains="1.5x cheaper"),
    row("throughput.cost-falls", top_level_just_under_the_factor, "inconclusive",
        contains="cost falls: open"),
    row("throughput.cost-falls", top_level_just_over_the_factor, "inconclusive",
        contains="cost falls: open"),
    row("throughput.cost-falls", top_level_two_and_a_half_times_one_alone, "confirmed", contains="2.5x cheaper"),
    row("throughput.cost-falls", slowest_top_round_exactly_the_factor_over_the_fastest_one_alone, "inconclusive",
        contains="cost falls: open"),
    row("throughput.cost-falls", fastest_top_round_exactly_the_factor_over_the_slowest_one_alone, "refuted"),
    row("throughput.cost-falls", cost_exactly_the_factor_below, "refuted", contains="(2.0x cheaper"),
    row("throughput.cost-falls", a_request_ended_before_max_tokens, "inconclusive",
        contains="at 8 at once, request 4 did not run to max_tokens (finish_reason 'stop')"),
    row("throughput.rises-with-concurrency", a_request_ended_before_max_tokens, "inconclusive",
        contains="did not run to max_tokens"),
    row("throughput.cost-falls", snippet_cost_off_by_the_relative_tolerance, "confirmed"),
    row("throughput.cost-falls", snippet_cost_off_by_more_than_the_tolerance, "inconclusive",
        contains="the snippet's costs"),
    row("throughput.cost-falls", price_for_one_alone_just_over_a_cent_boundary, "confirmed",
        contains="$1.41 per million tokens one request at a time"),
    row("throughput.cost-falls", price_for_one_alone_just_under_a_cent_boundary, "confirmed",
        contains="$1.40 per million tokens one request at a time"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(EDITS))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)


def _two_rounds() -> dict:
    """The committed cpu record's first two rounds (all it holds when they settled it), costs remade."""
    data = record("throughput")
    data["runs"] = data["runs"][:2 * len(LEVELS)]
    _costs(data)
    return data


def _edited(edit) -> dict:
    data = _two_rounds()
    edit(data)
    return data


# Each edit of the committed cpu record's first two rounds and what the stopping rule says of it:
# whether the third round could still change "cost falls" (open) or not (holds, fails).
FALLS = [
    (top_level_one_and_a_half_times_one_alone, "fails"),
    (top_level_just_under_the_factor, "open"),
    (top_level_just_over_the_factor, "open"),
    (top_level_two_and_a_half_times_one_alone, "holds"),
    (slowest_top_round_exactly_the_factor_over_the_fastest_one_alone, "open"),
    (fastest_top_round_exactly_the_factor_over_the_slowest_one_alone, "fails"),
]


@pytest.mark.parametrize("edit, side", FALLS, ids=[e.__name__ for e, _ in FALLS])
def test_cost_falls_settles_only_where_no_third_round_could_change_it(edit, side):
    """8 at once slowed to about (or exactly) COST_FACTOR times one alone, and below it: "rises" fails (8 at once is now
    slower than 4), and the stopping rule says of "cost falls" what the two rounds allow."""
    data = _edited(edit)
    assert _side(data) == {"rounds": 2, "max_rounds": throughput.ROUNDS, "settled": side != "open",
                           "why": f"rises: fails; cost falls: {side}"}


def _second_level_times(data: dict, rate: float) -> None:
    # Both rounds of 2 at once re-timed to `rate` tokens/s, to the last bit.
    for levels in rounds_of(data):
        retime(levels[1], rate, to_the_bit=True)


def test_rises_open_when_two_at_once_is_exactly_the_factor_above_the_fastest_one_alone():
    """Both rounds of 2 at once at exactly 1.2x the fastest one-alone round: the least median of 2 at once is
    not above 1.2x the greatest of one alone, and the greatest is above 1.2x the least: a third round decides."""
    data = _two_rounds()
    _second_level_times(data, throughput.RISE_FACTOR * max(_rate(r[0]) for r in rounds_of(data)))
    assert _side(data) == {"rounds": 2, "max_rounds": 3, "settled": False, "why": "rises: open; cost falls: holds"}
    assert decide("throughput", "rises-with-concurrency", data)["verdict"] == "inconclusive"


def test_rises_fails_when_two_at_once_is_exactly_the_factor_above_the_slowest_one_alone():
    """Both rounds of 2 at once at exactly 1.2x the slowest one-alone round: the greatest median of 2 at once is
    1.2x the least of one alone, not above: no third round can make "rises" hold."""
    data = _two_rounds()
    _second_level_times(data, throughput.RISE_FACTOR * min(_rate(r[0]) for r in rounds_of(data)))
    assert _side(data) == {"rounds": 2, "max_rounds": 3, "settled": True, "why": "rises: fails; cost falls: holds"}
    assert decide("throughput", "rises-with-concurrency", data)["verdict"] == "refuted"


@pytest.mark.parametrize("profile", PROFILES)
def test_headline_throughputs_are_the_medians(profile):
    """The headline figures of the committed records are each level's median tokens per second."""
    data = record("throughput", profile)
    medians = {c: t["median"] for c, t in throughput.throughput(data).items()}
    figures = throughput.JOB.headline.read(data)
    assert list(figures.values()) == [medians[c] for c in LEVELS]
    assert [throughput._throughput_at(c)(data) for c in LEVELS] == [medians[c] for c in LEVELS]
