"""How many tokens a chat prompt costs, asked of the server's own tokenizer and chat template."""

import os

import httpx

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")


def count_prompt_tokens(base_url: str, messages: list[dict]) -> dict:
    """/tokenize lives at the server's root, not under /v1."""
    root = base_url.removesuffix("/v1")
    with_template = httpx.post(f"{root}/tokenize", json={"model": "chat", "messages": messages,
                                                          "add_generation_prompt": True}).json()
    text_only = httpx.post(f"{root}/tokenize", json={"model": "chat",
                                                     "prompt": " ".join(m["content"] for m in messages)}).json()
    return {"with_chat_template": with_template["count"], "text_alone": text_only["count"]}


if __name__ == "__main__":
    messages = [{"role": "user", "content": "Say hi."}]
    counts = count_prompt_tokens(BASE_URL, messages)
    usage = httpx.post(f"{BASE_URL}/chat/completions", timeout=60,
                       json={"model": "chat", "messages": messages, "max_tokens": 5}).json()["usage"]
    print(f"/tokenize with the chat template: {counts['with_chat_template']} tokens")
    print(f"/tokenize of the text alone:      {counts['text_alone']} tokens")
    print(f"usage.prompt_tokens billed:        {usage['prompt_tokens']} tokens")
