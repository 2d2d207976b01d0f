"""Calendar: iCalendar import and recurrence expansion (RRULE, EXDATE, overrides, all-day, zones, DST)."""
from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from edge_agent.ingest.ics import import_ics
from edge_agent.ingest.jsonl import SourceError

LONDON = ZoneInfo("Europe/London")
BERLIN = ZoneInfo("Europe/Berlin")

ICS = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:rowing@test
SUMMARY:Saturday rowing
DTSTART;TZID=Europe/London:20260307T080000
DTEND;TZID=Europe/London:20260307T090000
RRULE:FREQ=WEEKLY;BYDAY=SA
EXDATE;TZID=Europe/London:20260321T080000
LOCATION:Leisure centre
END:VEVENT
BEGIN:VEVENT
UID:rowing@test
RECURRENCE-ID;TZID=Europe/London:20260314T080000
SUMMARY:Saturday rowing (late lane)
DTSTART;TZID=Europe/London:20260314T110000
DTEND;TZID=Europe/London:20260314T120000
END:VEVENT
BEGIN:VEVENT
UID:rowing@test
RECURRENCE-ID;TZID=Europe/London:20260411T080000
SUMMARY:Saturday rowing (moved to Monday)
DTSTART;TZID=Europe/London:20260413T080000
DTEND;TZID=Europe/London:20260413T090000
END:VEVENT
BEGIN:VEVENT
UID:holiday@test
SUMMARY:Vienna trip
DTSTART;VALUE=DATE:20260320
DTEND;VALUE=DATE:20260323
DESCRIPTION:Flights booked\\, hotel in Leopoldstadt.
END:VEVENT
BEGIN:VEVENT
UID:standup@test
SUMMARY:Standup
DTSTART;TZID=Europe/London:20260302T093000
DURATION:PT15M
RRULE:FREQ=DAILY;COUNT=3
END:VEVENT
BEGIN:VEVENT
UID:call@test
SUMMARY:Call with Berlin office
DTSTART:20260305T140000Z
DTEND:20260305T150000Z
END:VEVENT
BEGIN:VEVENT
UID:bins@test
SUMMARY:Bins out
DTSTART;VALUE=DATE:20260131
RRULE:FREQ=MONTHLY;BYMONTHDAY=-1;UNTIL=20261231
END:VEVENT
END:VCALENDAR
"""


@pytest.fixture
async def calendar(store, tmp_path):
    path = tmp_path / "cal.ics"
    path.write_text(ICS, encoding="utf-8")
    report = await import_ics(store.calendar, path)
    assert report.rejects == [] and report.added == 7
    return store.calendar


def titles(events):
    return [e.title for e in events]


async def test_weekly_rule_keeps_wall_time_across_dst_with_exdate_and_override(calendar):
    events = [e for e in await calendar.between(date(2026, 3, 1), date(2026, 4, 5), LONDON) if "rowing" in e.title]
    starts = [e.start for e in events]
    assert [s.date() for s in starts] == [date(2026, 3, 7), date(2026, 3, 14), date(2026, 3, 28), date(2026, 4, 4)]
    assert events[1].title == "Saturday rowing (late lane)" and starts[1].hour == 11
    # UK clocks go forward on 29 March 2026: still 08:00 on the wall, one hour less in UTC.
    assert starts[0].utcoffset().total_seconds() == 0 and starts[0].hour == 8
    assert starts[3].utcoffset().total_seconds() == 3600 and starts[3].hour == 8
    assert starts[3].astimezone(timezone.utc).hour == 7


async def test_override_moved_out_of_range_still_removes_original_instance(calendar):
    assert [t for t in titles(await calendar.between(date(2026, 4, 11), date(2026, 4, 11), LONDON))
            if "rowing" in t] == []
    assert titles(await calendar.between(date(2026, 4, 13), date(2026, 4, 13), LONDON)) == [
        "Saturday rowing (moved to Monday)"]


async def test_all_day_multi_day_event_overlaps_and_has_inclusive_last_day(calendar):
    for day in (date(2026, 3, 20), date(2026, 3, 22)):
        assert "Vienna trip" in titles(await calendar.between(day, day, LONDON))
    assert "Vienna trip" not in titles(await calendar.between(date(2026, 3, 23), date(2026, 3, 23), LONDON))
    trip = next(e for e in await calendar.between(date(2026, 3, 19), date(2026, 3, 19 + 5), LONDON)
                if e.title == "Vienna trip")
    payload = trip.to_payload()
    assert (payload["start"], payload["end"], payload["all_day"]) == ("2026-03-20", "2026-03-22", True)
    assert payload["notes"] == "Flights booked, hotel in Leopoldstadt."


async def test_count_duration_and_display_in_device_zone(calendar):
    week = await calendar.between(date(2026, 3, 2), date(2026, 3, 8), LONDON)
    standups = [e for e in week if e.title == "Standup"]
    assert [e.start.day for e in standups] == [2, 3, 4]
    assert all((e.end - e.start).total_seconds() == 15 * 60 for e in standups)
    call = next(e for e in week if e.title.startswith("Call"))
    assert call.start.isoformat() == "2026-03-05T14:00:00+00:00"
    in_berlin = next(e for e in await calendar.between(date(2026, 3, 5), date(2026, 3, 5), BERLIN)
                     if e.title.startswith("Call"))
    assert in_berlin.start.isoformat() == "2026-03-05T15:00:00+01:00"
    assert [e.sort_key(LONDON) for e in week] == sorted(e.sort_key(LONDON) for e in week)


async def test_monthly_last_day_rule_until_and_leap_years(calendar):
    year = await calendar.between(date(2026, 1, 1), date(2026, 12, 31), LONDON)
    bins = [e.start for e in year if e.title == "Bins out"]
    assert len(bins) == 12 and bins[1] == date(2026, 2, 28) and bins[-1] == date(2026, 12, 31)
    assert [e for e in await calendar.between(date(2027, 1, 1), date(2027, 3, 31), LONDON) if e.title == "Bins out"] == []


async def test_infinite_rule_expands_far_in_the_future(calendar):
    events = await calendar.between(date(2030, 6, 1), date(2030, 6, 7), LONDON)
    assert titles(events) == ["Saturday rowing"]
    assert events[0].start == datetime(2030, 6, 1, 8, 0, tzinfo=LONDON)


async def test_range_must_not_be_reversed(calendar):
    with pytest.raises(ValueError, match="before"):
        await calendar.between(date(2026, 3, 2), date(2026, 3, 1), LONDON)


async def test_reimport_is_idempotent_and_changes_update(store, tmp_path):
    path = tmp_path / "cal.ics"
    path.write_text(ICS, encoding="utf-8")
    await import_ics(store.calendar, path)
    again = await import_ics(store.calendar, path)
    assert (again.added, again.updated, again.unchanged) == (0, 0, 7)
    path.write_text(ICS.replace("SUMMARY:Standup", "SUMMARY:Team standup"), encoding="utf-8")
    third = await import_ics(store.calendar, path)
    assert (third.added, third.updated, third.unchanged) == (0, 1, 6)
    assert await store.calendar.count() == 7


BAD_ICS = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:good-1@test
SUMMARY:Good one
DTSTART:20260310T100000Z
DTEND:20260310T110000Z
END:VEVENT
BEGIN:VEVENT
UID:bad-date@test
SUMMARY:Broken date
DTSTART:2026-13-45T99
END:VEVENT
BEGIN:VEVENT
UID:no-start@test
SUMMARY:No start at all
END:VEVENT
BEGIN:VEVENT
UID:bad-rule@test
SUMMARY:Nonsense rule
DTSTART:20260310T100000Z
RRULE:FREQ=SOMETIMES
END:VEVENT
BEGIN:VEVENT
UID:backwards@test
SUMMARY:Ends before it starts
DTSTART:20260310T100000Z
DTEND:20260310T090000Z
END:VEVENT
BEGIN:VEVENT
UID:bad-zone@test
SUMMARY:Nowhere time
DTSTART;TZID=Mars/Olympus_Mons:20260310T100000
END:VEVENT
BEGIN:VEVENT
UID:good-2@test
SUMMARY:Good two
DTSTART;VALUE=DATE:20260311
END:VEVENT
BEGIN:VEVENT
UID:unterminated@test
SUMMARY:Never ends
DTSTART:20260312T100000Z
END:VCALENDAR
"""


