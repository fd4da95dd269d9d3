"""A long prefill meets a decoding stream, with a small token budget per step (chunked prefill)."""

from verify.jobs.prefill_decode._stall import stall_job

JOB = stall_job("prefill-stall-chunked", "small-batch-budget", chunked=True)
