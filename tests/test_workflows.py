"""The GitHub workflows: linted as GitHub and shellcheck would read them, and each step the push
workflow runs is run here the same way (the plan command on a bare interpreter, the site built
in an environment holding only the docs extra)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent
MAIN_ONLY = "github.event_name == 'push' && github.ref == 'refs/heads/main'"
# The oldest major of each action that runs on a Node the hosted runners still ship (Node 24), or,
# for composite actions, whose inner actions do.
CURRENT_MAJORS = {
    "actions/checkout": 5,
    "actions/setup-python": 6,
    "actions/cache/restore": 5,
    "actions/cache/save": 5,
    "actions/upload-artifact": 6,
    "actions/download-artifact": 7,
    "actions/upload-pages-artifact": 5,  # its v5 uploads with upload-artifact v7
    "actions/deploy-pages": 5,
    "actions/create-github-app-token": 3,
}


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if not path:
        pytest.fail(f"{name} is not installed (it comes with the test extra)")
    return path


def _workflow(name: str) -> dict:
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())


def _jobs(name: str) -> dict:
    return _workflow(name)["jobs"]


def _steps_running(job: dict, command: str) -> list[dict]:
    return [s for s in job.get("steps", []) if command in s.get("run", "")]


def _needs(job: dict) -> list[str]:
    needs = job.get("needs", [])
    return [needs] if isinstance(needs, str) else list(needs)


def _upstream(jobs: dict, name: str) -> set[str]:
    """Every job that must finish before `name` starts, transitively."""
    seen: set[str] = set()
    todo = _needs(jobs[name])
    while todo:
        job = todo.pop()
        if job not in seen:
            seen.add(job)
            todo += _needs(jobs[job])
    return seen


# --- linting -----------------------------------------------------------------------------------

@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_matches_github_schema(workflow):
    out = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(workflow)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_workflows_pass_zizmor_offline():
    out = subprocess.run([_tool("zizmor"), "--offline", str(ROOT / ".github" / "workflows")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def _shellcheck(script: str, tmp_path: Path, name: str = "step") -> str:
    """shellcheck's findings on a `run:` script as the runner executes it (bash -e), expressions
    replaced by placeholders of the same length (as actionlint does), with the optional check for
    a command whose failure another command hides (SC2312: `echo "x=$(cmd)"` exits 0 when cmd fails)."""
    script = re.sub(r"\$\{\{.*?\}\}", lambda m: "_" * len(m.group(0)), script)
    path = tmp_path / f"{name}.sh"
    path.write_text("#!/bin/bash -e\n" + script)
    out = subprocess.run([_tool("shellcheck"), "-s", "bash", "--enable=check-extra-masked-returns", "-f", "gcc",
                          str(path)], capture_output=True, text=True)
    return out.stdout + out.stderr


def _run_steps():
    for workflow in WORKFLOWS:
        for job_name, job in yaml.safe_load(workflow.read_text())["jobs"].items():
            for i, step in enumerate(job.get("steps", [])):
                if "run" in step:
                    yield pytest.param(step["run"], id=f"{workflow.stem}.{job_name}.{step.get('id', step.get('name', i))}")


@pytest.mark.parametrize("script", list(_run_steps()))
def test_every_run_step_passes_shellcheck(script, tmp_path):
    findings = _shellcheck(script, tmp_path)
    assert not findings, findings


@pytest.mark.parametrize("script", [
    # The plan step before: its command failed (No module named 'httpx') and the step exited 0
    # with an empty list, which failed the matrix and skipped everything after it.
    'echo "jobs=$(python -m verify list --json --ids-only)" >> "$GITHUB_OUTPUT"',
    # A drift check whose exit status only the right-hand side of a pipe decides.
    ".venv/bin/verify check --profile t4 2>&1 | tee check.txt",
])
def test_shellcheck_catches_a_failure_that_a_step_would_hide(script, tmp_path):
    assert "SC2312" in _shellcheck(script, tmp_path)


def _pinned_actions():
    for workflow in WORKFLOWS:
        for match in re.finditer(r"uses:\s*([\w./-]+)@(\S+)(?:\s*#\s*(\S+))?", workflow.read_text()):
            yield pytest.param(*match.groups(), id=f"{workflow.name}:{match.group(1)}")


@pytest.mark.parametrize("action, ref, tag", list(_pinned_actions()))
def test_every_action_is_pinned_to_a_commit_of_a_current_major(action, ref, tag):
    assert re.fullmatch(r"[0-9a-f]{40}", ref), f"{action}@{ref}: pin a full commit SHA"
    assert tag and re.fullmatch(r"v\d+(\.\d+)*", tag), f"{action}@{ref}: name its release in a comment (# vX.Y.Z)"
    assert action in CURRENT_MAJORS, f"{action} is not in CURRENT_MAJORS: look up its newest major first"
    major = int(tag[1:].split(".")[0])
    assert major >= CURRENT_MAJORS[action], f"{action} {tag} runs on a Node the runners no longer ship"


@pytest.mark.parametrize("old", ["actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2",
                                 "actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065 # v5.6.0",
                                 "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2"])
def test_the_node_20_majors_of_before_are_refused(old):
    action, ref, tag = re.match(r"([\w./-]+)@(\S+)\s*#\s*(\S+)", old).groups()
    with pytest.raises(AssertionError, match="no longer ship"):
        test_every_action_is_pinned_to_a_commit_of_a_current_major(action, ref, tag)


# --- the push workflow: its steps, run here the same way ----------------------------------------

def _plan_command() -> list[str]:
    listing = _steps_running(_jobs("verify.yml")["plan"], "-m verify list")
    assert len(listing) == 1
    command = re.search(r"python (-S -m verify list [^)\"]*)", listing[0]["run"])
    assert command, "the plan step runs `python -S -m verify list ...`"
    return command.group(1).split()


def test_the_plan_command_lists_every_job_on_a_bare_interpreter():
    """Run as the plan job runs it: the standard library only (`-S`: no site-packages)."""
    from verify.registry import all_jobs
    args = _plan_command()
    assert args[0] == "-S", "the plan job's interpreter has nothing installed"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    out = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    listed = json.loads(out.stdout)
    assert len(listed) == len(set(listed)) and set(listed) == set(all_jobs())


def test_the_plan_job_fails_when_its_command_does():
    """The list is assigned before it is written out, so bash -e stops the step on a failure."""
    run = _steps_running(_jobs("verify.yml")["plan"], "-m verify list")[0]["run"]
    assert re.search(r'^\s*jobs="\$\(python -S -m verify list', run, re.M), run


def test_the_matrix_is_made_of_the_list_and_the_fresh_site_waits_for_every_entry():
    jobs = _jobs("verify.yml")
    listing = _steps_running(jobs["plan"], "-m verify list")[0]
    assert jobs["plan"]["outputs"]["jobs"] == f"${{{{ steps.{listing['id']}.outputs.jobs }}}}"
    verify = jobs["verify"]
    assert verify["strategy"]["matrix"]["job"] == "${{ fromJSON(needs.plan.outputs.jobs) }}"
    assert "plan" in _needs(verify)
    run = _steps_running(verify, 'verify run "$JOB"')
    assert run and run[0]["env"]["JOB"] == "${{ matrix.job }}"
    site = jobs["site"]
    assert "verify" in _needs(site)
    commands = [s.get("run", "") for s in site["steps"]]
    check = next(i for i, c in enumerate(commands) if "verify check" in c)
    build = next(i for i, c in enumerate(commands) if "mkdocs build --strict" in c)
    assert check < build, "the drift check runs before the site is built"


def test_main_is_published_from_committed_evidence_after_the_tests_only():
    workflow = _workflow("verify.yml")
    jobs = workflow["jobs"]
    deploy = jobs["deploy"]
    assert deploy["if"] == MAIN_ONLY and deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert workflow["permissions"] == {"contents": "read"}, "only the deploy job may write Pages"
    upstream = _upstream(jobs, "deploy")
    assert "tests" in upstream, "a push whose tests fail must not deploy"
    assert not upstream & {"verify", "site", "plan"}, "fresh measurements never gate publishing what main holds"
    # The job that builds what is deployed: the docs extra only, the drift check, a strict build.
    builder = next(name for name in _needs(deploy))
    steps = jobs[builder]["steps"]
    build = next(s for s in steps if "mkdocs" in s.get("run", "") and "build --strict" in s["run"])
    assert re.search(r'pip" install -q -c verify/requirements.lock -e "\.\[docs\]"', build["run"]), \
        "the docs extra and nothing else, at the lock's versions"
    assert "verify\" check" in build["run"] and build["run"].index("check") < build["run"].index("build --strict")
    assert "download-artifact" not in json.dumps(steps), "built from the checkout, not from fresh evidence"
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "site/" and upload["if"] == MAIN_ONLY
    assert build["env"]["SITE_URL"] == "${{ steps.pages.outputs.base_url }}"
    assert "gh api \"repos/$REPO/pages\" --jq .html_url" in next(s for s in steps if s.get("id") == "pages")["run"]


def test_deploys_are_never_cancelled_and_pull_request_runs_are():
    workflow = _workflow("verify.yml")
    on = workflow[True]  # YAML reads the key `on` as true
    assert on["push"] == {"branches": ["main"]}, "pushes to other branches run as their pull request, not twice"
    assert "pull_request" in on and "workflow_dispatch" in on
    concurrency = workflow["concurrency"]
    assert concurrency["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"
    assert "github.event.pull_request.number" in concurrency["group"]
    assert "github.run_id" in concurrency["group"], "runs on main share no group, so none cancels another"
    assert _jobs("verify.yml")["deploy"]["concurrency"] == {"group": "pages", "cancel-in-progress": False}


# --- the site, built as the deploy job builds it -------------------------------------------------

@pytest.fixture(scope="module")
def docs_only_venv(tmp_path_factory):
    """A fresh virtual environment with only the docs extra, as the publishing job makes it."""
    venv = tmp_path_factory.mktemp("docs-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    out = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "-c", "verify/requirements.lock", "-e", ".[docs]"], cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return venv


@pytest.mark.build
def test_the_site_builds_from_committed_evidence_with_only_the_docs_extra(docs_only_venv, tmp_path):
    bin_dir = docs_only_venv / "bin"
    missing = subprocess.run([str(bin_dir / "python"), "-c", "import httpx"], capture_output=True)
    assert missing.returncode != 0, "the docs extra grew a client library: this test no longer shows the point"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SITE_URL": "https://owner.github.io/repository/"}
    check = subprocess.run([str(bin_dir / "verify"), "check"], cwd=ROOT, capture_output=True, text=True, env=env,
                           timeout=300)
    assert check.returncode == 0, check.stderr[-3000:]
    site = tmp_path / "site"
    build = subprocess.run([str(bin_dir / "mkdocs"), "build", "--strict", "-d", str(site)], cwd=ROOT,
                           capture_output=True, text=True, env=env, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    # Every record at the URL the pages link, and the published address in the pages.
    from verify.registry import all_jobs
    for job in all_jobs():
        assert (site / "evidence" / job / "cpu.json").is_file(), job
    assert 'href="https://owner.github.io/repository/streaming/"' in (site / "streaming" / "index.html").read_text()
    assert 'href="/repository/assets/' in (site / "404.html").read_text(), "the 404 page finds its styles on a project site"


# --- the GPU workflow -----------------------------------------------------------------------------

def test_gpu_workflow_runs_the_t4_profile_on_a_self_hosted_runner_without_secrets():
    workflow = _workflow("gpu-t4.yml")
    assert set(workflow[True]) == {"schedule", "workflow_dispatch"}, "never pull requests on a self-hosted runner"
    gate, job, propose = (workflow["jobs"][n] for n in ("runner", "t4", "propose"))
    assert gate["runs-on"] == "ubuntu-24.04" and gate["timeout-minutes"] <= 5, "the online check runs on a hosted runner"
    assert job["needs"] == "runner" and "needs.runner.outputs.online == 'true'" in job["if"]
    assert "self-hosted" in job["runs-on"] and "t4" in job["runs-on"]
    assert job["permissions"] == {"contents": "read"}, "the self-hosted job gets a read-only token"
    assert "secrets." not in json.dumps(job) and "vars." not in json.dumps(job), "no secret reaches the GPU runner"
    commands = [s.get("run", "") for s in job["steps"]]
    check = next(i for i, c in enumerate(commands) if "check_gpu_runner.sh" in c)
    assert check < next(i for i, c in enumerate(commands) if "pip" in c and "install" in c)
    assert _steps_running(job, "verify run --all --profile t4") and _steps_running(job, "verify check --profile t4")
    assert not _steps_running(job, "propose_evidence.sh")
    # The pull request is opened by a hosted job, from the artifact, with the secrets of an environment.
    assert propose["runs-on"] == "ubuntu-24.04" and propose["needs"] == "t4" and propose["environment"] == "evidence"
    download = next(s for s in propose["steps"] if s.get("uses", "").startswith("actions/download-artifact@"))
    assert download["with"] == {"name": "evidence-t4", "path": "docs/evidence"}
    step = next(s for s in propose["steps"] if "propose_evidence.sh" in s.get("run", ""))
    assert step["env"]["PROFILE"] == "t4" and step["env"]["CHECK_OUTCOME"] == "${{ needs.t4.outputs.check }}"
    assert gate["environment"] == "gpu-runner-status"


def test_no_gpu_stack_goes_into_the_repository_cache():
    text = (ROOT / ".github" / "workflows" / "gpu-t4.yml").read_text()
    assert "actions/cache" not in text, "the CUDA stack (several GB) would evict the CPU caches"


def _runner_step() -> str:
    return next(s for s in _jobs("gpu-t4.yml")["runner"]["steps"] if s.get("id") == "look")["run"]


@pytest.mark.parametrize("gh_script, online, notice", [
    ("echo 'HTTP 403: Resource not accessible' >&2; exit 1", "false", "could not ask GitHub"),
    ("echo 1", "true", None),
    ("echo 0", "false", "no runner labelled t4 is online"),
])
def test_the_runner_check_reports_a_failing_gh_as_a_notice(tmp_path, gh_script, online, notice):
    """The step as the runner runs it (bash -e), with a stand-in gh: a failing call is a notice, not a failure."""
    fake = tmp_path / "bin" / "gh"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\n{gh_script}\n")
    fake.chmod(0o755)
    output = tmp_path / "output"
    env = {"PATH": f"{fake.parent}:{os.environ['PATH']}", "GH_TOKEN": "t", "REPO": "o/r", "GITHUB_OUTPUT": str(output)}
    r = subprocess.run(["bash", "-e", "-c", _runner_step()], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    assert output.read_text().strip() == f"online={online}"
    if notice:
        assert "::notice::" in r.stdout and notice in r.stdout


# --- caches and the scheduled workflows -----------------------------------------------------------

def _installs(step: dict) -> bool:
    run = step.get("run", "")
    return "bootstrap.sh" in run or "verify prepare" in run or (".venv/bin/pip" in run)


def _restores_cache(step: dict) -> bool:
    return step.get("uses", "").startswith(("actions/cache/restore@", "actions/cache@"))


@pytest.mark.parametrize("workflow", ["verify.yml", "releases.yml"])
def test_every_job_that_installs_the_stack_restores_the_cache_first(workflow):
    for name, job in _jobs(workflow).items():
        steps = job.get("steps", [])
        installs = [i for i, s in enumerate(steps) if _installs(s)]
        if not installs:
            continue
        restores = [i for i, s in enumerate(steps) if _restores_cache(s)]
        assert restores and restores[0] < installs[0], f"{workflow}: job {name} installs before restoring the cache"


def test_release_workflow_bisects_the_releases_on_a_schedule_and_proposes_a_pr():
    text = (ROOT / ".github" / "workflows" / "releases.yml").read_text()
    on = yaml.safe_load(text)[True]
    assert set(on) == {"schedule", "workflow_dispatch"}, "the releases run on a schedule and on demand only"
    assert "verify prepare --profile cpu-oldest" in text and "verify releases --remove-environments" in text
    assert "path: .venvs" in text, "the release's own environment is cached"
    assert "propose_evidence.sh" in text and "PIP_NO_CACHE_DIR" in text
    push = (ROOT / ".github" / "workflows" / "verify.yml").read_text()
    assert "cpu-oldest" not in push, "the push workflow keeps running the default profile only"


def test_one_cache_key_from_the_environments_inputs():
    jobs = _jobs("verify.yml")
    key_step = next(s for s in jobs["env"]["steps"] if s.get("id") == "key")
    inputs = key_step["env"]["INPUTS"]
    for source in ("pyproject.toml", "verify/requirements.lock", "verify/bootstrap.sh", "verify/live/model.py"):
        assert source in inputs
    # A venv links its interpreter by path: the key names the runner image and the exact Python.
    assert "steps.py.outputs.python-version" in key_step["env"]["PYTHON"]
    assert "ImageOS" in key_step["run"] and "ImageVersion" in key_step["run"] and "$PYTHON" in key_step["run"]
    for name, job in jobs.items():
        for step in job.get("steps", []):
            if _restores_cache(step) and name != "env":
                assert step["with"]["key"] == "${{ needs.env.outputs.key }}", name
                assert "env" in _needs(job), name


def test_pull_requests_never_write_the_cache():
    for workflow in WORKFLOWS:
        on = yaml.safe_load(workflow.read_text()).get(True) or {}
        for name, job in yaml.safe_load(workflow.read_text())["jobs"].items():
            for step in job.get("steps", []):
                if step.get("uses", "").startswith("actions/cache/save@") and ("pull_request" in on):
                    assert "github.event_name != 'pull_request'" in step.get("if", ""), f"{workflow.name}: {name}"


def test_scheduled_workflows_upload_the_evidence_whatever_happens():
    for name, job_id, artifact in (("releases.yml", "releases", "evidence-releases"), ("gpu-t4.yml", "t4", "evidence-t4")):
        job = _jobs(name)[job_id]
        upload = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
        assert upload["if"] == "always()" and upload["with"]["name"] == artifact
    for name, job_id, profile in (("releases.yml", "releases", "releases"), ("gpu-t4.yml", "propose", "t4")):
        job = _jobs(name)[job_id]
        propose = next(s for s in job["steps"] if "propose_evidence.sh" in s.get("run", ""))
        assert propose["env"]["PROFILE"] == profile
        assert "steps.app.outputs.token" in propose["env"]["GH_TOKEN"]
        assert job["permissions"]["actions"] == "write", "starting the checks on the branch needs actions: write"
