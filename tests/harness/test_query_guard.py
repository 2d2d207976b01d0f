"""A search query keeps no date the asker never gave; effects and the asker's own dates are untouched."""
from __future__ import annotations

import pytest

from harness_kit import answer, call, plan, role_model
from edge_agent.harness.query_guard import without_invented_dates


@pytest.mark.parametrize("query, question, expected", [
    ("plumber invoice July", "What was the total on the plumbing invoice?", "plumber invoice"),
    ("Mum call Sunday 2026", "What did Mum say about Christmas?", "Mum call"),
    ("dentist 2026-04-01", "When is the dentist?", "dentist"),
    ("7 November meeting", "What did I have at Café Rosa on 7 November?", "7 November meeting"),  # the asker's
    ("Sunday call", "What did Mum say on sunday?", "Sunday call"),  # any case
    ("July", "What happened then?", "July"),  # nothing else would be left
])
def test_without_invented_dates(query, question, expected):
    assert without_invented_dates(query, question) == expected


async def test_the_search_runs_with_the_askers_dates_only(make_harness):
    model = role_model(planner=[plan("person_facts")], l2=[call("check_notebook", "Leo's birthday in July"),
                                                           answer("ok")],
                       l3={"check_notebook": [{"query": "Leo birthday July"}]})
    await make_harness(model).ask("When is Leo's birthday?", request_id="qg1")
    l2 = [c for c in model.calls if c.role == "l2"]
    assert 'check_notebook ran with {"query": "Leo birthday"}' in l2[1].prompt