async def test_bad_events_are_rejected_with_line_numbers_and_good_ones_land(store, tmp_path):
    path = tmp_path / "bad.ics"
    path.write_text(BAD_ICS, encoding="utf-8")
    report = await import_ics(store.calendar, path)
    assert report.added == 2
    lines = {int(r.split(":")[1]) for r in report.rejects}
    assert len(report.rejects) == 6, report.rejects
    assert lines == {10, 15, 19, 25, 31, 41}, report.rejects
    assert all(r.startswith(f"{path}:") for r in report.rejects)
    assert any("DTSTART" in r for r in report.rejects)
    assert any("END:VEVENT" in r for r in report.rejects)
    assert any("Mars/Olympus_Mons" in r for r in report.rejects)
    assert titles(await store.calendar.between(date(2026, 3, 10), date(2026, 3, 12), LONDON)) == ["Good one", "Good two"]


async def test_a_file_that_is_not_icalendar_is_a_source_error(store, tmp_path):
    path = tmp_path / "notes.ics"
    path.write_text("just some text\n", encoding="utf-8")
    with pytest.raises(SourceError, match="not an iCalendar"):
        await import_ics(store.calendar, path)
    with pytest.raises(SourceError, match="no such file"):
        await import_ics(store.calendar, tmp_path / "missing.ics")


