#!/usr/bin/env bash
# Propose the evidence a scheduled run recorded as a pull request, and get it checked.
#
#   PROFILE=cpu-oldest RUN_ID=123 REPO=owner/name GH_TOKEN=... TOKEN_KIND=app|github \
#   CHECK_OUTCOME=success|failure [CHECK_FILE=check.txt] bash .github/scripts/propose_evidence.sh
#
# TOKEN_KIND=app: a token of a GitHub App given to the workflow (its pull request starts the
# push workflow's checks like anyone's). TOKEN_KIND=github: the workflow's own GITHUB_TOKEN,
# which can open a pull request only where the repository allows it ("Allow GitHub Actions to
# create and approve pull requests") and whose events start no workflow, so the checks are
# started on the branch by hand (workflow_dispatch, the one event GITHUB_TOKEN may trigger).
#
# When no pull request can be opened the branch is deleted again (no orphan branches), and the
# job summary says why and where the evidence is: the workflow uploads it as an artifact.
# PUSH_URL overrides the remote (tests); GITHUB_STEP_SUMMARY is where the summary goes.
set -euo pipefail
: "${PROFILE:?}" "${RUN_ID:?}" "${REPO:?}" "${GH_TOKEN:?}" "${TOKEN_KIND:?}" "${CHECK_OUTCOME:?}"
summary="${GITHUB_STEP_SUMMARY:-/dev/stdout}"
remote="${PUSH_URL:-https://x-access-token:${GH_TOKEN}@github.com/${REPO}.git}"
branch="evidence/${PROFILE}-${RUN_ID}"
tmp="$(mktemp -d)"

git config user.name "verify-bot"
git config user.email "verify-bot@users.noreply.github.com"
git checkout -q -b "$branch"
git add docs/evidence
if git diff --cached --quiet; then
  echo "No evidence changed on the ${PROFILE} profile (run ${RUN_ID})." >> "$summary"
  exit 0
fi
git commit -q -m "Refresh ${PROFILE} evidence (drift check: ${CHECK_OUTCOME})"

fallback() {
  # $1: why no pull request. The branch goes again; the evidence stays in the run's artifact.
  git push -q "$remote" --delete "$branch" 2>/dev/null || true
  echo "::warning::no pull request for the ${PROFILE} evidence: $1"
  {
    echo "### ${PROFILE} evidence: no pull request"
    echo
    echo "$1"
    echo
    echo "The evidence is in this run's artifact \`evidence-${PROFILE}\`; copy it into docs/evidence/ and"
    echo "open the pull request by hand, or give the workflow a GitHub App (see the README, CI section)."
  } >> "$summary"
  exit 0
}

if ! git push -q "$remote" "$branch" 2>"$tmp/push.err"; then
  fallback "pushing the branch failed: $(tail -n 1 "$tmp/push.err")"
fi
{
  echo "Evidence recorded on the ${PROFILE} profile by run ${RUN_ID}. Drift check: ${CHECK_OUTCOME}."
  if [ -n "${CHECK_FILE:-}" ] && [ -f "$CHECK_FILE" ]; then
    echo; echo '```'; tail -n 60 "$CHECK_FILE"; echo '```'
  fi
} > "$tmp/body.md"
if ! url="$(gh pr create --repo "$REPO" --head "$branch" --title "Refresh ${PROFILE} evidence" \
            --body-file "$tmp/body.md" 2>"$tmp/pr.err")"; then
  fallback "opening the pull request failed: $(tail -n 1 "$tmp/pr.err")"
fi
echo "Pull request: ${url}" >> "$summary"
if [ "$TOKEN_KIND" = github ]; then
  # A pull request opened with GITHUB_TOKEN starts no workflow: start the checks on its branch.
  if gh workflow run verify.yml --repo "$REPO" --ref "$branch" 2>"$tmp/run.err"; then
    echo "Checks started on ${branch} (verify.yml, workflow_dispatch)." >> "$summary"
  else
    echo "::warning::could not start the checks on ${branch}: $(tail -n 1 "$tmp/run.err")"
    echo "Start verify.yml on ${branch} by hand: its checks did not start." >> "$summary"
  fi
fi
