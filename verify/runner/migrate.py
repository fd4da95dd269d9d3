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

from verify.config.profiles import PROFILES
from verify.errors import VerifyError
from verify.evidence import inputs as input_hashes
from verify.evidence import store
from verify.evidence.provenance import utc_now
from verify.paths import ROOT
from verify.registry import all_jobs

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


class _Normalise(ast.NodeTransformer):
    """Docstrings and the Job keywords no record depends on, removed."""

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
        self.generic_visit(node)
        keep = [(a, d) for a, d in zip(node.args.args[len(node.args.args) - len(node.args.defaults):],
                                        node.args.defaults)]
        # A builder's `headline` parameter only passes headline figures through.
        if any(a.arg == "headline" for a in node.args.args):
            kept_args = [a for a in node.args.args if a.arg != "headline"]
            kept_defaults = [d for a, d in keep if a.arg != "headline"]
            node.args.args, node.args.defaults = kept_args, kept_defaults
        return self._strip_docstring(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self.generic_visit(node)
        return self._strip_docstring(node)

    def visit_Call(self, node):
        self.generic_visit(node)
        node.keywords = [k for k in node.keywords if k.arg not in UNHASHED_KEYWORDS]
        return node


def _tree(source: str) -> ast.Module:
    return _Normalise().visit(ast.parse(source))


def _definitions(tree: ast.Module) -> dict[str, str]:
    """Top-level functions, classes and assignments by name, each as a syntax-tree dump."""
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = ast.dump(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for name in ast.walk(t):
                    if isinstance(name, ast.Name):
                        out[name.id] = ast.dump(node)
    return out


def _nodes(tree: ast.Module) -> dict[str, ast.AST]:
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for name in ast.walk(t):
                    if isinstance(name, ast.Name):
                        out[name.id] = node
    return out


def _job_module_imports(tree: ast.Module) -> dict[str, str]:
    """Local names bound to verify.jobs modules or their members: name -> 'module' or 'module:member'."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("verify.jobs"):
            for a in node.names:
                candidate = f"{node.module}.{a.name}"
                is_module = (ROOT / (candidate.replace(".", "/") + ".py")).is_file()
                out[a.asname or a.name] = candidate if is_module else f"{node.module}:{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("verify.jobs") and a.asname:
                    out[a.asname] = a.name
    return out


def reachable(source: str, roots: set[str]) -> tuple[set[str], dict[str, set[str]]]:
    """Top-level names reachable from roots in one module, and the names it reaches in other job modules
    (module path label -> names)."""
    tree = _tree(source)
    nodes, imports = _nodes(tree), _job_module_imports(tree)
    seen, todo, elsewhere = set(), [r for r in roots if r in nodes], {}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for sub in ast.walk(nodes[name]):
            if isinstance(sub, ast.Name):
                if sub.id in nodes and sub.id not in seen:
                    todo.append(sub.id)
                elif sub.id in imports and ":" in imports[sub.id]:
                    module, member = imports[sub.id].split(":")
                    elsewhere.setdefault(module.replace(".", "/") + ".py", set()).add(member)
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id in imports \
                    and ":" not in imports[sub.value.id]:
                elsewhere.setdefault(imports[sub.value.id].replace(".", "/") + ".py", set()).add(sub.attr)
    return seen, elsewhere


def compare_job_file(old: str, new: str, roots: set[str]) -> list[str]:
    """Definitions reachable from roots in the new source that differ from (or are absent in) the old one."""
    old_defs, new_defs = _definitions(_tree(_renamed(old))), _definitions(_tree(new))
    names, _ = reachable(new, roots)
    return sorted(n for n in names if old_defs.get(n) != new_defs.get(n))


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
    label = input_hashes.label_of(ROOT / job.module_file) if job.module_file.startswith("/") else job.module_file
    roots: dict[str, set[str]] = {label: {"JOB"}}
    todo = [label]
    done = set()
    while todo:
        f = todo.pop()
        if f in done or not (ROOT / f).is_file():
            continue
        done.add(f)
        _, elsewhere = reachable((ROOT / f).read_text(encoding="utf-8"), roots[f])
        for other, names in elsewhere.items():
            if not names <= roots.get(other, set()):
                roots[other] = roots.get(other, set()) | names
                done.discard(other)
                todo.append(other)
    return roots


def prove(job, profile_name: str, record: dict, rev: str) -> list[str]:
    """The input labels to re-hash, or NotProven saying what stands in the way."""
    profile = PROFILES[profile_name]
    recorded = record.get("inputs") or {}
    now = input_hashes.static_inputs(job, profile)
    # 1. Fresh at rev: every recorded code input had the recorded hash there.
    for label, value in recorded.items():
        if label.startswith(("server command", "offline engine", "record format")):
            if now.get(label) != value:
                raise NotProven(f"{label} differs from the record: not a code move")
            continue
        if label.startswith("verify/"):
            old = _git_show(rev, label)
            if old is None or hashlib.sha256(old.encode()).hexdigest() != value:
                raise NotProven(f"{label} at {rev} is not what the record was made with: the record was stale already")
        elif input_hashes.file_hash(ROOT / label) != value:
            raise NotProven(f"{label} changed since the record was made (a file the job opened)")
    # 2. The code that made it is the same.
    roots = _roots_by_file(job)
    changed = []
    for label in sorted(set(now) | {k for k in recorded if k.startswith("verify/")}):
        if label.startswith(("server command", "offline engine", "record format")) or not label.startswith("verify/"):
            continue
        old_label = LABEL_RENAMES.get(label, label)
        if recorded.get(old_label) == now.get(label) and old_label == label:
            continue
        changed.append(label)
        if label not in now:
            if label in LABEL_RENAMES.values():
                continue  # the old name of a renamed module, compared under its new name
            # Code the job declared as opened (what a child process it starts loads): the same file, unchanged.
            if not (ROOT / label).is_file() or not compare_whole(old_source_of(rev, label),
                                                                 (ROOT / label).read_text(encoding="utf-8")):
                raise NotProven(f"{label}, which the job opened, changed since {rev}")
            continue
        new_source = (ROOT / label).read_text(encoding="utf-8")
        if old_label not in recorded:
            if label not in MOVED:
                raise NotProven(f"{label} is a new input of the job")
            home = _git_show(rev, MOVED[label])
            bad = compare_moved(home or "", new_source)
            if bad:
                raise NotProven(f"{label}: {', '.join(bad)} not moved unchanged from {MOVED[label]}")
            continue
        old_source = _git_show(rev, old_label) or ""
        if label.startswith("verify/measure/"):
            if not compare_whole(old_source, new_source):
                raise NotProven(f"{label} changed since {rev}")
        else:
            bad = compare_job_file(old_source, new_source, roots.get(label, {"JOB"}))
            if bad:
                raise NotProven(f"{label}: {', '.join(bad)} changed since {rev}")
    # 3. The rules give the recorded verdicts, word for word.
    decided = job.decide(record["data"])
    if decided != record["claims"]:
        differ = [c for c in record["claims"] if decided.get(c) != record["claims"][c]]
        raise NotProven(f"the rules now decide {', '.join(differ)} differently from the record")
    return changed


def migrate(rev: str, profiles: list[str], dry_run: bool = False, progress=print) -> list[Outcome]:
    if _git_show(rev, "pyproject.toml") is None:
        raise VerifyError(f"verify migrate: {rev!r} is not a commit of this repository")
    out = []
    for job in sorted(all_jobs().values(), key=lambda j: j.id):
        for name in profiles:
            if name not in job.profiles:
                continue
            record = store.load(job.id, name)
            if record is None:
                continue
            now = input_hashes.static_inputs(job, PROFILES[name])
            if not input_hashes.changed(record.get("inputs"), job, PROFILES[name]):
                out.append(Outcome(job.id, name, False, "fresh already"))
                continue
            try:
                labels = prove(job, name, record, rev)
            except NotProven as e:
                out.append(Outcome(job.id, name, False, f"left stale: {e}"))
                progress(f"[{job.id}] {name}: left stale: {e}")
                continue
            inputs = {k: v for k, v in record["inputs"].items()
                      if not k.startswith("verify/") and k != "record format"} | now
            # Files the job opened (snippets, configs) keep their recorded hashes; they were compared above.
            inputs |= {k: v for k, v in record["inputs"].items() if not k.startswith("verify/") and k not in now}
            record.pop("generated", None)
            record["inputs"] = inputs
            record["inputs_hash"] = input_hashes.digest(inputs)
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
