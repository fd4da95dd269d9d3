"""`verify migrate --from REV`: carry committed records across a change that moved code, not measurement.

A record is stale when any code it was made by has changed (verify/evidence/inputs.py).
Some changes touch those files without touching what they measure or decide: a
presentation function moved out of a job module, a module renamed. Re-measuring every
job on every profile for that costs an hour of live runs and proves nothing new, so this
command proves instead, record by record, that nothing the record depends on changed:

1. the record was fresh at REV: every input it names had, at REV, the hash it recorded;
2. the code that made it is the same now, compared as syntax trees (docstrings aside,
   after the renames declared in RENAMES): in each job file, every definition reachable
   from the job (its `JOB`, its `collect`, its rules and what they use) equals its
   definition at REV; every measurement module equals its version at REV; a module that
   is new holds only definitions moved, unchanged, from the module named in MOVED;
3. the rules, run now on the recorded data, give exactly the recorded verdicts and reasons.

Only then are the record's code hashes replaced by today's, with a note in the record
(`migrations`) saying from which commit, why, and which inputs were re-hashed. Its data,
claims and provenance are not touched. A record that fails any step is left alone and
named, so it stays stale until a run measures it again.
"""

from __future__ import annotations

import ast
import hashlib
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from verify.config.profiles import PROFILES
from verify.errors import VerifyError
from verify.evidence import inputs as input_hashes
from verify.evidence import store
from verify.evidence.provenance import utc_now
from verify.paths import ROOT
from verify.registry import all_jobs

# The one move this command knows: from this commit, presentation left the job modules.
MOVE_FROM = "ebd6e4189de1f91f5255cf194183b8b6fefd96ed"
WHY = "presentation moved out of the job modules into verify/site/views; modules renamed; no measurement changed"

# Text renames applied to the code at REV before it is compared: (pattern, replacement).
RENAMES = [
    (r"verify\.live\.profiles", "verify.config.profiles"),
    (r"verify\.live\.releases", "verify.config.releases"),
    (r"verify\.live import profiles", "verify.config import profiles"),
    (r"verify\.live import releases", "verify.config import releases"),
    (r"verify\.context", "verify.runner.context"),
    (r"verify\.live\.offline", "verify.runner.offline"),
    (r"verify\.measure\.probe import probe", "verify.measure.request import send"),
    (r"(?<![\w.])probe\(\"", "send(\""),
    (r"\brender\.ms\(", "units.ms("),
    (r"def probe\(method", "def send(method"),
]
# An input label that was renamed: label now -> label at REV.
LABEL_RENAMES = {"verify/measure/request.py": "verify/measure/probe.py"}
# A code input that is new: its definitions were moved, unchanged, from this file at REV.
MOVED = {"verify/measure/units.py": "verify/site/html.py"}
# Keywords of Job(...) that hold presentation or headline figures, which no record depends on,
# and the builder parameter that passes the headline through.
UNHASHED_KEYWORDS = {"fragments", "artifacts", "page_files", "headline"}


class NotProven(Exception):
    """The migration cannot show that the record still stands."""


def _git_show(rev: str, label: str) -> str | None:
    out = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{label}"], capture_output=True, text=True)
    return out.stdout if out.returncode == 0 else None


def _renamed(source: str) -> str:
    for pattern, repl in RENAMES:
        source = re.sub(pattern, repl, source)
    return source


def _calls_job(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id == "Job") or
        (isinstance(node.func, ast.Attribute) and node.func.attr == "Job"))


