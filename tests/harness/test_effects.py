"""An effect previews what the asker said, not a value the model made up."""
from __future__ import annotations

import pytest

from edge_agent.harness.effects import asker_words, from_the_asker, grounded_in
from harness_kit import call, plan, role_model


@pytest.mark.parametrize("question, words", [
    ("Remember that my locker number is 238", "My locker number is 238."),
    ("Please note that Eli's new mobile number is 07700 900482.", "Eli's new mobile number is 07700 900482."),
    ("Make a note: the Lumenet account number is LN-5518302", "The Lumenet account number is LN-5518302."),
    ("can you remember for me that Mum's favourite flowers are yellow tulips", "Mum's favourite flowers are yellow tulips."),
    ("don't forget my shoe size is UK 8!", "My shoe size is UK 8!"),
    ("My parking space is B12", "My parking space is B12."),
    ("remeber my  bike code is 4417", "My  bike code is 4417."),  # a misspelt request, the asker's spacing kept
    ("hey remmember, that the remeber box is blue", "That the remeber box is blue."),  # only the request goes
    ("for next time: Ana is vegan", "Ana is vegan."),
    ("remmember in the noteboook:the gate code is 1904", "The gate code is 1904."),  # two misspelt, both off
])
def test_the_askers_fact_without_the_request(question, words):
    assert asker_words(question) == words


@pytest.mark.parametrize("note, ok", [
    ("The user's locker number is 238.", True),
    ("My locker is 238.", True),
    ("The user's locker number is 4417.", False),  # a number the asker never wrote
    ("The user's locker.", False),  # the asker's number is gone
    ("Locker number 238 saved.", True),
    ("The user's email is nadia@example.com and locker 238.", False),
])
def test_a_crafted_note_must_state_only_the_askers_values(note, ok):
    question = "Remember that my locker number is 238"
    assert grounded_in(note, question) is ok


@pytest.mark.parametrize("note, ok", [
    ("The book club pick for March is 'Driftwood'.", True),
    ("The user's book club pick for March is Driftwood.", True),
    ("The book club pick is a member of the team who voted for the winner.", False),  # the title is gone
    ("The book club pick for June is 'Driftwood'.", False),  # a name the asker did not give, one they did missing
])
def test_names_and_quoted_values_are_kept(note, ok):
    assert grounded_in(note, "Note that the book club pick for March is 'Driftwood'.") is ok


def test_only_ungrounded_texts_are_replaced():
    q = "Remember that Mum's favourite flowers are yellow tulips"
    assert from_the_asker({"note": "The user's mum's favourite flowers are yellow tulips."}, q) == \
        {"note": "The user's mum's favourite flowers are yellow tulips."}
    assert from_the_asker({"note": "The user's mum's tulips."}, q) == {"note": "Mum's favourite flowers are yellow tulips."}
    assert from_the_asker({"count": 3, "note": ""}, q) == {"count": 3, "note": ""}


async def test_the_preview_holds_the_askers_number_when_the_model_invents_one(make_harness, store):
    model = role_model(planner=[plan("remember_this")], l2=[call("remember", "the locker number")],
                       l3={"remember": [{"note": "The user's locker number is 4417."}]})
    out = await make_harness(model).ask("Remember that my locker number is 238", request_id="e1")
    assert out.exit_kind == "needs_confirmation"
    assert out.pending.args == {"note": "My locker number is 238."}
    assert out.pending.preview == 'Add to notebook: "My locker number is 238."'
    assert "4417" not in out.answer.replace(out.pending.id, "")  # the random action id may hold any digits
    assert not [n for n in await store.notebook.search("locker")]  # nothing written before the confirm
