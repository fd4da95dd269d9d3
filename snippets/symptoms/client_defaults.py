"""What the openai client does by itself when nobody set its limits: its timeout and how many times it
retries a request that failed or timed out (each retry makes the server generate again)."""

import os

from openai import OpenAI

client = OpenAI(base_url=os.environ.get("BASE_URL", "http://localhost:8000/v1"), api_key="EMPTY")
print(f"timeout={client.timeout} max_retries={client.max_retries}")
