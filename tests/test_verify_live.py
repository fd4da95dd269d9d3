"""The verify stage against the suite's live server: records, freshness, interruption."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time

import pytest

from tests.conftest import ROOT, VERIFY, run_verify
from verify.paths import EVIDENCE

pytestmark = pytest.mark.live


def test_a_job_run_records_data_verdicts_and_provenance(live_server, tmp_path):
    out = run_verify("run", "httpx-close", "--all", "--server-url", live_server.url, "--evidence-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "wall time" in out.stdout and "httpx-close" in out.stdout
    record = json.loads((tmp_path / "httpx-close" / "cpu.json").read_text())
    # The verdicts follow from the data recorded with them, and this live run agrees with the committed one.
    from verify.registry import all_jobs
    assert all_jobs()["httpx-close"].decide(record["data"]) == record["claims"]
    committed = json.loads((EVIDENCE / "httpx-close" / "cpu.json").read_text())
    assert {k: v["verdict"] for k, v in record["claims"].items()} == \
        {k: v["verdict"] for k, v in committed["claims"].items()}
    assert record["data"]["samples"] and record["data"]["close_seconds"] >= 0
    prov = record["provenance"]
    assert prov["server"]["version"] and prov["server"]["models"][0]["id"] == "chat"
    assert prov["hardware"]["cores"] and prov["git"]["commit"] and prov["date"]
    # Fresh now: a second run does nothing, and needs no server.
    again = run_verify("run", "httpx-close", "--evidence-dir", str(tmp_path), "--server-url", "http://127.0.0.1:9")
    assert again.returncode == 0 and "nothing to run" in again.stdout


def test_an_interrupted_run_keeps_the_previous_record(live_server, tmp_path):
    shutil.copytree(EVIDENCE / "stream-timing", tmp_path / "stream-timing")
    before = {p.name: p.read_bytes() for p in (tmp_path / "stream-timing").iterdir()}
    proc = subprocess.Popen([*VERIFY, "run", "stream-timing", "--all", "--server-url", live_server.url,
                             "--evidence-dir", str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    line = ""
    while time.monotonic() < deadline and "[stream-timing]" not in line:
        line = proc.stdout.readline()
    time.sleep(3)  # mid-job
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    after = {p.name: p.read_bytes() for p in (tmp_path / "stream-timing").iterdir()}
    assert after == before
    from verify.measure.metrics import wait_idle
    wait_idle(live_server.url)


def _notebook_with_first_cell(tmp_path, source: str):
    nb_dir = tmp_path / "snippets"
    shutil.copytree(ROOT / "snippets", nb_dir)
    notebook = nb_dir / "getting-started" / "getting_started.ipynb"
    nb = json.loads(notebook.read_text())
    code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    code["source"] = source
    notebook.write_text(json.dumps(nb))
    from verify.runner.context import RunContext

    class EditedSnippets(RunContext):
        def snippet_path(self, relative):
            return nb_dir / relative
    return EditedSnippets


def test_a_notebook_cell_that_raises_refutes_the_claim_naming_the_error(live_server, tmp_path):
    from verify.jobs.getting_started import getting_started_notebook as job_module
    context = _notebook_with_first_cell(tmp_path, "raise RuntimeError('a broken cell')")
    data = job_module.collect(context(server=live_server))
    verdict = job_module.JOB.decide(data)["getting-started-notebook.runs"]
    assert verdict["verdict"] == "refuted"
    assert "a broken cell" in verdict["because"]


def test_a_notebook_that_cannot_reach_the_server_is_inconclusive(live_server, tmp_path):
    from verify.jobs.getting_started import getting_started_notebook as job_module
    context = _notebook_with_first_cell(
        tmp_path, "import openai\nopenai.OpenAI(base_url='http://127.0.0.1:9/v1', api_key='x', max_retries=0)"
                  ".models.list()")
    data = job_module.collect(context(server=live_server))
    verdict = job_module.JOB.decide(data)["getting-started-notebook.runs"]
    assert verdict["verdict"] == "inconclusive"
    assert "APIConnectionError" in verdict["because"]


SHAREABLE = ("tokenisation", "parameter-validation", "detokenisation", "untrusted-output")


def test_jobs_that_share_the_server_give_the_same_verdicts_side_by_side_as_alone(live_server, tmp_path):
    from verify.registry import all_jobs
    assert all(all_jobs()[j].shares_server for j in SHAREABLE)
    together, alone = tmp_path / "together", tmp_path / "alone"
    out = run_verify("run", *SHAREABLE, "--all", "--server-url", live_server.url, "--evidence-dir", str(together))
    assert out.returncode == 0, out.stderr
    assert "side by side" in out.stdout
    for job_id in SHAREABLE:
        one = run_verify("run", job_id, "--all", "--server-url", live_server.url, "--evidence-dir", str(alone))
        assert one.returncode == 0, one.stderr
        assert "side by side" not in one.stdout
    for job_id in SHAREABLE:
        side = json.loads((together / job_id / "cpu.json").read_text())
        solo = json.loads((alone / job_id / "cpu.json").read_text())
        assert {c: v["verdict"] for c, v in side["claims"].items()} == \
            {c: v["verdict"] for c, v in solo["claims"].items()}, job_id
        # The record says what ran alongside it; the one run alone says nothing of the kind.
        assert set(side["provenance"]["ran_alongside"]["jobs"]) == set(SHAREABLE) - {job_id}
        assert "ran_alongside" not in solo["provenance"]
