#!/usr/bin/env bash
# A long request that does not stream: through a proxy whose read timeout is shorter than the whole
# generation, the status is the proxy's 504.
BASE_URL="${BASE_URL:-http://localhost:8000/v1}"
MODEL="${MODEL:-chat}"

curl -s -o /dev/null -w 'HTTP %{http_code} after %{time_total} s\n' "$BASE_URL/completions" \
  -H "Content-Type: application/json" \
  -d "{\"model\": \"$MODEL\", \"prompt\": \"Write a long story.\", \"max_tokens\": ${MAX_TOKENS:-200},
       \"ignore_eos\": true}"
