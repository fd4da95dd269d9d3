"""The symptom index's vllm_command.sh (vllm-command-fails), as a reader runs it from a checkout: on the CPU
build the tests run on, it shows the symptom itself (the `vllm` console script ends in PackageNotFoundError).
It needs no server, only vLLM's imports (about 20 s), so it is in the stack tier, beside the live tests
rather than after them."""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.stack


def test_vllm_command_sh_shows_the_cpu_build_failing():
    out = subprocess.run(["bash", str(ROOT / "snippets" / "symptoms" / "vllm_command.sh")], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "PackageNotFoundError" in out.stdout.strip().splitlines()[-1], out.stdout[-2000:]
