"""Offline generation with SamplingParams() left at its defaults."""

from vllm import LLM, SamplingParams


def generate_with_defaults(llm: LLM, prompts: list[str]):
    params = SamplingParams()  # no max_tokens given: the default applies
    outputs = llm.generate(prompts, params)
    return params, outputs


if __name__ == "__main__":
    llm = LLM(model="Qwen/Qwen2.5-0.5B-Instruct")
    params, outputs = generate_with_defaults(llm, ["Write a long story about the sea."])
    print("max_tokens:", params.max_tokens)
    for out in outputs:
        answer = out.outputs[0]
        print(len(answer.token_ids), "tokens, finish_reason", answer.finish_reason, repr(answer.text))
