"""A streaming client that handles what real streams contain: empty chunks, a usage chunk, and why it ended."""

import os

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")


def stream_answer(client: OpenAI, messages: list, **params) -> dict:
    stream = client.chat.completions.create(
        model="chat", messages=messages, stream=True,
        stream_options={"include_usage": True}, **params)
    parts, finish_reason, usage = [], None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        if not chunk.choices:  # the usage chunk has no choices
            continue
        choice = chunk.choices[0]
        if choice.delta.content:  # None or "" on some chunks: guard it
            parts.append(choice.delta.content)
        if choice.finish_reason is not None:
            finish_reason = choice.finish_reason
    # A stream that ends without a finish_reason was cut off, not finished.
    if finish_reason is None:
        raise ConnectionError("stream ended without a finish_reason: the connection broke")
    return {"text": "".join(parts), "finish_reason": finish_reason,
            "truncated": finish_reason == "length", "usage": usage}


if __name__ == "__main__":
    client = OpenAI(base_url=BASE_URL, api_key="EMPTY", timeout=60.0, max_retries=0)
    answer = stream_answer(client, [{"role": "user", "content": "Say hello."}], max_tokens=50)
    print(answer["text"])
    print("finish_reason:", answer["finish_reason"], "| usage:", answer["usage"])
