"""vLLM's own serving benchmark (shipped in the vllm package), run against a server that is already up."""

import json
import os
import sys
import tempfile


def run_vllm_bench(base_url: str, tokenizer: str, input_len: int = 128, output_len: int = 32,
                   num_prompts: int = 5, seed: int = 0) -> dict:
    """Sequential requests (concurrency 1) of fixed lengths; returns the benchmark's saved result.

    The random prompts depend only on the seed: run twice with one seed and the second run's
    prompts are served from the prefix cache."""
    from vllm.benchmarks.serve import add_cli_args, main
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = FlexibleArgumentParser()
    add_cli_args(parser)
    out_dir = tempfile.mkdtemp()
    args = parser.parse_args([
        "--backend", "openai-chat", "--base-url", base_url.removesuffix("/v1"),
        "--endpoint", "/v1/chat/completions", "--model", "chat", "--tokenizer", tokenizer,
        "--dataset-name", "random", "--random-input-len", str(input_len),
        "--random-output-len", str(output_len), "--num-prompts", str(num_prompts), "--seed", str(seed),
        "--max-concurrency", "1", "--temperature", "0", "--ignore-eos",
        "--save-result", "--result-dir", out_dir, "--result-filename", "result.json"])
    main(args)
    with open(os.path.join(out_dir, "result.json")) as f:
        return json.load(f)


if __name__ == "__main__":
    base_url = os.environ.get("BASE_URL", "http://localhost:8000/v1")
    tokenizer = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TOKENIZER", "Qwen/Qwen2.5-0.5B-Instruct")
    result = run_vllm_bench(base_url, tokenizer, seed=int(os.environ.get("SEED", "0")))
    for key in ("median_ttft_ms", "median_itl_ms", "median_tpot_ms", "output_throughput"):
        print(f"{key:<20} {result[key]:.1f}")
    if "OUT" in os.environ:  # where a caller wants the whole result
        with open(os.environ["OUT"], "w") as f:
            json.dump(result, f)
