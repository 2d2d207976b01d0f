"""Looking in the other stores: the words the plan's first search used, tried where it did not look.

The planner picks one skill, and a skill searches one or two of the user's stores (notebook,
memory log, files). The stores overlap: the rent is in the landlady's note and in the lease; a
dentist's voicemail is a memory entry and a transcript file. On generated households no training
run reads, the adapted planner's first choice is the generator's in 89 % of questions (`edge-agent
tune probe`); most of the rest found something in a neighbouring store and stopped there.

So after the attempts, each query-only store not searched yet is searched with the words of the
first search that had any (an empty query only lists recent notes): no model call, milliseconds a
store, its pill shown like any other. A find joins the side channels only when it holds more of
the question's terms than anything the plan found (`relevance`); then the answer is synthesized
over everything, since L2 answered from less. An equal find stays out: a tie would put a CV
beside the passport note for "what's my passport number?" and attach it. Calendar searches need a
range and are not repeated; nothing with an effect runs. Settings: harness.cross_check.
"""
from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

from pydantic import ValidationError

from edge_agent.harness.channels import DATA_CHANNELS, SideChannels, item_text
from edge_agent.harness.toolagent import QUERY_FIELD, execute
from edge_agent.harness.toolbox import Toolbox
from edge_agent.harness.turn import TurnContext
from edge_agent.store.text import QueryTerm, query_plan, query_terms, text_matches
from edge_agent.tools.base import Tool, ToolResult

STORES = ("notes", "memory", "files")
"""The channels whose tools take only words to look for."""
ROLE = "cross_check"


def searchable(tools: Mapping[str, Tool]) -> tuple[str, ...]:
    """The tools a cross-check may run: one of STORES, no effect, and callable with a query alone
    (read once from the manifests, by the Harness)."""
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


def thing_terms(question: str) -> list[QueryTerm]:
    """The question's terms that name a thing: value words ("number", "phone": store.text.SOFT_WORDS)
    only in a question of nothing else."""
    terms = query_plan(question)
    return [t for t in terms if not t.soft] or terms


def relevance(terms: list[QueryTerm], channel: str, item: Mapping[str, Any]) -> int:
    """How many of `terms` (thing_terms) an item holds."""
    return len(text_matches(terms, item_text(channel, item)))


def items(found: Any) -> list[Mapping[str, Any]]:
    """The items of a payload or a side channel: a list's entries, or a file search's best hit."""
    if isinstance(found, list):
        return [i for i in found if isinstance(i, Mapping)]
    if isinstance(found, Mapping) and isinstance(found.get("best"), Mapping):
        return [found["best"]]
    return []


def best_relevance(terms: list[QueryTerm], channels: SideChannels) -> int:
    """The relevance of the best item found so far (0 when nothing was)."""
    return max((relevance(terms, ch, i) for ch in DATA_CHANNELS for i in getattr(channels, ch)), default=0)


def keep_relevant(result: ToolResult, terms: list[QueryTerm], floor: int) -> ToolResult:
    """`result` with only the items holding at least `floor` of `terms`; a weak result keeps
    nothing (a near miss in a store nobody chose is no answer)."""
    payload = result.payload
    if not isinstance(payload, (list, Mapping)):
        return result
    good = [] if result.weak or not result.found else \
        [i for i in items(payload) if relevance(terms, result.channel, i) >= floor]
    kept: Any = good if isinstance(payload, list) else {**payload, "best": good[0] if good else None}
    return ToolResult(result.text, kept, channel=result.channel, pill=result.pill, found=bool(good))


async def search_skipped(turn: TurnContext, toolbox: Toolbox, tools: Sequence[str]) -> list[str]:
    """Search with `tools` (searchable) the stores the attempts did not, with the first search's
    words; the tools whose finds joined the side channels (each holding more of the question
    than the plan's best)."""
    query = next((q for q in turn.queries if query_terms(q)), None)
    if query is None:  # nothing searched, or only browsed ("recent notes"): no words to reuse
        return []
    terms = thing_terms(turn.question)
    floor = best_relevance(terms, turn.channels) + 1
    joined: list[str] = []
    for name in tools:
        if toolbox.manifest(name).channel in turn.channels.searched or turn.elapsed_s() > turn.limits.deadline_s:
            continue
        try:
            args = toolbox.tools[name].Args.model_validate({QUERY_FIELD: query})
        except ValidationError:  # too long for this tool, say: it is not searched
            continue
        t0 = time.perf_counter()
        report = await execute(turn, toolbox, name, args, ROLE, narrow=lambda r: keep_relevant(r, terms, floor))
        turn.cross_checked.append(name)
        turn.tracer.log_step(0, ROLE, tool=name, result=report.kind, ms=(time.perf_counter() - t0) * 1000,
                             tokens_in=0, tokens_out=0)
        if report.kind == "ok":
            joined.append(name)
    return joined
