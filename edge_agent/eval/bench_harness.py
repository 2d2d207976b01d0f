"""The harness on the real model: tokens a question costs along the ideal route, Pi 5 projection.

Measured with the real runtime, then priced at published Pi 5 rates (a projection, labelled so):
- The guided route: every question of the set (or --per-category K) goes through the real
  harness and runtime with the oracle's planned outputs steered through the real grammars (each
  step takes the grammar-admitted token that continues the plan), so prefill after every reuse,
  decode steps and jump-forward tokens are what this protocol really costs. Per question:
  prefilled, decoded and forced tokens and the Pi 5 projection, p50 and p95; the head cache's hit
  rate. The same route runs with the head cache off beside it (--no-head-cache runs only that).
- l2_prompt_tokens: L2's first prompt with 5 and 50 bound tools, harness (one signature line a
  tool + call_tool) and direct (every tool's full schema); per-tool growth of each.
- l2_resume: when L2 resumes after an L3 dispatch, prompt tokens minus tokens reused.
- A few questions with the model choosing freely (--free N): what the bundled model does alone.
"""
from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections import Counter
from types import SimpleNamespace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from edge_agent.config import Settings
from edge_agent.eval.oracle import as_decoded
from edge_agent.eval.projection import PI5, PiRates, project_seconds
from edge_agent.eval.summary import by_role
from edge_agent.ops.metrics import percentile
from edge_agent.harness import prompts
from edge_agent.harness.skills import load_skills
from edge_agent.harness.synthetic import synthetic_tools
from edge_agent.paths import WORLD_DIR

DEFAULT_FREE = 3  # questions the model answers on its own (the guided route is the main figure)
FEW_TOOLS, MANY_TOOLS = 5, 50
REAL_L2_TOOLS = ("check_notebook", "find_file", "grep_memory", "current_date", "queryCalendar")
PROBE_SKILL = "find_document"  # its steps stand in for any skill's in the prompt-size probe
PROBE_QUESTION = "What email address is on my resume?"
PROBE_RATIONALE = "Find the user's resume and read the email address from it."


def add_arguments(parser) -> None:
    parser.add_argument("--questions", type=Path, default=WORLD_DIR / "questions.jsonl", help="question file")
    parser.add_argument("--per-category", type=int, default=None, metavar="K",
                        help="only the first K questions of each category (default: every question)")
    parser.add_argument("--limit", type=int, default=None, help="at most N questions, spread over categories")
    parser.add_argument("--no-head-cache", action="store_true",
                        help="run the guided route only with the prompt-head cache off (the 'before' figures)")
    parser.add_argument("--free", type=int, default=DEFAULT_FREE,
                        help=f"questions the model answers freely (default {DEFAULT_FREE})")
    parser.add_argument("--direct", action="store_true", help="also run the free questions in direct mode")


def run(args, settings: Settings) -> dict:
    return asyncio.run(_run(args, settings))


class GuidedModel:
    """The real model, steered along the oracle's planned outputs through the real grammars."""

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

    async def warm_heads(self, heads) -> None:
        await self.model.warm_heads(heads)

    def head_cache_stats(self) -> dict:
        return self.model.head_cache_stats()

    def _wanted(self, prompt: str, role: str, schema, max_tokens: int, session: str | None) -> Any:
        from edge_agent.llm.doubles import CallInfo

        return self.oracle.respond(CallInfo(prompt, role, schema, max_tokens, session))

    async def generate(self, prompt: str, *, max_tokens: int, role: str = "", session: str | None = None, **kw):
        wanted = self._wanted(prompt, role, None, max_tokens, session)
        return await self.model.generate(prompt, max_tokens=max_tokens, role=role, session=session,
                                         steer=str(wanted), **kw)

    async def generate_structured(self, prompt: str, schema: type[BaseModel], *, max_tokens: int, role: str = "",
                                  session: str | None = None, **kw):
        wanted = self._wanted(prompt, role, schema, max_tokens, session)
        return await self.model.generate_structured(prompt, schema, max_tokens=max_tokens, role=role,
                                                    session=session, steer=as_decoded(schema, wanted), **kw)


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


