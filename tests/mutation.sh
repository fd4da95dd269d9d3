#!/bin/sh
# The mutation score of the verdict rules (CONTRIBUTING.md, "Mutation score"). Not part of CI: about half an
# hour on 2 cores. mutmut (config: [tool.mutmut] in pyproject.toml) mutates the lines of
# verify/jobs/ that the rule tests run, and runs those tests against each mutant; the score counts
# the mutants of rule functions (decide_* and what they call), not of the jobs' titles and texts.
# Runs on a clone of the committed HEAD, so the working tree is never touched.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV="${VENV:-$ROOT/.venv}"
"$VENV/bin/python" -m pip install -q "mutmut==3.8.1"
WORK="$(mktemp -d)/mutation"
git clone -q "$ROOT" "$WORK"
cd "$WORK"
export PATH="$VENV/bin:$PATH"
echo "mutation: the rule tests must pass unmutated first"
python -m pytest -q -p no:cacheprovider tests/rules/ tests/test_falsifiable.py \
    tests/test_blind_by_damage.py tests/test_recompute.py
echo "mutation: mutmut run in $WORK (progress below)"
start=$(date +%s)
nice python -m mutmut run --max-children "${MAX_CHILDREN:-2}" || true
python -m mutmut results --all true > "$WORK/mutmut-results.txt" 2>/dev/null || true
seconds=$(( $(date +%s) - start ))
echo "mutation: $seconds s"
# The record names the commit that was mutated; the status page shows it (docs/evidence/mutation-score.json).
python "$ROOT/tests/mutation_score.py" "$WORK/mutmut-results.txt" --seconds "$seconds" \
    --commit "$(git rev-parse HEAD)" --record "${RECORD:-$ROOT/docs/evidence/mutation-score.json}"
