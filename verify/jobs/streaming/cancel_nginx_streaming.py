"""Cancellation, through nginx tuned for streaming."""

from verify.jobs.streaming._cancellation import cancellation_job

JOB = cancellation_job("cancel-nginx-streaming", "Through nginx tuned for streaming", "nginx-streaming")
