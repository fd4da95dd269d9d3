"""Which sampling settings a generate() call uses: the model's generation_config.json, or yours."""

from vllm import LLM, SamplingParams

FIELDS = ("temperature", "top_p", "top_k", "repetition_penalty", "max_tokens")


def settings(params: SamplingParams) -> dict:
    return {name: getattr(params, name) for name in FIELDS}


def three_ways(llm: LLM, prompts: list[str]):
    """The same prompts with no SamplingParams, with a new one, and with the model's defaults changed."""
    no_params = llm.generate(prompts, use_tqdm=False)  # the model's defaults
    new = SamplingParams(temperature=0)  # only what it sets, plus SamplingParams' own defaults
    with_new = llm.generate(prompts, new, use_tqdm=False)
    changed = llm.get_default_sampling_params()  # a fresh copy of the model's defaults...
    changed.temperature = 0  # ...with one field changed
    with_changed = llm.generate(prompts, changed, use_tqdm=False)
    return {"no SamplingParams": (llm.get_default_sampling_params(), no_params),
            "SamplingParams(temperature=0)": (new, with_new),
            "model defaults, temperature=0": (changed, with_changed)}


if __name__ == "__main__":
    llm = LLM(model="Qwen/Qwen2.5-0.5B-Instruct")  # its generation_config.json sets sampling fields
    for name, (params, outputs) in three_ways(llm, ["Tell me a story."]).items():
        print(f"{name}: {settings(params)}, {len(outputs[0].outputs[0].token_ids)} tokens")