class _Normalise(ast.NodeTransformer):
    """Docstrings removed, and what no record depends on: the presentation and headline keywords of
    Job(...) calls, and the `headline` parameter of a function that builds a Job (it only passes
    headline figures through). Nothing else is touched."""

    def _strip_docstring(self, node):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return node

    def visit_Module(self, node):
        self.generic_visit(node)
        return self._strip_docstring(node)

    def visit_FunctionDef(self, node):
        builds_job = any(_calls_job(n) for n in ast.walk(node))
        self.generic_visit(node)
        if builds_job and any(a.arg == "headline" for a in node.args.args):
            args = node.args.args
            defaults = [None] * (len(args) - len(node.args.defaults)) + list(node.args.defaults)
            kept = [(a, d) for a, d in zip(args, defaults) if a.arg != "headline"]
            node.args.args = [a for a, _ in kept]
            node.args.defaults = [d for _, d in kept if d is not None]
        return self._strip_docstring(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self.generic_visit(node)
        return self._strip_docstring(node)

    def visit_Call(self, node):
        self.generic_visit(node)
        if _calls_job(node):
            node.keywords = [k for k in node.keywords if k.arg not in UNHASHED_KEYWORDS]
        return node


def _tree(source: str) -> ast.Module:
    return _Normalise().visit(ast.parse(source))


def _bound_names(node: ast.AST) -> list[str]:
    """The module-level names a top-level statement binds (imports, defs, plain assignments)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


class NotComparable(Exception):
    """A module whose top level is not only imports, definitions and plain assignments."""


def _nodes(tree: ast.Module) -> dict[str, list[ast.AST]]:
    """Every binding of each top-level name, in order (a name bound twice keeps both).

    Anything else at the top level (an if/try/for/with block, `X += 1`, `X["k"] = 1`, a bare
    call) could change what a name means without a binding of its own: such a module cannot be
    compared definition by definition (NotComparable; compare_job_file then needs the whole file).
    """
    out: dict[str, list[ast.AST]] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            def plain(t):  # NAME, or a tuple or list of them (A, B = 1, 2)
                return isinstance(t, ast.Name) or (isinstance(t, (ast.Tuple, ast.List)) and all(map(plain, t.elts)))
            if not all(plain(t) for t in targets):
                raise NotComparable(ast.unparse(node)[:80])
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                                   ast.ImportFrom)):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # a string on its own: no effect
            raise NotComparable(ast.unparse(node)[:80])
        for name in _bound_names(node):
            out.setdefault(name, []).append(node)
    return out


def _definitions(tree: ast.Module) -> dict[str, str]:
    """Each top-level name with every statement that binds it, as a syntax-tree dump."""
    return {name: "\n".join(ast.dump(n) for n in nodes) for name, nodes in _nodes(tree).items()}


def _job_module_imports(tree: ast.Module) -> dict[str, str]:
    """Local names bound to verify.jobs modules or their members: name -> 'module' or 'module:member'."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            raise NotComparable("a relative import")
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("verify.jobs"):
            for a in node.names:
                if a.name == "*":
                    raise NotComparable(f"from {node.module} import *")
                candidate = f"{node.module}.{a.name}"
                is_module = (ROOT / (candidate.replace(".", "/") + ".py")).is_file()
                out[a.asname or a.name] = candidate if is_module else f"{node.module}:{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("verify.jobs"):
                    if not a.asname:
                        raise NotComparable(f"import {a.name} (without a name of its own)")
                    out[a.asname] = a.name
    return out


def _measure_import(nodes: list[ast.AST]) -> bool:
    """A name bound only by imports of verify.measure modules: those modules are compared as inputs."""
    def is_measure(n):
        if isinstance(n, ast.ImportFrom):
            return bool(n.module) and (n.module == "verify.measure" or n.module.startswith("verify.measure."))
        return isinstance(n, ast.Import) and all(a.name.startswith("verify.measure.") for a in n.names)
    return all(is_measure(n) for n in nodes)


def reachable(source: str, roots: set[str]) -> tuple[set[str], dict[str, set[str]]]:
    """Top-level names reachable from roots in one module, and the names it reaches in other job modules
    (module path label -> names). A root the module does not define is NotComparable."""
    tree = _tree(source)
    nodes, imports = _nodes(tree), _job_module_imports(tree)
    missing = roots - set(nodes)
    if missing:
        raise NotComparable(f"{', '.join(sorted(missing))} not defined at the top level")
    seen, todo, elsewhere = set(), list(roots), {}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for node in nodes[name]:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name):
                    if sub.id in imports and ":" in imports[sub.id]:
                        module, member = imports[sub.id].split(":")
                        elsewhere.setdefault(module.replace(".", "/") + ".py", set()).add(member)
                    if sub.id in nodes and sub.id not in seen:
                        todo.append(sub.id)
                elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and \
                        sub.value.id in imports and ":" not in imports[sub.value.id]:
                    elsewhere.setdefault(imports[sub.value.id].replace(".", "/") + ".py", set()).add(sub.attr)
    return seen, elsewhere


