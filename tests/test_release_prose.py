"""A claim whose verdict differs between releases stands under prose that names the release.

Which claims differ is read from the committed records of every release; the pages are the real
pages, edited in memory to show that the rule fails when the release goes out of a sentence.
"""

from __future__ import annotations

import re

import pytest

from verify.paths import DOCS
from verify.verdicts import release_prose
from verify.verdicts.directives import parse_directives

# A range the page renders from the records ({{ releases(...) }}, verify/verdicts/releases.py span_of).
RANGE = re.compile(r"\{\{\s*releases\(.*?\)\s*\}\}")


def _differing() -> list[tuple[str, str, int]]:
    """(page, claim id, directive start) for every claim whose verdict differs across releases."""
    out = []
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text()
        for d in parse_directives(text, path.name):
            if d.name == "claim" and release_prose.release_dependent(d.args[0]):
                out.append((path.relative_to(DOCS).as_posix(), d.args[0], d.start))
    return out


def test_the_records_have_claims_that_differ_between_releases_and_the_pages_name_the_release():
    differing = _differing()
    assert len(differing) >= 3, "the committed records disagree across releases on at least three claims"
    assert release_prose.problems() == []


@pytest.mark.parametrize("page,claim_id,start", _differing())
def test_taking_the_release_out_of_the_paragraph_fails_the_check(page, claim_id, start):
    text = (DOCS / page).read_text()
    lead = release_prose.lead_paragraph(text, start)
    assert release_prose.VERSION.search(lead) or RANGE.search(lead), lead
    # The same paragraph with every release number written as "this release", every rendered range as
    # "these releases".
    blind = text.replace(lead, RANGE.sub("these releases", release_prose.VERSION.sub("this release", lead)), 1)
    d = next(d for d in parse_directives(blind, page) if d.name == "claim" and d.args[0] == claim_id)
    problem = release_prose.problem(blind, d.start, claim_id)
    assert problem and "names no release" in problem


@pytest.mark.parametrize("page,claim_id,start", _differing())
def test_naming_another_release_than_the_one_measured_fails_the_check(page, claim_id, start):
    """The sentence must name the release from which the verdict holds: after a bisection moves it,
    the old release in the prose is out of date."""
    text = (DOCS / page).read_text()
    lead = release_prose.lead_paragraph(text, start)
    _, first = release_prose.release_dependent(claim_id)
    # Typed or rendered, the range names other releases.
    wrong = text.replace(lead, RANGE.sub("vLLM 0.0.1 to 0.0.2", lead.replace(first, "0.0.1")), 1)
    d = next(d for d in parse_directives(wrong, page) if d.name == "claim" and d.args[0] == claim_id)
    problem = release_prose.problem(wrong, d.start, claim_id)
    assert problem and f"but not {first}" in problem


def test_a_claim_that_holds_on_every_release_needs_no_release_named():
    blind = re.sub(release_prose.VERSION, "this release", (DOCS / "cost.md").read_text())
    d = next(d for d in parse_directives(blind, "cost.md") if d.name == "claim")
    assert release_prose.release_dependent(d.args[0]) is None
    assert release_prose.problem(blind, d.start, d.args[0]) is None


def test_the_lead_paragraph_skips_directives_that_stand_alone():
    md = "Intro on vLLM 0.29.0:\n\n{{ claim(\"a.b\", expect=\"confirmed\") }}\n\n{{ claim(\"c.d\", expect=\"confirmed\") }}\n"
    second = md.rindex("{{")
    assert release_prose.lead_paragraph(md, second) == "Intro on vLLM 0.29.0:"
    assert release_prose.VERSION.search("on 0.29.0 and later") and release_prose.VERSION.search("vLLM 0.29")
    assert not release_prose.VERSION.search("a 0.5 s gap and 1.5x faster")


def test_the_lead_paragraph_skips_the_code_a_page_shows():
    md = ("A seeded answer matches from vLLM 0.29.0 on.\n\n```python\n--8<-- \"x.py\"\n```\n\n"
          "{{ claim(\"a.b\", expect=\"confirmed\") }}\n")
    assert release_prose.lead_paragraph(md, md.index("{{")) == "A seeded answer matches from vLLM 0.29.0 on."


@pytest.mark.parametrize("md,lead", [
    # a fenced block with a blank line in it is code, not the lead
    ("From 0.29.0 on.\n\n```python\na = 1\n\nb = 2\n```\n\n{{ claim(\"a.b\", expect=\"confirmed\") }}\n", "From 0.29.0 on."),
    # an HTML comment is not prose
    ("<!-- 0.29.0 -->\n\n{{ claim(\"a.b\", expect=\"confirmed\") }}\n", ""),
    # the search stops at the section's heading
    ("Old text, 0.29.0.\n\n## Next\n\n{{ claim(\"a.b\", expect=\"confirmed\") }}\n", ""),
    # in a list, the claim's own item: a sibling naming a release does not count
    ("- on 0.29.0\n- {{ claim(\"a.b\", expect=\"confirmed\") }} holds\n", "- {{ claim(\"a.b\", expect=\"confirmed\") }} holds"),
    # prose between two directives is prose
    ("{{ a() }} from 0.29.0 {{ b() }}\n\n{{ claim(\"a.b\", expect=\"confirmed\") }}\n", "{{ a() }} from 0.29.0 {{ b() }}"),
])
def test_the_lead_paragraph_in_every_layout(md, lead):
    assert release_prose.lead_paragraph(md, md.rindex("{{ claim")) == lead
