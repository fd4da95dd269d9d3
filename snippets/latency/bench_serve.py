"""vllm bench serve with the page's flags: one request at a time, every request's timings saved.

It calls the module behind the `vllm bench serve` command with the same flags, so that it runs
wherever vllm imports. Settings come from the environment; extra flags from the command line.
"""

import os
import sys

from vllm.benchmarks.serve import add_cli_args, main
from vllm.utils.argparse_utils import FlexibleArgumentParser

FLAGS = """--backend openai-chat --endpoint /v1/chat/completions --model chat
--dataset-name random --random-input-len 128 --random-output-len 32 --num-prompts 8
--max-concurrency 1 --ignore-eos --temperature 0
--percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,95
--save-result --save-detailed --result-filename result.json""".split()

if __name__ == "__main__":
    env = os.environ.get
    parser = FlexibleArgumentParser()
    add_cli_args(parser)
    main(parser.parse_args(FLAGS + [
        "--base-url", env("BASE_URL", "http://localhost:8000"),  # the server (or a proxy before it)
        "--tokenizer", env("TOKENIZER", "Qwen/Qwen2.5-0.5B-Instruct"),
        "--seed", env("SEED", "0"), "--result-dir", env("OUT", "bench-results"),
        "--goodput", f"ttft:{env('TTFT_SLO_MS', '500')}", f"tpot:{env('TPOT_SLO_MS', '50')}",
    ] + sys.argv[1:]))
