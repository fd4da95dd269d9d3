#!/usr/bin/env bash
# GuideLLM on the same workload: one request at a time, every request's timings in the JSON file.
set -euo pipefail
BASE_URL="${BASE_URL:-http://localhost:8000}"      # the server (or a proxy before it), without /v1
TOKENIZER="${TOKENIZER:-Qwen/Qwen2.5-0.5B-Instruct}"
OUT="${OUT:-bench-results}"

guidellm run --backend "kind=openai_http,target=$BASE_URL,model=chat" \
  --tokenizer "kind=huggingface_auto,model=$TOKENIZER" \
  --data "kind=synthetic_text,prompt_tokens=128,output_tokens=32" \
  --profile kind=synchronous --constraint kind=max_requests,count=8 \
  --output "kind=json,path=$OUT/guidellm.json" --disable-console-interactive
