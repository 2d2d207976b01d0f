"""Every local store searched with the question's own words, whatever the plan chose (retrieval.py)."""
from __future__ import annotations

from harness_kit import pick_holding, plan, role_model
from edge_agent.harness.retrieval import question_query, searchable
from edge_agent.tools.registry import build_tools


def test_the_stores_searched_by_words_are_the_query_only_ones_without_an_effect():
    assert set(searchable(build_tools())) == {"check_notebook", "grep_memory", "find_file"}
    assert question_query("whats leos girlfriend called?") == "whats leos girlfriend called"
    assert question_query("hi") == "hi" and question_query("?!") == ""


async def test_a_misrouted_plan_is_answered_from_the_store_the_question_words_found(make_harness):
    model = role_model(planner=[plan("calendar_question")], choose=pick_holding("3 May"))
    out = await make_harness(model, by_question=True).ask("leo bday when", request_id="q1")
    assert out.answer == "Leo Marsh (brother): Birthday 3 May 1990."
    assert "check_notebook" in out.by_question and out.by_question == out.tools_called[-len(out.by_question):]
    assert [c.role for c in model.calls] == ["planner", "choose"]  # the searches cost no model call


async def test_each_stores_pill_shows_once_and_remote_peers_are_left_to_the_plan(make_harness):
    asked_remote: list[str] = []

    async def remote_search(query, devices):
        asked_remote.append(query)
        return {"hits": [], "unreachable": []}

    model = role_model(planner=[plan("person_facts")], l3={"check_notebook": [{"query": "Leo birthday"}]},
                       choose=pick_holding("3 May"))
    out = await make_harness(model, by_question=True, remote_search=remote_search).ask(
        "When is Leo's birthday?", request_id="q2")
    assert out.pills[0] == "Notebook" and len(out.pills) == len(set(out.pills))
    assert set(out.by_question) == {"check_notebook", "grep_memory", "find_file", "queryCalendar"}
    assert asked_remote == []  # the question's words search this device's index only
    assert "remember" not in out.tools_called and out.pending is None


async def test_switched_off_nothing_but_the_plan_runs(make_harness):
    model = role_model(planner=[plan("person_facts")], l3={"check_notebook": [{"query": "Leo birthday"}]},
                       choose=pick_holding("3 May"))
    out = await make_harness(model, by_question=False).ask("When is Leo's birthday?", request_id="q3")
    assert out.by_question == [] and out.tools_called == ["check_notebook"]
