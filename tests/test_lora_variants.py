"""Server variants that serve LoRA adapters: placeholders, recipe keys and environment, without a server.

The adapters' folders vary by machine, so a variant names each by a placeholder: the start puts
in the cached folder, hashes and records keep `<adapters>/<name>-<recipe key>`. A changed recipe
must change the recorded command (its records go stale); a variant's environment is hashed with
it, and only where it sets one (every other record's hash stays as it was).
"""

from __future__ import annotations

import dataclasses

import pytest

from verify.config import adapters as recipes
from verify.config.profiles import LORA_ADAPTERS, PROFILES, VARIANTS
from verify.errors import VerifyError


def test_a_lora_command_names_each_adapter_by_recipe_key_not_by_machine_path():
    command = " ".join(PROFILES["cpu"].command("lora"))
    for name in LORA_ADAPTERS:
        assert f"{name}=<adapters>/{recipes.RECIPES[name].folder_name()}" in command
    assert "<adapter:" not in command and "/.cache/" not in command


def test_a_changed_recipe_changes_the_recorded_command(monkeypatch):
    before = PROFILES["cpu"].command("lora")
    changed = dataclasses.replace(recipes.RECIPES["attn-a"], seed=99)
    monkeypatch.setitem(recipes.RECIPES, "attn-a", changed)
    after = PROFILES["cpu"].command("lora")
    assert before != after and any(changed.folder_name() in a for a in after)


def test_an_unknown_adapter_placeholder_is_a_one_line_error():
    with pytest.raises(VerifyError, match="unknown LoRA adapter 'nope'"):
        recipes.in_records(["--lora-modules", f"x={recipes.adapter_flag('nope')}"])


def test_the_start_puts_in_each_adapters_folder(monkeypatch, tmp_path):
    from verify.live import adapters, server
    built = []

    def fake_prepare(names, progress):
        built.extend(names)
        return {n: tmp_path / n for n in names}
    monkeypatch.setattr(adapters, "prepare_adapters", fake_prepare)
    argv = server._with_adapters(PROFILES["cpu"].argv("m", 8000, "lora"), progress=lambda m: None)
    assert built == list(LORA_ADAPTERS)
    assert f"attn-a={tmp_path / 'attn-a'}" in argv and not any("<adapter" in a for a in argv)
    plain = PROFILES["cpu"].argv("m", 8000)
    assert server._with_adapters(plain, progress=lambda m: None) == plain and len(built) == 3


def test_a_variants_environment_is_hashed_only_where_it_sets_one():
    from verify.evidence.inputs import engine_description
    from verify.registry import get_job
    lora = engine_description(get_job("lora-runtime"), PROFILES["cpu"])
    assert lora["variant_env"] == dict(VARIANTS["lora"].env) == {"VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True"}
    assert "variant_env" not in engine_description(get_job("lora-target-modules"), PROFILES["cpu"])
    assert "variant_env" not in engine_description(get_job("stream-timing"), PROFILES["cpu"])


def test_verify_serve_takes_a_variant_and_refuses_an_unknown_one(capsys):
    from verify.cli import build_parser
    assert build_parser().parse_args(["serve", "--variant", "lora"]).variant == "lora"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--variant", "lora-typo"])
