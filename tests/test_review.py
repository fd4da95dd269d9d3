"""`verify review`: the page's words and the record's raw data for a blind read, never the rule's verdict."""

from __future__ import annotations

import json

import pytest

from verify.cli import main
from verify.evidence.record import Record
from verify.paths import DOCS
from verify.registry import all_claims, find_claim
from verify.verdicts.directives import page_claims
from verify.verdicts.review import review, section_of

CLAIM = "finish-reasons.broken"


def test_the_read_shows_the_page_the_sentence_and_the_raw_data():
    text = review(CLAIM, "cpu")
    job, claim = find_claim(CLAIM)
    record = Record.load(job.id, "cpu")
    stated = next(pc for pc in page_claims() if pc.claim_id == CLAIM)
    page_lines = (DOCS / stated.page).read_text(encoding="utf-8").splitlines()
    # The prose just above the box, as the page has it.
    assert page_lines[stated.line - 3] in text
    assert f'The claim box says: "{claim.text}"' in text
    assert f"docs/evidence/{job.id}/cpu.json" in text
    # The raw data as recorded (the first captured event of the broken stream, verbatim).
    assert json.dumps(record.data["broken"]["status"]) in text and '"broken": {' in text
    assert record.raw["question"] in text


def test_the_read_never_tells_the_verdict_or_its_reasons():
    """Neither the rule's reasons nor a page's expected verdict may reach the reader: they are what the read
    is compared with afterwards."""
    for claim_id in ("finish-reasons.broken", "finish-reasons.stop", "client-retries.sequential-copies"):
        job, _ = find_claim(claim_id)
        record = Record.load(job.id, "cpu")
        text = review(claim_id, "cpu", keep=None)
        for cid in record.raw["claims"]:
            assert record.verdict(cid)["because"] not in text
        assert "expect=" not in text and '"verdict"' not in text and "claims" not in text.split("Its raw data:")[1]


def test_every_claim_box_in_the_section_reads_as_its_sentence():
    text = review(CLAIM, "cpu")
    texts = {cid: c.text for cid, (_, c) in all_claims().items()}
    assert f'[claim box finish-reasons.stop: "{texts["finish-reasons.stop"]}"]' in text
    assert "{{ claim(" not in text


def test_a_long_section_is_cut_at_a_paragraph_and_full_keeps_it_whole(tmp_path):
    page = tmp_path / "p.md"
    body = ["## Heading", ""] + [f"line {i}" if i % 5 else "" for i in range(1, 100)] + ['{{ claim("x", expect="confirmed") }}']
    page.write_text("\n".join(body), encoding="utf-8")
    first, lines = section_of(page, len(body), most=40)
    assert 1 < first and lines[-1].startswith("{{ claim") and len(lines) <= 40
    assert body[first - 2] == ""  # it starts at a paragraph
    first, lines = section_of(page, len(body), most=None)
    assert first == 1 and lines[0] == "## Heading"


def test_long_lists_are_cut_with_a_note_unless_full():
    job, _ = find_claim(CLAIM)
    lines = Record.load(job.id, "cpu").data["broken"]["lines"]
    cut = review(CLAIM, "cpu")
    assert f"... {len(lines) - 16} more items; --full prints them all ..." in cut
    full = review(CLAIM, "cpu", keep=None)
    middle = json.dumps(lines[len(lines) // 2]["line"], ensure_ascii=False)
    assert "more items" not in full and middle in full and middle not in cut


def test_a_series_of_numbers_stays_whole_on_one_line_up_to_sixty():
    from verify.verdicts.review import _data_lines
    short, long = list(range(60)), list(range(100))
    lines = _data_lines({"short": short, "long": long}, keep=8)
    assert f' "short": {json.dumps(short)},' in lines
    shown = json.loads(next(ln for ln in lines if ln.startswith(' "long"')).split(": ", 1)[1])
    assert shown[:20] == long[:20] and shown[-20:] == long[-20:] and shown[20] == "... 60 more items; --full prints them all ..."
    assert json.loads("\n".join(_data_lines({"long": long}, keep=None))) == {"long": long}


@pytest.mark.parametrize("argv, message", [
    (["review", "no-such.claim"], "verify: error: unknown claim 'no-such.claim'"),
    (["review", CLAIM, "--profile", "t4", "--evidence-dir", "/nonexistent"], "has no record on profile 't4'"),
])
def test_a_bad_claim_or_a_missing_record_is_one_line_and_exit_1(argv, message, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
