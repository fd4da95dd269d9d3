"""A streamed tool call, chunk by chunk, and the arguments put back together."""

import json
import os

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")


def stream_call(client: OpenAI, tools: list, tool_choice, question: str):
    """Every chunk's tool-call deltas, and the calls reassembled by their index."""
    stream = client.chat.completions.create(
        model="chat", messages=[{"role": "user", "content": question}], tools=tools,
        tool_choice=tool_choice, max_tokens=80, temperature=0, stream=True)
    deltas, calls = [], {}
    for chunk in stream:
        if not chunk.choices:
            continue
        for d in chunk.choices[0].delta.tool_calls or []:
            deltas.append(d.model_dump(exclude_none=True))
            call = calls.setdefault(d.index, {"id": None, "name": "", "arguments": ""})
            call["id"] = call["id"] or d.id  # the id and the name come once, in the call's first delta
            if d.function and d.function.name:
                call["name"] += d.function.name
            if d.function and d.function.arguments:
                call["arguments"] += d.function.arguments
    return deltas, [calls[i] for i in sorted(calls)]


if __name__ == "__main__":
    from tools import NAMED, QUESTION, TOOLS
    client = OpenAI(base_url=BASE_URL, api_key="EMPTY", max_retries=0)
    deltas, calls = stream_call(client, TOOLS, NAMED, QUESTION)
    for d in deltas:
        print(d)
    for c in calls:
        print(c["name"], json.loads(c["arguments"]))
