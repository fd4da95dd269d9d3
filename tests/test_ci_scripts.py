"""The scheduled workflows' shell steps, run for real against local stand-ins for GitHub.

The evidence pull request: a real git repository pushes to a real local remote; `gh` is a
stand-in on PATH that logs its arguments and answers as GitHub does (success, or the refusal
GITHUB_TOKEN gets where the repository does not allow Actions to open pull requests).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROPOSE = ROOT / ".github" / "scripts" / "propose_evidence.sh"
CHECK_RUNNER = ROOT / ".github" / "scripts" / "check_gpu_runner.sh"
REFUSAL = "GraphQL: GitHub Actions is not permitted to create or approve pull requests (createPullRequest)"


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path):
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", str(remote))
    work = tmp_path / "work"
    _git(tmp_path, "init", "-q", "-b", "main", str(work))
    (work / "docs" / "evidence" / "kv-timeline").mkdir(parents=True)
    (work / "docs" / "evidence" / "kv-timeline" / "t4.json").write_text("{}\n")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
    _git(work, "push", "-q", str(remote), "main")
    return work, remote


def _fake_gh(tmp_path, pr_create_fails: bool) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text(f"""#!/usr/bin/env bash
echo "$*" >> "{tmp_path}/gh.log"
if [ "$1 $2" = "pr create" ]; then
  {'echo "' + REFUSAL + '" >&2; exit 1' if pr_create_fails else 'echo https://github.com/o/r/pull/7'}
fi
exit 0
""")
    gh.chmod(0o755)
    return bin_dir


def _propose(repo, tmp_path, kind: str, pr_create_fails: bool) -> tuple[subprocess.CompletedProcess, str]:
    work, remote = repo
    (work / "docs" / "evidence" / "kv-timeline" / "t4.json").write_text('{"fresh": true}\n')
    summary = tmp_path / "summary.md"
    env = {**os.environ, "PATH": f"{_fake_gh(tmp_path, pr_create_fails)}:{os.environ['PATH']}",
           "PROFILE": "t4", "RUN_ID": "42", "REPO": "o/r", "GH_TOKEN": "token", "TOKEN_KIND": kind,
           "CHECK_OUTCOME": "success", "PUSH_URL": str(remote), "GITHUB_STEP_SUMMARY": str(summary)}
    r = subprocess.run(["bash", str(PROPOSE)], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    return r, summary.read_text() if summary.exists() else ""


def _remote_branches(remote) -> list[str]:
    return [line.split("refs/heads/")[1] for line in _git(remote, "show-ref").splitlines() if "refs/heads/" in line]


def test_a_refused_pull_request_leaves_no_branch_and_says_where_the_evidence_is(repo, tmp_path):
    r, summary = _propose(repo, tmp_path, "github", pr_create_fails=True)
    assert r.returncode == 0, r.stderr
    assert _remote_branches(repo[1]) == ["main"], "the evidence branch was left behind"
    assert "no pull request" in summary and "not permitted to create or approve pull requests" in summary
    assert "evidence-t4" in summary
    assert "::warning::" in r.stdout
    assert "pr create" in (tmp_path / "gh.log").read_text()


def test_with_the_workflow_token_the_checks_are_started_on_the_branch(repo, tmp_path):
    r, summary = _propose(repo, tmp_path, "github", pr_create_fails=False)
    assert r.returncode == 0, r.stderr
    assert "evidence/t4-42" in _remote_branches(repo[1])
    log = (tmp_path / "gh.log").read_text().splitlines()
    assert any(line.startswith("pr create") for line in log)
    assert "workflow run verify.yml --repo o/r --ref evidence/t4-42" in log
    assert "https://github.com/o/r/pull/7" in summary and "Checks started" in summary


def test_with_an_app_token_the_pull_request_starts_the_checks_itself(repo, tmp_path):
    r, _ = _propose(repo, tmp_path, "app", pr_create_fails=False)
    assert r.returncode == 0, r.stderr
    assert not any(line.startswith("workflow run") for line in (tmp_path / "gh.log").read_text().splitlines())


def test_nothing_changed_opens_nothing(repo, tmp_path):
    work, remote = repo
    summary = tmp_path / "summary.md"
    env = {**os.environ, "PATH": f"{_fake_gh(tmp_path, False)}:{os.environ['PATH']}", "PROFILE": "t4",
           "RUN_ID": "43", "REPO": "o/r", "GH_TOKEN": "t", "TOKEN_KIND": "github", "CHECK_OUTCOME": "success",
           "PUSH_URL": str(remote), "GITHUB_STEP_SUMMARY": str(summary)}
    r = subprocess.run(["bash", str(PROPOSE)], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "No evidence changed" in summary.read_text()
    assert not (tmp_path / "gh.log").exists() and _remote_branches(remote) == ["main"]


def test_the_gpu_runner_check_names_everything_missing_in_one_line(tmp_path):
    """On a machine with no GPU tools and no proxies, the check fails naming each of them (gh is not among
    them: the pull request is opened by a hosted job)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    import shutil
    import sys
    (bin_dir / "python3").symlink_to(Path(sys.executable).resolve())
    for tool in ("bash", "git", "curl", "df", "awk", "head"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    r = subprocess.run(["bash", str(CHECK_RUNNER)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                       env={"PATH": str(bin_dir), "CHECK_NETWORK": "0", "MIN_FREE_GB": "0"})
    assert r.returncode == 1
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("the T4 runner is missing: ")
    # (nginx and haproxy live in /usr/sbin, which the check also looks in.)
    for name in ("caddy", "openssl", "nvidia-smi"):
        assert name in lines[0], lines[0]
    assert "gh;" not in lines[0] and not lines[0].endswith("gh")
    assert "git;" not in lines[0] and "python3;" not in lines[0]


def test_the_gpu_runner_check_reads_the_driver_version(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 470.82.01\n")
    fake.chmod(0o755)
    r = subprocess.run(["bash", str(CHECK_RUNNER)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                       env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "CHECK_NETWORK": "0", "MIN_FREE_GB": "0"})
    assert "NVIDIA driver 535 or newer (found 470.82.01)" in r.stdout
