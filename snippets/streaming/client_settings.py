"""A client with deliberate limits: a timeout you chose and no automatic retries."""

import os

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")


def make_client(base_url: str = BASE_URL, timeout: float = 120.0) -> OpenAI:
    # timeout: longer than your longest legitimate generation (max_tokens x measured ITL + TTFT + headroom).
    # max_retries=0: a retry regenerates from scratch; decide in your own code whether it is worth it.
    return OpenAI(base_url=base_url, api_key="EMPTY", timeout=timeout, max_retries=0)


if __name__ == "__main__":
    client = make_client()
    print(f"timeout={client.timeout} max_retries={client.max_retries}")
