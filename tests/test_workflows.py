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


def _steps_running(job: dict, command: str) -> list[dict]:
    return [s for s in job.get("steps", []) if command in s.get("run", "")]


def test_push_workflow_has_one_ci_job_per_verification_job():
    """The plan job's command really lists every registered job as JSON, the matrix is made of that list,
    each matrix entry runs its own job, and the site job builds only after every entry."""
    import json

    from verify.registry import all_jobs
    jobs = _jobs("verify.yml")
    listing = _steps_running(jobs["plan"], "python -m verify list --json --ids-only")
    assert listing and jobs["plan"]["outputs"]["jobs"] == f"${{{{ steps.{listing[0]['id']}.outputs.jobs }}}}"
    out = subprocess.run([sys.executable, "-m", "verify", "list", "--json", "--ids-only"], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    listed = json.loads(out.stdout)
    assert len(listed) == len(set(listed)) and set(listed) == set(all_jobs())
    verify = jobs["verify"]
    assert verify["strategy"]["matrix"]["job"] == "${{ fromJSON(needs.plan.outputs.jobs) }}"
    assert "plan" in verify["needs"]
    run = _steps_running(verify, 'verify run "$JOB"')
    assert run and run[0]["env"]["JOB"] == "${{ matrix.job }}"
    site = jobs["site"]
    assert "verify" in site["needs"]
    commands = [s.get("run", "") for s in site["steps"]]
    check = next(i for i, c in enumerate(commands) if "verify check" in c)
    build = next(i for i, c in enumerate(commands) if "mkdocs build --strict" in c)
    assert check < build, "the drift check runs before the site is built"


def test_gpu_workflow_runs_the_t4_profile_on_a_self_hosted_runner():
    import yaml
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "gpu-t4.yml").read_text())
    assert set(workflow[True]) == {"schedule", "workflow_dispatch"}  # YAML reads the key `on` as true
    gate, job = workflow["jobs"]["runner"], workflow["jobs"]["t4"]
    assert gate["runs-on"] == "ubuntu-24.04" and gate["timeout-minutes"] <= 5, "the online check runs on a hosted runner"
    assert job["needs"] == "runner" and "needs.runner.outputs.online == 'true'" in job["if"]
    assert "self-hosted" in job["runs-on"] and "t4" in job["runs-on"]
    # The prerequisites are checked before anything is installed.
    commands = [s.get("run", "") for s in job["steps"]]
    check = next(i for i, c in enumerate(commands) if "check_gpu_runner.sh" in c)
    assert check < next(i for i, c in enumerate(commands) if "pip install" in c)
    assert _steps_running(job, "verify run --all --profile t4") and _steps_running(job, "verify check --profile t4")
    assert _steps_running(job, "propose_evidence.sh")


def _jobs(name: str) -> dict:
    import yaml
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())["jobs"]


def _installs(step: dict) -> bool:
    run = step.get("run", "")
    return "bootstrap.sh" in run or "pip install" in run or "verify prepare" in run


def _restores_cache(step: dict) -> bool:
    return step.get("uses", "").startswith(("actions/cache/restore@", "actions/cache@"))


def test_release_workflow_bisects_the_releases_on_a_schedule_and_proposes_a_pr():
    text = (ROOT / ".github" / "workflows" / "releases.yml").read_text()
    on = __import__("yaml").safe_load(text)[True]  # YAML reads the key `on` as true
    assert set(on) == {"schedule", "workflow_dispatch"}, "the releases run on a schedule and on demand only"
    assert "verify prepare --profile cpu-oldest" in text and "verify releases --remove-environments" in text
    assert "path: .venvs" in text, "the release's own environment is cached"
    assert "propose_evidence.sh" in text and "PIP_NO_CACHE_DIR" in text
    push = (ROOT / ".github" / "workflows" / "verify.yml").read_text()
    assert "cpu-oldest" not in push, "the push workflow keeps running the default profile only"


@pytest.mark.parametrize("workflow", ["verify.yml", "gpu-t4.yml", "releases.yml"])
def test_every_job_that_installs_restores_the_cache_first(workflow):
    for name, job in _jobs(workflow).items():
        steps = job.get("steps", [])
        installs = [i for i, s in enumerate(steps) if _installs(s)]
        if not installs:
            continue
        restores = [i for i, s in enumerate(steps) if _restores_cache(s)]
        assert restores and restores[0] < installs[0], f"{workflow}: job {name} installs before restoring the cache"


def test_one_cache_key_from_the_environments_inputs():
    jobs = _jobs("verify.yml")
    key_step = next(s for s in jobs["env"]["steps"] if s.get("id") == "key")
    inputs = key_step["env"]["INPUTS"]
    for source in ("pyproject.toml", "verify/bootstrap.sh", "verify/live/model.py"):
        assert source in inputs
    # A venv links its interpreter by path: the key names the runner image and the exact Python.
    assert "steps.py.outputs.python-version" in key_step["env"]["PYTHON"]
    assert "$ImageOS" in key_step["run"].replace("{", "").replace(":-local}", "") or "ImageOS" in key_step["run"]
    assert "ImageVersion" in key_step["run"] and "$PYTHON" in key_step["run"]
    for name, job in jobs.items():
        for step in job.get("steps", []):
            if _restores_cache(step) and name != "env":
                assert step["with"]["key"] == "${{ needs.env.outputs.key }}", name
                assert "env" in job["needs"], name


def test_pull_requests_never_write_the_cache():
    for workflow in ("verify.yml", "gpu-t4.yml"):
        text = (ROOT / ".github" / "workflows" / workflow).read_text()
        for name, job in _jobs(workflow).items():
            for step in job.get("steps", []):
                if step.get("uses", "").startswith("actions/cache/save@"):
                    on = __import__("yaml").safe_load(text).get(True) or {}
                    if "pull_request" in on or "pull_request_target" in on:
                        assert "github.event_name != 'pull_request'" in step.get("if", ""), f"{workflow}: {name}"


def test_the_push_workflow_publishes_main_and_runs_once_per_branch():
    import yaml
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "verify.yml").read_text())
    on = workflow[True]
    assert on["push"] == {"branches": ["main"]}, "pushes to other branches run as their pull request, not twice"
    assert "pull_request" in on and "workflow_dispatch" in on
    assert workflow["concurrency"]["cancel-in-progress"] is True
    assert "github.event.pull_request.number || github.ref" in workflow["concurrency"]["group"]
    deploy = workflow["jobs"]["deploy"]
    assert deploy["needs"] == "site" and deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    assert deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")
    upload = next(s for s in workflow["jobs"]["site"]["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "site/" and upload["if"] == deploy["if"]
    assert workflow["permissions"] == {"contents": "read"}, "only the deploy job may write Pages"


def test_scheduled_workflows_upload_the_evidence_whatever_happens():
    import yaml
    for name, job_id in (("releases.yml", "releases"), ("gpu-t4.yml", "t4")):
        job = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())["jobs"][job_id]
        upload = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
        assert upload["if"] == "always()" and upload["with"]["name"] == f"evidence-{job_id}"
        propose = next(s for s in job["steps"] if "propose_evidence.sh" in s.get("run", ""))
        assert propose["env"]["PROFILE"] == job_id
        assert "steps.app.outputs.token" in propose["env"]["GH_TOKEN"]
        assert job["permissions"]["actions"] == "write", "starting the checks on the branch needs actions: write"
