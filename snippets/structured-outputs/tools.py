"""Tool calling: a tool the model may call, and the call as the server returns it."""

import json
import os

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")

WEATHER = {"type": "function", "function": {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string", "maxLength": 30},
                                  "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                   "required": ["city", "unit"], "additionalProperties": False}}}
CLOCK = {"type": "function", "function": {
    "name": "get_time",
    "description": "The current time in a time zone.",
    "parameters": {"type": "object",
                   "properties": {"timezone": {"type": "string", "maxLength": 30}},
                   "required": ["timezone"], "additionalProperties": False}}}
TOOLS = [WEATHER, CLOCK]
QUESTION = "What is the weather in Paris right now?"
# tool_choice as OpenAI defines it: "none", "auto", "required", or one tool by name.
NAMED = {"type": "function", "function": {"name": "get_weather"}}


def call(client: OpenAI, tool_choice, temperature: float = 1.0, seed: int | None = None):
    """One answer with the tools offered: the message and why it ended (a seed makes it repeatable)."""
    r = client.chat.completions.create(
        model="chat", messages=[{"role": "user", "content": QUESTION}], tools=TOOLS,
        tool_choice=tool_choice, max_tokens=80, temperature=temperature, seed=seed)
    return r.choices[0].message, r.choices[0].finish_reason


def arguments(message) -> list[tuple[str, dict]]:
    """Each tool call's name and its arguments, parsed: they arrive as a JSON string."""
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]


if __name__ == "__main__":
    client = OpenAI(base_url=BASE_URL, api_key="EMPTY", max_retries=0)
    for choice in (NAMED, "required", "auto"):
        message, finish = call(client, choice)
        print(json.dumps(choice), finish, arguments(message), repr(message.content))
