"""Cancellation through Caddy at its defaults."""

from verify.jobs.streaming._cancellation import cancellation_job

JOB = cancellation_job("cancel-caddy-default", "Through Caddy with default settings", "caddy-default")
