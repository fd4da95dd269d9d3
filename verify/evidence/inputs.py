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

Code is hashed by meaning, not bytes (`code_hash`): the syntax tree without docstrings,
comments, formatting or line numbers, with private names (`_helper`) numbered in order of use,
import statements reduced to the names they bind, and without a claim's `timing=` keyword (how a
differing verdict is read, not how it is decided). A reformatted file, a renamed helper or an import
from a module that moved leaves the hash as it was; a changed constant, condition or call changes
it. Code inputs are compared as a set of hashes, so a file that moved and defines the same thing
is the same input. Every other file (snippets, configs) is hashed by its bytes: it is shown to
readers or read by a program as it is.

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


# Bump when the record format changes in a way that needs fresh records.
CODE_HASH = "ast-1:"  # the prefix of a code hash: which normalisation made it


def is_code(path: Path) -> bool:
    """Python files of the verify stage: hashed by meaning."""
    try:
        rel = path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return False
    return rel.startswith("verify/") and rel.endswith(".py")


def file_hash(path: Path) -> str:
    """An input's hash: code by its meaning (`code_hash`), every other file by its bytes."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return "missing"
    if is_code(path):
        try:
            return code_hash(data.decode("utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            pass  # not parseable: its bytes are all there is to compare
    return hashlib.sha256(data).hexdigest()


# A claim's timing kind (Claim.timing, verify/job.py) says how a differing verdict is read, never how it
# is decided: neither the field nor a claim's keyword setting it is part of what the code does, so
# marking a claim timing leaves every record fresh.
TIMING_CLASS, TIMING_FIELD = "Claim", "timing"


class _Meaning(ast.NodeTransformer):
    """What a module does, without what does not change it: docstrings, private names' spelling,
    the paths imports come from, a claim's timing kind."""

    def __init__(self):
        self.private: dict[str, str] = {}

    def _name(self, name: str | None) -> str | None:
        if name and name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
            return self.private.setdefault(name, f"_p{len(self.private)}")
        return name

    def _drop_docstring(self, node):
        body = getattr(node, "body", None)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return node

    def visit_Module(self, node):
        return self.generic_visit(self._drop_docstring(node))

    def visit_FunctionDef(self, node):
        node.name = self._name(node.name)
        return self.generic_visit(self._drop_docstring(node))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        if node.name == TIMING_CLASS:  # the field itself (a record may hash verify/job.py: the probe's does)
            node.body = [s for s in node.body if not (isinstance(s, ast.AnnAssign)
                                                      and isinstance(s.target, ast.Name) and s.target.id == TIMING_FIELD)]
        node.name = self._name(node.name)
        return self.generic_visit(self._drop_docstring(node))

    def visit_Name(self, node):
        node.id = self._name(node.id)
        return node

    def visit_Attribute(self, node):
        node.attr = self._name(node.attr)
        return self.generic_visit(node)

    def visit_arg(self, node):
        node.arg = self._name(node.arg)
        node.annotation = None
        return node

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id == TIMING_CLASS:  # Claim(..., timing=True)
            node.keywords = [k for k in node.keywords if k.arg != TIMING_FIELD]
        return self.generic_visit(node)

    def visit_keyword(self, node):
        node.arg = self._name(node.arg)
        return self.generic_visit(node)

    def visit_Import(self, node):
        # `import a.b` binds `a`; `import a.b as c` binds `c`: the binding is what the code uses.
        node.names = [ast.alias(name=self._name(a.asname or a.name.split(".")[0])) for a in node.names]
        return node

    def visit_ImportFrom(self, node):
        # Where a name comes from is not this module's meaning: a module the job depends on is an
        # input of its own (hashed by its content), and one that is not (verify/job.py) may move.
        node.module, node.level = None, 0
        node.names = [ast.alias(name=self._name(a.asname or a.name)) for a in node.names]
        return node

    def visit_AnnAssign(self, node):
        node.annotation = ast.Constant(value=None)  # annotations say nothing about what runs
        return self.generic_visit(node)


# A pure function of the text, asked for the same modules hundreds of times by one page build or
# one `verify check` (every claim's staleness): parsed once per distinct text.
@functools.lru_cache(maxsize=4096)
def code_hash(source: str) -> str:
    """The hash of what Python code does (see the module's docstring)."""
    tree = _Meaning().visit(ast.parse(source))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
    dumped = ast.dump(tree, annotate_fields=False, include_attributes=False)
    return CODE_HASH + hashlib.sha256(dumped.encode()).hexdigest()


def label_of(path: Path) -> str:
    return path.resolve().relative_to(ROOT).as_posix()


def _imported_code(path: Path) -> set[Path]:
    """verify/measure/*.py and verify/jobs/**.py files that the module at path imports (any form of
    import, at module level or inside a function): a job that borrows another job's helpers or
    thresholds depends on that module as much as on its own."""
    try:
        names = _imported_names(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return set()
    found = set()
    for name in names:
        if name.startswith((MEASURE_PACKAGE + ".", JOBS_PACKAGE + ".")):
            candidate = ROOT / (name.replace(".", "/") + ".py")
            if candidate.is_file():
                found.add(candidate)
    return found


@functools.lru_cache(maxsize=4096)
def _imported_names(source: str) -> frozenset[str]:
    """Every module name an import statement of the source names (parsed once per distinct text)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return frozenset(names)


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


def _code_hashes_now() -> set[str]:
    """The hash of every module of the verify stage as it is now (for declared modules that moved)."""
    return {file_hash(p) for p in (ROOT / "verify").rglob("*.py")}


def _is_code_label(label: str) -> bool:
    return label.startswith("verify/") and label.endswith(".py")


def _same_code(recorded: dict[str, str], now: dict[str, str]) -> bool:
    """Whether the code the record used is the code now, wherever each file lives: the job's own code
    (`now`) and the modules it declared it loads (read where they are, or found by their hash elsewhere
    in the tree when they moved) hold the same set of hashes as recorded."""
    from collections import Counter
    was = Counter(v for label, v in recorded.items() if _is_code_label(label))
    cur = Counter(v for label, v in now.items() if _is_code_label(label))
    for label in recorded:
        if _is_code_label(label) and label not in now and (ROOT / label).is_file():
            cur[file_hash(ROOT / label)] += 1  # a declared module where it was
    if cur - was:
        return False  # code that is new or changed
    return all(value in _code_hashes_now() for value in (was - cur))  # the rest moved, unchanged


def changed(recorded: dict[str, str] | None, job, profile) -> list[str]:
    """Labels of inputs that differ now from when the record was made (new, gone or edited)."""
    if not recorded:
        return ["(the record has no inputs)"]
    now = static_inputs(job, profile)
    if _same_code(recorded, now):
        recorded = {k: v for k, v in recorded.items() if not (k.startswith("verify/") and k.endswith(".py"))}
        now = {k: v for k, v in now.items() if not (k.startswith("verify/") and k.endswith(".py"))}
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
