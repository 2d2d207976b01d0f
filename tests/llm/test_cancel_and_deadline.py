"""One generation at a time under cancellation, and deadlines kept per token, on the real model.

Bounded by tokens: every generation here asks for at most a few hundred tokens of a 270M model,
and each one that is meant to be stopped early is stopped by the runtime, not by pytest.
"""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from edge_agent.llm.base import GenerationTimeout, ModelError

pytestmark = pytest.mark.real_model

LONG_OUTPUT_PROMPT = "Here is a very long numbered list of everyday household tasks, one a line:\n1."
MANY_TOKENS = 300  # more than any stopped generation gets to decode


class Spans:
    """Records each blocking section (worker thread) of the model: start, end, and how it ended."""

    def __init__(self, model):
        self.model = model
        self.rows: list[tuple[float, float, str]] = []
        self.started = threading.Event()
        self._original = model._complete_blocking

    def __enter__(self):
        def recording(*a, **kw):
            start = time.monotonic()
            self.started.set()
            how = "ok"
            try:
                return self._original(*a, **kw)
            except BaseException as err:
                how = type(err).__name__ + ":" + str(err)
                raise
            finally:
                self.rows.append((start, time.monotonic(), how))

        self.model._complete_blocking = recording
        return self

    def __exit__(self, *exc):
        del self.model._complete_blocking

    def assert_no_overlap(self):
        rows = sorted(self.rows)
        for (s0, e0, _), (s1, _e1, _) in zip(rows, rows[1:]):
            assert e0 <= s1, f"blocking sections overlapped: {rows}"


async def test_cancelled_generation_holds_the_lock_until_its_thread_returned(real_model):
    with Spans(real_model) as spans:
        first = asyncio.create_task(real_model.generate(LONG_OUTPUT_PROMPT, max_tokens=MANY_TOKENS, role="t1"))
        await asyncio.to_thread(spans.started.wait, 60)
        queued = [asyncio.create_task(real_model.generate(f"Count from {i} to {i + 3}:", max_tokens=6, role=f"t{i}"))
                  for i in (2, 3)]
        await asyncio.sleep(0.2)  # the first is decoding in its thread now
        first.cancel()
        done = await asyncio.gather(first, *queued, return_exceptions=True)
    assert isinstance(done[0], asyncio.CancelledError)
    assert all(not isinstance(d, BaseException) and d.usage.generated_tokens > 0 for d in done[1:])
    assert len(spans.rows) == 3
    spans.assert_no_overlap()
    assert "generation aborted" in sorted(spans.rows)[0][2]  # stopped by the abort, not run to the end
    assert not real_model.lock.held and real_model.lock.queue_depth == 0
    again = await real_model.generate("Say hi:", max_tokens=4)  # the context is still sound
    assert again.usage.generated_tokens > 0


async def test_cancel_during_a_long_prefill_stops_it_between_graph_nodes(real_model):
    prompt = " ".join(f"fact {i} about the garden" for i in range(500))  # ~3,000 tokens
    n_prompt = real_model.count_tokens(prompt) + 1
    real_model._llm.reset()
    with Spans(real_model) as spans:
        task = asyncio.create_task(real_model.generate(prompt, max_tokens=4))
        await asyncio.to_thread(spans.started.wait, 60)
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert "generation aborted" in spans.rows[0][2]
    assert real_model._llm.n_tokens < n_prompt  # the prefill did not run to its end
    assert not real_model.lock.held


async def test_repeated_cancellation_of_the_waiting_task_still_waits_for_the_thread(real_model):
    with Spans(real_model) as spans:
        task = asyncio.create_task(real_model.generate(LONG_OUTPUT_PROMPT, max_tokens=MANY_TOKENS))
        await asyncio.to_thread(spans.started.wait, 60)
        for _ in range(3):
            task.cancel()
            await asyncio.sleep(0.01)
        with pytest.raises(asyncio.CancelledError):
            await task
        assert len(spans.rows) == 1, "the task ended before the worker thread returned"
    assert not real_model.lock.held


def _overrun_tokens(spans: Spans, deadline: float, usage) -> float:
    """How far past the deadline the worker thread returned, in the run's own decode tokens."""
    end = spans.rows[-1][1]
    per_token_s = usage.decode_ms / 1000 / max(usage.generated_tokens, 1)
    return (end - deadline) / per_token_s


