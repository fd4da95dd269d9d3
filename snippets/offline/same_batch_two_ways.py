"""One batch of prompts two ways: vllm.LLM in-process, or a server given every request at once."""

import asyncio
import time

from openai import AsyncOpenAI
from vllm import LLM, SamplingParams


def through_llm(llm: LLM, prompts: list[str], max_tokens: int) -> tuple[float, list[str]]:
    """One generate() call; returns (seconds, texts)."""
    params = SamplingParams(max_tokens=max_tokens, temperature=0, ignore_eos=True)
    t0 = time.perf_counter()
    outputs = llm.generate(prompts, params, use_tqdm=False)
    return time.perf_counter() - t0, [o.outputs[0].text for o in outputs]


async def through_server(base_url: str, model: str, prompts: list[str], max_tokens: int) -> tuple[float, list[str]]:
    """Every prompt as its own /v1/completions request, all in flight at once; returns (seconds, texts)."""
    async with AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=600) as client:
        async def one(prompt: str) -> str:
            r = await client.completions.create(model=model, prompt=prompt, max_tokens=max_tokens,
                                                temperature=0, extra_body={"ignore_eos": True})
            return r.choices[0].text
        t0 = time.perf_counter()
        texts = await asyncio.gather(*(one(p) for p in prompts))
        return time.perf_counter() - t0, list(texts)


if __name__ == "__main__":
    prompts = [f"Write a short story about the number {i}." for i in range(160)]
    # Run one or the other: two engines on one GPU compete for its memory.
    seconds, _ = through_llm(LLM(model="Qwen/Qwen2.5-0.5B-Instruct"), prompts, 16)
    # seconds, _ = asyncio.run(through_server("http://localhost:8000/v1", "Qwen/Qwen2.5-0.5B-Instruct", prompts, 16))
    print(f"{len(prompts) * 16 / seconds:.0f} generated tokens/s")
