#!/usr/bin/env bash
# The article's own setup: one T4 GPU, Qwen2.5-0.5B-Instruct, served under the name "chat".
vllm serve Qwen/Qwen2.5-0.5B-Instruct \
  --served-model-name chat \
  --max-model-len 4096 \
  --enable-log-requests
