"""What the openai client does with a 503: how long until the caller sees the error, with the client's
default retries and with none."""

import time

import openai


def call(base_url: str, model: str, max_retries: int | None = None) -> dict:
    options = {} if max_retries is None else {"max_retries": max_retries}
    client = openai.OpenAI(base_url=base_url, api_key="none", **options)
    t0 = time.perf_counter()
    try:
        client.completions.create(model=model, prompt="Hi", max_tokens=4)
        return {"raised": None, "seconds": round(time.perf_counter() - t0, 3)}
    except openai.APIStatusError as e:
        return {"raised": type(e).__name__, "status": e.status_code, "seconds": round(time.perf_counter() - t0, 3),
                "default_max_retries": openai.DEFAULT_MAX_RETRIES}
