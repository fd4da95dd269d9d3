"""The anchors runbooks may link to, tests/published_anchors.txt: appended to, never shortened.

Every claim box on a page and every symptom is an anchor readers link to. Once published it must
never disappear (tests/test_site.py follows each listed anchor through the redirects of
verify/config/redirects.py to the built site). The claim and symptom anchors are derived, not typed:
`verify pages` and `verify run` append each one the pages show and the file lacks. Every line the
file holds stays, so an anchor that moved keeps its line (its redirect answers for it); section
anchors are added by hand.
"""

from __future__ import annotations

from pathlib import Path

from verify import paths  # read when called: tests point DOCS elsewhere
from verify.config import symptoms
from verify.evidence.store import write_atomic
from verify.registry import all_claims
from verify.site.render import page_url
from verify.verdicts.directives import page_claims

LIST = paths.ROOT / "tests" / "published_anchors.txt"


def current_anchors(docs: Path | None = None) -> list[str]:
    """Every symptom's anchor and every claim box's anchor on the pages now, as page#anchor, in page order."""
    claims = all_claims()
    out = [f"{page_url(symptoms.PAGE).rstrip('/')}#{s.anchor}" for s in symptoms.SYMPTOMS]
    out += [f"{page_url(pc.page).rstrip('/')}#{claims[pc.claim_id][1].anchor}"
            for pc in page_claims(docs or paths.DOCS) if pc.claim_id in claims]  # unknown ids: verify check
    return list(dict.fromkeys(out))


def published(path: Path | None = None) -> list[str]:
    """The listed anchors. A comment starts with "# "; "#claim-..." alone is an anchor on the home page."""
    text = (path or LIST).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("# ")]


def append_new(path: Path | None = None, docs: Path | None = None) -> list[str]:
    """Append every current anchor the file lacks, keeping each line it has; return those appended."""
    path = path or LIST
    text = path.read_text(encoding="utf-8")
    listed = set(published(path))
    new = [a for a in current_anchors(docs) if a not in listed]
    if new:
        write_atomic(path, text + ("" if text.endswith("\n") else "\n") + "".join(a + "\n" for a in new))
    return new
