"""Server command lines checked by vLLM's own argument parser (the CPU build ships the same parser).

The GPU profile's command (snippets/server/serve_t4.sh) cannot run here; its flags, and every
variant's flags on every profile, are parsed as `vllm serve` would parse them, so a misspelt or
removed flag fails here rather than on the GPU runner.
"""

from __future__ import annotations

import shlex

import pytest

from tests.conftest import ROOT
from verify.config.profiles import PROFILES, VARIANTS


@pytest.fixture(scope="module")
def parse():
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    def parse(argv: list[str]):
        return make_arg_parser(FlexibleArgumentParser(prog="vllm serve")).parse_args(argv)
    return parse


def _serve_args(script: str) -> list[str]:
    """The arguments of the `vllm serve MODEL ...` line of a shell snippet, as the shell passes them."""
    text = script.replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.strip().startswith("vllm serve "))
    return shlex.split(line)[2:]


@pytest.mark.stack
def test_the_t4_snippet_parses_with_vllms_parser(parse):
    args = parse(_serve_args((ROOT / "snippets" / "server" / "serve_t4.sh").read_text()))
    assert args.model_tag == PROFILES["t4"].model_source
    assert args.max_model_len == 4096 and args.served_model_name == ["chat"]


@pytest.mark.stack
def test_a_misspelt_flag_is_caught(parse):
    with pytest.raises(SystemExit):
        parse(["--model", "m", "--max-modle-len", "4096"])


@pytest.mark.stack
@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_variant_of_every_profile_parses(parse, profile, variant):
    argv = PROFILES[profile].argv("model-folder", 8000, variant)[3:]  # after "python -m <module>"
    args = parse(argv)
    assert args.served_model_name == ["chat"]


def _commented_serve_args(script: str) -> list[str]:
    """The arguments of a `vllm serve MODEL ...` command shown in a snippet's comment."""
    text = "\n".join(line.strip().lstrip("#").strip() for line in script.splitlines()).replace("\\\n", " ")
    line = next(line for line in text.splitlines() if "vllm serve " in line)
    return shlex.split(line[line.index("vllm serve "):])[2:]


@pytest.mark.stack
def test_the_lora_snippet_shows_the_lora_variants_flags(parse):
    """snippets/lora/serve_lora.sh shows the flags the page's evidence was served with, and vLLM parses them."""
    from verify.config.profiles import LORA_ADAPTERS
    script = (ROOT / "snippets" / "lora" / "serve_lora.sh").read_text()
    assert "verify serve --variant lora" in script
    shown = parse(_commented_serve_args(script))
    served = parse(PROFILES["cpu"].argv("model-folder", 8000, "lora")[3:])
    for option in ("enable_lora", "max_lora_rank", "max_loras", "max_cpu_loras"):
        assert getattr(shown, option) == getattr(served, option), option
    assert [m.name for m in shown.lora_modules] == [m.name for m in served.lora_modules] == list(LORA_ADAPTERS)
    for name, value in VARIANTS["lora"].env:
        assert f"{name}={value}" in script
