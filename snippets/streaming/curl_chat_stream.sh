#!/usr/bin/env bash
# Stream a chat completion and print each SSE line as it arrives.
# -N turns off curl's output buffering.
BASE_URL="${BASE_URL:-http://localhost:8000/v1}"

curl -N -s "$BASE_URL/chat/completions" \
  -H "Content-Type: application/json" \
  -d '{"model": "chat",
       "messages": [{"role": "user", "content": "Count to five."}],
       "max_tokens": 40, "temperature": 0, "stream": true}'
