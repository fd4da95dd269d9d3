"""Cancellation, client straight to vLLM."""

from verify.jobs.streaming._cancellation import cancellation_job

JOB = cancellation_job("cancel-direct", "Client straight to vLLM", None)
