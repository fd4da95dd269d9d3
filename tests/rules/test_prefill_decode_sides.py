"""prefill-decode: the stopping helpers pinned at their thresholds.

Each test starts from a committed record (captured from a live vLLM server): the prompt-length sweep's per-length
bounds (`_bounds`: the least and greatest median its trials could still reach) or a prefill-stall stream. One value is then moved, minimally, to sit just on either side of a threshold (or exactly
on it, where floating point allows), and the helper's answer is asserted. Expected figures are computed here with the
helper's own arithmetic, in the same order, so that an exact boundary is the same float on both sides.
"""

from __future__ import annotations

import math
import struct

import pytest

from tests.rules._records import record
from verify.jobs.prefill_decode import _stall
from verify.jobs.prefill_decode import prompt_length_sweep as sweep

SWEEP = "prompt-length-sweep"


def _bounds() -> list[dict]:
    """The per-length bounds of the committed sweep (cpu): two trials of three, every rule clear of its threshold."""
    return sweep._bounds(record(SWEEP))


def _bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _float(i: int) -> float:
    return struct.unpack("<d", struct.pack("<q", i))[0]


def _crossing(pred, lo: float, hi: float) -> tuple[float, float]:
    """Adjacent positive floats u < w in [lo, hi] where the monotone predicate pred changes its answer."""
    a, c = _bits(lo), _bits(hi)
    first = pred(_float(a))
    assert pred(_float(c)) != first
    while c - a > 1:
        m = (a + c) // 2
        if pred(_float(m)) == first:
            a = m
        else:
            c = m
    return _float(a), _float(c)


def _exactly(set_coarse, coarse: float, set_fine, fine_lo: float, fine_hi: float, value, target: float):
    """Move the coarse value by single floats until some fine value puts value() exactly on target. Returns
    (at, off): the fine value on the target and its neighbour just on the other side (coarse left where found)."""
    c = coarse
    for _ in range(200):
        set_coarse(c)

        def reached(v):
            set_fine(v)
            return value() >= target
        u, w = _crossing(reached, fine_lo, fine_hi)
        for at, off in ((u, w), (w, u)):
            set_fine(at)
            if value() == target:
                return at, off
        c = math.nextafter(c, math.inf)
    raise AssertionError("no float sits exactly on the threshold")


def _beyond(at: float, off: float) -> float:
    """at's other neighbour: one float past the threshold on at's side, away from off."""
    return math.nextafter(at, math.inf if at > off else -math.inf)


def _first_past(set_fine, at: float, off: float, value, target: float) -> float:
    """The float nearest at, on at's side away from off, that takes value() off target (neighbouring floats
    may all give the same quotient)."""
    v = at
    for _ in range(100_000):
        v = _beyond(v, off)
        set_fine(v)
        if value() != target:
            return v
    raise AssertionError("value() stays on the target")


# --- _ratio_range: the least and greatest a / b

@pytest.mark.parametrize("case", ["both-positive", "straddling-zero", "both-negative"])
def test_ratio_range_takes_the_extreme_quotients(case):
    """Ranges taken from the record: ITL of the longest over the shortest prompt (both positive, below 1), and the
    ITL differences between lengths, which straddle zero (8 against 1 sentence) or lie below it (1 against 64)."""
    b = _bounds()
    d = b[0]["itl"]
    if case == "both-positive":
        a = b[-1]["itl"]
        assert 0 < a[0] < a[1] < 1
        expected = (a[0] / d[1], a[1] / d[0])
    elif case == "straddling-zero":
        a = (b[1]["itl"][0] - b[0]["itl"][1], b[1]["itl"][1] - b[0]["itl"][0])
        assert a[0] < 0 < a[1]
        expected = (a[0] / d[0], a[1] / d[0])
    else:
        a = (b[0]["itl"][0] - b[-1]["itl"][1], b[0]["itl"][1] - b[-1]["itl"][0])
        assert a[0] < a[1] < 0
        expected = (a[0] / d[0], a[1] / d[1])
    assert sweep._ratio_range(a, d) == expected


# --- _grows_side: each pair of lengths rising, falling or open, and the longest over the shortest

