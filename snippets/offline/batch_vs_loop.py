"""The same prompts through vllm.LLM: one generate() call for all of them, or one call per prompt."""

import time

from vllm import LLM, SamplingParams


def one_call(llm: LLM, prompts: list[str], params: SamplingParams):
    """Hand the engine every prompt at once: it batches them itself."""
    return llm.generate(prompts, params, use_tqdm=False)


def one_at_a_time(llm: LLM, prompts: list[str], params: SamplingParams):
    """The loop people write first: each prompt waits for the previous one to finish."""
    return [llm.generate([p], params, use_tqdm=False)[0] for p in prompts]


def timed(fn, *args):
    t0 = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - t0, result


if __name__ == "__main__":
    llm = LLM(model="Qwen/Qwen2.5-0.5B-Instruct")
    params = SamplingParams(max_tokens=64, temperature=0)
    prompts = [f"Write a short story about the number {i}." for i in range(16)]
    batched, _ = timed(one_call, llm, prompts, params)
    looped, _ = timed(one_at_a_time, llm, prompts, params)
    print(f"one call: {batched:.1f} s; one at a time: {looped:.1f} s; speed-up {looped / batched:.1f}x")
