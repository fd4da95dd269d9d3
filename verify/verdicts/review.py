"""A blind read of a claim: what the page says and what its record holds, without the rule or its verdict.

`verify review CLAIM` prints the section of the page that states the claim, the claim box's sentence, and
the record's raw data with where it came from. It never prints the rule's code, its verdict or its
reasons: the reviewer writes down what they conclude from the page and the record alone, and only then
compares with `verify status` (CONTRIBUTING.md, "A read against the record"). Where the two differ, the
sentence or the rule is fixed before the claim lands.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from verify.errors import VerifyError
from verify.evidence.record import Record
from verify.paths import DOCS, ROOT
from verify.registry import all_claims, find_claim
from verify.verdicts.directives import page_claims

_HEADING = re.compile(r"^#{1,6} ")
_CLAIM_LINE = re.compile(r"\{\{\s*claim\(\s*[\"']([^\"']+)[\"'].*?\}\}")


def section_of(page: Path, line: int, most: int | None = 40) -> tuple[int, list[str]]:
    """The lines of page from the heading above `line` (1-based) down to it: the prose a reader has just
    read when they reach the claim box; of a long section, its last paragraphs within `most` lines.
    Returns the first line's number and the lines."""
    lines = page.read_text(encoding="utf-8").splitlines()
    start = line - 1
    while start > 0 and not _HEADING.match(lines[start]):
        start -= 1
    if most is not None and line - start > most:
        start = line - most
        while start < line - 1 and lines[start - 1].strip():
            start += 1  # begin at a paragraph
    return start + 1, lines[start:line]


def _as_read(lines: list[str], texts: dict[str, str]) -> list[str]:
    # A claim directive is shown as the box's sentence, never its expected verdict: the read must not be told.
    return [_CLAIM_LINE.sub(lambda m: f"[claim box {m.group(1)}: \"{texts.get(m.group(1), '?')}\"]", ln)
            for ln in lines]


def _trimmed(value, keep: int):
    """value with every list longer than 2*keep cut to its first and last `keep` items and a note between:
    every key stays visible, and a long transcript does not bury the rest."""
    if isinstance(value, dict):
        return {k: _trimmed(v, keep) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) > 2 * keep + 1:
            return ([_trimmed(v, keep) for v in value[:keep]]
                    + [f"... {len(value) - 2 * keep} more items; --full prints them all ..."]
                    + [_trimmed(v, keep) for v in value[-keep:]])
        return [_trimmed(v, keep) for v in value]
    return value


def _data_lines(data: dict, keep: int | None) -> list[str]:
    return json.dumps(data if keep is None else _trimmed(data, keep), indent=1, ensure_ascii=False).splitlines()


def _shown(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()


def review(claim_id: str, profile: str, evidence_root: Path | None = None, keep: int | None = 3,
           docs: Path = DOCS) -> str:
    """The blind-read packet of one claim on one profile, as text."""
    job, claim = find_claim(claim_id)
    stated = [pc for pc in page_claims(docs) if pc.claim_id == claim_id]
    if not stated:
        raise VerifyError(f"claim {claim_id!r} is stated on no page: nothing to read it against")
    record = Record.load(job.id, profile, evidence_root)
    if record is None:
        raise VerifyError(f"job {job.id!r} has no record on profile {profile!r}: run `verify run {job.id} "
                          f"--profile {profile}` first")
    texts = {cid: c.text for cid, (_, c) in all_claims().items()}
    out = [f"A read of {claim_id} from the page and the raw record alone: no rule, no verdict.", ""]
    for pc in stated:
        first, lines = section_of(docs / pc.page, pc.line, most=None if keep is None else 40)
        out += [f"The page, docs/{pc.page}, lines {first}-{pc.line}:", ""]
        out += ["    " + ln for ln in _as_read(lines, texts)] + [""]
    out += [f"The claim box says: \"{claim.text}\"", ""]
    out += [f"The record: {_shown(record.path)} ({'; '.join(p for p in record.origin_parts() if p)})",
            f"What the job asked: {record.raw.get('question', '')}", "Its raw data:", ""]
    out += ["    " + ln for ln in _data_lines(record.data, keep)] + [""]
    out += ["Write down what you conclude from these alone: does the record show the sentence, show its opposite,",
            "or not tell? Then compare with the rule's verdict (`verify status`, or the claim box on the built page)",
            "and fix the sentence or the rule where they differ."]
    return "\n".join(out)
