"""L3's "Dates:" line: the days a request names, from the one date resolver, never guessed."""
from __future__ import annotations

from datetime import date

from edge_agent.harness.prompts import OPEN_RANGE_DAYS, date_hints, l3_messages
from edge_agent.tools.base import ToolManifest
from edge_agent.tools.registry import build_tools

TODAY = date(2026, 11, 18)  # a Wednesday


def test_an_explicit_day_and_a_relative_range_are_written_out():
    assert date_hints("events on 24 November", "", TODAY) == "Dates: 24 November: 2026-11-24"
    assert date_hints("what is on next weekend", "", TODAY) == "Dates: next weekend: 2026-11-28 to 2026-11-29"
    both = date_hints("tomorrow and next Friday", "", TODAY)
    assert both == "Dates: tomorrow: 2026-11-19; next Friday: 2026-11-27"


def test_the_askers_own_day_comes_first():
    assert date_hints("the dentist appointment", "is the dentist on the 24th?", TODAY) == "Dates: the 24th: 2026-11-24"
    # L2's rewording of the asker's phrase does not replace it (each seen with the bundled model)
    assert date_hints("the calendar for the week of", "What did I have on last week?", TODAY) == \
        "Dates: last week: 2026-11-09 to 2026-11-15"
    assert date_hints("the calendar for the next month", "What's left for the rest of this month?", TODAY) == \
        "Dates: the rest of this month: 2026-11-18 to 2026-11-30"
    assert date_hints("events on 2019-04-01", "What was on last month?", TODAY) == \
        "Dates: last month: 2026-10-01 to 2026-10-31"


def test_the_instructions_day_is_used_when_the_asker_named_none():
    # a second call names the day the first one found ("when is Ravi's birthday, and what's on then?")
    assert date_hints("events on 12 November", "When is Ravi's birthday, and what's on then?", TODAY) == \
        "Dates: 12 November: 2026-11-12"


def test_no_day_at_all_gives_the_open_range():
    back, ahead = OPEN_RANGE_DAYS
    assert back < 0 < ahead
    assert date_hints("the book launch", "where is the book launch?", TODAY) == \
        "Dates: no day named: 2026-10-19 to 2027-02-16"


def test_a_phrase_the_resolver_cannot_work_out_is_said_so():
    text = date_hints("events on Mother's Day", "", TODAY)
    assert "Mother's Day: unknown" in text and "no day named: 2026-10-19 to 2027-02-16" in text


def test_the_dates_line_follows_the_instruction_in_the_user_turn():
    tool = build_tools()["queryCalendar"]
    manifest = ToolManifest.load("queryCalendar")
    system, user = l3_messages(manifest, tool.Args, "events on 24 November", "Today is x.", "Dates: 24 November: 2026-11-24")
    assert user.content == "events on 24 November\n(Dates: 24 November: 2026-11-24)"
    assert "Dates:" in system.content  # the crafting rules say how to read it
    assert l3_messages(manifest, tool.Args, "x")[1].content == "x"
