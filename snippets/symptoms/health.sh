#!/usr/bin/env bash
# What /health answers: 200 on a ready server, 503 once its engine has died, no status at all while
# the model loads or after the process has gone.
BASE_URL="${BASE_URL:-http://localhost:8000/v1}"

curl -s -o /dev/null -w '/health: %{http_code}\n' --max-time 5 "${BASE_URL%/v1}/health"
