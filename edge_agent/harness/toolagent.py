"""L3, the tool-agent: a fresh session bound to exactly one real tool, for one call.

It sees the tool's full description, argument docs, JSON schema and crafting rules (what L2
never sees), generates the arguments under that tool's grammar, and the tool runs once with its
own guards off. A session whose output is already determined is not run: a tool without
arguments (current_date) runs directly, and so does the calendar when the date resolver worked out
every day the asker named, or they named none (the open range, searched by name: by_name.py).

L3's report to L2 is built deterministically from the ToolResult rather than generated: the
tool's compact text already is the control signal L2 needs, and a second L3 generation per
dispatch would cost a full prefill of L3's prompt on a Pi (about 15 s at 27 tok/s) for a
paraphrase the harness must not trust anyway. The exact payload goes to the side channels.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import logging
import re
import time
from dataclasses import dataclass
from datetime import date
from typing import Any, Callable

from pydantic import BaseModel

from edge_agent.harness import by_name, plumbing, prompts
from edge_agent.harness.channels import DATA_CHANNELS, EVENTS_CHANNEL
from edge_agent.harness.effects import asker_words, from_the_asker
from edge_agent.harness.fitting import fit_relevant
from edge_agent.harness.reserve import worst_case_tokens
from edge_agent.harness.toolbox import Toolbox
from edge_agent.harness.turn import CalendarRead, ConfirmationRequired, ModelCallFailed, TurnContext, model_misbehaved
from edge_agent.llm.base import ContextOverflow
from edge_agent.tools.base import ToolError, ToolResult

log = logging.getLogger(__name__)

L3_MAX_TOKENS_CAP = 600  # the most tokens reserved for one tool's arguments, whatever its schema
QUERY_FIELD = "query"  # a search tool's words to look for
PREVIEW_VERBS = {"remember": "Add to notebook"}  # how an effect is announced before confirmation


@dataclass(frozen=True)
class ToolReport:
    """What one dispatch produced, for L2's transcript and the step log."""

    text: str
    """The report for L2, fitted to the tool-result budget."""
    kind: str
    """ok | weak | empty | error"""
    result: ToolResult | None = None
    """The tool's result, when it ran."""


def preview_for(tool: str, args: dict[str, Any]) -> str:
    """The exact preview of an effect: what `confirm` will run."""
    verb = PREVIEW_VERBS.get(tool, f"Run {tool}")
    values = [v for v in args.values() if isinstance(v, str)]
    if len(args) == 1 and len(values) == 1:
        return f'{verb}: "{values[0]}"'
    return f"{verb}: {json.dumps(args, ensure_ascii=False, sort_keys=True)}"


def args_json(args: BaseModel) -> str:
    return json.dumps(args.model_dump(mode="json"), ensure_ascii=False, separators=(", ", ": "))


