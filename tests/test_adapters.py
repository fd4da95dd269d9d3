"""The LoRA adapters the verify stage builds: reproducible, non-zero, rebuilt when damaged.

Builds real adapters with peft from the converted embedded model (the model cache the other
tests use), in a cache folder of the test's own.
"""

from __future__ import annotations

import json

import pytest

from verify.errors import VerifyError
from verify.live import adapters
from verify.live.cached_build import MANIFEST
from verify.live.model import model_dir

pytestmark = pytest.mark.stack  # the adapters are built with PEFT and PyTorch, in this process


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache holding only (a link to) the converted model."""
    from verify.live.model import prepare_embedded_model
    prepare_embedded_model(progress=lambda m: None)
    (tmp_path / model_dir().name).symlink_to(model_dir())
    monkeypatch.setenv("VERIFY_CACHE_DIR", str(tmp_path))
    return tmp_path


def _weights_hash(folder) -> str:
    return json.loads((folder / MANIFEST).read_text())["files"]["adapter_model.safetensors"]


def test_the_same_recipe_builds_the_same_weights(cache):
    first = _weights_hash(adapters.prepare_adapters(("attn-a",), progress=lambda m: None)["attn-a"])
    folder = adapters.adapter_dir(adapters.RECIPES["attn-a"])
    (folder / MANIFEST).unlink()  # forces a rebuild
    assert _weights_hash(adapters.prepare_adapters(("attn-a",), progress=lambda m: None)["attn-a"]) == first


def test_every_lora_matrix_is_non_zero_with_the_recipe_rank(cache):
    from safetensors.torch import load_file
    for name, folder in adapters.prepare_adapters(("attn-a", "rank-32"), progress=lambda m: None).items():
        tensors = load_file(str(folder / "adapter_model.safetensors"))
        recipe = adapters.RECIPES[name]
        assert tensors and all(t.abs().sum() > 0 for t in tensors.values()), name
        assert {min(t.shape) for t in tensors.values()} == {recipe.rank}, name
        config = json.loads((folder / "adapter_config.json").read_text())
        assert config["r"] == recipe.rank and set(config["target_modules"]) == set(recipe.targets)


def test_a_damaged_adapter_is_rebuilt_and_a_cached_one_reused(cache):
    messages = []
    folder = adapters.prepare_adapters(("attn-a",), progress=messages.append)["attn-a"]
    assert len(messages) == 1
    adapters.prepare_adapters(("attn-a",), progress=messages.append)
    assert len(messages) == 1, "an intact adapter is reused"
    weights = folder / "adapter_model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])  # truncated
    adapters.prepare_adapters(("attn-a",), progress=messages.append)
    assert len(messages) == 2 and weights.stat().st_size > 100


def test_an_unknown_adapter_is_one_line_error(cache):
    with pytest.raises(VerifyError, match="unknown LoRA adapter 'nope'"):
        adapters.prepare_adapters(("nope",))
