#!/usr/bin/env bash
# The model names the server answers to: the base model's served name and every loaded adapter.
BASE_URL="${BASE_URL:-http://localhost:8000/v1}"

curl -s --max-time 10 "$BASE_URL/models" |
  python3 -c 'import json, sys; print(*(m["id"] for m in json.load(sys.stdin)["data"]), sep="\n")'