async def execute(turn: TurnContext, toolbox: Toolbox, name: str, args: BaseModel, role: str,
                  narrow: Callable[[ToolResult], ToolResult] | None = None, *, pill: bool = True,
                  crafted: bool = True) -> ToolReport:
    """Run a real tool once (after the effect check), feed the side channels, emit its pill
    (unless `pill` is False). `narrow`, when given, keeps part of the result before anything
    reads it. `crafted`: the arguments are a model's (its query words then rank the reply too)."""
    manifest = toolbox.manifest(name)
    if manifest.has_effect:
        dumped = _from_the_asker(toolbox, name, args.model_dump(mode="json"), turn.question)
        raise ConfirmationRequired(name, dumped, preview_for(name, dumped))
    tool = toolbox.tools[name]
    if pill:
        await turn.emit_pill(manifest.pill)
    t0 = time.perf_counter()
    try:
        result = await tool(args, toolbox.ctx)
        if narrow is not None:
            result = narrow(result)
    except ToolError as err:  # the tool's complaint is for the model to read, not a crash
        turn.tracer.tool_ms += (time.perf_counter() - t0) * 1000
        turn.tools_called.append(name)
        text = turn.model.fit_to_tokens(f"{name} failed: {err}", turn.limits.tool_result_tokens)
        return ToolReport(text, "error")
    turn.tracer.tool_ms += (time.perf_counter() - t0) * 1000
    turn.tools_called.append(name)
    if crafted and manifest.channel in DATA_CHANNELS and isinstance(getattr(args, QUERY_FIELD, None), str):
        turn.queries.append(getattr(args, QUERY_FIELD))
    added = turn.channels.add(result)
    best = result.payload.get("best") if isinstance(result.payload, dict) else None
    if crafted and result.channel == "files" and isinstance(best, dict):
        turn.located.append(best)
    ok = result.found and (added or result.channel not in DATA_CHANNELS)
    head = f"{name} ran with {args_json(args)}" if type(args).model_fields else f"{name} ran"
    body = f"{head}. It returned: {result.text}" if result.found else f"{head} and found nothing. {result.text}"
    text = fit_relevant(turn.model, body.strip(), turn.limits.tool_result_tokens, turn.question)
    if result.weak:  # a near miss: L2 reads "weak"
        return ToolReport(text, "weak", result)
    return ToolReport(text, "ok" if ok else "empty", result)


def _from_the_asker(toolbox: Toolbox, name: str, dumped: dict[str, Any], question: str) -> dict[str, Any]:
    """An effect's arguments grounded in the asker's words (effects.py), if they still validate."""
    grounded = from_the_asker(dumped, question)
    if grounded == dumped:
        return dumped
    try:
        toolbox.tools[name].Args.model_validate(grounded)
    except ValueError:
        return dumped
    log.info("%s: arguments not grounded in the question; the asker's own words are previewed", name)
    return grounded


