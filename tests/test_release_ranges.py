"""Release ranges in prose: one rendering (the `releases` directive, verify/verdicts/releases.py span_of)
that says which releases of a range were measured and which are inferred, read from the committed records."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT
from verify.config import symptoms
from verify.errors import VerifyError
from verify.verdicts import release_prose, releases
from verify.verdicts.releases import ReleaseRow, span_of

pytestmark = pytest.mark.fast

# Every page's ranges are rendered, and the symptom index's texts'.
PAGES = sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md"))
# A range typed by hand: "0.29.0 on", "0.27.0 to 0.31.0", "0.27.0-0.28.0".
TYPED_RANGE = re.compile(r"\b\d+\.\d+\.\d+(?:\s+on\b|\s*(?:to|-|–)\s*\d+\.\d+\.\d+)")


def test_a_range_names_the_releases_measured_and_those_inferred():
    text, first = span_of("admission-limit.flag-known", "confirmed")
    assert first == "0.29.0"
    assert text.startswith("vLLM 0.29.0 to 0.32.0 (") and "0.30.0 inferred" in text, text
    assert "0.31.0" in text.split(";")[0] and "measured" in text.split(";")[0], text


def _rows(*pairs):
    """A timeline from (release, verdict measured or "~verdict" inferred)."""
    return [ReleaseRow(r, f"cpu-{r}", None if v.startswith("~") else
                       releases.ReleaseVerdict(r, f"cpu-{r}", v, "", None), "", v.lstrip("~"))
            for r, v in pairs]


def test_every_release_measured_says_so(monkeypatch):
    monkeypatch.setattr(releases, "timeline", lambda c: _rows(("0.27.0", "refuted"), ("0.28.0", "confirmed"),
                                                              ("0.29.0", "confirmed")))
    assert span_of("x.y", "confirmed") == ("vLLM 0.28.0 to 0.29.0 (each measured)", "0.28.0")
    assert span_of("x.y", "refuted") == ("vLLM 0.27.0 (measured)", "0.27.0")


def test_releases_that_are_not_one_range_are_refused(monkeypatch):
    monkeypatch.setattr(releases, "timeline", lambda c: _rows(("0.27.0", "confirmed"), ("0.28.0", "inconclusive"),
                                                              ("0.29.0", "confirmed")))
    with pytest.raises(VerifyError, match="not one range"):
        span_of("x.y", "confirmed")
    with pytest.raises(VerifyError, match="on no release"):
        span_of("x.y", "refuted")


def test_an_inferred_release_counts_only_where_the_bisection_infers_it(monkeypatch):
    monkeypatch.setattr(releases, "timeline", lambda c: _rows(("0.27.0", "refuted"), ("0.28.0", "~"),
                                                              ("0.29.0", "confirmed"), ("0.30.0", "~confirmed"),
                                                              ("0.31.0", "confirmed")))
    # 0.28.0 lies between two releases that differ: in neither range.
    assert span_of("x.y", "confirmed")[0] == "vLLM 0.29.0 to 0.31.0 (0.29.0 and 0.31.0 measured; 0.30.0 inferred)"
    assert span_of("x.y", "refuted")[0] == "vLLM 0.27.0 (measured)"


@pytest.mark.parametrize("page", PAGES)
def test_no_page_types_a_range(page):
    prose = (ROOT / "docs" / page).read_text(encoding="utf-8")
    assert not TYPED_RANGE.findall(prose), TYPED_RANGE.findall(prose)


def test_the_symptom_texts_type_no_range():
    typed = {s.id: TYPED_RANGE.findall(s.fix + s.confirm_how + s.title) for s in symptoms.SYMPTOMS}
    assert not {k: v for k, v in typed.items() if v}


def test_a_rendered_range_names_the_release_the_claim_holds_from():
    # The paragraph says no release in figures, only through the directive: the prose check accepts it.
    page = ('The refusals are counted on {{ releases("admission-limit.counted", "confirmed") }}.\n\n'
            '{{ claim("admission-limit.counted", expect="confirmed") }}\n')
    assert release_prose.problem(page, page.index("{{ claim"), "admission-limit.counted") is None
    typed = page.replace('{{ releases("admission-limit.counted", "confirmed") }}', "every release")
    assert "names no release" in release_prose.problem(typed, typed.index("{{ claim"), "admission-limit.counted")
