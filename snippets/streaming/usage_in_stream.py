"""Token counts from a stream: ask for them with stream_options."""

import os

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")


def streamed_usage(client: OpenAI, messages: list, include_usage: bool, **params):
    """Return (text, usage) from a stream; usage stays None unless the server sends it."""
    stream = client.chat.completions.create(
        model="chat", messages=messages, stream=True,
        stream_options={"include_usage": True} if include_usage else None,
        **params)
    text, usage = [], None
    for chunk in stream:
        if chunk.usage is not None:  # the extra final chunk: usage set, choices empty
            usage = chunk.usage
        if chunk.choices and chunk.choices[0].delta.content:
            text.append(chunk.choices[0].delta.content)
    return "".join(text), usage


if __name__ == "__main__":
    client = OpenAI(base_url=BASE_URL, api_key="EMPTY")
    question = [{"role": "user", "content": "Name three colours."}]
    for include in (False, True):
        _, usage = streamed_usage(client, question, include, max_tokens=30, temperature=0)
        print(f"include_usage={include}: usage={usage}")
