"""A folder built once and kept in the cache with a manifest (the embedded model, the LoRA adapters).

It is built in a temporary folder beside its place, a manifest of every file written is added,
and only the finished folder is swapped into place: a crash before the swap leaves the old folder
(or none), so a half-written one is never used. Each kind of folder decides what the manifest says
and when a cached folder still matches it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

MANIFEST = "verify-manifest.json"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest(folder: Path) -> dict | None:
    """The folder's manifest, or None when it has none that can be read."""
    try:
        return json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None


@contextmanager
def build_into(folder: Path, facts: dict, file_entry: Callable[[Path], object] = sha256) -> Iterator[Path]:
    """Yield an empty temporary folder to build in; on success write the manifest (`facts` and each
    file's entry) and swap the folder into place."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".tmp-", dir=folder.parent))
    try:
        yield tmp
        files = {p.name: file_entry(p) for p in sorted(tmp.iterdir()) if p.is_file()}
        (tmp / MANIFEST).write_text(json.dumps({**facts, "files": files}, indent=1))
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
