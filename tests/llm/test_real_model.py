"""The runtime on the real bundled model (Gemma 3 270M Q4_K_M through llama-cpp-python)."""
from __future__ import annotations

import asyncio
import time
from enum import Enum
from typing import Literal, Optional

import pytest
from pydantic import BaseModel, Field

from edge_agent.llm.base import ChatMessage, ContextOverflow, ModelLoadError

pytestmark = pytest.mark.real_model


class Color(str, Enum):
    red = "red"
    green = "green"
    blue = "blue"


class Pick(BaseModel):
    color: Color
    confident: bool


class Address(BaseModel):
    city: str = Field(max_length=30)
    postcode: Optional[str] = Field(default=None, max_length=10)


class Person(BaseModel):
    name: str = Field(min_length=1, max_length=24)
    age: int = Field(ge=0, le=130)
    home: Address
    tags: list[Literal["friend", "family", "work"]] = Field(default_factory=list, max_length=3)


class Step(BaseModel):
    kind: Literal["call", "answer"]
    text: str = Field(max_length=40)


SCHEMAS = [
    (Pick, "Pick a colour for the sky."),
    (Address, "Where does Ana live? She lives in Leeds."),
    (Person, "Describe Tom, 34, a friend from Bristol."),
    (Step, "Decide whether to call a tool or answer: what is 2+2?"),
]


@pytest.mark.parametrize("schema,question", SCHEMAS, ids=[s.__name__ for s, _ in SCHEMAS])
async def test_structured_output_validates(real_model, schema, question):
    prompt = real_model.render_chat([ChatMessage("system", "Reply with JSON only."),
                                     ChatMessage("user", question)])
    out = await real_model.generate_structured(prompt, schema, max_tokens=160, role="test")
    assert isinstance(out.value, schema)
    assert schema.model_validate_json(out.raw) == out.value
    assert out.usage.prompt_tokens > 0 and out.usage.generated_tokens > 0


async def test_grammars_are_compiled_once(real_model):
    g1 = real_model.grammar_for(Pick)
    g2 = real_model.grammar_for(Pick)
    assert g1 is g2


async def test_three_concurrent_generations_run_one_at_a_time_in_arrival_order(real_model):
    spans: dict[int, tuple[float, float]] = {}
    original = real_model._complete_blocking

    def recording(tokens, *a, **kw):
        start = time.perf_counter()
        try:
            return original(tokens, *a, **kw)
        finally:
            spans[len(spans)] = (start, time.perf_counter())
            order.append(tokens_to_id[tuple(tokens)])

    prompts = [f"Count from {i} to {i + 5}:" for i in (1, 20, 300)]
    tokens_to_id = {tuple(real_model.tokenize(p, add_bos=True)): i for i, p in enumerate(prompts)}
    order: list[int] = []
    real_model._complete_blocking = recording
    try:
        tasks = []
        for p in prompts:
            tasks.append(asyncio.create_task(real_model.generate(p, max_tokens=12, role="t")))
            await asyncio.sleep(0)
        results = await asyncio.gather(*tasks)
    finally:
        del real_model._complete_blocking
    assert order == [0, 1, 2]
    ends = [spans[i] for i in range(3)]
    for (s0, e0), (s1, e1) in zip(ends, ends[1:]):
        assert e0 <= s1, "generations overlapped"
    assert [r.usage.wait_ms > 0 for r in results][1:] == [True, True]


async def test_event_loop_stays_live_during_generation(real_model):
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    t = asyncio.create_task(ticker())
    await real_model.generate("Write a short list of fruits:", max_tokens=48, role="t")
    t.cancel()
    assert ticks >= 3


async def test_overflow_names_both_numbers(real_model):
    long_prompt = "word " * 5000
    with pytest.raises(ContextOverflow) as info:
        await real_model.generate(long_prompt, max_tokens=100, role="l2")
    msg = str(info.value)
    assert str(info.value.prompt_tokens) in msg and "100" in msg and "4096" in msg and "l2" in msg
    assert real_model.lock.queue_depth == 0 and not real_model.lock.held