class ToolAgent:
    """Runs one dispatch: craft the arguments in a fresh one-tool session, then run the tool."""

    def __init__(self, toolbox: Toolbox):
        self.toolbox = toolbox

    async def run(self, turn: TurnContext, name: str, instruction: str) -> ToolReport:
        tool = self.toolbox.tools[name]
        manifest = tool.manifest
        role = f"l3.{name}.{turn.next_dispatch()}"
        if not tool.Args.model_fields:
            return await self._run_without_generation(turn, name, instruction, role)
        said = asker_text_args(tool.Args, turn.question) if manifest.has_effect else None
        if said is not None:
            # An effect that takes one text writes what the asker said (effects.py): a generation
            # could only restate it, and a small model's restatement drops or invents words.
            return await self._run_without_generation(turn, name, instruction, role, said)
        dates = await plumbing.l3_dates(turn, self.toolbox, instruction) if plumbing.wants_dates(tool.Args) \
            else plumbing.L3Dates()
        reads_range = manifest.channel == EVENTS_CHANNEL and {"start", "end"} <= set(tool.Args.model_fields)
        days = dates.span or (None if dates.unknown else dates.open_range)
        if reads_range and days is not None:
            # The resolver worked out every day the asker named, or they named none: the range is
            # known, and a generation that could only copy it is not run.
            args = tool.Args.model_validate({"start": days[0].isoformat(), "end": days[1].isoformat()})
            return await self._read_calendar(turn, name, instruction, role, args, dates)
        messages = prompts.l3_messages(manifest, tool.Args, instruction, dates.context, dates.named)
        static = prompts.l3_static(manifest, tool.Args, dates.context)
        try:
            args, raw, _ = await turn.structured(role, messages, tool.Args, max_tokens=l3_max_tokens(tool.Args),
                                                 bound_tools=[name], input=instruction, tool=name, head=static)
        except ModelCallFailed as failed:
            if isinstance(failed.cause, ContextOverflow) or not model_misbehaved(failed.cause):
                raise
            return ToolReport(f"Could not prepare a call to {name} from that instruction. Say it differently "
                              f"or answer with what you have.", "error")
        if plumbing.wants_devices(tool.Args):
            # The asker's own device choice wins; otherwise L3 scopes only on an explicit request,
            # kept only if the request names the device (find_file checks it is paired).
            scope = (await plumbing.device_scope(turn, self.toolbox, instruction) if turn.device
                     else named_devices(getattr(args, plumbing.DEVICES_FIELD), f"{instruction} {turn.question}"))
            args = args.model_copy(update={plumbing.DEVICES_FIELD: scope})
        if reads_range:
            report = await self._read_calendar(turn, name, instruction, role, args, dates, generated=True)
        else:
            report = await execute(turn, self.toolbox, name, args, role)
        self._amend_trace(turn, raw, args, report)
        return report

    async def _read_calendar(self, turn: TurnContext, name: str, instruction: str, role: str, args: BaseModel,
                             dates: plumbing.L3Dates, generated: bool = False) -> ToolReport:
        """Read the calendar over `args`' days and keep the read for the reply; with no day named,
        only the events that mention the asker's words (by_name.py)."""
        first, last = date.fromisoformat(getattr(args, "start")), date.fromisoformat(getattr(args, "end"))
        narrow = None
        if dates.open_range is not None and (first, last) == dates.open_range:
            span = f"{first.isoformat()} to {last.isoformat()}"
            narrow = functools.partial(by_name.about, question=turn.question, span=span)
        started_at, t0 = time.time(), time.perf_counter()
        report = await execute(turn, self.toolbox, name, args, role, narrow)
        events = list(report.result.payload) if report.result and isinstance(report.result.payload, list) else []
        phrase = dates.phrase if (first, last) == dates.span else ""
        turn.calendar_reads.append(CalendarRead(first, last, phrase, events))
        if not generated:
            turn.tracer.record(role, prompt="", bound_tools=[name], input=instruction,
                               output=f"=> ran with {args_json(args)} (range known: no generation)\n=> {report.text}",
                               usage=None, started_at=started_at, ms=(time.perf_counter() - t0) * 1000, tool=name)
        return report

    async def _run_without_generation(self, turn: TurnContext, name: str, instruction: str, role: str,
                                      args: BaseModel | None = None) -> ToolReport:
        started_at, t0 = time.time(), time.perf_counter()
        report = await execute(turn, self.toolbox, name, args or self.toolbox.tools[name].Args(), role)
        turn.tracer.record(role, prompt="", bound_tools=[name], input=instruction, output=report.text,
                           usage=None, started_at=started_at, ms=(time.perf_counter() - t0) * 1000,
                           error=None if report.kind != "error" else report.text, tool=name)
        return report

    @staticmethod
    def _amend_trace(turn: TurnContext, raw: str, args: BaseModel, report: ToolReport) -> None:
        """The L3 record's output: the raw arguments, what actually ran, and the report."""
        records = turn.tracer.records
        last = records[-1]
        output = f"{raw}\n=> ran with {args_json(args)}\n=> {report.text}"
        records[-1] = dataclasses.replace(last, output=output,
                                          error=report.text if report.kind == "error" else last.error)


def asker_text_args(args_model: type[BaseModel], question: str) -> BaseModel | None:
    """The arguments of a tool that takes one text and nothing else, that text being the asker's
    own words (effects.asker_words); None for any other tool or when the words do not validate."""
    fields = args_model.model_fields
    if len(fields) != 1:
        return None
    (field_name, info), = fields.items()
    if info.annotation is not str:
        return None
    try:
        return args_model.model_validate({field_name: asker_words(question)})
    except ValueError:
        return None


def named_devices(chosen: list[str], request: str) -> list[str]:
    """The devices L3 chose that the request actually names: a small model may not invent a scope."""
    text = request.lower()
    return [d for d in chosen if re.search(rf"(?<![\w-]){re.escape(d.lower())}(?![\w-])", text)]


def l3_max_tokens(args_model: type[BaseModel]) -> int:
    """Output reserve for one tool's arguments: the schema's worst case, capped."""
    return min(worst_case_tokens(args_model), L3_MAX_TOKENS_CAP)

