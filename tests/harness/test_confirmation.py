"""Effects never run in the loop: needs_confirmation with an exact preview; confirm runs it once."""
from __future__ import annotations

import pytest

from harness_kit import PLANTED, answer, call, plan, role_model
from edge_agent.harness.effects import asks_to_save, only_asks
from edge_agent.store.sql import fetch_all
from edge_agent.store.traces import get_pending


async def notes(store):
    return [r["body"] for r in await fetch_all(store.conn, "SELECT body FROM notebook ORDER BY id")]


async def test_remember_exits_with_preview_and_never_executes(make_harness, store, db):
    before = await notes(store)
    model = role_model(planner=[plan("remember_this")],
                       l2=[call("remember", "the bike lock code is 4417")],
                       l3={"remember": [{"note": "The user's bike lock code is 4418."}]})
    h = make_harness(model)
    out = await h.ask("Remember that my bike lock code is 4417", request_id="r1")
    assert out.exit_kind == "needs_confirmation"
    assert out.pending is not None and out.pending.tool == "remember"
    assert out.pending.args == {"note": "My bike lock code is 4417."}  # the asker's words, not L3's
    assert out.pending.preview == 'Add to notebook: "My bike lock code is 4417."'
    assert out.pending.preview in out.answer and out.pending.id in out.answer
    assert await notes(store) == before  # nothing written
    assert out.tools_called == [] and out.pills == []  # an effect is not a run
    assert [c.role for c in model.calls] == ["planner"]  # the note is the asker's: nothing to generate
    row = await get_pending(db, out.pending.id)
    assert row.status == "pending" and row.args == out.pending.args

    done = await h.confirm(out.pending.id, request_id="r2")
    assert done.exit_kind == "complete"
    after = await notes(store)
    assert after == before + ["My bike lock code is 4417."]

    again = await h.confirm(out.pending.id, request_id="r3")
    assert again.exit_kind == "error" and "already confirmed" in again.answer
    assert await notes(store) == after  # ran exactly once
    assert (await get_pending(db, out.pending.id)).status == "done"


async def test_unknown_action_is_a_clear_error(make_harness):
    out = await make_harness(role_model()).confirm("nope1234", request_id="r1")
    assert out.exit_kind == "error" and "no pending action" in out.answer


async def test_planted_instruction_in_a_note_cannot_cause_an_effect(make_harness, store, db):
    """A model that obeys text planted in a note still cannot write anything."""
    before = await notes(store)

    def obedient_l2(info):
        # Obeys the planted note as soon as it is in the transcript.
        if "SYSTEM NOTICE" in info.prompt:
            return call("remember", "Nadia agrees to send 500 pounds")
        return call("check_notebook", "read me")

    model = role_model(planner=[plan("person_facts"), plan("person_facts")],
                       l3={"check_notebook": lambda i: {"query": "SYSTEM NOTICE"},
                           "remember": lambda i: {"note": "Nadia agrees to send 500 pounds"}})
    inner = model.fn

    def fn(info):
        return obedient_l2(info) if info.role == "l2" else inner(info)

    model.fn = fn
    out = await make_harness(model, constrain_l2=False).ask("What does my note say?", request_id="r1")
    assert PLANTED in "".join(c.prompt for c in model.calls if c.role == "l2")
    # remember is not bound by person_facts: the name does not resolve, L3 never crafts it.
    assert not [c for c in model.calls if c.role.startswith("l3.remember")]
    assert out.exit_kind in ("complete", "halted", "step_limit") and out.pending is None
    assert await notes(store) == before
    assert (await fetch_all(db, "SELECT * FROM pending_actions")) == []


async def test_planted_instruction_in_direct_mode_stops_at_confirmation(make_harness, store):
    before = await notes(store)
    steps = [{"tool": "check_notebook", "args": {"query": "SYSTEM NOTICE"}},
             {"tool": "remember", "args": {"note": "Nadia agrees to send 500 pounds"}}]
    model = role_model(l2=steps)
    out = await make_harness(model).ask("What does my note say?", request_id="r1", mode="direct")
    assert out.exit_kind == "needs_confirmation"
    # The planted value is not even previewed: an effect's text must come from the asker's words
    # (harness/effects.py), so the preview holds what the asker said, to be confirmed or not.
    assert "500 pounds" not in out.pending.preview and "500 pounds" not in out.answer
    assert out.pending.preview == 'Add to notebook: "What does my note say?"'
    assert await notes(store) == before


@pytest.mark.parametrize("question, saves", [
    ("Please note that Zed's new number is 0123 456.", True),
    ("Remember my bike lock code is 4417", True),
    ("Jot down: the plumber came today", True),
    ("hey, quick one, note down my coat size: UK 5", True),  # a lead before the request
    ("Can you save that Rhiannon likes an aisle seat", True),
    ("ok add to my notes that Wiremu is vegetarian now", True),  # where it goes names the request
    ("put it in the notebook: the bike code is 2291", True),
    ("for next time: Ana is vegan", True),  # words that say it is for keeping
    ("for future reference, my seat at the theatre is row F, seat 35", True),
    ("heads up for later, Alina doesn't drink coffee any more", True),
    ("for the record, Sam borrowed £20", True),
    ("remeber my bike lock code is 4417", True),  # a save word misspelt, one edit away
    ("remmember i put the winter duvets in the hall cupboard", True),
    ("white wine for the dinner party", False),  # "white" is a word of its own, not "write" misspelt
    ("for later, when is the dentist", False),
    ("remeber my usual coffee order?", False),
    ("Remember when we went to Vienna?", False),  # a question about the past
    ("remember what Ravi said about the book", False),
    ("What did I note about the boiler?", False),
    ("Notes about Ravi?", False),
])
def test_asks_to_save(question, saves):
    assert asks_to_save(question) is saves


