"""Cached prompt heads: RAM LRU and disk (units), then restore, keep-on-first-use and restart on the real model."""
from __future__ import annotations

import json
import time

import pytest
from typing import Literal

from pydantic import BaseModel, Field

from edge_agent.llm.base import ChatMessage
from edge_agent.llm.heads import HEAD_SUFFIX, HeadCache

HEAD = ChatMessage("system", "You are the planner of a household assistant. " * 12 + "Choose a skill.")


def _cache(tmp_path, budget=1000, **kw) -> HeadCache:
    model = tmp_path / "model.gguf"
    if not model.exists():
        model.write_bytes(b"GGUF fake model")
    return HeadCache(budget, tmp_path / "heads", {"n_ctx": 4096, **kw}, model)


def test_ram_is_an_lru_within_its_budget_and_disk_keeps_everything(tmp_path):
    cache = _cache(tmp_path, budget=1000)
    for i in range(3):
        cache.add(list(range(i, i + 20)), bytes([i]) * 400)
    assert cache.ram_bytes() <= 1000 and len(cache._ram) == 2  # the oldest left RAM ...
    assert cache.data(cache.key_for(list(range(0, 20)))) == bytes([0]) * 400  # ... but is read back from disk
    assert cache.stats.disk_loads == 1


def test_a_restarted_cache_finds_its_heads_on_disk_and_a_changed_setting_does_not(tmp_path):
    tokens = list(range(100, 130))
    _cache(tmp_path).add(tokens, b"state" * 50)
    again = _cache(tmp_path)
    assert again.has(tokens) is not None and again.best(tokens + [1, 2]) == (again.key_for(tokens), 30)
    assert _cache(tmp_path, n_batch=64).has(tokens) is None  # other runtime settings: other KV cells


def test_an_unreadable_head_file_is_rebuilt_not_fatal(tmp_path):
    cache = _cache(tmp_path)
    tokens = list(range(40))
    cache.add(tokens, b"x" * 100)
    path = next((tmp_path / "heads").glob(f"*{HEAD_SUFFIX}"))
    path.write_bytes(b"not json\n")
    assert _cache(tmp_path).has(tokens) is None


def test_the_disk_drops_the_least_recently_used_heads_past_its_budget(tmp_path):
    cache = _cache(tmp_path, budget=100)  # disk budget: 4 x 100 bytes
    for i in range(6):
        cache.add(list(range(i * 50, i * 50 + 20)), bytes([i]) * 150)
        time.sleep(0.01)  # distinct modification times
    files = list((tmp_path / "heads").glob(f"*{HEAD_SUFFIX}"))
    assert sum(p.stat().st_size for p in files) <= 400 + 2 * 200  # newest kept, oldest gone
    assert _cache(tmp_path, budget=100).has(list(range(0, 20))) is None
    assert _cache(tmp_path, budget=100).has(list(range(250, 270))) is not None


# -- the real model ------------------------------------------------------------------------------
class Answer(BaseModel):
    skill: Literal["calendar", "notes", "files", "none"]


def _prompt(model, question: str) -> tuple[str, str]:
    from edge_agent.harness.prompts import VARIABLE, head_text

    head = head_text(model.render_chat, [HEAD, ChatMessage("user", VARIABLE)])
    return head, model.render_chat([HEAD, ChatMessage("user", question)])


@pytest.fixture
def fresh_model(tiny_model_path, tmp_path):
    from edge_agent.llm.llamacpp import LlamaCppModel

    made = []

    def make(**kw):
        made.append(LlamaCppModel(tiny_model_path, n_ctx=2048, n_threads=2, head_cache_dir=tmp_path / "heads", **kw))
        return made[-1]
    yield make
    for m in made:
        m.close()


@pytest.mark.real_model
async def test_a_head_met_once_is_kept_and_the_next_prompt_prefills_only_its_tail(fresh_model):
    model = fresh_model()
    head, first = _prompt(model, "When is the dentist?")
    n_head = model.count_tokens(head) + 1  # with BOS
    await model.generate_structured(first, Answer, max_tokens=16, head=head)
    assert model.head_cache_stats()["warmed"] == 1 and model.head_cache_stats()["entries"] == 1
    await model.generate("Something unrelated about the weather, to take the context.", max_tokens=4)
    _, second = _prompt(model, "What's on next week?")
    out = await model.generate_structured(second, Answer, max_tokens=16, head=head)
    assert out.usage.cached_tokens >= n_head - 2
    assert out.usage.prefilled_tokens <= model.count_tokens(second) + 1 - n_head + 2
    assert model.head_cache_stats()["restores"] == 1 and model.head_cache_stats()["warmed"] == 1


