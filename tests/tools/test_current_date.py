"""current_date: ranges across month and year ends, a DST change and 29 February; injected clock."""
from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from edge_agent.tools.base import ToolContext
from edge_agent.tools.clock import ClockError, device_zone, fixed_clock
from edge_agent.tools.current_date import CurrentDate, date_ranges

LONDON = ZoneInfo("Europe/London")


def iso(ranges):
    return {k: (a.isoformat(), b.isoformat()) for k, (a, b) in ranges.items()}


def test_month_end_on_a_saturday():
    r = iso(date_ranges(date(2026, 1, 31)))
    assert r["today"] == ("2026-01-31", "2026-01-31")
    assert r["tomorrow"] == ("2026-02-01", "2026-02-01")
    assert r["this_week"] == ("2026-01-26", "2026-02-01")
    assert r["this_weekend"] == ("2026-01-31", "2026-02-01")
    assert r["this_month"] == ("2026-01-01", "2026-01-31")
    assert r["next_month"] == ("2026-02-01", "2026-02-28")


def test_year_end_and_year_start():
    end = iso(date_ranges(date(2026, 12, 31)))  # a Thursday
    assert end["tomorrow"] == ("2027-01-01", "2027-01-01")
    assert end["next_week"] == ("2027-01-04", "2027-01-10")
    assert end["this_weekend"] == ("2027-01-02", "2027-01-03")
    assert end["next_month"] == ("2027-01-01", "2027-01-31")
    start = iso(date_ranges(date(2027, 1, 1)))
    assert start["yesterday"] == ("2026-12-31", "2026-12-31")
    assert start["last_week"] == ("2026-12-21", "2026-12-27")
    assert start["this_week"] == ("2026-12-28", "2027-01-03")


def test_29_february():
    leap = iso(date_ranges(date(2028, 2, 29)))  # a Tuesday
    assert leap["tomorrow"] == ("2028-03-01", "2028-03-01")
    assert leap["yesterday"] == ("2028-02-28", "2028-02-28")
    assert leap["this_month"] == ("2028-02-01", "2028-02-29")
    assert iso(date_ranges(date(2028, 1, 31)))["next_month"] == ("2028-02-01", "2028-02-29")
    assert iso(date_ranges(date(2028, 3, 1)))["yesterday"] == ("2028-02-29", "2028-02-29")


def test_weekend_on_sunday_is_the_current_one():
    r = iso(date_ranges(date(2026, 11, 22)))  # a Sunday
    assert r["this_weekend"] == ("2026-11-21", "2026-11-22")
    assert r["this_week"] == ("2026-11-16", "2026-11-22")
    assert r["next_week"] == ("2026-11-23", "2026-11-29")


async def run_at(moment, zone=LONDON):
    ctx = ToolContext(store=None, now=fixed_clock(moment, zone))
    return await CurrentDate(enforce_guards=False)({}, ctx)


async def test_dst_change_uses_the_device_zone_not_utc():
    # UK clocks go forward at 01:00 UTC on Sunday 29 March 2026. 23:30 UTC that day is already
    # 00:30 on Monday in London: "today" must be Monday, with Monday's week.
    result = await run_at(datetime(2026, 3, 29, 23, 30, tzinfo=timezone.utc))
    p = result.payload
    assert (p["today"], p["weekday"], p["timezone"]) == ("2026-03-30", "Monday", "Europe/London")
    assert p["ranges"]["this_week"] == ["2026-03-30", "2026-04-05"]
    assert p["ranges"]["last_week"] == ["2026-03-23", "2026-03-29"]
    before = await run_at(datetime(2026, 3, 29, 0, 30, tzinfo=timezone.utc))  # 00:30 GMT, still Sunday
    assert before.payload["today"] == "2026-03-29"
    # The repeated hour when clocks go back (25 October 2026, 01:00-02:00 twice) is still that day.
    back = await run_at("2026-10-25T01:30:00")
    assert back.payload["today"] == "2026-10-25" and back.payload["weekday"] == "Sunday"


async def test_payload_and_text_shape():
    result = await run_at("2026-11-18T09:30:00")
    assert result.found and result.channel == "date" and result.pill == "Date"
    assert set(result.payload) == {"today", "weekday", "timezone", "ranges"}
    assert list(result.payload["ranges"]) == ["today", "tomorrow", "yesterday", "this_week", "next_week",
                                              "last_week", "this_weekend", "this_month", "next_month"]
    assert result.text.splitlines()[0] == "Today is Wednesday 2026-11-18 (Europe/London)."
    assert "next week: 2026-11-23 to 2026-11-29" in result.text
    assert "this weekend: 2026-11-21 to 2026-11-22" in result.text


def test_clock_helpers_validate_input():
    assert device_zone("Europe/London") == LONDON
    with pytest.raises(ClockError, match="unknown time zone"):
        device_zone("Mars/Base")
    with pytest.raises(ClockError, match="ISO 8601"):
        fixed_clock("next tuesday", LONDON)
    aware = fixed_clock("2026-07-01T12:00:00+00:00", LONDON)()
    assert aware.isoformat() == "2026-07-01T13:00:00+01:00"
