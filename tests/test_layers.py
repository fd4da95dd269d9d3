"""The layers of verify/ (pyproject.toml, [tool.importlinter]) hold, and a back import breaks them.

import-linter reads the import graph of the package; the contracts are the layer order
and two rules on top of it (jobs import nothing of the site; evidence imports no job).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).parent / "lint-imports"


def _lint(root: Path) -> subprocess.CompletedProcess:
    # The package is imported from root (its own copy of verify/), with root's pyproject.toml.
    return subprocess.run([str(LINT), "--no-cache"], cwd=root, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


def test_every_contract_is_kept():
    r = _lint(ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "3 kept, 0 broken" in r.stdout


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    root = tmp_path_factory.mktemp("layers")
    shutil.copytree(ROOT / "verify", root / "verify", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.mark.parametrize("module, back_import, broken", [
    ("verify/jobs/kv_cache/kv_timeline.py", "from verify.site import html", "Jobs present nothing"),
    ("verify/evidence/store.py", "import verify.jobs.kv_cache.kv_timeline", "Evidence reads records"),
    ("verify/measure/sse.py", "from verify.live import processes", "Each layer of verify/"),
    ("verify/config/profiles.py", "import verify.runner", "Each layer of verify/"),
    # Judging apart from rendering: the runner and the verdicts layer render nothing.
    ("verify/runner/__init__.py", "from verify.site import html", "Each layer of verify/"),
    ("verify/verdicts/agreement.py", "from verify.site import views", "Each layer of verify/"),
    ("verify/jobs/kv_cache/kv_timeline.py", "from verify.verdicts import agreement", "Jobs present nothing"),
])
def test_a_back_import_breaks_a_contract(copy, module, back_import, broken):
    path = copy / module
    original = path.read_text()
    try:
        path.write_text(original + f"\n{back_import}  # a back import\n")
        r = _lint(copy)
        assert r.returncode != 0, r.stdout[-2000:]
        assert any(line.startswith(broken) and line.rstrip().endswith("BROKEN") for line in r.stdout.splitlines()), \
            r.stdout[-2000:]
    finally:
        path.write_text(original)


@pytest.mark.parametrize("entry", ["verify.runner.run", "verify.verdicts.check", "verify.verdicts.status"])
def test_what_is_loaded_through_importlib_keeps_the_layers_too(entry):
    """import-linter sees static imports only; the registry loads every job module through importlib.
    Loaded as the command line loads them, the runner and the verdicts layer bring in no site module."""
    code = (f"import sys, importlib; importlib.import_module({entry!r}); "
            "from verify.registry import all_jobs; all_jobs(); "
            "from verify.verdicts import agreement; agreement.claim_state('kv-sizing.cpu-block-size', 'cpu'); "
            "print('\\n'.join(m for m in sys.modules if m.startswith('verify.site')))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "", f"{entry} loads site modules: {r.stdout.split()}"


def _layout_rows() -> list[str]:
    text = (ROOT / "CONTRIBUTING.md").read_text()
    table = text.split("| Layer | Folder | What it holds |", 1)[1].split("\n\n", 1)[0]
    return [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("|---")]


def test_the_layers_table_matches_the_folders():
    """Every folder and module the table names exists, every part of verify/ is in it, and its layers are
    the contract's layers in the contract's order."""
    import re
    import tomllib
    rows = _layout_rows()
    named = {p.rstrip("/") for row in rows for p in re.findall(r"`(verify/[\w/.<>]+)`", row.split("|")[2])}
    named |= {re.sub(r"/<\w+>.*", "", p) for p in named}  # verify/jobs/<article>/ names verify/jobs
    for path in named:
        found = list(ROOT.glob(re.sub(r"<\w+>", "*", path)))
        assert found, f"CONTRIBUTING.md's layers table names {path}, which does not exist"
    parts = {f"verify/{p.name}" for p in (ROOT / "verify").iterdir()
             if p.name not in ("__init__.py", "__main__.py", "__pycache__", "bootstrap.sh", "requirements.lock")}
    assert parts <= named, f"not in CONTRIBUTING.md's layers table: {sorted(parts - named)}"
    # Each folder's modules are named in its row.
    for row in rows:
        folder = re.findall(r"`(verify/\w+)/`", row.split("|")[2])
        if not folder:
            continue
        modules = {p.name for p in (ROOT / folder[0]).glob("*.py") if p.name != "__init__.py"}
        described = set(re.findall(r"`([\w]+\.py)`", row.split("|")[3]))
        assert modules <= described, f"{folder[0]}: {sorted(modules - described)} not described"
    layers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]["layers"]
    order = [m.replace("verify.", "verify/") for layer in layers for m in layer.split(" | ") if m != "verify.__main__"]
    in_table = [p for row in rows for p in re.findall(r"`(verify/\w+)", row.split("|")[2])]
    positions = [in_table.index(m) for m in order if m in in_table]
    assert positions == sorted(positions), "the table lists the layers in another order than the contract"
