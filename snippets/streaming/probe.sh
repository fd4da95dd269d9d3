#!/usr/bin/env bash
# The streaming article's path checks, against your own endpoint: a few small requests, two minutes at most.
# Run from a checkout after `bash verify/bootstrap.sh site`. The API key is read from the variable named
# by API_KEY_ENV and never printed; CA_FILE trusts a private TLS certificate.
.venv/bin/verify probe "${BASE_URL:-http://localhost:8000/v1}" \
    --metrics-url "${METRICS_URL:-http://localhost:8000/metrics}" \
    ${API_KEY_ENV:+--api-key-env "$API_KEY_ENV"} \
    ${CA_FILE:+--ca-file "$CA_FILE"} \
    --report "${REPORT:-probe-report.json}"