def _pair_edit(b: list[dict], case: str) -> None:
    p1, p2 = b[1]["prefill"], b[2]["prefill"]
    if case == "touching":  # 32 sentences' least median meets 8 sentences' greatest: not clear of it
        b[2]["prefill"] = (p1[1], p2[1])
    elif case == "overlapping-below":  # 32 sentences could start below 8 sentences' greatest
        b[2]["prefill"] = ((p1[0] + p1[1]) / 2, p2[1])
    elif case == "overlapping-above":  # 8 sentences could reach above 32 sentences' greatest
        b[1]["prefill"] = (p1[0], p2[1] * 1.01)
    elif case == "falling-touching":  # 32 sentences' greatest is 8 sentences' least: falling, not open
        b[2]["prefill"] = (p1[0] * 0.9, p1[0])


@pytest.mark.parametrize("case, expected", [("as-recorded", True), ("touching", None), ("overlapping-below", None),
                                            ("overlapping-above", None), ("falling-touching", False)])
def test_prefill_grows_pair_by_pair(case, expected):
    """The record's prefill bounds, with the 8- or 32-sentence range moved against its neighbour."""
    b = _bounds()
    _pair_edit(b, case)
    assert sweep._grows_side(b, "prefill", None) is expected


def test_a_fall_between_the_two_longest_refutes_growth_however_large_the_ratio():
    """The 64-sentence TTFT range set to 0.9 times the 32-sentence one: still over three times the shortest, and
    above 8 sentences, but below its neighbour."""
    b = _bounds()
    b[3]["ttft"] = tuple(0.9 * x for x in b[2]["ttft"])
    assert b[3]["ttft"][0] / b[0]["ttft"][1] >= sweep.TTFT_GROWTH and b[3]["ttft"][0] > b[1]["ttft"][1]
    assert sweep._grows_side(b, "ttft", sweep.TTFT_GROWTH) is False


@pytest.mark.parametrize("at, expected", [("least", True), ("greatest", None), ("just-over-greatest", False)])
def test_ttft_growth_factor_against_the_ratio_range(at, expected):
    """The record's TTFT bounds unedited, with the factor set at the least or greatest ratio they allow of the
    longest prompt's TTFT over the shortest's (or one float over the greatest): pins >= and < of the factor."""
    b = _bounds()
    lo, hi = b[-1]["ttft"][0] / b[0]["ttft"][1], b[-1]["ttft"][1] / b[0]["ttft"][0]
    factor = {"least": lo, "greatest": hi, "just-over-greatest": math.nextafter(hi, math.inf)}[at]
    assert sweep._grows_side(b, "ttft", factor) is expected


# --- _linear_side: prefill time per prompt token, from 8 sentences on

def _per(b):
    per = [(x["prefill"][0] / x["prompt_tokens"], x["prefill"][1] / x["prompt_tokens"]) for x in b[1:]]
    return max(p[1] for p in per) / min(p[0] for p in per) - 1, max(p[0] for p in per) / min(p[1] for p in per) - 1


def test_linear_spread_exactly_at_the_limit_holds():
    """The 64-sentence prompt's greatest prefill set so that the widest spread is exactly LINEAR_SPREAD."""
    b = _bounds()
    t = b[3]["prompt_tokens"]

    def set_hi(v):
        b[3]["prefill"] = (b[3]["prefill"][0], v)
    least = min(x["prefill"][0] / x["prompt_tokens"] for x in b[1:])
    _exactly(lambda c: None, 0.0, set_hi, least * t, 2 * least * t, lambda: _per(b)[0], sweep.LINEAR_SPREAD)
    assert _per(b)[0] == sweep.LINEAR_SPREAD
    assert sweep._linear_side(b) is True


