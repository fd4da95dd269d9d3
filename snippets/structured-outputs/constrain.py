"""Seven ways to constrain an answer, as vLLM's OpenAI-compatible server accepts them.

OpenAI's own field is response_format; vLLM adds structured_outputs for what OpenAI has no
field for (a regular expression, a list of choices, a grammar), sent through extra_body.
"""

import json
import os

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")

PERSON = {"type": "object",
          "properties": {"name": {"type": "string", "maxLength": 24},
                         "age": {"type": "integer", "minimum": 0, "maximum": 120}},
          "required": ["name", "age"], "additionalProperties": False}
DATE = r"20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
COLOURS = ["red", "green", "blue"]
# An EBNF grammar (the notation xgrammar, vLLM's default backend, reads): a sum of two numbers.
SUM = '''root ::= num " + " num " = " num
num ::= [1-9] | [1-9] [0-9]'''

# Each way: the prompt and the request fields that constrain the answer.
WAYS = {
    "response_format json_schema": (
        "Invent a person.",
        {"response_format": {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON}}}),
    "response_format json_object": (
        "Describe a cat in JSON.",
        {"response_format": {"type": "json_object"}}),
    "structured_outputs json": (
        "Invent a person.",
        {"extra_body": {"structured_outputs": {"json": PERSON}}}),
    # The same schema with no whitespace allowed between JSON tokens (vLLM's own option).
    "structured_outputs json, no whitespace": (
        "Invent a person.",
        {"extra_body": {"structured_outputs": {"json": PERSON, "disable_any_whitespace": True}}}),
    "structured_outputs regex": (
        "When is the next public holiday? Give the date.",
        {"extra_body": {"structured_outputs": {"regex": DATE}}}),
    "structured_outputs choice": (
        "What colour is the sky?",
        {"extra_body": {"structured_outputs": {"choice": COLOURS}}}),
    "structured_outputs grammar": (
        "Write an addition of two numbers with its result.",
        {"extra_body": {"structured_outputs": {"grammar": SUM}}}),
}


def ask(client: OpenAI, way: str, temperature: float = 1.0, max_tokens: int = 60, seed: int | None = None):
    """One constrained answer: the text and why it ended (a seed makes it repeatable)."""
    prompt, fields = WAYS[way]
    r = client.chat.completions.create(
        model="chat", messages=[{"role": "user", "content": prompt}],
        max_tokens=max_tokens, temperature=temperature, seed=seed, **fields)
    return r.choices[0].message.content, r.choices[0].finish_reason


if __name__ == "__main__":
    client = OpenAI(base_url=BASE_URL, api_key="EMPTY", max_retries=0)
    for way in WAYS:
        text, finish = ask(client, way)
        print(f"{way:40} {finish:7} {json.dumps(text)}")
