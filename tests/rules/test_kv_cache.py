"""KV cache article: its rules replay real records captured from a live vLLM server, edited at their thresholds."""

from __future__ import annotations

import pytest

from tests.rules._records import PROFILES, cases, check, decide, decide_edited, record, row

# --- kv-reservation: decide_reserved and its helpers (_running, _off_growth) -------------------------


# Readings are edited by position (the engine's count between two readings can jump by hundreds on a busy
# machine), and the reasons expected name the engine counts the committed record holds at those positions.
OFF_AT = (1, 2, 3, 4)  # the readings four_off_readings_of_each_request edits
ONE_OFF_AT = 5  # the reading the one_off_reading_of_... edits edit


def _at(request: dict, engine_tokens: int) -> list:
    """The reading taken when the engine had generated engine_tokens tokens; where the record has none (a
    client that fell behind the engine skips counts), the last reading before it, moved there."""
    readings = request["readings"]
    exact = [r for r in readings if r[2] == engine_tokens]
    if exact:
        return exact[0]
    before = [r for r in readings if r[2] < engine_tokens][-1]
    before[2] = engine_tokens
    return before


def _engine_tokens(side: str, positions) -> list[int]:
    return [record("kv-reservation")[side]["readings"][i][2] for i in positions]


def _hold(d: dict, reading: list, blocks: int) -> None:
    """Make one reading show exactly `blocks` KV cache blocks in use."""
    reading[1] = blocks / d["num_blocks"]


def every_block_in_use_from_the_first_token(data: dict) -> None:
    """An up-front reservation would be seen: every block in use from the first token, as a reservation near
    the context would show."""
    full = 1.0
    data["large"]["readings"] = [[n, full, e] for n, _, e in data["large"]["readings"]]


def small_request_one_block_more(data: dict) -> None:
    """The small request held one block more at every reading: the block-by-block comparison fails."""
    step = 1 / data["num_blocks"]
    data["small"]["readings"] = [[n, u + step, e] for n, u, e in data["small"]["readings"]]


def large_request_one_block_ahead(data: dict) -> None:
    """A request that held one block more than its tokens need: not growth block by block."""
    step = 1 / data["num_blocks"]
    data["large"]["readings"] = [[n, u + step, e] for n, u, e in data["large"]["readings"]]


def first_reading_at_the_reservation(data: dict) -> None:
    """Boundary first == reserved: reaching the reservation is enough (>=), and it is not "less than" it (<).
    ceil((38 + 1800) / 128) = 15 blocks."""
    _hold(data, data["large"]["readings"][0], 15)


def first_reading_one_block_short(data: dict) -> None:
    """Boundary first == reserved - 1: less than a reservation, but growth is off, so neither way is shown."""
    _hold(data, data["large"]["readings"][0], 14)


def second_reading_at_the_reservation(data: dict) -> None:
    """First vs second element: a reservation seen only at the second reading is not "from the start"."""
    _hold(data, data["large"]["readings"][1], 15)


def max_tokens_filling_the_one_block_held(data: dict) -> None:
    """Boundary reserved == first with growth as needed: 38 + 90 tokens fill exactly one 128-token block."""
    data["large"]["max_tokens"] = 90


def max_tokens_one_past_a_one_block_reservation(data: dict) -> None:
    """Boundary reserved == first + 1: 38 + 91 tokens need a second block that the request never held at first."""
    data["large"]["max_tokens"] = 91


def four_off_readings_of_each_request(data: dict) -> None:
    """The reason names at most three off readings per request, large first: what a reader checks by hand."""
    for i in OFF_AT:
        _hold(data, data["large"]["readings"][i], 3)
        _hold(data, data["small"]["readings"][i], 2)


def one_off_reading_of_the_large_request(data: dict) -> None:
    """Each half of "both requests grew as needed" separately false: the large one here."""
    _hold(data, data["large"]["readings"][ONE_OFF_AT], 2)


def one_off_reading_of_the_small_request(data: dict) -> None:
    """Each half of "both requests grew as needed" separately false: the small one here."""
    _hold(data, data["small"]["readings"][ONE_OFF_AT], 2)


def freed_cache_one_token_before_the_end(data: dict) -> None:
    """Boundary engine count == max_tokens - 1: the request was still running, so 0 blocks held is off. The
    last reading (0 blocks) taken one token before the end."""
    data["small"]["readings"][-1][2] = 259


# --- kv-sizing: _reported and the rules that read it --------------------------------------------------

def report_without_its_concurrency_part(data: dict) -> None:
    """Only the size present (one of the two parts): nothing is decided, and the reason names the missing line."""
    from verify.jobs.kv_cache.kv_sizing import CONCURRENCY
    data["report"]["lines"] = [CONCURRENCY.sub("", line) for line in data["report"]["lines"]]


