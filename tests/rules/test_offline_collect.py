"""What two offline jobs' collect() sends and how it files what comes back, on stand-ins for the engine and server.

offline-batching times one loop, call by call, and reads the loop over each smaller batch from its first calls;
offline-generation-defaults sends its server requests at once and files each answer under its own request.

offline-batching's collect() runs the page's snippet (snippets/offline/batch_vs_loop.py) on a stand-in for
vllm.LLM whose calls take a known time on a stand-in clock, so which calls the job makes and how it adds up their
times can be checked exactly. The stand-ins' answers are no engine or server output: no verdict is decided from
them here (the rules are tested on the committed records in test_offline.py).
"""

from __future__ import annotations

import contextlib
import sys
from types import SimpleNamespace

import pytest

from verify.jobs.offline import offline_batching as job
from verify.runner.context import BaseContext


class _Clock:
    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


class _LLM:
    """generate() takes 1 s a call plus 0.1 s a prompt, and answers each prompt with its own text."""

    def __init__(self, clock: _Clock):
        self.clock, self.calls = clock, []

    def generate(self, prompts, params, use_tqdm=True):
        self.calls.append(list(prompts))
        self.clock.now += 1.0 + 0.1 * len(prompts)
        return [SimpleNamespace(outputs=[SimpleNamespace(token_ids=[1] * params["max_tokens"], text=f"answer to {p}")])
                for p in prompts]


class _Ctx(BaseContext):
    def __init__(self, llm: _LLM, clock: _Clock):
        super().__init__()
        self._llm, self._clock = llm, clock

    def llm(self):
        return self._llm

    def snippet(self, relative: str):
        module = super().snippet(relative)
        module.time = self._clock  # the snippet's timed() reads the stand-in clock
        return module


@pytest.fixture
def collected(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", SimpleNamespace(LLM=object, SamplingParams=lambda **kw: kw))
    # The snippet, imported against the stand-in, is taken out of sys.modules again after the test.
    monkeypatch.setitem(sys.modules, "snippet_offline_batch_vs_loop", None)
    clock = _Clock()
    llm = _LLM(clock)
    return job.collect(_Ctx(llm, clock)), llm


def test_the_loop_runs_once_over_the_largest_batch(collected):
    d, llm = collected
    largest = job.SIZES[-1]
    prompts = [f"Write a short story about the number {i}." for i in range(largest)]
    # The warm-up, one call per batch size, then one call per prompt of the largest batch: nothing else.
    assert llm.calls == [["Warm up."], *(prompts[:k] for k in job.SIZES), *([p] for p in prompts)]
    assert d["loop_call_seconds"] == [1.1] * largest


def test_each_batch_size_reads_the_first_calls_of_the_loop(collected):
    d, _ = collected
    for k in job.SIZES:
        x = d["sizes"][str(k)]
        assert x["batch_seconds"] == pytest.approx(1.0 + 0.1 * k)
        assert x["loop_seconds"] == pytest.approx(1.1 * k)
        assert x["tokens"] == k * job.MAX_TOKENS and x["same_outputs"] is True and x["events"] == k


def test_a_loop_answer_that_differs_counts_only_for_the_batches_that_hold_its_prompt(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", SimpleNamespace(LLM=object, SamplingParams=lambda **kw: kw))
    monkeypatch.setitem(sys.modules, "snippet_offline_batch_vs_loop", None)
    clock = _Clock()
    llm = _LLM(clock)
    alone = llm.generate

    def generate(prompts, params, use_tqdm=True):  # the prompt of index 5, alone, gets another answer
        out = alone(prompts, params, use_tqdm)
        if prompts == ["Write a short story about the number 5."]:
            out[0].outputs[0].text = "another answer"
        return out
    llm.generate = generate
    d = job.collect(_Ctx(llm, clock))
    assert {k: x["same_outputs"] for k, x in d["sizes"].items()} == {"1": True, "4": True, "16": False}


# --- offline-generation-defaults sends its six chat requests at once and files each answer under its request

class _Served:
    api = "http://127.0.0.1:1/v1"


class _DefaultsCtx(BaseContext):
    def __init__(self, llm):
        super().__init__()
        self._llm = llm

    def llm(self, model=None):
        return self._llm

    def snippet(self, relative: str):
        from verify.jobs.offline import offline_generation_defaults as defaults
        assert relative == defaults.SNIPPET
        return SimpleNamespace(three_ways=lambda llm, prompts: {}, settings=lambda params: {})

    @contextlib.contextmanager
    def server(self, model=None):
        yield _Served()


def test_each_server_answer_is_filed_under_its_own_request_and_prompt(monkeypatch):
    import httpx

    from verify.jobs.offline import offline_generation_defaults as defaults
    sent = []

    def answer(json: dict) -> httpx.Response:
        # The stand-in answers with the length the request asked for (24 when it set none), echoing its prompt.
        return httpx.Response(200, json={"choices": [{"finish_reason": "length",
                                                      "message": {"content": json["messages"][0]["content"]}}],
                                         "usage": {"completion_tokens": json.get("max_tokens", 24)}})

    def post(url, timeout, json):
        sent.append(json)
        return answer(json)
    monkeypatch.setattr(httpx, "post", post)
    monkeypatch.setattr(httpx, "get", lambda url, timeout: httpx.Response(200, json={"data": [{"id": "chat"}]}))
    d = defaults._collect(_DefaultsCtx(None), "a copy")
    assert len(sent) == len(defaults.SERVER_REQUESTS) * len(defaults.PROMPTS)
    for label, extra in defaults.SERVER_REQUESTS:
        x = d["server"][label]
        asked = [{"model": "chat", "messages": [{"role": "user", "content": p}], "temperature": 0, **extra}
                 for p in defaults.PROMPTS]
        assert x["request"] == extra
        # In the prompts' order (the prompts differ in length, so each answer's size says whose it is).
        assert [(a["tokens"], a["bytes"]) for a in x["answers"]] == \
            [(extra.get("max_tokens", 24), len(answer(j).content)) for j in asked]
