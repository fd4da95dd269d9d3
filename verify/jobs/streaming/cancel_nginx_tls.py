"""Cancellation, through nginx with default settings and TLS termination."""

from verify.jobs.streaming._cancellation import cancellation_job

JOB = cancellation_job("cancel-nginx-tls", "Through nginx with default settings and TLS termination", "nginx-tls")
