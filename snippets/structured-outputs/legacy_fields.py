"""The fields older releases read (guided_choice and its siblings) beside the ones vLLM reads now."""

import os

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")
COLOURS = ["red", "green", "blue"]

OLD = {"guided_choice": COLOURS}                    # the field older releases read
NEW = {"structured_outputs": {"choice": COLOURS}}   # what vLLM reads instead


def colour(client: OpenAI, fields: dict) -> str:
    r = client.chat.completions.create(
        model="chat", messages=[{"role": "user", "content": "What colour is the sky?"}],
        max_tokens=20, temperature=1.0, extra_body=fields)
    return r.choices[0].message.content


if __name__ == "__main__":
    client = OpenAI(base_url=BASE_URL, api_key="EMPTY", max_retries=0)
    print("old field:", repr(colour(client, OLD)))
    print("new field:", repr(colour(client, NEW)))