@pytest.mark.parametrize("side, expected", [("at", None), ("just-over", False)])
def test_linear_narrowest_spread_at_the_limit(side, expected):
    """The 64-sentence prompt's least prefill raised (its greatest with it) until even the narrowest spread is
    LINEAR_SPREAD: exactly on it the lengths are still open, one float over they are refuted."""
    b = _bounds()
    t = b[3]["prompt_tokens"]
    width = b[3]["prefill"][1] - b[3]["prefill"][0]

    def set_lo(v):
        b[3]["prefill"] = (v, v + width)
    smallest_hi = min(x["prefill"][1] / x["prompt_tokens"] for x in b[1:3])
    j = next(i for i in (1, 2) if b[i]["prefill"][1] / b[i]["prompt_tokens"] == smallest_hi)

    def set_hi_j(v):  # the cheapest token's greatest, moved by single floats where no lo lands exactly
        b[j]["prefill"] = (b[j]["prefill"][0], v)
    at, off = _exactly(set_hi_j, b[j]["prefill"][1], set_lo, smallest_hi * t, 2 * smallest_hi * t,
                       lambda: _per(b)[1], sweep.LINEAR_SPREAD)
    # Just over: the nearest float that takes the spread off the limit (neighbours may give the same quotient).
    set_lo(at if side == "at" else _first_past(set_lo, at, off, lambda: _per(b)[1], sweep.LINEAR_SPREAD))
    assert (_per(b)[1] == sweep.LINEAR_SPREAD) == (side == "at")
    assert sweep._linear_side(b) is expected


@pytest.mark.parametrize("case, expected", [("longest-widened-up", None), ("32-widened-down", None),
                                            ("8-sentences-dearer", False)])
def test_linear_open_and_refuted(case, expected):
    """Edits of the record's prefill bounds: the 64-sentence greatest raised to 1.3 times the cheapest token's
    least (the spread could be over or under LINEAR_SPREAD); the 32-sentence least lowered to 0.7 times (the
    same, from below); the 8-sentence range made 1.5 times dearer per token than the others (refuted whatever
    the third trial measures)."""
    b = _bounds()
    t = {i: b[i]["prompt_tokens"] for i in range(4)}
    least = min(x["prefill"][0] / x["prompt_tokens"] for x in b[1:])
    if case == "longest-widened-up":
        b[3]["prefill"] = (b[3]["prefill"][0], 1.3 * least * t[3])
    elif case == "32-widened-down":
        b[2]["prefill"] = (0.7 * b[2]["prefill"][0], b[2]["prefill"][1])
    else:
        b[1]["prefill"] = tuple(1.5 * x * t[1] / t[3] for x in b[3]["prefill"])
    assert sweep._linear_side(b) is expected


# --- _flat_side: ITL's change from the shortest to the longest prompt, against TTFT's growth

def _change_hi(b):
    return b[-1]["itl"][1] / b[0]["itl"][0] - 1


def _change_lo(b):
    return b[-1]["itl"][0] / b[0]["itl"][1] - 1


@pytest.mark.parametrize("side, expected", [("at", True), ("just-under", None)])
def test_flat_needs_ttft_growth_of_five_times_the_itl_change(side, expected):
    """The longest prompt's TTFT range (its recorded width kept) lowered until TTFT's least growth is exactly
    TTFT_OVER_ITL times ITL's greatest change (or one float under it); ITL as recorded."""
    b = _bounds()
    assert _change_lo(b) > 0
    width = b[-1]["ttft"][1] - b[-1]["ttft"][0]
    need = sweep.TTFT_OVER_ITL * _change_hi(b)

    def set_t0_hi(v):
        b[0]["ttft"] = (b[0]["ttft"][0], v)

    def set_lo(v):
        b[-1]["ttft"] = (v, v + width)
    at, off = _exactly(set_t0_hi, b[0]["ttft"][1], set_lo, b[0]["ttft"][1], 4 * b[0]["ttft"][1],
                       lambda: b[-1]["ttft"][0] / b[0]["ttft"][1] - 1, need)
    set_lo(at if side == "at" else min(at, off))
    assert sweep._flat_side(b) is expected


@pytest.mark.parametrize("side, expected", [("at", None), ("just-under", False)])
def test_flat_refuted_once_ttft_cannot_reach_five_times_the_least_itl_change(side, expected):
    """The longest prompt's greatest TTFT lowered until TTFT's greatest growth is exactly TTFT_OVER_ITL times
    ITL's least change (still open) or one float under (refuted)."""
    b = _bounds()
    need = sweep.TTFT_OVER_ITL * _change_lo(b)

    def set_t0_lo(v):
        b[0]["ttft"] = (v, b[0]["ttft"][1])

    def set_hi(v):
        b[-1]["ttft"] = (b[0]["ttft"][1], v)
    at, off = _exactly(set_t0_lo, b[0]["ttft"][0], set_hi, b[0]["ttft"][1], 4 * b[0]["ttft"][1],
                       lambda: b[-1]["ttft"][1] / b[0]["ttft"][0] - 1, need)
    set_hi(at if side == "at" else min(at, off))
    assert sweep._flat_side(b) is expected


