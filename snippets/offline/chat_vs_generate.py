"""llm.chat() against llm.generate() on the same text: what the chat template adds."""

from vllm import LLM, SamplingParams


def chat_and_generate(llm: LLM, text: str, params: SamplingParams):
    """The same user text, as a chat message and as a raw prompt; returns both outputs."""
    chat = llm.chat([{"role": "user", "content": text}], params, use_tqdm=False)[0]
    plain = llm.generate([text], params, use_tqdm=False)[0]
    return chat, plain


if __name__ == "__main__":
    llm = LLM(model="Qwen/Qwen2.5-0.5B-Instruct")
    chat, plain = chat_and_generate(llm, "Name three colours.", SamplingParams(max_tokens=32, temperature=0))
    print(len(chat.prompt_token_ids), "prompt tokens with chat():", repr(chat.outputs[0].text))
    print(len(plain.prompt_token_ids), "prompt tokens with generate():", repr(plain.outputs[0].text))
