"""The series as a whole: its order, the home page map, and links between articles instead of titles."""

from __future__ import annotations

import re

import yaml

from tests.conftest import ROOT
from verify.verdicts.directives import parse_directives

DOCS = ROOT / "docs"


def _series() -> list[tuple[str, str]]:
    """(title, file) of every article, in navigation order."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    section = next(item["The series"] for item in config["nav"] if isinstance(item, dict) and "The series" in item)
    return [next(iter(entry.items())) for entry in section]


def test_the_series_is_in_reading_order():
    files = [f for _, f in _series()]
    assert files.index("lifecycle.md") < files.index("prefill-decode.md") < files.index("kv-cache.md")
    assert files.index("kv-cache.md") < files.index("cost.md")
    assert files.index("openai-server.md") + 1 == files.index("streaming.md")
    assert files.index("streaming.md") + 1 == files.index("getting-started.ipynb")


def test_the_home_page_maps_every_article_with_its_counts():
    index = (DOCS / "index.md").read_text()
    counted = {d.args[0] for d in parse_directives(index) if d.name == "article_counts"}
    for title, f in _series():
        assert f"]({f})" in index, f"the home page does not link {title}"
        if f.endswith(".md"):
            assert f in counted, f"the home page shows no claim counts for {title}"


def _kind(verdict: str | None, expect: str | None) -> str:
    """How a claim stands, worked out here from its committed record, apart from the site's code."""
    if verdict is None:
        return "missing"
    if verdict != expect:
        return "inconclusive" if verdict == "inconclusive" else "contradicted"
    return "myth" if verdict == "refuted" else verdict


def test_article_counts_are_the_claims_the_page_states():
    """Each page's counts are the verdicts of the claims it states, read here straight from the records."""
    from verify.evidence import store
    from verify.site.render import claim_counts as _claim_counts
    kinds_seen = set()
    for _, f in _series():
        if not f.endswith(".md"):
            continue
        text = (DOCS / f).read_text()
        counts, newest = _claim_counts(text, f)
        expected = {"confirmed": 0, "myth": 0, "contradicted": 0, "inconclusive": 0, "missing": 0}
        for d in parse_directives(text, f):
            if d.name != "claim":
                continue
            claim_id = d.args[0]
            record = store.load(claim_id.split(".")[0], "cpu") or {}
            verdict = (record.get("claims", {}).get(claim_id) or {}).get("verdict")
            expected[_kind(verdict, d.kwargs.get("expect"))] += 1
        assert {k: v for k, v in counts.items() if k != "stale"} == expected, f
        assert sum(expected.values()) == 0 or newest
        kinds_seen |= {k for k, v in expected.items() if v}
    # The pages hold both kinds of claim, so a count that put every claim in one kind would fail above.
    assert {"confirmed", "myth"} <= kinds_seen


def test_sibling_articles_are_links_not_italic_titles():
    titles = [t for t, _ in _series()]
    # "The X" titles are also mentioned without their article ("OpenAI-Compatible Server").
    names = {t for t in titles} | {t.removeprefix("The ") for t in titles}
    found = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text()
        # An italic span may wrap onto the next line, as prose does.
        for m in re.finditer(r"(?<![*\w])\*([^*\n]+(?:\n[^*\n]+)?)\*(?!\*)", text):
            title = re.sub(r"\s+", " ", m.group(1))
            line_start = text.rfind("\n", 0, m.start()) + 1
            # A source line names another site's page: "vLLM documentation, *OpenAI-Compatible Server*".
            if title in names and "documentation, " not in text[line_start:m.start()]:
                found.append(f"{page.name}:{text.count(chr(10), 0, m.start()) + 1}: *{title}*")
    assert not found, "mentions of sibling articles that should be links: " + "; ".join(found)
