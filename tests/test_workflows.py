"""The GitHub workflows: valid against GitHub's schema, clean under zizmor, matrix from the job list."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if not path:
        pytest.fail(f"{name} is not installed (it comes with the test extra)")
    return path


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_matches_github_schema(workflow):
    out = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(workflow)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_workflows_pass_zizmor_offline():
    out = subprocess.run([_tool("zizmor"), "--offline", str(ROOT / ".github" / "workflows")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_push_workflow_has_one_ci_job_per_verification_job():
    text = (ROOT / ".github" / "workflows" / "verify.yml").read_text()
    assert "python -m verify list --json --ids-only" in text
    assert "fromJSON(needs.plan.outputs.jobs)" in text
    assert "verify check" in text and "mkdocs build --strict" in text


def test_gpu_workflow_runs_the_t4_profile_on_a_self_hosted_runner():
    text = (ROOT / ".github" / "workflows" / "gpu-t4.yml").read_text()
    assert "self-hosted" in text and "t4" in text
    assert "--profile t4" in text and "gh pr create" in text
    assert "schedule:" in text and "workflow_dispatch:" in text