def pick_questions(questions: list, limit: int | None = None, per_category: int | None = None) -> list:
    """Round-robin over categories in file order, so a small limit still covers each kind;
    per_category keeps at most K of each."""
    by_cat: dict[str, list] = {}
    for q in questions:
        by_cat.setdefault(q.category, []).append(q)
    if per_category is not None:
        by_cat = {c: qs[:per_category] for c, qs in by_cat.items()}
    picked: list = []
    cap = limit if limit is not None else len(questions)
    while len(picked) < cap and any(by_cat.values()):
        for cat in list(by_cat):
            if by_cat[cat] and len(picked) < cap:
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


def question_cost(usage: dict[str, Any], rates: PiRates = PI5) -> dict[str, float]:
    """One question's tokens and its Pi projection: prompt tokens evaluated and forced tokens
    (appended in a batch) at the prefill rate, decode steps at the decode rate."""
    prefilled, decoded = usage["prefill_tokens"], usage["decode_tokens"]
    forced = usage.get("forced_tokens", 0)
    seconds = project_seconds(prefilled, decoded, forced, rates)
    return {"prefilled": prefilled, "decoded": decoded, "forced": forced, "calls": usage["model_calls"],
            "pi5_s": round(seconds, 2)}


def _p50_p95(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50) or 0.0, 1), "p95": round(percentile(values, 95) or 0.0, 1)}


async def run_questions(settings: Settings, model, questions: list, clock, mode: str,
                        oracle=None) -> dict[str, Any]:
    from edge_agent.app import build_assistant
    from edge_agent.store.traces import load_traces

    per_q, kinds, resumed, roles, role_usage = [], Counter(), [], Counter(), []
    use = GuidedModel(model, oracle) if oracle else model
    settings.harness.log_chats = False  # a benchmark's questions must not become the next one's memory
    async with build_assistant(settings, model=use, now=clock.now) as assistant:
        await assistant.wait_warm()  # the warm-up is start-up work, not a question's
        before = dict(model.head_cache_stats())
        for i, q in enumerate(questions):
            if oracle:
                oracle.begin(q)
            rid = f"bench-{mode}-{'oracle-' if oracle else ''}{i}-{q.id}"
            t0 = time.perf_counter()
            out = await assistant.ask(q.question, request_id=rid, mode=mode)
            per_q.append({**question_cost(out.usage), "wall_s": time.perf_counter() - t0, "id": q.id})
            role_usage.append(SimpleNamespace(roles={k: v for k, v in out.usage.get("roles", {}).items()
                                                     if v.get("calls")}))
            kinds[out.exit_kind] += 1
            rows = await load_traces(assistant.harness.db, rid)
            roles.update(r.role.split(".", 1)[0] for r in rows if r.usage)
            resumed += resumes(rows)
        after = model.head_cache_stats()
    hits, misses = (after.get(k, 0) - before.get(k, 0) for k in ("hits", "misses"))
    col = lambda key: [p[key] for p in per_q]  # noqa: E731
    decoded, forced = sum(col("decoded")), sum(col("forced"))
    return {"questions": len(per_q), "exit_kinds": dict(kinds), "generations_by_role": dict(roles),
            "by_role": by_role(role_usage),
            "model_calls_per_question": round(statistics.mean(col("calls")), 2) if per_q else 0.0,
            "prefilled_tokens_per_question": _p50_p95(col("prefilled")),
            "decoded_tokens_per_question": _p50_p95(col("decoded")),
            "forced_token_share": round(forced / decoded, 3) if decoded else 0.0,
            "pi5_projected_s": _p50_p95(col("pi5_s")),
            "head_cache_hit_rate": round(hits / (hits + misses), 3) if hits + misses else 0.0,
            "head_cache": {k: after.get(k) for k in ("entries", "ram_bytes", "ram_budget_bytes", "disk_bytes",
                                                     "warmed", "restores")},
            "wall_s_per_question": round(statistics.mean(col("wall_s")), 2) if per_q else 0.0,
            "per_question": [{k: p[k] for k in ("id", "prefilled", "decoded", "forced", "pi5_s")} for p in per_q],
            "resumes": resumed}


