"""Ask one adapter, or the base model: the adapter is chosen by the request's model field."""

import os

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")
PROMPTS = ("Name three colours of the rainbow.", "Write one sentence about the sea.")


def answer(client: OpenAI, model: str, prompt: str, max_tokens: int = 24) -> str:
    """The greedy answer of `model`: the base model's served name, or an adapter's."""
    r = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": prompt}],
        temperature=0, max_tokens=max_tokens)
    return r.choices[0].message.content


def served(client: OpenAI) -> dict[str, str | None]:
    """Every model the server answers to, with its parent: None for the base model, the base
    model's name for an adapter."""
    return {m.id: getattr(m, "parent", None) for m in client.models.list()}


if __name__ == "__main__":
    client = OpenAI(base_url=BASE_URL, api_key="EMPTY", max_retries=0)
    for model, parent in served(client).items():
        print(f"{model} (parent: {parent}): {answer(client, model, PROMPTS[0])!r}")
