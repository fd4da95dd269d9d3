#!/usr/bin/env bash
# What the self-hosted T4 runner must have before the t4 profile can run; one line naming
# everything missing, exit 1, rather than a failure an hour into the run.
#
#   bash .github/scripts/check_gpu_runner.sh
#
# MIN_DRIVER (default 535): the oldest NVIDIA driver the pinned vLLM's CUDA 12 build runs on.
# MIN_FREE_GB (default 40): the GPU stack, the model and the pip cache.
# CHECK_NETWORK=0 skips the two reachability checks (tests).
set -uo pipefail
MIN_DRIVER="${MIN_DRIVER:-535}"
MIN_FREE_GB="${MIN_FREE_GB:-40}"
missing=()

if command -v python3 >/dev/null; then
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || missing+=("Python 3.11 or newer as python3")
  python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=("python3-venv (python3 -m venv)")
else
  missing+=("python3")
fi
for tool in git nginx caddy haproxy openssl curl; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || missing+=("$tool")
done
if command -v nvidia-smi >/dev/null; then
  driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
  if [ -z "$driver" ]; then
    missing+=("a GPU nvidia-smi can see")
  elif [ "${driver%%.*}" -lt "$MIN_DRIVER" ] 2>/dev/null; then
    missing+=("NVIDIA driver ${MIN_DRIVER} or newer (found ${driver})")
  fi
else
  missing+=("nvidia-smi (the NVIDIA driver)")
fi
free_gb="$(df -Pk . | awk 'NR == 2 { print int($4 / 1048576) }')"
[ "${free_gb:-0}" -ge "$MIN_FREE_GB" ] || missing+=("${MIN_FREE_GB} GB free disk (found ${free_gb} GB)")
if [ "${CHECK_NETWORK:-1}" != 0 ]; then
  curl -fsS --max-time 15 -o /dev/null https://pypi.org/simple/vllm/ || missing+=("access to PyPI")
  curl -fsS --max-time 15 -o /dev/null https://huggingface.co/api/models/Qwen/Qwen2.5-0.5B-Instruct \
    || missing+=("access to the model hub (huggingface.co)")
fi

if [ ${#missing[@]} -gt 0 ]; then
  msg="$(printf '%s; ' "${missing[@]}")"
  echo "the T4 runner is missing: ${msg%; }"
  exit 1
fi
echo "the T4 runner has what the t4 profile needs (driver ${driver}, ${free_gb} GB free)"