@pytest.mark.parametrize("structured", [False, True], ids=["free", "structured"])
async def test_deadline_ends_the_generation_within_a_token(real_model, structured):
    from pydantic import BaseModel, Field

    class Tasks(BaseModel):
        items: list[str] = Field(min_length=30, max_length=40)

    await real_model.generate(LONG_OUTPUT_PROMPT, max_tokens=16)  # the runtime measures its rates
    per_token_s = real_model.sessions.rates_s()[1]
    assert per_token_s > 0
    with Spans(real_model) as spans:
        deadline = time.monotonic() + 20 * per_token_s  # time for ~20 of the 300 tokens asked for
        with pytest.raises(GenerationTimeout) as info:
            if structured:
                await real_model.generate_structured("List household tasks as JSON.", Tasks, max_tokens=MANY_TOKENS,
                                                     deadline=deadline)
            else:
                await real_model.generate(LONG_OUTPUT_PROMPT, max_tokens=MANY_TOKENS, deadline=deadline)
    usage = info.value.usage
    assert 0 < usage.generated_tokens < MANY_TOKENS
    assert info.value.raw  # the partial output is reported
    assert _overrun_tokens(spans, deadline, usage) <= 1.5
    assert not real_model.lock.held


async def test_a_prefill_that_cannot_finish_in_time_is_not_started(real_model):
    prompt = " ".join(f"fact {i} about the garden" for i in range(400))
    real_model._llm.reset()
    await real_model.generate(prompt, max_tokens=1)  # measures the prefill rate
    prefill_s = real_model.sessions.rates_s()[0]
    real_model._llm.reset()
    with pytest.raises(GenerationTimeout) as info:
        await real_model.generate(prompt, max_tokens=4, deadline=time.monotonic() + 50 * prefill_s)
    assert info.value.usage.generated_tokens == 0
    assert real_model._llm.n_tokens == 0  # refused up front: nothing was evaluated


async def test_session_keeper_is_touched_only_under_the_lock(real_model):
    keeper = real_model.sessions
    touched: list[tuple[str, bool, bool]] = []
    in_thread = threading.Event()
    original_blocking = real_model._complete_blocking
    original_forget = keeper.forget

    def blocking(*a, **kw):
        in_thread.set()
        try:
            return original_blocking(*a, **kw)
        finally:
            in_thread.clear()

    def forget(session):
        touched.append((session, real_model.lock.held, in_thread.is_set()))
        original_forget(session)

    real_model._complete_blocking, keeper.forget = blocking, forget
    try:
        await real_model.generate("Say hello:", max_tokens=2, session="s:a")
        assert keeper.trail("s:a") is not None
        task = asyncio.create_task(real_model.generate(LONG_OUTPUT_PROMPT, max_tokens=24, session="s:b"))
        await asyncio.to_thread(in_thread.wait, 60)
        real_model.forget_session("s:a")  # while s:b runs in its thread
        real_model.forget_session("s:b")
        assert keeper.trail("s:a") is not None  # queued, not applied under the running thread
        await task
    finally:
        del real_model._complete_blocking
        keeper.forget = original_forget
    assert keeper.trail("s:a") is None and keeper.trail("s:b") is None
    assert [t[0] for t in touched] == ["s:a", "s:b"]
    assert all(held and not running for _, held, running in touched)


async def test_close_waits_for_a_running_generation(tiny_model_path):
    from edge_agent.llm.llamacpp import LlamaCppModel

    model = LlamaCppModel(tiny_model_path, n_ctx=1024, n_threads=2, head_cache_mb=0)
    with Spans(model) as spans:
        task = asyncio.create_task(model.generate(LONG_OUTPUT_PROMPT, max_tokens=MANY_TOKENS))
        await asyncio.to_thread(spans.started.wait, 60)
        await asyncio.to_thread(model.close)  # returns only after the thread stopped
        assert len(spans.rows) == 1 and "generation aborted" in spans.rows[0][2]
        with pytest.raises(ModelError):
            await task
    with pytest.raises(ModelError, match="closed"):
        await model.generate("hi", max_tokens=2)