def _series(uid: str, tzid: str, start: str, rule: str, extra: str) -> str:
    return ("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\nBEGIN:VEVENT\n"
            f"UID:{uid}\nSUMMARY:{uid}\nDTSTART;TZID={tzid}:{start}\nDURATION:PT15M\n{rule}{extra}"
            "END:VEVENT\nEND:VCALENDAR\n")


async def _utc_starts(store, tmp_path, ics: str, first: date, last: date) -> list[str]:
    path = tmp_path / "series.ics"
    path.write_text(ics, encoding="utf-8")
    report = await import_ics(store.calendar, path)
    assert report.rejects == []
    events = await store.calendar.between(first, last, ZoneInfo("UTC"))
    return [e.start.astimezone(timezone.utc).strftime("%m-%dT%H:%M") for e in events]


async def test_an_rdate_in_utc_keeps_which_repeated_hour_it_names_west_of_utc(store, tmp_path):
    """Halifax falls back on 1 Nov 2026 (01:00-02:00 happens twice). RDATE 05:30Z is the second
    01:30 (AST): kept as the file gives it, not turned into a wall time that means the first."""
    ics = _series("night-check", "America/Halifax", "20261031T013000", "", "RDATE:20261101T053000Z\n")
    assert await _utc_starts(store, tmp_path, ics, date(2026, 10, 30), date(2026, 11, 2)) == [
        "10-31T04:30", "11-01T05:30"]


@pytest.mark.parametrize(("exdate", "kept"), [("20261025T003000Z", False), ("20261025T013000Z", True)])
async def test_an_exdate_in_utc_removes_only_the_instant_it_names_east_of_utc(store, tmp_path, exdate, kept):
    """Berlin falls back on 25 Oct 2026: the Sunday 02:30 instance is the first 02:30 (CEST, 00:30Z).
    An EXDATE for it removes it; one for the second 02:30 (CET, 01:30Z) names no instance."""
    ics = _series("sunday-backup", "Europe/Berlin", "20261018T023000", "RRULE:FREQ=WEEKLY;COUNT=3\n",
                  f"EXDATE:{exdate}\n")
    starts = await _utc_starts(store, tmp_path, ics, date(2026, 10, 17), date(2026, 11, 2))
    assert ("10-25T00:30" in starts) is kept
    assert "10-18T00:30" in starts and "11-01T01:30" in starts  # CEST before, CET after


async def test_exdates_and_rdates_are_stored_in_the_zone_or_utc_the_file_gives(store, tmp_path):
    from edge_agent.store.recurrence import decode_list, encode_list

    ics = _series("mixed", "Europe/London", "20261101T090000", "RRULE:FREQ=DAILY;COUNT=5\n",
                  "EXDATE;TZID=America/New_York:20261102T040000\nEXDATE:20261103T090000Z\n"
                  "RDATE;TZID=Europe/Paris:20261110T100000\n")
    starts = await _utc_starts(store, tmp_path, ics, date(2026, 11, 1), date(2026, 11, 11))
    assert starts == ["11-01T09:00", "11-04T09:00", "11-05T09:00", "11-10T09:00"]
    paris = datetime(2026, 11, 10, 10, 0, tzinfo=ZoneInfo("Europe/Paris"))
    utc = datetime(2026, 11, 3, 9, 0, tzinfo=timezone.utc)
    text = encode_list((paris, utc, datetime(2026, 11, 4, 9, 0), date(2026, 11, 5)))
    assert decode_list(text, False)[:3] == (paris, utc, datetime(2026, 11, 4, 9, 0))
    assert [v.tzinfo for v in decode_list(text, False)[:2]] == [ZoneInfo("Europe/Paris"), timezone.utc]
