"""Offline inference article: hand-made flips, each an edit of a real record from a live vLLM server to the other behaviour."""

from __future__ import annotations

from typing import Callable


def chat_answers_like_generate(d: dict) -> None:
    """offline-chat.answers-differ: the chat template does not change the greedy answer: generate() gives
    chat()'s text."""
    d["generate"]["text"] = d["chat"]["text"]
    d["generate"]["events"] = d["chat"]["events"]


HAND_FLIPS: dict[str, Callable[[dict], None]] = {
    "offline-chat.answers-differ": chat_answers_like_generate,
}