def compare_job_file(old: str, new: str, roots: set[str]) -> list[str]:
    """Names reachable from roots in the new source whose bindings differ from the old source's (an
    import included); a name bound only by an import of a verify.measure module is compared through
    that module, an input of its own. A module that cannot be compared definition by definition is
    compared whole (["(the whole file)"] when it differs)."""
    try:
        old_tree, new_tree = _tree(_renamed(old)), _tree(new)
        old_defs, new_defs, new_nodes = _definitions(old_tree), _definitions(new_tree), _nodes(new_tree)
        names, _ = reachable(new, roots)
    except NotComparable:
        return [] if compare_whole(old, new) else ["(the whole file)"]
    return sorted(n for n in names if old_defs.get(n) != new_defs.get(n) and not _measure_import(new_nodes[n]))


def old_source_of(rev: str, label: str) -> str:
    return _git_show(rev, LABEL_RENAMES.get(label, label)) or ""


def compare_whole(old: str, new: str) -> bool:
    return ast.dump(_tree(_renamed(old))) == ast.dump(_tree(new))


def compare_moved(old_home: str, new: str) -> list[str]:
    """Definitions of a new module that are not, unchanged, in the module they were moved from."""
    home, defs = _definitions(_tree(old_home)), _definitions(_tree(new))
    return sorted(n for n, d in defs.items() if home.get(n) != d)


@dataclass
class Outcome:
    job: str
    profile: str
    migrated: bool
    detail: str


def _roots_by_file(job) -> dict[str, set[str]]:
    """Where the job's own code starts: JOB in its module, and what it reaches in other job modules."""
    label = input_hashes.label_of(Path(job.module_file))
    roots: dict[str, set[str]] = {label: {"JOB"}}
    todo = [label]
    while todo:
        f = todo.pop()
        if not (ROOT / f).is_file():
            continue
        try:
            _, elsewhere = reachable((ROOT / f).read_text(encoding="utf-8"), roots[f])
        except NotComparable:
            continue  # compared whole (compare_job_file)
        for other, names in elsewhere.items():
            if not names <= roots.get(other, set()):
                roots[other] = roots.get(other, set()) | names
                todo.append(other)
    return roots


def _is_code(label: str) -> bool:
    return label.startswith("verify/")


def _is_engine(label: str) -> bool:
    return label.startswith(("server command", "offline engine", "record format"))


