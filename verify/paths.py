"""Where things live in the repository, named once."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SNIPPETS = ROOT / "snippets"
# Evidence is published with the site at stable URLs: /evidence/<job>/<profile>.json
EVIDENCE = DOCS / "evidence"
JOBS = ROOT / "verify" / "jobs"
