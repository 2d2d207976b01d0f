"""ScriptedModel/FunctionModel keep the runtime's contract; window helpers are exact."""
import asyncio

import pytest
from pydantic import BaseModel

from edge_agent.llm.base import ChatMessage, ContextOverflow, Model, ModelError, Usage
from edge_agent.llm.doubles import FunctionModel, ScriptedModel
from edge_agent.llm.window import check_window


class Choice(BaseModel):
    tool: str


def test_doubles_satisfy_the_protocol():
    assert isinstance(ScriptedModel(), Model) and isinstance(FunctionModel(fn=lambda i: "x"), Model)


async def test_scripted_model_returns_script_in_order_and_records_calls():
    m = ScriptedModel(script=["hello", {"tool": "find_file"}, Choice(tool="x")])
    assert (await m.generate("p1", max_tokens=10, role="synth")).text == "hello"
    s = await m.generate_structured("p2", Choice, max_tokens=10, role="l2", session="l2:1")
    assert s.value.tool == "find_file" and s.raw == '{"tool": "find_file"}'
    assert (await m.generate_structured("p3", Choice, max_tokens=10)).value.tool == "x"
    assert [c.role for c in m.calls] == ["synth", "l2", ""] and m.calls[1].session == "l2:1"
    with pytest.raises(ModelError, match="exhausted"):
        await m.generate("p4", max_tokens=5)


async def test_function_model_and_overflow():
    m = FunctionModel(fn=lambda info: f"saw {info.role}", n_ctx=50)
    assert (await m.generate("short", max_tokens=5, role="planner")).text == "saw planner"
    with pytest.raises(ContextOverflow):
        await m.generate("word " * 60, max_tokens=5)


async def test_doubles_serialize_through_the_lock():
    m = FunctionModel(fn=lambda info: info.prompt, delay_s=0.01)
    results = await asyncio.gather(*(m.generate(f"p{i}", max_tokens=5) for i in range(4)))
    assert [r.text for r in results] == ["p0", "p1", "p2", "p3"]
    assert m.lock.stats().acquisitions == 4


def test_check_window_boundaries():
    check_window(4000, 96, 4096)
    with pytest.raises(ContextOverflow, match="4000.*97"):
        check_window(4000, 97, 4096)


def test_usage_adds_up():
    u = Usage(10, 4, 3, 1.0, 2.0, 0.5) + Usage(5, 0, 2, 1.0, 1.0, 0.0)
    assert (u.prompt_tokens, u.cached_tokens, u.generated_tokens, u.prefilled_tokens) == (15, 4, 5, 11)


def test_double_fit_to_tokens():
    m = ScriptedModel()
    out = m.fit_to_tokens("é" * 100, 5)
    assert m.count_tokens(out) <= 5


def test_render_plain_has_roles():
    p = ScriptedModel().render_chat([ChatMessage("system", "S"), ChatMessage("tool", "R", name="find_file")])
    assert "### Instructions\nS" in p and "### Tool result (find_file)\nR" in p and p.endswith("### Assistant\n")
