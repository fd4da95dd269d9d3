"""Where things live in the repository, named once."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SNIPPETS = ROOT / "snippets"
# Evidence is published with the site at stable URLs: /evidence/<job>/<profile>.json
EVIDENCE = DOCS / "evidence"
JOBS = ROOT / "verify" / "jobs"
# The rules' mutation score, written by tests/mutation.sh, shown on the status page.
MUTATION_RECORD = "mutation-score.json"
