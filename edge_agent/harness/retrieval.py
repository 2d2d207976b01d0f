"""Retrieval by the question's own words: every local store is searched, whatever the plan chose.

The plan's tools search with the words a small model chose (L3), and that choice misses: "whats
leos girlfriend called" became "Leo", a dentist question went to the memory log. Local stores
answer in milliseconds, so every question also searches the notebook, the memory log, this
device's file index and the calendar (by name, over the open range) with its own words, stemmed
and widened by the synonym table (relation words: girlfriend -> partner, mum -> mother), and
reads the memory log of the past days it names ("who texted me yesterday"), and today's date when it
asks how long until something (read_today: the reply counts from it). The
finds join the side channels and the reply ranks everything together (reply.py): the plan ranks,
it does not gate. Remote file peers are searched only by the plan's own find_file, which keeps
the MQTT search and its deadline. Nothing with an effect runs; each store's pill shows once.
"""
from __future__ import annotations

import dataclasses
import functools
import time
from typing import Mapping

from pydantic import ValidationError

from edge_agent.harness import by_name, prompts
from edge_agent.harness.follower import DATE_CHANNEL
from edge_agent.harness.toolagent import QUERY_FIELD, execute
from edge_agent.harness.toolbox import Toolbox
from edge_agent.harness.turn import TurnContext
from edge_agent.store.text import query_terms
from edge_agent.tools import dates
from edge_agent.tools.base import Tool

STORES = ("notes", "memory", "files")
"""The channels of the tools that take only words to look for."""
ROLE = "by_question"
"""How the step log and traces name these runs (no model chose them)."""


def searchable(tools: Mapping[str, Tool]) -> tuple[str, ...]:
    """The tools the question's words are given to: one of STORES, no effect, callable with a
    query alone (read once from the manifests, by the Harness)."""
    names = []
    for name, tool in tools.items():
        manifest = tool.manifest
        if manifest.channel not in STORES or manifest.has_effect or QUERY_FIELD not in tool.Args.model_fields:
            continue
        try:
            tool.Args.model_validate({QUERY_FIELD: "x"})
        except ValidationError:
            continue
        names.append(name)
    return tuple(names)


def by_days(tools: Mapping[str, Tool], channel: str) -> str | None:
    """The tool that reads `channel` by a start and end day, if there is one."""
    return next((n for n, t in tools.items() if t.manifest.channel == channel
                 and {"start", "end"} <= set(t.Args.model_fields)), None)


def local_only(toolbox: Toolbox) -> Toolbox:
    """The same tools over this device's data only (no remote file search, no peer listing)."""
    ctx = dataclasses.replace(toolbox.ctx, remote_search=None, list_remote_devices=None)
    return Toolbox(toolbox.tools, ctx)


def question_query(question: str) -> str:
    """The question's ranking words as a search query ('' when it has none)."""
    return " ".join(query_terms(question))


async def search_everywhere(turn: TurnContext, local: Toolbox, tools: tuple[str, ...],
                            calendar: str | None) -> list[str]:
    """Search every store with the question's words (see the module docstring); the tools run."""
    query = question_query(turn.question)
    ran: list[str] = []
    if not query:
        return ran
    ran += await search_words(turn, local, tools, query)
    days_tool = by_days(local.tools, "memory")
    today = local.ctx.now().date()
    for r in dates.resolve_all(turn.question, today) if days_tool else ():
        if r.span is not None and r.span.first <= today and turn.elapsed_s() <= turn.limits.deadline_s:
            last = min(r.span.last, today)  # what was written on the past days it names
            args = local.tools[days_tool].Args.model_validate({"start": r.span.first.isoformat(),
                                                                "end": last.isoformat()})
            await _run(turn, local, days_tool, args, ran)
    if calendar is not None and by_name.topic_terms(turn.question):
        first, last = prompts.open_range(local.ctx.now().date())  # the device's clock: no date tool to show
        args = local.tools[calendar].Args.model_validate({"start": first.isoformat(), "end": last.isoformat()})
        narrow = functools.partial(by_name.about, question=turn.question,
                                   span=f"{first.isoformat()} to {last.isoformat()}")
        await _run(turn, local, calendar, args, ran, narrow)
    return ran


async def read_today(turn: TurnContext, local: Toolbox) -> None:
    """Today's date read by the date tool (no model, no effect), unless the turn has it: what a
    question asking how long until something is counted from."""
    name = next((n for n, t in local.tools.items() if t.manifest.channel == DATE_CHANNEL and not t.manifest.has_effect),
                None)
    if name is None or turn.channels.date:
        return
    try:
        args = local.tools[name].Args.model_validate({})
    except ValidationError:  # a date tool that needs arguments is not this one
        return
    await _run(turn, local, name, args, [])


async def search_words(turn: TurnContext, local: Toolbox, tools: tuple[str, ...], query: str) -> list[str]:
    """Search the stores of `tools` (searchable) for `query`; the tools run. The reply also calls it
    (as its look_up) for the name one part's answer gave another: "who has my sewing machine, and
    what's her address" looks up the friend the first answer names."""
    ran: list[str] = []
    for name in tools:
        if turn.elapsed_s() > turn.limits.deadline_s:
            break
        try:
            args = local.tools[name].Args.model_validate({QUERY_FIELD: query})
        except ValidationError:  # too long for this tool, say: it is not searched
            continue
        await _run(turn, local, name, args, ran)
    return ran


async def _run(turn: TurnContext, local: Toolbox, name: str, args, ran: list[str], narrow=None) -> None:
    t0 = time.perf_counter()
    pill = local.manifest(name).pill not in turn.pills
    report = await execute(turn, local, name, args, ROLE, narrow=narrow, pill=pill, crafted=False)
    turn.by_question.append(name)
    ran.append(name)
    turn.tracer.log_step(0, ROLE, tool=name, result=report.kind, ms=(time.perf_counter() - t0) * 1000,
                         tokens_in=0, tokens_out=0)
