"""Prose that names the release: a claim whose verdict differs between vLLM releases must be
introduced by a paragraph that says which release it holds for.

A page describes one release (the `cpu` profile's), but a reader on another release reads the
same sentences. Where a claim's verdict differs across the releases checked
(verify/site/releases_page.py), the prose paragraph it stands under (the nearest block before its
directive that is not itself a directive) must name a version, like "vLLM 0.32.0" or "from
0.29.0 on". `verify check` and the strict build fail otherwise, naming the page and line.
"""

from __future__ import annotations

import re
from pathlib import Path

from verify.paths import DOCS
from verify.site import releases_page
from verify.site.directives import parse_directives

# A release as pages write it: 0.29.0, or "vLLM 0.29" (a bare 0.29 is any decimal, like "0.5 s").
VERSION = re.compile(r"(?<![\w.])\d+\.\d+\.\d+(?![\w.]*\d)|\bvLLM \d+\.\d+\b")
_ONLY_DIRECTIVES = re.compile(r"^(\s*\{\{.*?\}\}\s*)+$", re.S)


def lead_paragraph(markdown: str, start: int) -> str:
    """The prose block a directive at `start` stands under: the nearest preceding block that is not
    only directives (the directive's own block counts when it has prose around the directive)."""
    line_start = markdown.rfind("\n", 0, start) + 1
    own_end = markdown.find("\n\n", start)
    own = markdown[markdown.rfind("\n\n", 0, start) + 2 if "\n\n" in markdown[:start] else 0:
                   own_end if own_end != -1 else len(markdown)]
    if not _ONLY_DIRECTIVES.match(own):
        return own
    for block in reversed(re.split(r"\n\s*\n", markdown[:line_start])):
        if block.strip() and not _ONLY_DIRECTIVES.match(block):
            return block
    return ""


def release_dependent(claim_id: str) -> str | None:
    """The one line across releases when the claim's verdict differs between them, else None."""
    across = releases_page.verdicts_across(claim_id)
    return releases_page.since(across) if len({r.verdict for r in across}) > 1 else None


def problem(markdown: str, start: int, claim_id: str) -> str | None:
    across = release_dependent(claim_id)
    if across is None or VERSION.search(lead_paragraph(markdown, start)):
        return None
    return (f"claim {claim_id!r} differs between vLLM releases ({across}), but the paragraph it stands "
            f"under names no release: say which release the sentence holds for")


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
