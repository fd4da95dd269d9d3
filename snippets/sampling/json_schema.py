"""Structured output: answers constrained to a JSON schema."""

import json
import os

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")
SCHEMA = {"type": "object",
          "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
          "required": ["name", "age"], "additionalProperties": False}


def person(client: OpenAI, temperature: float = 1.0) -> str:
    r = client.chat.completions.create(
        model="chat", messages=[{"role": "user", "content": "Invent a person: name and age, as JSON."}],
        max_tokens=60, temperature=temperature,
        response_format={"type": "json_schema", "json_schema": {"name": "person", "schema": SCHEMA}})
    return r.choices[0].message.content


if __name__ == "__main__":
    client = OpenAI(base_url=BASE_URL, api_key="EMPTY", max_retries=0)
    for _ in range(3):
        text = person(client)
        print(text, "->", json.loads(text))
