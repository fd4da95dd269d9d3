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


_SCALARS_WHOLE = 60   # a list of numbers this long fits on a few lines: shown whole, every value a reader may need
_SCALARS_KEPT = 20


def _is_scalar_list(value) -> bool:
    return isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value)


def _trimmed(value, keep: int):
    """value with every list of records longer than 2*keep cut to its first and last `keep` items and a note
    between, and every list of plain values longer than _SCALARS_WHOLE cut to its first and last
    _SCALARS_KEPT: every key stays visible, and a long transcript does not bury the rest."""
    if isinstance(value, dict):
        return {k: _trimmed(v, keep) for k, v in value.items()}
    if isinstance(value, list):
        head = _SCALARS_KEPT if _is_scalar_list(value) else keep
        if len(value) > (_SCALARS_WHOLE if _is_scalar_list(value) else 2 * keep + 1):
            return ([_trimmed(v, keep) for v in value[:head]]
                    + [f"... {len(value) - 2 * head} more items; --full prints them all ..."]
                    + [_trimmed(v, keep) for v in value[-head:]])
        return [_trimmed(v, keep) for v in value]
    return value


def _inline_scalar_lists(value, inline: list[str]):
    # A list of plain values goes on one line (json.dumps would give each its own): a series stays readable.
    if isinstance(value, dict):
        return {k: _inline_scalar_lists(v, inline) for k, v in value.items()}
    if isinstance(value, list):
        if value and _is_scalar_list(value):
            inline.append(json.dumps(value, ensure_ascii=False))
            return f"\x00{len(inline) - 1}\x00"
        return [_inline_scalar_lists(v, inline) for v in value]
    return value


def _data_lines(data: dict, keep: int | None) -> list[str]:
    inline: list[str] = []
    shaped = _inline_scalar_lists(data if keep is None else _trimmed(data, keep), inline)
    text = json.dumps(shaped, indent=1, ensure_ascii=False)
    text = re.sub(r'"\\u0000(\d+)\\u0000"', lambda m: inline[int(m.group(1))], text)
    return text.splitlines()


def _shown(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()


def review(claim_id: str, profile: str, evidence_root: Path | None = None, keep: int | None = 8,
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
    origin = "; ".join(p for p in record.origin_parts(own_servers=job.starts_own_engine) if p)
    out += [f"The record: {_shown(record.path)} ({origin}; {record.code_tie})",
            f"What the job asked: {record.raw.get('question', '')}", "Its raw data" + ("" if keep is None else
                                  " (long lists trimmed where marked; if the deciding values may be in the cut, "
                                  "run again with --full)") + ":", ""]
    out += ["    " + ln for ln in _data_lines(record.data, keep)] + [""]
    out += ["Write down what you conclude from these alone: does the record show the sentence, show its opposite,",
            "or not tell? Then compare with the rule's verdict (`verify status`, or the claim box on the built page)",
            "and fix the sentence or the rule where they differ."]
    return "\n".join(out)
