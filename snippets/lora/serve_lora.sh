#!/usr/bin/env bash
# The embedded CPU profile with this page's three adapters, built with peft on first use
# (no download), on port 8000 until Ctrl-C. Run from a checkout after `bash verify/bootstrap.sh site`.
.venv/bin/verify serve --variant lora --port 8000

# The flags it adds, for any vLLM server and your own adapter folders:
#   VLLM_ALLOW_RUNTIME_LORA_UPDATING=True vllm serve MODEL \
#     --enable-lora --max-lora-rank 16 --max-loras 1 --max-cpu-loras 2 \
#     --lora-modules attn-a=/path/to/attn-a attn-b=/path/to/attn-b mlp-c=/path/to/mlp-c
