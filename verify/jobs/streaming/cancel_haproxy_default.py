"""Cancellation through HAProxy at its defaults."""

from verify.jobs.streaming._cancellation import cancellation_job

JOB = cancellation_job("cancel-haproxy-default", "Through HAProxy with default settings", "haproxy-default")
