#!/usr/bin/env bash
# The same stream from the plain completions endpoint: text sits in choices[0].text.
BASE_URL="${BASE_URL:-http://localhost:8000/v1}"

curl -N -s "$BASE_URL/completions" \
  -H "Content-Type: application/json" \
  -d '{"model": "chat", "prompt": "One, two, three,",
       "max_tokens": 20, "temperature": 0, "stream": true}'
