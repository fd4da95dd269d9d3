"""Greedy answers of the base model and its adapters, asked through the page's snippet."""

from __future__ import annotations

SNIPPET = "lora/ask_adapter.py"
BASE = "chat"  # the base model's served name (verify/config/profiles.py)


def ask_all(ctx, models: tuple[str, ...], reps: int) -> dict:
    """Every model's answer to every prompt of the snippet, `reps` times, one request at a time:
    {model: {prompt: [answer, ...]}} as a capture of results."""
    from openai import APIStatusError, OpenAI

    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    client = OpenAI(base_url=ctx.base_url, api_key="EMPTY", max_retries=0)
    answers: dict = {m: {p: [] for p in snippet.PROMPTS} for m in models}
    statuses, texts = [], []
    for _ in range(reps):
        for model in models:
            for prompt in snippet.PROMPTS:
                try:
                    text = snippet.answer(client, model, prompt)
                    statuses.append(200)
                except APIStatusError as e:
                    text = None
                    statuses.append(e.status_code)
                answers[model][prompt].append(text)
                texts += [text] if text else []
    return capture.results("answers", texts, statuses=statuses, by_model=answers, reps=reps)


def same(answers: list) -> bool:
    """All repetitions gave one and the same (non-empty) answer."""
    return bool(answers) and all(answers) and len(set(answers)) == 1
