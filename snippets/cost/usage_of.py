"""What the server bills for a chat request: the usage object, with cached prompt tokens when reported."""

import os

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")


def billed(client: OpenAI, messages: list, **params) -> dict:
    """prompt, completion and cached prompt tokens of one request (cached is None unless the server reports it)."""
    response = client.chat.completions.create(model="chat", messages=messages, **params)
    usage = response.usage
    details = usage.prompt_tokens_details
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "cached_tokens": details.cached_tokens if details else None,
            "finish_reasons": [c.finish_reason for c in response.choices]}


if __name__ == "__main__":
    client = OpenAI(base_url=BASE_URL, api_key="EMPTY")
    question = [{"role": "user", "content": "Name three colours."}]
    print("one answer:   ", billed(client, question, max_tokens=16, temperature=0))
    print("three answers:", billed(client, question, max_tokens=16, temperature=0.8, n=3))
