"""Jobs share code only through shared modules, and the modules of verify/jobs and verify/measure import
no circle.

A job that borrows another job's private helper (`from verify.jobs.<article>.<job> import _helper`)
depends on code its owner may change for its own reasons; what two jobs share belongs in a shared module (a file
starting with `_` in the article's folder, like `_together.py`), under a public name. A circle of imports
(a shared measurement importing the jobs that read it) makes each module's meaning depend on the others'.
The modules are read with `ast`, imports inside functions included, and nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("verify.jobs", "verify.measure")


def _modules(root: Path) -> dict[str, Path]:
    """Every module of verify/jobs and verify/measure under root by dotted name (a package by its own name)."""
    out = {}
    for package in PACKAGES:
        for path in sorted((root / package.replace(".", "/")).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _absolute(node: ast.ImportFrom, module: str, path: Path) -> str | None:
    """The module a `from ... import` reads, with a relative import resolved against the importing module."""
    if node.level == 0:
        return node.module
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(tree: ast.AST, module: str, path: Path, modules: dict[str, Path]):
    """(line, imported module, name or None) for every import of a module of verify/jobs or verify/measure:
    name is what `from m import name` takes from module m (None for `import m` and for a module taken from
    its package)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, path)
            if source not in modules:
                continue
            for alias in node.names:
                if f"{source}.{alias.name}" in modules:
                    yield node.lineno, f"{source}.{alias.name}", None
                else:
                    yield node.lineno, source, alias.name


def _bound_modules(tree: ast.AST, module: str, path: Path, modules: dict[str, Path]) -> dict[str, str]:
    """The local names that stand for a module of verify/jobs (`import a.b as c`, `from a import b`)."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in modules:
                    bound[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, path)
            for alias in node.names:
                if f"{source}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{source}.{alias.name}"
    return bound


def _dotted(node: ast.AST) -> str | None:
    """`verify.jobs.x` for an attribute chain of plain names, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def private_borrowings(root: Path = ROOT) -> list[str]:
    """Every place a module of verify/jobs takes a private name from another module of verify/jobs."""
    modules = _modules(root)
    found = []
    for module, path in modules.items():
        if not module.startswith("verify.jobs."):
            continue
        where, tree = path.relative_to(root).as_posix(), _tree(path)
        for line, source, name in _imports(tree, module, path, modules):
            if name and _private(name) and source != module and source.startswith("verify.jobs."):
                found.append(f"{where}:{line} imports {name} from {source}")
        bound = _bound_modules(tree, module, path, modules)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            owner = _dotted(node.value)
            if owner is None:
                continue
            head, _, rest = owner.partition(".")
            target = bound.get(head, head) + (f".{rest}" if rest else "")
            if target in modules and target != module and target.startswith("verify.jobs."):
                found.append(f"{where}:{node.lineno} reads {node.attr} of {target}")
    return found


def import_cycle(root: Path = ROOT) -> list[str] | None:
    """One circle of imports among the modules of verify/jobs and verify/measure (first module repeated at
    the end), or None."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for _, source, _ in _imports(_tree(path), module, path, modules):
            if source != module:
                graph[module].add(source)
    state: dict[str, int] = {}  # 1 while on the path being walked, 2 once every path from it is walked
    path_: list[str] = []

    def walk(m: str) -> list[str] | None:
        state[m] = 1
        path_.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return path_[path_.index(n):] + [n]
            if n not in state and (cycle := walk(n)):
                return cycle
        path_.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (cycle := walk(m)):
            return cycle
    return None


def test_no_job_takes_a_private_name_from_another_module():
    found = private_borrowings()
    assert not found, "a job takes another module's private name (share it, public, in a shared module):\n" \
        + "\n".join(found)


def test_the_modules_of_jobs_and_measure_import_no_circle():
    cycle = import_cycle()
    assert cycle is None, "an import circle: " + " -> ".join(cycle)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / (name.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_checks_see_each_kind_of_borrowing_and_a_circle(tmp_path):
    """Each form is found: a private name imported (inside a function too), a private attribute of a module
    read, and a circle through an import inside a function; a shared module imported by its own name is not
    a borrowing."""
    _write(tmp_path, {
        "verify.jobs.a.one": "from verify.jobs.a import _shared\nX = _shared.helper\n"
                             "def f():\n    from verify.jobs.a.two import _rule\n",
        "verify.jobs.a.two": "import verify.jobs.a.one as one\nY = one._hidden\n"
                             "def g():\n    from verify.jobs.a import one\n",
        "verify.jobs.a._shared": "def helper(): pass\n",
        "verify.measure.m": "def h():\n    from verify.jobs.a._shared import helper\n",
    })
    found = private_borrowings(tmp_path)
    assert found == ["verify/jobs/a/one.py:4 imports _rule from verify.jobs.a.two",
                     "verify/jobs/a/two.py:2 reads _hidden of verify.jobs.a.one"], found
    assert import_cycle(tmp_path) == ["verify.jobs.a.one", "verify.jobs.a.two", "verify.jobs.a.one"]
    _write(tmp_path, {"verify.jobs.a.one": "from verify.jobs.a._shared import helper\n",
                      "verify.jobs.a.two": "from verify.jobs.a import one\nY = one.X\n"})
    assert private_borrowings(tmp_path) == [] and import_cycle(tmp_path) is None
