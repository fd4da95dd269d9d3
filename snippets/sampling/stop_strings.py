"""Stop strings: where the text ends, and what finish_reason and stop_reason say."""

import os

import httpx

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")


def count_with_stop(base_url: str, include: bool) -> dict:
    body = {"model": "chat", "messages": [{"role": "user", "content": "Count from 1 to 10, separated by commas."}],
            "max_tokens": 60, "temperature": 0, "stop": [", 4"], "include_stop_str_in_output": include}
    choice = httpx.post(f"{base_url}/chat/completions", json=body, timeout=60).json()["choices"][0]
    return {"text": choice["message"]["content"], "finish_reason": choice["finish_reason"],
            "stop_reason": choice.get("stop_reason")}


if __name__ == "__main__":
    for include in (False, True):
        print(f"include_stop_str_in_output={include}:", count_with_stop(BASE_URL, include))
