"""How a request ends, on a server with request logging off (vLLM's default)."""

from verify.jobs.lifecycle._endings import endings_job

JOB = endings_job("request-endings-quiet", "no-request-log", logged=False)
