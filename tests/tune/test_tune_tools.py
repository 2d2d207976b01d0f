"""Loaded into a data dir, a generated household answers every planned call through the real tools.

No model and no broker: each planned call runs as L3 would make it (build_tools(enforce_guards=False)
over a Store, the household's fixed clock), then the oracle drives the real harness along every plan.
"""
from __future__ import annotations

from edge_agent.eval.runner import run_mode
from edge_agent.eval.scoring import contains
from edge_agent.eval.world_setup import world_clock
from edge_agent.harness.reply import date_reply
from edge_agent.store import Store
from edge_agent.tools.context import local_context
from edge_agent.tools.registry import build_tools

from tunekit import run_call


ORACLE_MISSES = 2  # of a household's ~39 questions, at most this many the oracle route gets wrong


def date_answer(payload, question):
    return date_reply(payload, question).text


async def test_every_planned_call_returns_its_facts(loaded):
    tools = build_tools(enforce_guards=False)
    checked: dict[str, int] = {}
    for g, settings in loaded:
        hh = g.household
        async with Store.open(settings.db_path) as store:
            ctx = local_context(store, hh.timezone, "pi", hh.now)
            for q in g.questions:
                if q.category == "remember":
                    continue  # an effect: previewed, never run here (its facts are checked in the note)
                results = [await run_call(tools, ctx, c) for c in q.plan.calls]
                evidence = "\n".join(r.evidence for r in results)
                checked[q.category] = checked.get(q.category, 0) + 1
                if q.category == "unanswerable":
                    assert not any(r.strong for r in results), (q.question, q.plan.calls, evidence[:300])
                    continue
                lacking = [f for f in q.expected_facts if not contains(evidence, f)]
                assert lacking == [], (q.id, q.question, [c.args for c in q.plan.calls], evidence[:400])
                if q.expected_file:
                    assert q.expected_file in {r.best["name"] for r in results if r.best}, (q.id, q.expected_file)
                if q.category == "injection":
                    assert any(contains(evidence, f) for f in q.forbidden_facts), "the planted instruction is retrieved"
                if q.category == "date":
                    answer = date_answer(results[-1].payload, q.question)
                    assert all(contains(answer, f) for f in q.expected_facts), (q.question, answer)
    assert len(checked) == 9 and sum(checked.values()) > 200, checked


async def test_every_probe_retrieves_its_fact(loaded):
    """Every planted fact (not only the ones asked about) comes back from its probe's call, strongly."""
    tools = build_tools(enforce_guards=False)
    for g, settings in loaded:
        hh = g.household
        async with Store.open(settings.db_path) as store:
            ctx = local_context(store, hh.timezone, "pi", hh.now)
            for p in hh.probes:
                args = ({"start": p.query, "end": p.query} if p.tool == "queryCalendar" else
                        {"query": p.query, "devices": []} if p.tool == "find_file" else {"query": p.query})
                result = await tools[p.tool](args, ctx)
                assert result.found and not result.weak, (p.intent, p.query)
                if p.tool == "find_file":
                    best = result.payload["best"]
                    assert p.file is None or best["name"] == p.file, (p.intent, p.query, best["name"], p.file)
                    assert contains(f"{best['name']}\n{best['excerpt']}", p.fact), (p.intent, p.fact, best["excerpt"])
                else:
                    assert contains(str(result.payload), p.fact) or contains(result.text, p.fact), (p.intent, p.fact)


async def test_the_oracle_answers_every_question_end_to_end(loaded):
    """The later training step's route: the real harness, driven along each plan by the oracle."""
    for g, settings in loaded[:4]:
        run = await run_mode("oracle", settings, g.questions, world_clock(g.household.directory),
                             run_id=f"tune{g.household.seed}", progress=lambda _: None)
        misses = {r.id: (r.question, r.score["misses"], r.answer[:160]) for r in run.results if not r.end_to_end}
        # the answer path's own limits (a two-part question's second fact on no candidate line), never a crash
        assert len(misses) <= ORACLE_MISSES and len(run.results) == len(g.questions), misses
        assert all(set(m) <= {"interpretation", "arguments"} for _, m, _ in misses.values()), misses
        assert run.notebook_delta == 0
        exits = {r.category: r.exit_kind for r in run.results}
        assert exits["remember"] == "needs_confirmation"
