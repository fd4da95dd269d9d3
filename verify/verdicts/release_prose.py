"""Prose that names the release: a claim whose verdict differs between vLLM releases must be
introduced by a paragraph that says which release it holds for.

A page describes one release (the `cpu` profile's), but a reader on another release reads the
same sentences. Where a claim's verdict differs across the releases checked
(verify/verdicts/releases.py), the prose paragraph it stands under (the nearest block before its
directive that is not itself a directive) must name the release from which the page's verdict
holds, as measured: "from vLLM 0.29.0 on" for a claim confirmed since 0.29.0. When a bisection
moves that release, the sentence is out of date and the check says so. `verify check` and the
strict build fail otherwise, naming the page and line.
"""

from __future__ import annotations

import re
from pathlib import Path

from verify.errors import VerifyError
from verify.paths import DOCS
from verify.registry import find_claim
from verify.config.timing import timing_claims
from verify.verdicts import hardware, releases
from verify.verdicts.directives import parse_directives

# A release as pages write it: 0.29.0, or "vLLM 0.29" (a bare 0.29 is any decimal, like "0.5 s").
VERSION = re.compile(r"\bvLLM\s+\d+\.\d+(?:\.\d+)?\b|(?<![\w.])\d+\.\d+\.\d+(?![\w.]*\d)")
_DIRECTIVE = re.compile(r"\{\{[^}]*\}\}")
# Not prose: fenced code (the snippets a page shows) and HTML comments, blanked out in place so
# that offsets stay those of the page.
_NOT_PROSE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$|<!--.*?-->", re.S | re.M)
_ADMONITION = re.compile(r"^\s*(!!!|\?\?\?\+?)\s.*$", re.M)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+", re.M)
_HEADING = re.compile(r"^\s*#{1,6}\s")


def _blank(m: re.Match) -> str:
    return re.sub(r"[^\n]", " ", m.group(0))


def _prose(block: str) -> str:
    """The block's words once directives, admonition titles and list markers are gone."""
    return _LIST_ITEM.sub("", _ADMONITION.sub("", _DIRECTIVE.sub("", block))).strip()


def lead_paragraph(markdown: str, start: int) -> str:
    """The prose a directive at `start` stands under: its own block's prose (in a list, its own item's),
    else the nearest preceding block with prose, up to the section's heading (code and comments skipped)."""
    text = _NOT_PROSE.sub(_blank, markdown)
    blocks = [(m.start(), m.group(0)) for m in re.finditer(r"(?:[^\n]*\S[^\n]*(?:\n|$))+", text)]
    at = max(i for i, (b, _) in enumerate(blocks) if b <= start)
    b0, own = blocks[at]
    if _LIST_ITEM.match(own):
        items = [m.start() for m in _LIST_ITEM.finditer(own)]
        begin = max(i for i in items if i <= start - b0)
        later = [i for i in items if i > start - b0]
        own = own[begin:later[0] if later else len(own)]
    if _prose(own):
        return own.strip()
    for _, block in reversed(blocks[:at]):
        if _HEADING.match(block):
            return ""
        if _prose(block):
            return block.strip()
    return ""


def release_dependent(claim_id: str) -> tuple[str, str] | None:
    """When the claim's verdict differs between releases: the one line across them, and the first
    release measured from which the newest verdict holds. Else None."""
    across = releases.verdicts_across(claim_id)
    if len({r.verdict for r in across}) < 2:
        return None
    if claim_id in timing_claims(find_claim(claim_id)[0]):
        # A timing verdict that differs between records made on different hardware says nothing of the release.
        machines = [r.record.provenance.get("hardware", {}) for r in across]
        if not all(hardware.same(machines[0], m) for m in machines[1:]):
            return None
    first = len(across) - 1
    while first > 0 and across[first - 1].verdict == across[-1].verdict:
        first -= 1
    return releases.since(across), across[first].release


def problem(markdown: str, start: int, claim_id: str) -> str | None:
    dependent = release_dependent(claim_id)
    if dependent is None:
        return None
    across, first = dependent
    lead = lead_paragraph(markdown, start)
    named = {re.sub(r"^vLLM\s+", "", m.group(0)) for m in VERSION.finditer(lead)}
    # A range the page renders from the records (the releases directive) names its first release itself.
    for d in parse_directives(lead):
        if d.name == "releases":
            try:
                named.add(releases.span_of(*d.args)[1])
            except VerifyError:
                pass  # the render reports a range that is not one
    
    if first in named:
        return None
    said = f"names {', '.join(sorted(named))} but not {first}" if named else "names no release"
    return (f"claim {claim_id!r} differs between vLLM releases ({across}), but the paragraph it stands "
            f"under {said}: say from which release the sentence holds")


def problems(docs: Path = DOCS) -> list[str]:
    found = []
    for path in sorted(docs.rglob("*.md")):
        rel = path.relative_to(docs).as_posix()
        markdown = path.read_text(encoding="utf-8")
        for d in parse_directives(markdown, rel):
            if d.name == "claim":
                p = problem(markdown, d.start, d.args[0])
                if p:
                    found.append(f"{rel}:{d.line}: {p}")
    return found