def report_without_its_size_part(data: dict) -> None:
    """Only the concurrency present: the other part missing, named as such."""
    from verify.jobs.kv_cache.kv_sizing import SIZE
    data["report"]["lines"] = [SIZE.sub("", line) for line in data["report"]["lines"]]


def reported_size_one_block_short(data: dict) -> None:
    """The token half of the size rule alone false: 181 x 128 = 23,168 tokens reported, 182 blocks worked out."""
    data["report"]["lines"] = [line.replace("23,296 tokens", "23,168 tokens") for line in data["report"]["lines"]]


def reported_block_count_differs(data: dict) -> None:
    """The block half of the size rule alone false: the log's tokens still match what is worked out."""
    data["cache_config"]["num_gpu_blocks"] = "181"


def _lacks(line: str) -> str:
    return f"the recorded data cannot decide this (ValueError: the start-up report lacks its {line} line)"


# Each a claim, an edit of its committed cpu record (None: as recorded) and the verdict it must give.
EDITS = [  # kv-reservation.reserved-up-front as recorded (refuted): in BOUNDARIES, on both profiles
    row("kv-reservation.reserved-up-front", every_block_in_use_from_the_first_token, "confirmed"),
    row("kv-reservation.reserved-up-front", small_request_one_block_more, "inconclusive"),
    row("kv-reservation.grows-by-block", None, "confirmed"),
    row("kv-reservation.grows-by-block", large_request_one_block_ahead, "refuted"),
]

# The same, pinned at a threshold, a list position or one clause of a compound condition, on the records
# of both CPU profiles.
BOUNDARIES = [
    row("kv-reservation.reserved-up-front", None, "refuted"),
    row("kv-reservation.reserved-up-front", first_reading_at_the_reservation, "confirmed",
        contains="held 15 block(s) after its first token (a reservation would be 15 of 182 blocks",
        ends="with max_tokens 260 it held other blocks"),
    row("kv-reservation.reserved-up-front", first_reading_one_block_short, "inconclusive",
        starts="with max_tokens 1800 the request held 14 block(s), less than a reservation (15)"),
    row("kv-reservation.reserved-up-front", second_reading_at_the_reservation, "inconclusive",
        contains="held 1 block(s), less than a reservation (15)"),
    row("kv-reservation.reserved-up-front", max_tokens_filling_the_one_block_held, "confirmed",
        contains="held 1 block(s) after its first token (a reservation would be 1 of 182 blocks",
        ends="as with the larger one"),
    row("kv-reservation.reserved-up-front", max_tokens_one_past_a_one_block_reservation, "refuted",
        contains="(a reservation would be 2 of 182 blocks of 128 tokens)"),
    row("kv-reservation.reserved-up-front", four_off_readings_of_each_request, "inconclusive",
        because="with max_tokens 1800 the request held 1 block(s), less than a reservation (15), but not, "
                "at every reading, the blocks its tokens need (off: max_tokens 1800 "
                f"{[(n, 3) for n in _engine_tokens('large', OFF_AT)][:3]}, max_tokens 260 "
                f"{[(n, 2) for n in _engine_tokens('small', OFF_AT)][:3]})"),
    row("kv-reservation.reserved-up-front", one_off_reading_of_the_large_request, "inconclusive",
        contains=f"(off: max_tokens 1800 [({_engine_tokens('large', [ONE_OFF_AT])[0]}, 2)], max_tokens 260 [])"),
    row("kv-reservation.reserved-up-front", one_off_reading_of_the_small_request, "inconclusive",
        contains=f"(off: max_tokens 1800 [], max_tokens 260 [({_engine_tokens('small', [ONE_OFF_AT])[0]}, 2)])"),
    row("kv-reservation.reserved-up-front", freed_cache_one_token_before_the_end, "inconclusive",
        contains="max_tokens 260 [(259, 0)]"),
    *[row(f"kv-sizing.{claim}", edit, "inconclusive", because=_lacks(line))
      for edit, line in ((report_without_its_concurrency_part, "concurrency"), (report_without_its_size_part, "size"))
      for claim in ("size-from-memory", "max-concurrency")],
    row("kv-sizing.size-from-memory", reported_size_one_block_short, "refuted",
        ends="the server reported 182 blocks and 23,168 tokens"),
    row("kv-sizing.size-from-memory", reported_block_count_differs, "refuted",
        ends="the server reported 181 blocks and 23,296 tokens"),
]