@pytest.mark.parametrize("case, expected", [("ttft-grows-a-little", None), ("itl-1.4x", False),
                                            ("itl-straddles-30-percent", None)])
def test_flat_open_and_refuted(case, expected):
    """Edits of the record's bounds: the longest TTFT set so that its growth over the shortest's least lies
    halfway between five times ITL's least and greatest change; the longest ITL 1.4 times the shortest's greatest (over 30 %
    whatever the third trial measures); the longest ITL from 1.2 times the shortest's greatest to 1.4 times its
    least (the change could be under or over 30 %)."""
    b = _bounds()
    i0 = b[0]["itl"]
    if case == "ttft-grows-a-little":
        # Halfway between five times ITL's least and greatest change, whatever the record measured.
        hi = b[0]["ttft"][0] * (1 + sweep.TTFT_OVER_ITL * (_change_lo(b) + _change_hi(b)) / 2)
        b[-1]["ttft"] = (hi - (b[-1]["ttft"][1] - b[-1]["ttft"][0]), hi)
        growth = (b[-1]["ttft"][0] / b[0]["ttft"][1] - 1, b[-1]["ttft"][1] / b[0]["ttft"][0] - 1)
        assert sweep.TTFT_OVER_ITL * _change_lo(b) <= growth[1] < sweep.TTFT_OVER_ITL * _change_hi(b)
    elif case == "itl-1.4x":
        b[-1]["itl"] = (1.4 * i0[1], 1.4 * i0[1] + (b[-1]["itl"][1] - b[-1]["itl"][0]))
    else:
        b[-1]["itl"] = (1.2 * i0[1], 1.4 * i0[0])
    assert sweep._flat_side(b) is expected


# --- _cheaper_side: one prompt token's share of one generated token