async def test_prompt_that_fits_only_without_reserve_is_refused(real_model):
    text = "apple " * 2000
    n = real_model.count_tokens(text) + 1  # + BOS
    assert n < 4096
    with pytest.raises(ContextOverflow):
        await real_model.generate(text, max_tokens=4096 - n + 1)


@pytest.mark.parametrize("text", [
    "plain ascii words " * 40,
    "Café naïve façade — Zoë’s résumé costs £62.40 " * 20,
    "日本語のテキストと絵文字 🎉🎂👩‍👩‍👧 を含む文章です。" * 15,
    "🎉" * 300,
])
@pytest.mark.parametrize("n", [1, 2, 7, 50, 120])
def test_fit_to_tokens_never_exceeds_n(real_model, text, n):
    out = real_model.fit_to_tokens(text, n)
    assert real_model.count_tokens(out) <= n
    assert "\ufffd" not in out
    if real_model.count_tokens(text) <= n:
        assert out == text


def test_fit_to_tokens_keeps_short_text(real_model):
    assert real_model.fit_to_tokens("hello there", 50) == "hello there"


def test_plain_template_is_used_for_a_base_model(real_model):
    assert not real_model.has_chat_template
    p = real_model.render_chat([ChatMessage("user", "hi")])
    assert p.endswith("### Assistant\n") and "### User\nhi" in p


async def test_session_resume_reuses_kv_prefix(real_model):
    base = real_model.render_chat([ChatMessage("system", "You are a helpful assistant. " * 20),
                                   ChatMessage("user", "Say hello.")])
    first = await real_model.generate(base, max_tokens=8, session="l2:test")
    # another session takes the context in between
    await real_model.generate("Unrelated prompt about the weather today", max_tokens=8)
    resumed = base + first.text + "\n" + "### User\nAnd goodbye?\n### Assistant\n"
    again = await real_model.generate(resumed, max_tokens=8, session="l2:test")
    new_tokens = real_model.count_tokens(resumed) + 1 - real_model.count_tokens(base) - 1
    assert again.usage.cached_tokens >= real_model.count_tokens(base) - 2
    assert again.usage.prefilled_tokens <= new_tokens + 12
    real_model.forget_session("l2:test")


def test_missing_model_file_names_the_path(tmp_path):
    from edge_agent.llm.llamacpp import LlamaCppModel

    missing = tmp_path / "nope.gguf"
    with pytest.raises(ModelLoadError, match=str(missing)):
        LlamaCppModel(missing)


@pytest.mark.parametrize("content", [b"", b"not a model at all", b"GGUF\x03\x00\x00\x00garbage" * 10])
def test_corrupt_model_file_names_the_path(tmp_path, content):
    from edge_agent.llm.llamacpp import LlamaCppModel

    bad = tmp_path / "bad.gguf"
    bad.write_bytes(content)
    with pytest.raises(ModelLoadError, match=str(bad)):
        LlamaCppModel(bad)


def _chain_choice(decoder, smpl, logits) -> int | None:
    """What llama.cpp's own sampler chain picks from `logits`: the grammar over the whole
    vocabulary, then greedy (None when the grammar admits nothing)."""
    import ctypes

    import llama_cpp
    import numpy as np

    from edge_agent.llm.grammar_decode import _TOKEN_DTYPE

    n = decoder.n_vocab
    data = (llama_cpp.llama_token_data * n)()
    view = np.frombuffer(data, dtype=_TOKEN_DTYPE)
    view["id"], view["logit"], view["p"] = np.arange(n, dtype=np.int32), logits[:n], 0.0
    arr = llama_cpp.llama_token_data_array(data=ctypes.cast(data, llama_cpp.llama_token_data_p), size=n,
                                           selected=-1, sorted=False)
    grammar = llama_cpp.llama_sampler_clone(smpl)
    greedy = llama_cpp.llama_sampler_init_greedy()
    try:
        llama_cpp.llama_sampler_apply(grammar, ctypes.byref(arr))
        if np.isneginf(view["logit"][:arr.size]).all():
            return None
        llama_cpp.llama_sampler_apply(greedy, ctypes.byref(arr))
        return int(view["id"][arr.selected])
    finally:
        llama_cpp.llama_sampler_free(grammar)
        llama_cpp.llama_sampler_free(greedy)