def prove(job, profile_name: str, record: dict, rev: str) -> list[str]:
    """The code input labels to re-hash, or NotProven saying what stands in the way."""
    profile = PROFILES[profile_name]
    recorded = record.get("inputs") or {}
    now = input_hashes.static_inputs(job, profile)
    # 1. Fresh at rev: every recorded input had the recorded hash there (code) or has it now (files opened).
    for label, value in recorded.items():
        if _is_engine(label):
            if now.get(label) != value:
                raise NotProven(f"{label} differs from the record: not a code move")
        elif _is_code(label):
            old = _git_show(rev, label)
            if old is None or hashlib.sha256(old.encode()).hexdigest() != value:
                raise NotProven(f"{label} at {rev} is not what the record was made with: the record was stale already")
        elif input_hashes.file_hash(ROOT / label) != value:
            raise NotProven(f"{label} changed since the record was made (a file the job opened)")
    # 2. The code that made it is the same.
    roots = _roots_by_file(job)
    changed = []
    renamed_from = set(LABEL_RENAMES.values())
    for label in sorted({k for k in now if _is_code(k)} | {k for k in recorded if _is_code(k)}):
        old_label = LABEL_RENAMES.get(label, label)
        in_now, was_recorded = label in now, old_label in recorded
        if label in renamed_from and not in_now:
            changed.append(label)  # the old name of a renamed module, compared under its new name
            continue
        if not in_now:
            # Code the job declared it loads (a child process's modules): the same file, unchanged.
            if not (ROOT / label).is_file() or not compare_whole(old_source_of(rev, label),
                                                                 (ROOT / label).read_text(encoding="utf-8")):
                raise NotProven(f"{label}, which the job loads, changed since {rev}")
            if input_hashes.file_hash(ROOT / label) != recorded[label]:
                changed.append(label)
            continue
        if was_recorded and old_label == label and recorded[label] == now[label]:
            continue
        changed.append(label)
        new_source = (ROOT / label).read_text(encoding="utf-8")
        if not was_recorded:
            if label not in MOVED:
                raise NotProven(f"{label} is a new input of the job: the record does not say which version "
                                f"it was made with")
            bad = compare_moved(_git_show(rev, MOVED[label]) or "", new_source)
            if bad:
                raise NotProven(f"{label}: {', '.join(bad)} not moved unchanged from {MOVED[label]}")
            continue
        old_source = old_source_of(rev, label)
        if label.startswith("verify/measure/"):
            if not compare_whole(old_source, new_source):
                raise NotProven(f"{label} changed since {rev}")
        elif label not in roots:
            if not compare_whole(old_source, new_source):
                raise NotProven(f"{label} changed since {rev}, and none of its definitions is reached from the job")
        else:
            bad = compare_job_file(old_source, new_source, roots[label])
            if bad:
                raise NotProven(f"{label}: {', '.join(bad)} changed since {rev}")
    # 3. The rules give the recorded verdicts, word for word.
    decided = job.decide(record["data"])
    if decided != record["claims"]:
        differ = [c for c in record["claims"] if decided.get(c) != record["claims"][c]]
        raise NotProven(f"the rules now decide {', '.join(differ)} differently from the record")
    return changed


def carried_inputs(record: dict, job, profile_name: str) -> dict[str, str]:
    """The record's inputs after the move: today's code and engine hashes; the files it opened and the
    code it declared it loads keep their labels, re-hashed where the file is today's (proved unchanged)."""
    now = input_hashes.static_inputs(job, PROFILES[profile_name])
    out = dict(now)
    for label, value in record["inputs"].items():
        if label in now or label in LABEL_RENAMES.values() or _is_engine(label):
            continue
        out[label] = input_hashes.file_hash(ROOT / label) if _is_code(label) else value
    return out


def migrate(rev: str, profiles: list[str], dry_run: bool = False, progress=print) -> list[Outcome]:
    if _git_show(rev, "pyproject.toml") is None:
        raise VerifyError(f"verify migrate: {rev!r} is not a commit of this repository")
    if not _rev_id(rev).startswith(MOVE_FROM) and _rev_id(rev) != _rev_id("HEAD"):
        raise VerifyError(f"verify migrate: the move this command knows (verify/runner/migrate.py: RENAMES, MOVED) "
                          f"starts at {MOVE_FROM[:10]}, not {rev}; describe a new move there first")
    out = []
    for job in sorted(all_jobs().values(), key=lambda j: j.id):
        for name in profiles:
            if name not in job.profiles:
                continue
            record = store.load(job.id, name)
            if record is None:
                continue
            if not input_hashes.changed(record.get("inputs"), job, PROFILES[name]):
                out.append(Outcome(job.id, name, False, "fresh already"))
                continue
            try:
                labels = prove(job, name, record, rev)
            except NotProven as e:
                out.append(Outcome(job.id, name, False, f"left stale: {e}"))
                progress(f"[{job.id}] {name}: left stale: {e}")
                continue
            record.pop("generated", None)
            record["inputs"] = carried_inputs(record, job, name)
            record["inputs_hash"] = input_hashes.digest(record["inputs"])
            record.setdefault("migrations", []).append(
                {"date": utc_now(), "from_commit": _rev_id(rev), "why": WHY, "inputs_rehashed": labels})
            if not dry_run:
                store.save(record)
            out.append(Outcome(job.id, name, True, f"re-hashed {len(labels)} code input(s)"))
            progress(f"[{job.id}] {name}: migrated ({len(labels)} code inputs re-hashed)")
    return out


def _rev_id(rev: str) -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev], capture_output=True, text=True)
    return r.stdout.strip() or rev
