"""What a record depends on, each input with its own hash, and which of them changed.

A record stores, label by label, the hash of everything that could change its outcome:

- code: the job's module, the shared builder its functions come from, and the
  measurement helpers (verify/measure/*) and other job modules (verify/jobs/*)
  those import, found by reading their import statements transitively: derived
  from the code, not listed by hand, so a change to one helper makes stale only
  the jobs that use it;
- files: every file the job opened through its context during the run
  (snippets, nginx configs, notebooks), recorded as they were opened
  (verify/runner/context.py refuses files opened behind its back);
- the engine: the full server command of the profile's variant, or the offline
  engine's arguments.

`changed(record_inputs, job, profile)` names every input whose hash differs now,
which `verify status`, `verify check`, `verify run` and the site all use.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import json
from pathlib import Path

from verify.paths import ROOT

# Bump when the record format changes in a way that needs fresh records.
RECORD_FORMAT = 2
MEASURE_PACKAGE = "verify.measure"
JOBS_PACKAGE = "verify.jobs"


def file_hash(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return "missing"


def label_of(path: Path) -> str:
    return path.resolve().relative_to(ROOT).as_posix()


def _imported_code(path: Path) -> set[Path]:
    """verify/measure/*.py and verify/jobs/**.py files that the module at path imports (any form of
    import, at module level or inside a function): a job that borrows another job's helpers or
    thresholds depends on that module as much as on its own."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    found = set()
    for name in names:
        if name.startswith((MEASURE_PACKAGE + ".", JOBS_PACKAGE + ".")):
            candidate = ROOT / (name.replace(".", "/") + ".py")
            if candidate.is_file():
                found.add(candidate)
    return found


def code_files(job) -> list[Path]:
    """The job's module, its shared builders, and the measurement helpers they import, transitively."""
    job_file = Path(job.module_file)
    functions = [job.collect, *(c.decide for c in job.claims)]
    files = {job_file}
    for f in functions:
        while isinstance(f, functools.partial):  # a rule made by a builder in another module
            f = f.func
        try:
            files.add(Path(inspect.getsourcefile(f)).resolve())
        except TypeError:  # a builtin or a functools.partial of one
            pass
    files = {f for f in files if f.is_relative_to(ROOT / "verify" / "jobs")}
    todo = list(files)
    while todo:
        for dep in _imported_code(todo.pop()):
            if dep not in files:
                files.add(dep)
                todo.append(dep)
    return sorted(files)


def engine_label(job, profile) -> str:
    from verify.job import OFFLINE
    return f"offline engine ({profile.name})" if job.engine == OFFLINE else \
        f"server command ({profile.name}, variant {job.variant})"


def engine_description(job, profile) -> dict:
    """What the engine is started with: hashed as one input, and kept in the record."""
    from verify.job import OFFLINE
    base = {"profile": profile.as_record()}
    if job.engine == OFFLINE:
        out = {**base, "offline_engine_args": {k: v for k, v in sorted(profile.offline_args().items())}}
        if job.server_phase:  # its server part runs on the run's default server
            out |= {"variant": "default", "command": profile.command("default")}
        return out
    out = {**base, "variant": job.variant, "command": profile.command(job.variant)}
    from verify.config.profiles import get_variant
    env = get_variant(job.variant).env
    return out | {"variant_env": dict(env)} if env else out  # only where set: other records' hashes stay


def _hash_value(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def static_inputs(job, profile) -> dict[str, str]:
    """The inputs known before running: record format, code and engine."""
    out = {"record format": str(RECORD_FORMAT)}
    out |= {label_of(p): file_hash(p) for p in code_files(job)}
    out[engine_label(job, profile)] = _hash_value(engine_description(job, profile))
    return out


def changed(recorded: dict[str, str] | None, job, profile) -> list[str]:
    """Labels of inputs that differ now from when the record was made (new, gone or edited)."""
    if not recorded:
        return ["(the record has no inputs)"]
    now = static_inputs(job, profile)
    out = []
    for label, value in now.items():
        if recorded.get(label) != value:
            out.append(label + (" (new)" if label not in recorded else ""))
    for label, value in recorded.items():
        if label in now:
            continue
        # A code file the job stopped importing needs no rule here: the file that imported it changed.
        # Code a job declares (what a child process it starts loads) is compared like any opened file.
        if label.startswith(("server command", "offline engine")):
            out.append(label + " (no longer used)")  # an engine the job no longer runs on
        elif not (ROOT / label).is_file():
            out.append(label + " (gone)")
        elif file_hash(ROOT / label) != value:
            out.append(label)
    return out


def digest(inputs: dict[str, str]) -> str:
    """One hash for the whole set (shown in records; freshness compares label by label)."""
    return _hash_value(inputs)
