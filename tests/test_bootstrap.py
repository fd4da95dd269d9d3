"""The bootstrap trusts an existing environment only if it runs here.

A cached environment links its interpreter by absolute path; when the runner image moves to
another Python patch release, a restored environment has no interpreter. These tests build a
small real environment (no pip, a stand-in vllm package), break it the way a moved image does,
and watch `bootstrap.sh` and the release environments notice.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from verify.config import releases

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def env(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "vllm").mkdir()
    (site / "vllm" / "__init__.py").write_text("__version__ = 'stand-in'\n")
    (venv / ".installed-0123456789abcdef").touch()
    return venv


def _status(venv: Path, *mode) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / "verify/bootstrap.sh"), *(mode or ("env-status",))], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "VERIFY_VENV": str(venv), "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
                               "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": ""})


def _break_interpreter(venv: Path) -> None:
    """What a moved runner image leaves: bin/python points at a Python that is no longer there."""
    for name in ("python", "python3"):
        (venv / "bin" / name).unlink()
        (venv / "bin" / name).symlink_to("/opt/hostedtoolcache/Python/3.11.0/x64/bin/python3.11")


def test_a_working_environment_is_trusted(env):
    r = _status(env)
    assert (r.returncode, r.stdout.strip()) == (0, "ok"), r.stderr
    assert releases.runs(env)


def test_an_environment_whose_interpreter_is_gone_is_rebuilt(env):
    _break_interpreter(env)
    r = _status(env)
    assert (r.returncode, r.stdout.strip()) == (1, "rebuild: its interpreter does not start")
    assert not releases.runs(env)


def test_an_environment_that_cannot_import_vllm_is_rebuilt(env):
    site = next((env / "lib").glob("python3*/site-packages"))
    (site / "vllm" / "__init__.py").write_text("raise ImportError('a damaged install')\n")
    r = _status(env)
    assert (r.returncode, r.stdout.strip()) == (1, "rebuild: it cannot import vllm")


def test_install_removes_a_broken_environment_and_starts_again(env):
    """The install step itself: it names the problem, removes the environment and creates a new one
    (the package install then fails here, with no index to install from, which ends the test)."""
    _break_interpreter(env)
    r = _status(env, "install")
    out = r.stdout + r.stderr
    assert "does not run here (its interpreter does not start); rebuilding it" in out, out[-2000:]
    assert f"creating {env}" in out, out[-2000:]
    assert r.returncode != 0  # no index: the reinstall cannot finish here
    assert (env / "bin" / "python").resolve().exists()  # a fresh environment with a working interpreter
    assert not list(env.glob(".installed-*"))


def _pins(lines) -> dict[str, str]:
    pins = {}
    for line in lines:
        m = re.match(r"\s*([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s;#]+)", line)
        if m:
            pins[re.sub(r"[-_.]+", "-", m[1]).lower()] = m[2]
    return pins


def test_the_lock_pins_what_pyproject_pins_and_only_the_cpu_stack():
    """The install is the lock (verify/requirements.lock); a pin changed in pyproject.toml without
    `bash verify/bootstrap.sh lock` would install the old version, so the two must agree."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    extras = re.search(r'^extras="([^"]+)"', (ROOT / "verify/bootstrap.sh").read_text(), re.M)[1].split(",")
    lock = _pins((ROOT / "verify/requirements.lock").read_text().splitlines())
    wanted = _pins(req for extra in extras for req in project[extra])
    assert wanted and all(lock.get(name) == version for name, version in wanted.items()), \
        {n: (v, lock.get(n)) for n, v in wanted.items() if lock.get(n) != v}
    assert lock["torch"].endswith("+cpu"), "the CPU build of torch, not a CUDA one"
    assert not {"torchvision", "torchaudio", "torchcodec"} & set(lock), "CUDA builds that break transformers"
    assert len(lock) > 200, "every transitive version, not only the direct ones"
