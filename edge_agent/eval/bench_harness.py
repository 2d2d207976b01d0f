"""The harness on the bundled model: prompt growth with tool count, L2 resume cost, calls per question.

Measured, not projected:
- l2_prompt_tokens: L2's first prompt with 5 and 50 bound tools, harness (one signature line a
  tool + call_tool) and direct (every tool's full schema); per-tool growth of each.
- Per question over the sample world (--limit, spread over categories), in harness mode with the
  real model choosing freely: model calls, prefill and decode tokens, wall time, exit kinds.
- l2_resume_reprefill_tokens: when L2 resumes after an L3 dispatch, prompt tokens minus tokens
  reused from the KV cache. The small base model rarely follows a plan, so resumes are also
  driven deterministically: the oracle's planned route is forced through the real runtime with
  a grammar that admits exactly the planned output (real prefill, real KV cache, real decode).
"""
from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Literal, Tuple

from pydantic import BaseModel, ConfigDict, Field, create_model

from edge_agent.config import Settings
from edge_agent.harness import prompts
from edge_agent.harness.skills import load_skills
from edge_agent.harness.synthetic import synthetic_tools
from edge_agent.llm.base import Structured
from edge_agent.paths import WORLD_DIR

DEFAULT_LIMIT = 6  # questions per run: keeps the bench within a few minutes on 2 cores
DEFAULT_ROUTED = 3  # questions driven along their planned route to measure L2 resumes
FEW_TOOLS, MANY_TOOLS = 5, 50
REAL_L2_TOOLS = ("check_notebook", "find_file", "grep_memory", "current_date", "queryCalendar")
PROBE_SKILL = "find_document"  # its steps stand in for any skill's in the prompt-size probe
PROBE_QUESTION = "What email address is on my resume?"
PROBE_RATIONALE = "Find the user's resume and read the email address from it."


def add_arguments(parser) -> None:
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help=f"questions (default {DEFAULT_LIMIT})")
    parser.add_argument("--questions", type=Path, default=WORLD_DIR / "questions.jsonl", help="question file")
    parser.add_argument("--routed", type=int, default=DEFAULT_ROUTED,
                        help=f"questions driven along their planned route for the resume figures (default {DEFAULT_ROUTED})")
    parser.add_argument("--direct", action="store_true", help="also run the questions in direct mode")


def run(args, settings: Settings) -> dict:
    return asyncio.run(_run(args, settings))


def _forced(value: Any, name: str = "Forced") -> Any:
    """A type admitting exactly `value` (JSON): the grammar then forces the planned output."""
    if isinstance(value, dict):
        fields = {k: (_forced(v, f"{name}_{k}"), ...) for k, v in value.items()}
        return create_model(name, __config__=ConfigDict(extra="forbid"), **fields)
    if isinstance(value, list):
        if not value:  # llama.cpp's converter needs "items" to honour maxItems
            return Annotated[list[Literal[""]], Field(max_length=0)]
        return Tuple[tuple(_forced(v, f"{name}_{i}") for i, v in enumerate(value))]
    return Literal[value]  # type: ignore[valid-type]


class GuidedModel:
    """The real model, decoding the oracle's planned outputs under grammars that admit only them."""

    def __init__(self, model, oracle):
        self.model, self.oracle = model, oracle
        self.name, self.n_ctx, self.lock = f"{model.name}+oracle", model.n_ctx, model.lock

    def count_tokens(self, text: str) -> int:
        return self.model.count_tokens(text)

    def fit_to_tokens(self, text: str, n: int) -> str:
        return self.model.fit_to_tokens(text, n)

    def render_chat(self, messages, add_generation_prompt: bool = True) -> str:
        return self.model.render_chat(messages, add_generation_prompt)

    def forget_session(self, session: str) -> None:
        self.model.forget_session(session)

    async def generate(self, prompt: str, **kw):
        return await self.model.generate(prompt, **kw)

    async def generate_structured(self, prompt: str, schema: type[BaseModel], *, max_tokens: int, role: str = "",
                                  session: str | None = None, deadline: float | None = None) -> Structured:
        from edge_agent.llm.doubles import CallInfo

        wanted = self.oracle.respond(CallInfo(prompt, role, schema, max_tokens, session))
        forced = _forced(wanted)
        out = await self.model.generate_structured(prompt, forced, max_tokens=max_tokens, role=role, session=session,
                                                   deadline=deadline)
        return Structured(schema.model_validate_json(out.raw), out.raw, out.usage)


def prompt_sizes(model, tmp: Path) -> dict[str, Any]:
    from edge_agent.tools.registry import build_tools

    real = {n: t for n, t in build_tools(enforce_guards=False).items() if n in REAL_L2_TOOLS}
    extra = synthetic_tools(tmp / "synthetic-tools", MANY_TOOLS - FEW_TOOLS)
    steps = load_skills()[PROBE_SKILL].steps_text()
    sizes: dict[str, dict[str, int]] = {"harness": {}, "direct": {}}
    for n, tools in ((FEW_TOOLS, real), (MANY_TOOLS, {**real, **extra})):
        manifests = [t.manifest for t in tools.values()]
        l2 = prompts.l2_head(steps, manifests, PROBE_RATIONALE, PROBE_QUESTION)
        direct = prompts.direct_head([prompts.tool_card(t.manifest, t.Args) for t in tools.values()], PROBE_QUESTION)
        sizes["harness"][str(n)] = model.count_tokens(model.render_chat(l2))
        sizes["direct"][str(n)] = model.count_tokens(model.render_chat(direct))
    grow = {mode: round((s[str(MANY_TOOLS)] - s[str(FEW_TOOLS)]) / (MANY_TOOLS - FEW_TOOLS), 1)
            for mode, s in sizes.items()}
    return {"l2_prompt_tokens": sizes, "l2_tokens_per_added_tool": grow,
            "direct_50_fits_window": sizes["direct"][str(MANY_TOOLS)] < model.n_ctx}