def _gen(b, end: int) -> float:
    return sorted(x["itl"][end] for x in b)[len(b) // 2]


def _tokens(b) -> int:
    return b[-1]["prompt_tokens"] - b[0]["prompt_tokens"]


def _share_hi(b) -> float:
    return ((b[-1]["ttft"][1] - b[0]["ttft"][0]) / _tokens(b)) / _gen(b, 0)


def _share_lo(b) -> float:
    return ((b[-1]["ttft"][0] - b[0]["ttft"][1]) / _tokens(b)) / _gen(b, 1)


def _mid(b, end: int) -> int:
    """Which length's ITL bound is the upper middle one."""
    order = sorted(range(len(b)), key=lambda i: b[i]["itl"][end])
    return order[len(b) // 2]


@pytest.mark.parametrize("side, expected", [("at", None), ("just-under", True)])
def test_cheaper_when_the_greatest_share_is_under_the_limit(side, expected):
    """The longest prompt's TTFT range (recorded width) raised until a prompt token could cost about
    PROMPT_TOKEN_SHARE of a generated one; then the middle ITL's least nudged until the greatest share is exactly
    PROMPT_TOKEN_SHARE (open) or one float under (confirmed)."""
    b = _bounds()
    width = b[-1]["ttft"][1] - b[-1]["ttft"][0]
    m = _mid(b, 0)
    lower = sorted(x["itl"][0] for x in b)[len(b) // 2 - 1]
    upper = min(sorted(x["itl"][0] for x in b)[len(b) // 2 + 1], b[m]["itl"][1])

    def set_ttft(v):
        b[-1]["ttft"] = (v - width, v)

    def set_itl(v):
        b[m]["itl"] = (v, b[m]["itl"][1])
    start = b[0]["ttft"][0] + sweep.PROMPT_TOKEN_SHARE * _gen(b, 0) * _tokens(b)
    at, off = _exactly(set_ttft, start, set_itl, math.nextafter(lower, math.inf), math.nextafter(upper, -math.inf),
                       lambda: -_share_hi(b), -sweep.PROMPT_TOKEN_SHARE)
    set_itl(at if side == "at" else _first_past(set_itl, at, off, lambda: _share_hi(b), sweep.PROMPT_TOKEN_SHARE))
    assert _mid(b, 0) == m
    assert (_share_hi(b) == sweep.PROMPT_TOKEN_SHARE) == (side == "at")
    assert sweep._cheaper_side(b) is expected


@pytest.mark.parametrize("side, expected", [("at", False), ("just-under", None)])
def test_not_cheaper_when_the_least_share_reaches_the_limit(side, expected):
    """As above, from the other side: the longest prompt's TTFT raised until its least share is about
    PROMPT_TOKEN_SHARE, then the middle ITL's greatest nudged until the least share is exactly the limit
    (refuted) or one float under (open)."""
    b = _bounds()
    width = b[-1]["ttft"][1] - b[-1]["ttft"][0]
    m = _mid(b, 1)
    lower = max(sorted(x["itl"][1] for x in b)[len(b) // 2 - 1], b[m]["itl"][0])
    upper = sorted(x["itl"][1] for x in b)[len(b) // 2 + 1]

    def set_ttft(v):
        b[-1]["ttft"] = (v, v + width)

    def set_itl(v):
        b[m]["itl"] = (b[m]["itl"][0], v)
    start = b[0]["ttft"][1] + sweep.PROMPT_TOKEN_SHARE * _gen(b, 1) * _tokens(b)
    at, off = _exactly(set_ttft, start, set_itl, math.nextafter(lower, math.inf), math.nextafter(upper, -math.inf),
                       lambda: -_share_lo(b), -sweep.PROMPT_TOKEN_SHARE)
    set_itl(at if side == "at" else _beyond(at, off))
    assert _mid(b, 1) == m
    assert (_share_lo(b) == sweep.PROMPT_TOKEN_SHARE) == (side == "at")
    assert sweep._cheaper_side(b) is expected


# --- by_length: the rows the rules and the headline read

def test_by_length_rows():
    """The record as committed, and with its second trial of each length counting one more prompt token (the row
    names the first trial's count)."""
    d = record(SWEEP)
    for r in d["runs"][len(sweep.SENTENCES):]:
        r["prompt_tokens"] += 1
    rows = sweep.by_length(d)
    assert [r["sentences"] for r in rows] == list(sweep.SENTENCES)
    for n, row in zip(sweep.SENTENCES, rows):
        rs = [r for r in d["runs"] if r["sentences"] == n]
        assert set(row) == {"sentences", "prompt_tokens", "n", "ttft", "ttft_min", "ttft_max", "itl", "prefill",
                            "server_itl"}
        assert row["n"] == len(rs) == 2
        assert row["prompt_tokens"] == rs[0]["prompt_tokens"]
        assert row["ttft_min"] == min(r["ttft"] for r in rs) and row["ttft_max"] == max(r["ttft"] for r in rs)


# --- the prefill-stall analysis

def test_stall_analysis_fields_and_window_edges():
    """The prefill-stall record with two tokens moved onto the long prompt's window edges (the last one before the
    prompt was sent onto sent_at, the first one after it was answered back onto done_at): a token at an edge is not during
    the prefill. And the stall's last token moved 0.04 ms later, under the record's 0.1 ms resolution: gaps are
    rounded to it."""
    d = record("prefill-stall")
    before = _stall.analyse(d)
    lp = d["long_prompt"]
    lines = [x for x in d["stream"]["lines"] if x["line"].startswith("data: ")]
    first_in = next(i for i, x in enumerate(lines) if x["t"] > lp["sent_at"])
    last_in = max(i for i, x in enumerate(lines) if x["t"] < lp["done_at"])
    lines[first_in - 1]["t"] = lp["sent_at"]
    lines[last_in + 1]["t"] = lp["done_at"]
    after_stall = next(i for i, x in enumerate(lines) if x["t"] > before["gap_starts"] + before["largest_gap"] / 2)
    lines[after_stall]["t"] += 0.00004
    a = _stall.analyse(d)
    assert a["tokens_during_prefill"] == before["tokens_during_prefill"]
    assert a["largest_gap"] == before["largest_gap"] == round(before["largest_gap"], 4)
    assert set(a) == {"largest_gap", "gap_starts", "median_gap", "long_prompt_s", "tokens_during_prefill",
                      "prompt_tokens", "window"}
    assert a["window"] == (lp["sent_at"], lp["done_at"]) and a["gap_starts"] == before["gap_starts"]
