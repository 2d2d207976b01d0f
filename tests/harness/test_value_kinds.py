"""Facts without the kind of value a question asks for are no answer to it."""
from __future__ import annotations

import pytest

from harness_kit import LEO_BODY, answer, call, plan, role_model
from edge_agent.harness.answer import NO_VALUE, select
from edge_agent.harness.channels import SideChannels
from edge_agent.harness.value_kinds import missing_kind, wanted_kind


@pytest.mark.parametrize("question, kind", [
    ("How much did the ring cost?", "an amount"),
    ("how much do we pay for the flat", "an amount"),
    ("What did the vet charge for the booster?", "an amount"),
    ("What's the price of the tickets?", "an amount"),
    ("What's my passport number?", "a number"),
    ("What's the booking reference?", "a number"),
    ("What's the door code?", "a number"),
    ("How much milk is left?", None),  # not money
    ("When is Leo's birthday?", None),
    ("Who fixed the boiler?", None),
])
def test_the_kind_of_value_asked_for(question, kind):
    assert wanted_kind(question) == kind


@pytest.mark.parametrize("question, facts, missing", [
    ("How much did the ring cost?", "Amira and I got engaged on Arthur's Seat!", "an amount"),
    ("How much did the ring cost?", "The ring was £1,200 from a shop in Leeds.", None),
    ("How much did the ring cost?", "It came to 900 pounds.", None),
    ("What's my passport number?", "Born 12 April 1988. Passport expires on 14 August 2029. Today is 2026-11-18.",
     "a number"),
    ("What's my passport number?", "Passport 533 118 204, expires 14 August 2029.", None),
    ("What's my locker number?", "My locker is 112.", None),
    ("What's the door code?", "Door code changed at 10:15 on 3 May.", "a number"),
])
def test_facts_that_hold_no_value_of_that_kind(question, facts, missing):
    assert missing_kind(question, facts) == missing


def test_the_answer_says_so_and_names_the_closest_entry():
    note = {"id": 1, "title": "Passport", "body": "Passport expires on 14 August 2029.", "updated": "2026-04-12",
            "strength": "all"}
    chosen = select(SideChannels(notes=[note]), "What's my passport number?")
    assert not chosen.needs_generation and chosen.attachment is None
    assert chosen.fallback == (f"{NO_VALUE.format(kind='a number')}\n"
                               "The closest entry: Passport: Passport expires on 14 August 2029.")


async def test_a_harness_answer_from_facts_without_the_number(make_harness):
    model = role_model(planner=[plan("person_facts")], l2=[call("check_notebook", "Leo's phone"),
                                                           call("grep_memory", "Leo phone"), answer("Leo Marsh.")],
                       l3={"check_notebook": [{"query": "Leo"}], "grep_memory": [{"query": "Leo phone"}]})
    out = await make_harness(model).ask("What's Leo's phone number?", request_id="vk1")
    assert "3 May 1990" in LEO_BODY  # its only digits are a date
    assert out.answer.startswith(NO_VALUE.format(kind="a number"))
