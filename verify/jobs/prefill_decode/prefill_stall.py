"""A long prefill meets a decoding stream, with the default token budget."""

from verify.jobs.prefill_decode._stall import stall_job

JOB = stall_job("prefill-stall", "default", chunked=False)
