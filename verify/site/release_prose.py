"""Prose that names the release: a claim whose verdict differs between vLLM releases must be
introduced by a paragraph that says which release it holds for.

A page describes one release (the `cpu` profile's), but a reader on another release reads the
same sentences. Where a claim's verdict differs across the releases checked
(verify/site/releases_page.py), the prose paragraph it stands under (the nearest block before its
directive that is not itself a directive) must name the release from which the page's verdict
holds, as measured: "from vLLM 0.29.0 on" for a claim confirmed since 0.29.0. When a bisection
moves that release, the sentence is out of date and the check says so. `verify check` and the
strict build fail otherwise, naming the page and line.
"""

from __future__ import annotations

import re
from pathlib import Path

from verify.paths import DOCS
from verify.registry import find_claim
from verify.site import hardware, releases_page, views
from verify.site.directives import parse_directives

# A release as pages write it: 0.29.0, or "vLLM 0.29" (a bare 0.29 is any decimal, like "0.5 s").
VERSION = re.compile(r"\bvLLM\s+\d+\.\d+(?:\.\d+)?\b|(?<![\w.])\d+\.\d+\.\d+(?![\w.]*\d)")
_ONLY_DIRECTIVES = re.compile(r"^(\s*\{\{.*?\}\}\s*)+$", re.S)
# A block that is code, not prose: a fenced block (the snippets a page shows).
_CODE = re.compile(r"^\s*(```|~~~)")


def _not_prose(block: str) -> bool:
    return bool(_ONLY_DIRECTIVES.match(block) or _CODE.match(block))


def lead_paragraph(markdown: str, start: int) -> str:
    """The prose block a directive at `start` stands under: the nearest preceding block that is neither
    only directives nor code (the directive's own block counts when it has prose around the directive)."""
    line_start = markdown.rfind("\n", 0, start) + 1
    own_end = markdown.find("\n\n", start)
    own = markdown[markdown.rfind("\n\n", 0, start) + 2 if "\n\n" in markdown[:start] else 0:
                   own_end if own_end != -1 else len(markdown)]
    if not _ONLY_DIRECTIVES.match(own):
        return own
    for block in reversed(re.split(r"\n\s*\n", markdown[:line_start])):
        if block.strip() and not _not_prose(block):
            return block
    return ""


def release_dependent(claim_id: str) -> tuple[str, str] | None:
    """When the claim's verdict differs between releases: the one line across them, and the first
    release measured from which the newest verdict holds. Else None."""
    across = releases_page.verdicts_across(claim_id)
    if len({r.verdict for r in across}) < 2:
        return None
    if claim_id in views.timing_claims(find_claim(claim_id)[0]):
        # A timing verdict that differs between records made on different hardware says nothing of the release.
        machines = [r.record.provenance.get("hardware", {}) for r in across]
        if not all(hardware.same(machines[0], m) for m in machines[1:]):
            return None
    first = len(across) - 1
    while first > 0 and across[first - 1].verdict == across[-1].verdict:
        first -= 1
    return releases_page.since(across), across[first].release


def problem(markdown: str, start: int, claim_id: str) -> str | None:
    dependent = release_dependent(claim_id)
    if dependent is None:
        return None
    across, first = dependent
    named = {re.sub(r"^vLLM\s+", "", m.group(0)) for m in VERSION.finditer(lead_paragraph(markdown, start))}
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
