"""The LoRA adapters the verify stage builds for the embedded model: recipes, as data.

Each recipe (rank, target modules, seed, scale) fully determines an adapter's weights
(verify/live/adapters.py builds it with peft), so a recipe's key names its cached folder, and a
server variant names an adapter by a placeholder, ADAPTER_PLACEHOLDER.format(name=...), that
becomes the folder when the server starts, and `<adapters>/<name>-<key>` in hashes and records:
changing a recipe makes every record of a server that served it stale.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass

# Bump when the way adapters are built changes, so cached ones are rebuilt (and records go stale).
BUILD_VERSION = 1
ADAPTER_PLACEHOLDER = "<adapter:{name}>"
ADAPTERS_ROOT_PLACEHOLDER = "<adapters>"
_PLACEHOLDER_RE = re.compile(r"<adapter:([A-Za-z0-9_-]+)>")


@dataclass(frozen=True)
class Recipe:
    name: str
    rank: int
    targets: tuple[str, ...]
    seed: int
    # B's weights are multiplied by this after peft's random initialisation.
    scale: float = 1.0
    alpha: int = 16

    def key(self) -> str:
        return hashlib.sha256(json.dumps({**asdict(self), "build": BUILD_VERSION}, sort_keys=True).encode()).hexdigest()[:12]

    def folder_name(self) -> str:
        return f"{self.name}-{self.key()}"


RECIPES: dict[str, Recipe] = {r.name: r for r in (
    Recipe("attn-a", rank=8, targets=("q_proj", "v_proj"), seed=1, scale=0.5),
    Recipe("attn-b", rank=8, targets=("q_proj", "k_proj", "v_proj", "o_proj"), seed=2, scale=0.5),
    Recipe("mlp-c", rank=8, targets=("gate_proj", "up_proj", "down_proj"), seed=3, scale=0.5),
    # Rank 32: more than a server started with --max-lora-rank 16 accepts.
    Recipe("rank-32", rank=32, targets=("q_proj", "v_proj"), seed=4, scale=0.5),
)}


def adapter_flag(name: str) -> str:
    """How a variant's flags name an adapter's folder."""
    return ADAPTER_PLACEHOLDER.format(name=name)


def adapters_named(args: list[str]) -> list[str]:
    """The adapters a command line names by placeholder, in order of first mention."""
    out: list[str] = []
    for arg in args:
        for name in _PLACEHOLDER_RE.findall(arg):
            if name not in out:
                out.append(name)
    return out


def substitute(args: list[str], folder_of) -> list[str]:
    """The command line with each adapter placeholder replaced by folder_of(recipe)."""
    def one(m: re.Match) -> str:
        from verify.errors import VerifyError
        if m.group(1) not in RECIPES:
            raise VerifyError(f"unknown LoRA adapter {m.group(1)!r} (known: {', '.join(RECIPES)})")
        return str(folder_of(RECIPES[m.group(1)]))
    return [_PLACEHOLDER_RE.sub(one, a) for a in args]


def in_records(args: list[str]) -> list[str]:
    """The command line as hashes and records show it: `<adapters>/<name>-<key>` for each adapter."""
    return substitute(args, lambda r: f"{ADAPTERS_ROOT_PLACEHOLDER}/{r.folder_name()}")