@pytest.mark.parametrize("profile, claim_id, edit, expected, reason", cases(EDITS) + cases(BOUNDARIES, PROFILES))
def test_an_edit_of_a_real_record_gives_the_verdict(profile, claim_id, edit, expected, reason):
    check(decide_edited(claim_id, edit, profile), expected, **reason)


@pytest.mark.parametrize("profile", PROFILES)
def test_running_drops_only_the_reading_taken_once_the_engine_had_all_max_tokens(profile):
    # Boundary engine count == max_tokens: that reading is after the request finished; max_tokens - 1 is not.
    from verify.jobs.kv_cache.kv_reservation import _running
    small = record("kv-reservation", profile)["small"]
    end = small["max_tokens"]
    small["readings"][-2][2], small["readings"][-1][2] = end - 1, end  # the last two readings, at the boundary
    finished = sum(r[2] == end for r in small["readings"])  # a client behind the engine may read several there
    running = _running(small)
    assert running["readings"][-1] == small["readings"][-2] and running["readings"][-1][2] == end - 1
    assert len(running["readings"]) == len(small["readings"]) - finished
    assert all(r[2] < end for r in running["readings"])
    assert {k: v for k, v in running.items() if k != "readings"} == {k: v for k, v in small.items() if k != "readings"}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("engine_tokens, blocks", [(90, 2), (91, 2), (91, 1), (92, 2)])
def test_blocks_within_one_token_of_the_engine_count_are_what_its_tokens_need(profile, engine_tokens, blocks):
    # ENGINE_SLACK either way: 38 + 90 tokens fill block 1; at 90 or 91 engine tokens 1 or 2 blocks are right.
    data = record("kv-reservation", profile)
    _hold(data, _at(data["large"], engine_tokens), blocks)
    assert decide("kv-reservation", "reserved-up-front", data)["verdict"] == "refuted"
    assert decide("kv-reservation", "grows-by-block", data)["verdict"] == "confirmed"


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("engine_tokens, blocks", [(89, 2), (92, 1), (93, 1)])
def test_blocks_two_tokens_away_from_the_engine_count_are_off(profile, engine_tokens, blocks):
    # Just past ENGINE_SLACK: a second block at 89 tokens is early, one block at 92 or 93 is late.
    data = record("kv-reservation", profile)
    _hold(data, _at(data["large"], engine_tokens), blocks)
    v = decide("kv-reservation", "grows-by-block", data)
    assert v["verdict"] == "refuted" and f"{[(engine_tokens, blocks)]}" in v["because"]
    assert decide("kv-reservation", "reserved-up-front", data)["verdict"] == "inconclusive"


@pytest.mark.parametrize("profile", PROFILES)
def test_the_start_up_report_reads_as_the_exact_numbers_the_server_logged(profile):
    # The helper's exact return for a real report: "23,296" as 23296, "2,048" as 2048, "11.38x" as 11.38.
    from verify.jobs.kv_cache.kv_sizing import reported_sizes
    assert reported_sizes(record("kv-sizing", profile)) == {"tokens": 23296, "per_request": 2048, "concurrency": 11.38}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("reported, verdict", [("11.38", "confirmed"), ("11.384", "confirmed"),
                                               ("11.366", "confirmed"), ("11.386", "refuted"),
                                               ("11.364", "refuted"), ("11.39", "refuted")])
def test_a_reported_concurrency_must_be_within_a_hundredth_of_tokens_over_context(profile, reported, verdict):
    # The 0.01 tolerance either side of 23,296 / 2,048 = 11.375: the log rounds to two decimals, no more slack.
    data = record("kv-sizing", profile)
    data["report"]["lines"] = [line.replace("11.38x", f"{reported}x") for line in data["report"]["lines"]]
    v = decide("kv-sizing", "max-concurrency", data)
    assert v["verdict"] == verdict and v["because"].startswith("23,296 tokens / 2,048 tokens per request")


def test_kv_sizing_reads_either_releases_report_and_cannot_decide_without_it():
    """0.32.0 logs the KV cache report on one line, 0.27.0 on two: both real records decide; a report
    missing its concurrency line (edited out of the 0.27.0 record) decides nothing."""
    one_line = record("kv-sizing")
    two_lines = record("kv-sizing", "cpu-oldest")
    assert len(one_line["report"]["lines"]) == 1 and len(two_lines["report"]["lines"]) == 2
    for data in (one_line, two_lines):
        assert decide("kv-sizing", "max-concurrency", data)["verdict"] == "confirmed"
    two_lines["report"]["lines"] = [ln for ln in two_lines["report"]["lines"] if "Maximum concurrency" not in ln]
    assert decide("kv-sizing", "max-concurrency", two_lines)["verdict"] == "inconclusive"
