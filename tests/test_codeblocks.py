"""The code blocks of every page, run by pytest-codeblocks against the live server.

Pages include their code from snippets/ with `--8<--` lines, which
pytest-codeblocks does not expand; this test expands them, exactly as the
build does, and runs the resulting Markdown. Blocks that start a server
(snippets/server/) are skipped: the suite already has one. Blocks of the offline
engine (snippets/offline/) are run by their jobs, which load the model in-process.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.live
# Blocks that start a server, load a model in-process, need the server's model folder as a
# tokenizer or a benchmark tool's own environment, read a benchmark's saved file, or run from a checkout (the probe command, run by probe-tls-default): their jobs run them (the suite's server is already up and the hub is out of reach).
# lora/serve_lora.sh starts the lora variant's server: its flags are checked by tests/test_server_commands.py
# and the variant serves every LoRA job.
RUN_BY_THEIR_JOBS = ("server/", "offline/", "lora/serve_lora.sh", "prefill-decode/vllm_bench.py", "streaming/probe.sh",
                     "latency/bench_serve.py", "latency/guidellm_run.sh", "latency/recompute.py")
INCLUDE = re.compile(r'^(?P<indent>\s*)--8<-- "(?P<path>[^"]+)"\s*$')
FENCE = re.compile(r"^\s*```")


def expand(markdown: str) -> str:
    out = []
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        m = INCLUDE.match(line)
        if m:
            text = (ROOT / "snippets" / m.group("path")).read_text()
            out.extend(m.group("indent") + t for t in text.rstrip("\n").splitlines())
            continue
        # A fence whose first line includes one of those: mark it skipped.
        if FENCE.match(line) and i + 1 < len(lines) and any(f'"{p}' in lines[i + 1] for p in RUN_BY_THEIR_JOBS):
            out.append("<!--pytest.mark.skip-->")
            out.append("")
        out.append(line)
    return "\n".join(out) + "\n"


def test_every_page_code_block_runs(live_server, tmp_path):
    pages = sorted((ROOT / "docs").glob("*.md"))
    for page in pages:
        (tmp_path / page.name).write_text(expand(page.read_text()))
    env = {**os.environ, "BASE_URL": live_server.api}
    r = subprocess.run([sys.executable, "-m", "pytest", "--codeblocks", "-q", "-p", "no:cacheprovider",
                        "-o", "addopts=", "--rootdir", str(tmp_path), str(tmp_path)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:]
    summary = r.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary) and "failed" not in summary, summary
