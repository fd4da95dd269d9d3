"""Prompts of an exact length in tokens, measured with the server's own /tokenize."""

from __future__ import annotations

import httpx

WORD = "apple"


def exact_prompt(server_url: str, client: httpx.Client, n: int, model: str = "chat") -> str:
    """A completions prompt of exactly n tokens, made of one repeated word."""
    text = WORD + f" {WORD}" * (n - 1)
    for _ in range(5):
        got = len(client.post(server_url + "/tokenize", json={"model": model, "prompt": text}).json()["tokens"])
        if got == n:
            return text
        text = text + f" {WORD}" * (n - got) if got < n else text.rsplit(f" {WORD}", got - n)[0]
    raise ValueError(f"could not build a {n}-token prompt")
