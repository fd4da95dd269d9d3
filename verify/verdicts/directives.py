"""The directives pages use to state claims and show evidence.

A page writes, in its Markdown source:

    {{ claim("cancel-direct", expect="confirmed") }}   the claim, with the verdict the prose asserts
    {{ evidence("wire-format", "chat-transcript") }}   a fragment rendered from the job's record
    {{ chart("stream-timing", "timeline", alt="...") }}     a chart of the record (verify/site/views, charts.py)
    {{ page_summary() }}                               counts of verdicts on this page
    {{ article_counts("kv-cache.md") }}                 another page's claim count and newest evidence (home page)
    {{ status_table() }}                               every job (status page only)
    {{ mutation_score() }}                             the rules' mutation score, from the last run's record
    {{ full_run() }}                                   where the last full re-measure's time went, from its record
    {{ release_changes("claims") }}                    what changed between releases ("summary", "claims", "figures", "tolerances")
    {{ symptom("health-503") }}                        a symptom of the index, with the claims it leans on (verify/config/symptoms.py)
    {{ releases("admission-limit.flag-known", "confirmed") }}  the releases a claim has that verdict on, as a range that
                                                       says which were measured and which inferred (releases.span_of)

The build hook (verify/site/hook.py) replaces them; `verify check` reads the
`claim` directives to compare what pages assert with what the evidence says.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from verify.errors import VerifyError
from verify.paths import DOCS

DIRECTIVE = re.compile(r"\{\{\s*(?P<call>[a-z_]+\(.*?\))\s*\}\}")
KNOWN = {"claim", "evidence", "chart", "page_summary", "article_counts", "status_table", "mutation_score", "full_run", "release_changes",
         "symptom", "releases"}


@dataclass(frozen=True)
class Directive:
    name: str
    args: tuple
    kwargs: dict
    start: int
    end: int
    line: int


def parse_directives(text: str, where: str = "page") -> list[Directive]:
    found = []
    for m in DIRECTIVE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        try:
            call = ast.parse(m.group("call"), mode="eval").body
            if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
                raise ValueError("not a call")
            args = tuple(ast.literal_eval(a) for a in call.args)
            kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        except (SyntaxError, ValueError) as e:
            raise VerifyError(f"{where}:{line}: cannot read directive {m.group(0)!r} ({e})") from None
        if call.func.id not in KNOWN:
            raise VerifyError(f"{where}:{line}: unknown directive {call.func.id!r} (known: {', '.join(sorted(KNOWN))})")
        found.append(Directive(call.func.id, args, kwargs, m.start(), m.end(), line))
    return found


@dataclass(frozen=True)
class PageClaim:
    page: str  # relative to docs/
    line: int
    claim_id: str
    expect: str


def page_claims(docs: Path = DOCS) -> list[PageClaim]:
    out = []
    for path in sorted(docs.rglob("*.md")):
        rel = path.relative_to(docs).as_posix()
        for d in parse_directives(path.read_text(encoding="utf-8"), rel):
            if d.name == "claim":
                if len(d.args) != 1 or "expect" not in d.kwargs:
                    raise VerifyError(f"{rel}:{d.line}: write claims as claim(\"id\", expect=\"confirmed|refuted|inconclusive\")")
                out.append(PageClaim(rel, d.line, d.args[0], d.kwargs["expect"]))
    return out