def _resume_summary(resumed: list[dict[str, int]]) -> dict[str, Any]:
    if not resumed:
        return {"count": 0}
    avg = lambda k: round(statistics.mean(r[k] for r in resumed), 1)  # noqa: E731
    return {"count": len(resumed), "prompt_tokens": avg("prompt"), "cached_tokens": avg("cached"),
            "reprefill_tokens": avg("reprefill"), "new_tokens": avg("new")}


async def _guided(settings: Settings, questions: list, clock, head_cache_mb: float) -> dict[str, Any]:
    """The guided route on a freshly loaded model with the given head-cache budget."""
    from edge_agent.eval.oracle import Oracle
    from edge_agent.llm import load_model

    run_settings = settings.model_copy(deep=True)
    run_settings.model.head_cache_mb = head_cache_mb
    model = await asyncio.to_thread(load_model, run_settings)
    try:
        return await run_questions(run_settings, model, questions, clock, "harness", oracle=Oracle(n_ctx=model.n_ctx))
    finally:
        model.close()


async def _run(args, settings: Settings) -> dict:
    from edge_agent.eval.questions import load_questions
    from edge_agent.eval.world_setup import ensure_world_loaded, world_clock
    from edge_agent.llm import load_model

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
        clock = world_clock(WORLD_DIR)
        world = settings.model_copy(update={"data_dir": Path(tmp) / "data", "timezone": clock.timezone}, deep=True)
        world.harness.tracing = True
        await ensure_world_loaded(world, WORLD_DIR)
        questions = pick_questions(load_questions(args.questions).questions, args.limit, args.per_category)
        result: dict[str, Any] = {"projection": f"{PI5.label}; source {PI5.source}. A projection from this "
                                                "machine's token counts, not a measurement on a Pi."}
        runs = {"no_head_cache": 0.0} if args.no_head_cache else {"head_cache": settings.model.head_cache_mb,
                                                                   "no_head_cache": 0.0}
        guided = {name: await _guided(world, questions, clock, mb) for name, mb in runs.items()}
        main = guided["no_head_cache" if args.no_head_cache else "head_cache"]
        resumed = _resume_summary(main.pop("resumes"))
        for run_ in guided.values():
            run_.pop("resumes", None)
        headline = ("questions", "pi5_projected_s", "prefilled_tokens_per_question", "decoded_tokens_per_question",
                    "forced_token_share", "head_cache_hit_rate", "model_calls_per_question", "by_role")
        result.update({k: main[k] for k in headline})
        result["guided_route"] = guided
        result["l2_resume_reprefill_tokens"] = resumed.get("reprefill_tokens")
        result["l2_resume"] = resumed
        model = await asyncio.to_thread(load_model, world)
        try:
            result.update({"model": model.name, **prompt_sizes(model, Path(tmp))})
            if args.free:
                free = await run_questions(world, model, pick_questions(questions, args.free), clock, "harness")
                free.pop("resumes")
                result["free_run"] = {k: v for k, v in free.items() if k != "per_question"}
                if args.direct:
                    direct = await run_questions(world, model, pick_questions(questions, args.free), clock, "direct")
                    direct.pop("resumes")
                    result["direct"] = {k: v for k, v in direct.items() if k != "per_question"}
        finally:
            model.close()
    result["bench_s"] = round(time.perf_counter() - t0, 1)
    return result