@pytest.mark.parametrize("schema,question", SCHEMAS, ids=[s.__name__ for s, _ in SCHEMAS])
async def test_fast_grammar_choices_are_the_sampler_chains_on_the_same_logits(real_model, schema, question):
    """At every step the argmax-first decoder picks the token llama.cpp's chain (grammar over the
    whole vocabulary, then greedy) picks from the same logits. Whole outputs of the two paths are
    not compared: the chain re-evaluates the prompt's last token in a batch of its own, and batched
    and single-token matmuls round differently, so a near-tie can go either way (CI saw two such
    postcodes); jump-forward's batches likewise (tested apart)."""
    from edge_agent.llm.grammar_decode import GrammarDecoder

    prompt = real_model.render_chat([ChatMessage("user", question)])
    saved = real_model._decoder
    decoder = GrammarDecoder(real_model._evaluator(), jump_forward=False)
    fast_choose, steps = decoder._choose, []

    def checked(smpl, logits):
        mine = fast_choose(smpl, logits)
        steps.append((mine, _chain_choice(decoder, smpl, logits)))
        return mine

    decoder._choose = checked
    try:
        real_model._decoder = decoder
        fast = await real_model.generate_structured(prompt, schema, max_tokens=160)
        real_model.fast_grammar = False
        chain = await real_model.generate_structured(prompt, schema, max_tokens=160)
    finally:
        real_model.fast_grammar = True
        decoder.close()
        real_model._decoder = saved
    assert len(steps) >= 4 and decoder.fallbacks > 0  # the rejected-argmax search ran too
    assert [mine for mine, _ in steps] == [ref for _, ref in steps]
    assert isinstance(fast.value, schema) and isinstance(chain.value, schema)


async def test_jump_forward_appends_forced_text_and_stays_valid(real_model):
    prompt = real_model.render_chat([ChatMessage("user", SCHEMAS[2][1])])
    out = await real_model.generate_structured(prompt, Person, max_tokens=120)
    assert Person.model_validate_json(out.raw) == out.value
    assert out.usage.forced_tokens >= 4  # "name", "age", "home", "city", "tags" keys at least


def test_bounded_integers_become_grammar_enums():
    from edge_agent.llm.grammars import grammar_ready

    schema = Person.model_json_schema()
    out = grammar_ready(schema)
    assert out["properties"]["age"] == {"enum": list(range(0, 131))}
    assert grammar_ready({"type": "integer", "minimum": 0}) == {"type": "integer", "minimum": 0}


def test_json_strings_in_grammars_exclude_raw_control_characters(real_model):
    gbnf = real_model.grammar_for(Address)._grammar
    assert "\\x00-\\x1F" in gbnf


def test_grammar_keeps_the_schema_field_order(real_model):
    gbnf = real_model.grammar_for(Person)._grammar
    root = next(line for line in gbnf.splitlines() if line.startswith("root ::="))
    assert root.index("name-kv") < root.index("age-kv") < root.index("home-kv")


async def test_structured_resume_reprefills_only_the_new_tokens(real_model):
    system = ChatMessage("system", "Reply with JSON. " + "Steps: look, think, answer. " * 15)
    first_prompt = real_model.render_chat([system, ChatMessage("user", "Pick a colour for grass.")])
    first = await real_model.generate_structured(first_prompt, Pick, max_tokens=40, session="l2:trail")
    await real_model.generate("An L3 session in between.", max_tokens=4)
    follow = "\n### Tool result (check_notebook)\nNo notes.\n\n### Assistant\n"
    second = await real_model.generate_structured(first_prompt + first.raw + follow, Pick, max_tokens=40,
                                                  session="l2:trail")
    assert second.usage.prefilled_tokens <= real_model.count_tokens(follow) + 1
    real_model.forget_session("l2:trail")
