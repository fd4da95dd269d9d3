"""Which sampling settings a generate() call uses: the model's generation_config.json, or yours."""

from vllm import LLM, SamplingParams

FIELDS = ("temperature", "top_p", "top_k", "repetition_penalty", "max_tokens")


def settings(params: SamplingParams) -> dict:
    return {name: getattr(params, name) for name in FIELDS}


def both_ways(llm: LLM, prompts: list[str]):
    """The same prompts with no SamplingParams (the model's defaults) and with one field set."""
    model_defaults = llm.generate(prompts, use_tqdm=False)
    explicit = SamplingParams(temperature=0)
    yours = llm.generate(prompts, explicit, use_tqdm=False)
    return (settings(llm.get_default_sampling_params()), model_defaults), (settings(explicit), yours)


if __name__ == "__main__":
    llm = LLM(model="Qwen/Qwen2.5-0.5B-Instruct")  # its generation_config.json sets sampling fields
    (defaults, outs), (explicit, outs2) = both_ways(llm, ["Tell me a story."])
    print("no SamplingParams:", defaults, len(outs[0].outputs[0].token_ids), "tokens")
    print("SamplingParams(temperature=0):", explicit, len(outs2[0].outputs[0].token_ids), "tokens")
