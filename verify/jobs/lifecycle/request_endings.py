"""How a request ends, on a server that logs requests."""

from verify.jobs.lifecycle._endings import endings_job

JOB = endings_job("request-endings", "default", logged=True)