@pytest.mark.real_model
async def test_a_restarted_model_is_warm_at_once_from_disk(fresh_model):
    first = fresh_model()
    head, prompt = _prompt(first, "Where does my brother live?")
    await first.warm_heads([head])
    assert first.head_cache_stats()["warmed"] == 1
    first.close()
    again = fresh_model()
    await again.warm_heads([head])  # found on disk: nothing evaluated
    stats = again.head_cache_stats()
    assert stats["warmed"] == 0 and stats["disk_loads"] == 1
    out = await again.generate_structured(prompt, Answer, max_tokens=16, head=head)
    assert out.usage.cached_tokens >= again.count_tokens(head) - 1
    assert again.head_cache_stats()["hits"] == 1


@pytest.mark.real_model
async def test_a_disabled_cache_keeps_nothing(fresh_model, tmp_path):
    model = fresh_model(head_cache_mb=0)
    head, prompt = _prompt(model, "Who is my landlord?")
    await model.warm_heads([head])
    await model.generate_structured(prompt, Answer, max_tokens=16, head=head)
    stats = model.head_cache_stats()
    assert stats["entries"] == 0 and stats["ram_bytes"] == 0 and not list((tmp_path / "heads").glob("*"))


@pytest.mark.real_model
async def test_grammar_output_is_compact_json(real_model):
    class Step(BaseModel):
        kind: str = Field(max_length=10)
        items: list[int] = Field(max_length=3)

    prompt = real_model.render_chat([ChatMessage("user", "Reply with JSON: a kind and three numbers.")])
    out = await real_model.generate_structured(prompt, Step, max_tokens=80)
    assert out.raw == json.dumps(json.loads(out.raw), separators=(",", ":"), ensure_ascii=False)
    assert out.usage.forced_tokens > 0  # `{"kind":"` and `","items":[` need no sampling


@pytest.mark.real_model
async def test_each_grammar_is_parsed_once_and_cloned_for_every_generation(real_model):
    class Once(BaseModel):
        word: str = Field(max_length=8)

    prompt = real_model.render_chat([ChatMessage("user", "One word.")])
    await real_model.generate_structured(prompt, Once, max_tokens=20)
    parses = real_model._decoder.parses
    for _ in range(3):
        await real_model.generate_structured(prompt, Once, max_tokens=20)
    assert real_model._decoder.parses == parses


@pytest.mark.real_model
async def test_a_steered_generation_decodes_its_target_through_the_real_grammar(real_model):
    class Step(BaseModel):
        kind: str = Field(max_length=10)
        text: str = Field(max_length=40)

    prompt = real_model.render_chat([ChatMessage("user", "What is 2+2?")])
    target = '{"kind":"answer","text":"It is four, as 2+2=4."}'
    out = await real_model.generate_structured(prompt, Step, max_tokens=60, steer=target)
    assert out.raw == target
    assert 0 < out.usage.forced_tokens < out.usage.generated_tokens  # keys forced, the text decoded
    free = await real_model.generate(prompt, max_tokens=30, steer="Four.")
    assert free.text == "Four." and free.usage.forced_tokens == 0



@pytest.mark.real_model
async def test_a_prompt_gets_the_same_kv_cells_cold_warm_and_after_a_similar_prompt(fresh_model):
    """Greedy answers turn on the last bits of the KV cells, and those depend on the batch a token
    was evaluated in. So a prompt reuses only its own head computed on its own, never whatever
    prefix the last prompt left: cold, warm, or right after a near-identical prompt, its cells
    are the same bytes (two eval runs of one commit gave different answers before)."""
    from edge_agent.llm.heads import seq_state

    cold = fresh_model(head_cache_mb=0)
    head, similar = _prompt(cold, "When is the dentist appointment?")
    _, prompt = _prompt(cold, "When is the dentist appointment again, and where?")
    await cold.generate(prompt, max_tokens=2, head=head)
    expected = seq_state(cold._llm)
    cold.close()

    warm = fresh_model()
    await warm.warm_heads([head])
    await warm.generate(similar, max_tokens=2, head=head)  # leaves most of the prompt in the context
    await warm.generate(prompt, max_tokens=2, head=head)
    assert seq_state(warm._llm) == expected
    await warm.generate("Something unrelated, to take the context.", max_tokens=2)
    await warm.generate(prompt, max_tokens=2, head=head)  # the head restored from the cache
    assert seq_state(warm._llm) == expected and warm.head_cache_stats()["restores"] >= 1
