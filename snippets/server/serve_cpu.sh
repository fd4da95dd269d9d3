#!/usr/bin/env bash
# No GPU: the embedded CPU profile (SmolLM2-135M-Instruct from PyPI, float32, eager mode),
# on port 8000 until Ctrl-C. Run from a checkout after `bash verify/bootstrap.sh site`.
.venv/bin/verify serve --profile cpu --port 8000
