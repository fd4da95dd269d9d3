#!/usr/bin/env bash
# Watch what requests get while you drain the endpoint (a rollout, a pod deleted, SIGTERM): start it,
# then start the drain. Run from a checkout after `bash verify/bootstrap.sh site`; further arguments go
# to `verify probe` (--report FILE keeps the whole report).
.venv/bin/verify probe "${BASE_URL:-http://localhost:8000/v1}" --watch-drain "${WATCH_S:-60}" \
    ${API_KEY_ENV:+--api-key-env "$API_KEY_ENV"} "$@"