def pick_questions(questions: list, limit: int) -> list:
    """Round-robin over categories in file order, so a small limit still covers each kind."""
    by_cat: dict[str, list] = {}
    for q in questions:
        by_cat.setdefault(q.category, []).append(q)
    picked: list = []
    while len(picked) < limit and any(by_cat.values()):
        for cat in list(by_cat):
            if by_cat[cat] and len(picked) < limit:
                picked.append(by_cat[cat].pop(0))
    return picked


def resumes(rows) -> list[dict[str, int]]:
    """Each L2 step after an L3 generation (the KV state switched away and back): prompt, reused, re-prefilled."""
    out, prev_l2, dispatched = [], None, False
    for r in rows:
        if r.role.startswith("l3.") and r.usage:
            dispatched = True
        if r.role != "l2" or not r.usage:
            continue
        if prev_l2 is not None and dispatched and r.usage["prompt_tokens"] > prev_l2.usage["prompt_tokens"]:
            new = r.usage["prompt_tokens"] - prev_l2.usage["prompt_tokens"] - prev_l2.usage["generated_tokens"]
            out.append({"prompt": r.usage["prompt_tokens"], "cached": r.usage["cached_tokens"],
                        "reprefill": r.usage["prompt_tokens"] - r.usage["cached_tokens"], "new": max(new, 0)})
        prev_l2, dispatched = r, False
    return out


async def run_questions(settings: Settings, model, questions: list, clock, mode: str,
                        oracle=None) -> dict[str, Any]:
    from edge_agent.app import build_assistant
    from edge_agent.store.traces import load_traces

    per_q, kinds, resumed = [], Counter(), []
    use = GuidedModel(model, oracle) if oracle else model
    settings.harness.log_chats = False  # a benchmark's questions must not become the next one's memory
    async with build_assistant(settings, model=use, now=clock.now) as assistant:
        for i, q in enumerate(questions):
            if oracle:
                oracle.begin(q)
            rid = f"bench-{mode}-{'oracle-' if oracle else ''}{i}-{q.id}"
            t0 = time.perf_counter()
            out = await assistant.ask(q.question, request_id=rid, mode=mode)
            u = out.usage
            per_q.append({"calls": u["model_calls"], "prefill": u["prefill_tokens"], "decode": u["decode_tokens"],
                          "wall_s": time.perf_counter() - t0})
            kinds[out.exit_kind] += 1
            resumed += resumes(await load_traces(assistant.harness.db, rid))
    mean = lambda key: round(statistics.mean(p[key] for p in per_q), 1) if per_q else 0.0  # noqa: E731
    return {"questions": len(per_q), "model_calls_per_question": mean("calls"),
            "prefill_tokens_per_question": mean("prefill"), "decode_tokens_per_question": mean("decode"),
            "wall_s_per_question": mean("wall_s"), "exit_kinds": dict(kinds), "resumes": resumed}


def _resume_summary(resumed: list[dict[str, int]]) -> dict[str, Any]:
    if not resumed:
        return {"count": 0}
    avg = lambda k: round(statistics.mean(r[k] for r in resumed), 1)  # noqa: E731
    return {"count": len(resumed), "prompt_tokens": avg("prompt"), "cached_tokens": avg("cached"),
            "reprefill_tokens": avg("reprefill"), "new_tokens": avg("new")}


async def _run(args, settings: Settings) -> dict:
    from edge_agent.eval.oracle import Oracle
    from edge_agent.eval.questions import load_questions
    from edge_agent.eval.world_setup import ensure_world_loaded, world_clock
    from edge_agent.llm import load_model

    t0 = time.perf_counter()
    model = await asyncio.to_thread(load_model, settings)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
            result: dict[str, Any] = {"model": model.name, **prompt_sizes(model, Path(tmp))}
            world = settings.model_copy(update={"data_dir": Path(tmp) / "data"}, deep=True)
            world.harness.tracing = True
            clock = world_clock(WORLD_DIR)
            await ensure_world_loaded(world, WORLD_DIR)
            questions = pick_questions(load_questions(args.questions).questions, args.limit)
            free = await run_questions(world, model, questions, clock, "harness")
            planned = [q for q in questions if q.plan.calls][:args.routed]
            guided = await run_questions(world, model, planned, clock, "harness", oracle=Oracle(n_ctx=model.n_ctx))
            result.update({k: free[k] for k in ("questions", "model_calls_per_question", "prefill_tokens_per_question",
                                                "decode_tokens_per_question", "wall_s_per_question", "exit_kinds")})
            guided_resumes = _resume_summary(guided.pop("resumes"))
            result["l2_resume_reprefill_tokens"] = guided_resumes.get("reprefill_tokens")
            result["l2_resume_new_tokens"] = guided_resumes.get("new_tokens")
            result["l2_resume"] = {"oracle_route": guided_resumes, "free_run": _resume_summary(free.pop("resumes"))}
            result["oracle_route"] = guided
            if args.direct:
                direct = await run_questions(world, model, questions, clock, "direct")
                direct.pop("resumes")
                result["direct"] = direct
    finally:
        model.close()
    result["bench_s"] = round(time.perf_counter() - t0, 1)
    return result
