"""LoRA adapters for the embedded model, made here with peft: nothing is downloaded.

Each adapter is a recipe (verify/config/adapters.py: rank, target modules, seed, scale) applied to the converted
embedded model: peft creates the LoRA matrices from the seed with non-zero weights (its
default would start B at zero, an adapter that changes nothing), B is scaled so that the
adapter measurably changes greedy output without drowning the base model, and the adapter
is saved as a normal peft folder (adapter_config.json, adapter_model.safetensors) that vLLM's
--lora-modules loads. Built once and cached beside the model, with a manifest of the recipe,
the base model's manifest hash and every file's hash; a folder that does not match its
manifest is rebuilt, so a half-written adapter is never served.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from verify.config.adapters import BUILD_VERSION, RECIPES, Recipe
from verify.errors import VerifyError
from verify.live.cached_build import MANIFEST, build_into, manifest, sha256
from verify.live.model import cache_root, prepare_embedded_model


def adapters_root() -> Path:
    return cache_root() / "adapters"


def adapter_dir(recipe: Recipe) -> Path:
    return adapters_root() / recipe.folder_name()


def _base_manifest_sha(model: Path) -> str:
    return sha256(model / MANIFEST)


def _valid(folder: Path, base_sha: str) -> bool:
    found = manifest(folder)
    if found is None or found.get("base_manifest_sha256") != base_sha or found.get("build") != BUILD_VERSION:
        return False
    files = found.get("files") or {}
    return bool(files) and all((folder / n).is_file() and sha256(folder / n) == sha for n, sha in files.items())


def prepare_adapters(names: tuple[str, ...] | None = None, progress=print) -> dict[str, Path]:
    """The folder of each named adapter (all by default), building the ones not cached yet."""
    model, _ = prepare_embedded_model(progress)
    base_sha = _base_manifest_sha(model)
    out = {}
    for name in names or tuple(RECIPES):
        if name not in RECIPES:
            raise VerifyError(f"unknown LoRA adapter {name!r} (known: {', '.join(RECIPES)})")
        recipe = RECIPES[name]
        folder = adapter_dir(recipe)
        if not _valid(folder, base_sha):
            progress(f"building LoRA adapter {name} (rank {recipe.rank}, {', '.join(recipe.targets)}; a few seconds)")
            _build(recipe, model, folder, base_sha)
        out[name] = folder
    return out


def _build(recipe: Recipe, model_path: Path, folder: Path, base_sha: str) -> None:
    try:
        import torch
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModelForCausalLM
    except ImportError as e:
        raise VerifyError(f"cannot build LoRA adapters: {e} (install the server stack)") from None
    facts = {"generated": "by verify/live/adapters.py; do not edit", "recipe": asdict(recipe),
             "build": BUILD_VERSION, "base_manifest_sha256": base_sha}
    with build_into(folder, facts) as tmp:
        torch.manual_seed(recipe.seed)
        base = AutoModelForCausalLM.from_pretrained(str(model_path), dtype=torch.float32)
        config = LoraConfig(r=recipe.rank, lora_alpha=recipe.alpha, target_modules=list(recipe.targets),
                            lora_dropout=0.0, bias="none", task_type="CAUSAL_LM", init_lora_weights=False)
        peft_model = get_peft_model(base, config)
        with torch.no_grad():
            for name, param in peft_model.named_parameters():
                if "lora_B" in name:
                    param.mul_(recipe.scale)
        peft_model.save_pretrained(str(tmp), safe_serialization=True)
