"""A scripted model for the service: the test and benchmark seam behind `serve --scripted-delay-ms`.

A subprocess cannot be handed a Python model object, so `serve` can build this FunctionModel
itself. It drives the real harness along one fixed route: plan -> one tool run (so a pill is
sent) -> today's date, rendered; each generation takes `delay_s` (0 = zero latency). A question
that starts with "Remember:" takes the remember route instead, which ends in a real pending
action (needs_confirmation), so confirmation can be exercised over MQTT. Every
structured call is answered with a valid value of the schema asked for, so the harness's own
validation runs. Never used unless that hidden option is given.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from edge_agent.harness.outcome import Outcome, PillSink
from edge_agent.llm.doubles import CallInfo, FunctionModel
from edge_agent.llm.templates import PLAIN_HEADERS

SCRIPTED_SKILL = "date_question"  # the route: its one tool needs no arguments
SCRIPTED_TOOL = "current_date"
SCRIPTED_ANSWER = "Scripted answer: today is in the date tool's result."
REMEMBER_MARKER = "Remember:"  # a question starting with this takes the remember route
REMEMBER_ROUTE = ("remember_this", "remember")
QUESTION_TAIL_CHARS = 400  # the question is the prompt's last message: look only there


def minimal_value(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A small value satisfying a JSON schema (objects, strings, numbers, arrays, unions, enums)."""
    if "$ref" in schema:
        return minimal_value(defs[schema["$ref"].split("/")[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return minimal_value(schema[key][0], defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type", "object")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: minimal_value(props[k], defs) for k in schema.get("required", []) if k in props}
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return [minimal_value(schema.get("items", {}), defs) for _ in range(schema.get("minItems", 0))]
    return None


def _valid(schema: type[BaseModel], value: Any) -> Any:
    try:
        schema.model_validate(value)
    except ValidationError:
        js = schema.model_json_schema()
        return minimal_value(js, js.get("$defs", {}))
    return value


def last_user_text(prompt: str) -> str:
    """The last user turn of a plain-template prompt (the question)."""
    tail = prompt.rsplit(PLAIN_HEADERS["user"] + "\n", 1)[-1]
    return tail.split("\n\n" + PLAIN_HEADERS["assistant"], 1)[0].strip()


class ScriptedRoute:
    """The FunctionModel's fn; state is per question (the service runs one at a time)."""

    def __init__(self) -> None:
        self.l2_steps = 0
        self.route = (SCRIPTED_SKILL, SCRIPTED_TOOL)
        self.fact: str | None = None

    def __call__(self, info: CallInfo) -> Any:
        role = info.role.split(".", 1)[0]
        if role == "planner":
            self.l2_steps = 0
            remember = REMEMBER_MARKER in info.prompt[-QUESTION_TAIL_CHARS:]
            self.route = REMEMBER_ROUTE if remember else (SCRIPTED_SKILL, SCRIPTED_TOOL)
            # The note remember writes is the question's words after the marker, as asked.
            self.fact = last_user_text(info.prompt).split(REMEMBER_MARKER, 1)[-1].strip() if remember else None
            return _valid(info.schema, {"skill": self.route[0], "rationale": "the scripted route"})
        if role == "l2":
            self.l2_steps += 1
            if self.l2_steps == 1:
                return _valid(info.schema, {"call_tool": {"tool": self.route[1], "instruction": "as asked"}})
            return _valid(info.schema, {"answer": SCRIPTED_ANSWER})
        if self.fact and info.role.startswith(f"l3.{REMEMBER_ROUTE[1]}."):
            return _valid(info.schema, {"note": self.fact})
        if info.schema is not None:
            js = info.schema.model_json_schema()
            return minimal_value(js, js.get("$defs", {}))
        return SCRIPTED_ANSWER


def scripted_model(delay_ms: float) -> FunctionModel:
    """The seam model: a fixed route, `delay_ms` a generation."""
    return FunctionModel(fn=ScriptedRoute(), name="scripted-service", delay_s=max(0.0, delay_ms) / 1000)


class JournalingAsker:
    """Wraps an Asker and appends {"event": "start"|"done", request_id, ts, pid} lines (fsynced).

    The benchmark's record of executions, independent of the request log it checks.
    """

    def __init__(self, inner, path: Path):
        self.inner = inner
        self.path = path

    def _note(self, what: str, request_id: str) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"event": what, "request_id": request_id, "ts": time.time(),
                                 "pid": os.getpid()}) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    async def ask(self, question: str, *, request_id: str, mode: str = "harness",
                  on_pill: PillSink | None = None, device: str | None = None) -> Outcome:
        self._note("start", request_id)
        out = await self.inner.ask(question, request_id=request_id, mode=mode, on_pill=on_pill, device=device)
        self._note("done", request_id)
        return out

    async def confirm(self, action_id: str, *, request_id: str) -> Outcome:
        self._note("start", request_id)
        out = await self.inner.confirm(action_id, request_id=request_id)
        self._note("done", request_id)
        return out
