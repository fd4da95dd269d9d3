"""The embedded model's cache: reused when intact, rebuilt when missing or corrupt."""

from __future__ import annotations

import hashlib
import json

from verify.live.cached_build import MANIFEST
from verify.live.model import CONVERSION_VERSION, cached_model_is_valid


def _folder(tmp_path, files: dict[str, bytes], source_sha="abc"):
    folder = tmp_path / "model"
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    manifest = {"source_sha256": source_sha, "conversion": CONVERSION_VERSION,
                "files": {n: (len(d), hashlib.sha256(d).hexdigest()) for n, d in files.items()}}
    (folder / MANIFEST).write_text(json.dumps(manifest))
    return folder


def test_intact_cache_is_reused(tmp_path):
    folder = _folder(tmp_path, {"config.json": b"{}", "model.safetensors": b"x" * 100})
    assert cached_model_is_valid(folder, "abc")


def test_missing_manifest_or_folder_means_rebuild(tmp_path):
    assert not cached_model_is_valid(tmp_path / "nothing", "abc")
    folder = _folder(tmp_path, {"config.json": b"{}"})
    (folder / MANIFEST).unlink()
    assert not cached_model_is_valid(folder, "abc")


def test_corrupt_or_truncated_file_means_rebuild(tmp_path):
    folder = _folder(tmp_path, {"config.json": b'{"a": 1}', "model.safetensors": b"x" * 100})
    (folder / "config.json").write_bytes(b'{"a": 2}')  # same size, different content
    assert not cached_model_is_valid(folder, "abc")
    (tmp_path / "second").mkdir()
    folder2 = _folder(tmp_path / "second", {"model.safetensors": b"x" * 100})
    (folder2 / "model.safetensors").write_bytes(b"x" * 50)  # truncated weights
    assert not cached_model_is_valid(folder2, "abc")


def test_a_different_source_file_means_rebuild(tmp_path):
    folder = _folder(tmp_path, {"config.json": b"{}"}, source_sha="old")
    assert not cached_model_is_valid(folder, "new")