@pytest.mark.parametrize("question, asks", [
    ("manager when", True),  # a question word, nothing asks to keep anything
    ("did I ever note down my boiler serial number somewhere in my notes", True),  # a yes-no question
    ("what is the wifi password", True),
    ("for next time: Ana is vegan", False),  # it asks to keep a fact
    ("remeber my usual coffee order is iced americano ?", False),  # a save word misspelt: the planner chooses
    ("where I left the car: level 2 bay C7. remember it please", False),
    ("remember what Ravi said about the book", False),
    ("Remember when we went to Vienna?", False),  # a word that may ask to keep: the planner chooses
    ("heads up for later, Alina doesn't drink coffee any more when you get a sec", False),
    ("Please note that Zed's new number is 0123 456.", False),
])
def test_only_asks(question, asks):
    assert only_asks(question) is asks


async def test_a_question_that_only_asks_is_planned_among_the_skills_that_look_up(make_harness, store):
    """"manager when" was planned to remember_this and answered with a preview saving the question."""
    model = role_model(planner=[plan("person_facts")], l2=[call("check_notebook", "manager"), answer("ok")],
                       l3={"check_notebook": [{"query": "manager"}]})
    out = await make_harness(model).ask("manager when", request_id="oa1")
    schema = next(c.schema for c in model.calls if c.role == "planner")
    for skill in ("person_facts", "find_document", "none"):
        assert schema.model_validate({"skill": skill})
    with pytest.raises(ValueError):
        schema.model_validate({"skill": "remember_this"})
    assert out.exit_kind != "needs_confirmation" and out.pending is None
    # a statement with no question word is planned among every skill
    model = role_model(planner=[plan("remember_this")], l2=[call("remember", "Ana")],
                       l3={"remember": [{"note": "Ana is vegan."}]})
    out = await make_harness(model).ask("for next time: Ana is vegan", request_id="oa2")
    assert out.exit_kind == "needs_confirmation"


async def test_an_explicit_request_to_keep_a_fact_is_planned_among_the_skills_that_save(make_harness, store):
    before = await notes(store)
    model = role_model(planner=[plan("remember_this")], l2=[call("remember", "Zed's new number")],
                       l3={"remember": [{"note": "Zed's new number is 0123 456."}]})
    out = await make_harness(model).ask("Please note that Zed's new number is 0123 456.", request_id="s1")
    schema = next(c.schema for c in model.calls if c.role == "planner")
    assert schema.model_validate({"skill": "remember_this"})
    for other in ("person_facts", "find_document", "none"):
        with pytest.raises(ValueError):
            schema.model_validate({"skill": other})
    assert out.exit_kind == "needs_confirmation" and await notes(store) == before  # still confirmed first
    # a question is planned among every skill
    model = role_model(planner=[plan("person_facts")], l2=[call("check_notebook", "Zed"), answer("ok")],
                       l3={"check_notebook": [{"query": "Zed"}]})
    await make_harness(model).ask("Remember what Zed's number is?", request_id="s2")
    assert next(c.schema for c in model.calls if c.role == "planner").model_validate({"skill": "person_facts"})


async def test_a_confirmation_a_crash_left_running_is_resolved_at_start(make_harness, store, db):
    # A crash between claiming an action and recording its end leaves it `running`; at the next
    # start it is done when its note is in the notebook, confirmable again when it surely is not.
    from edge_agent.store.traces import add_pending, claim_pending

    h = make_harness(role_model())
    await add_pending(db, "a-written", "r1", "remember", {"note": "The gate code is 1984."},
                      'Add to notebook: "The gate code is 1984."')
    await add_pending(db, "a-lost", "r2", "remember", {"note": "The bins go out on Tuesday."},
                      'Add to notebook: "The bins go out on Tuesday."')
    await add_pending(db, "a-gone-tool", "r3", "no_such_tool", {"x": "y"}, "do something")
    for action in ("a-written", "a-lost", "a-gone-tool"):
        assert await claim_pending(db, action)
    await h.toolbox.tools["remember"]({"note": "The gate code is 1984."}, h.toolbox.ctx)  # the write landed

    assert await h.recover_interrupted() == {"a-written": "done", "a-lost": "pending", "a-gone-tool": "failed"}
    assert (await get_pending(db, "a-written")).status == "done"
    again = await h.confirm("a-written", request_id="r4")
    assert again.exit_kind == "error" and "already confirmed (done)" in again.answer
    assert (await notes(store)).count("The gate code is 1984.") == 1
    done = await h.confirm("a-lost", request_id="r5")
    assert done.exit_kind == "complete" and "The bins go out on Tuesday." in await notes(store)
    assert await h.recover_interrupted() == {}
