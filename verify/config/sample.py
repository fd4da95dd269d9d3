"""The live sample: the jobs the README's site command measures again on every run, whatever their
records say, and whose verdicts must agree with the committed ones.

One server start (the default variant) and the offline engine, and jobs that between them cover
what the site's evidence is made of: a stream read event by event through a proxy, a cancellation
through a proxy seen by the engine, the KV cache the engine reports, and offline generation.
Everything else rests on its committed record until its inputs change (`verify run` re-measures
those) or `bash verify/bootstrap.sh site --all` re-measures everything.
"""

SAMPLE = (
    "finish-reasons",        # streams (SSE transcripts with arrival times) through nginx
    "cancel-nginx-default",  # a cancellation through nginx, read from the engine's /metrics
    "kv-sizing",             # the KV cache, from the server's start-up log and metrics
    "offline-chat",          # offline generation with vllm.LLM
)
