"""Cancellation, through nginx with default settings."""

from verify.jobs.streaming._cancellation import cancellation_job

JOB = cancellation_job("cancel-nginx-default", "Through nginx with default settings", "nginx-default")
