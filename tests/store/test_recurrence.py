"""Calendar expansion through recurring-ical-events: RDATE, EXDATE in other zones, cancelled and moved
overrides, a zone whose DST changes on another date than the device's, floating times, bad stored rows."""
import logging
from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from edge_agent.ingest.ics import import_ics

LONDON = ZoneInfo("Europe/London")

ICS = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:choir@test
SUMMARY:Choir
DTSTART;TZID=Europe/London:20260305T190000
DTEND;TZID=Europe/London:20260305T203000
RRULE:FREQ=WEEKLY;BYDAY=TH;UNTIL=20260430T235959Z
RDATE;TZID=Europe/London:20260401T190000
RDATE;VALUE=PERIOD:20260418T100000Z/20260418T120000Z
EXDATE:20260409T180000Z
END:VEVENT
BEGIN:VEVENT
UID:choir@test
RECURRENCE-ID;TZID=Europe/London:20260319T190000
SUMMARY:Choir
DTSTART;TZID=Europe/London:20260319T190000
DTEND;TZID=Europe/London:20260319T203000
STATUS:CANCELLED
END:VEVENT
BEGIN:VEVENT
UID:choir@test
RECURRENCE-ID;TZID=Europe/London:20260326T190000
SUMMARY:Choir concert (moved)
DTSTART;TZID=Europe/London:20260502T150000
DTEND;TZID=Europe/London:20260502T170000
LOCATION:St Mary's
END:VEVENT
BEGIN:VEVENT
UID:nyc@test
SUMMARY:New York standup
DTSTART;TZID=America/New_York:20260302T090000
DTEND;TZID=America/New_York:20260302T091500
RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=6
END:VEVENT
BEGIN:VEVENT
UID:dentist@test
SUMMARY:Dentist check-ups
DTSTART;TZID=Europe/London:20260310T083000
DTEND;TZID=Europe/London:20260310T090000
RDATE;TZID=Europe/London:20260915T083000,20270316T083000
END:VEVENT
BEGIN:VEVENT
UID:alarm@test
SUMMARY:Floating alarm
DTSTART:20260329T073000
DTEND:20260329T074500
RRULE:FREQ=DAILY;COUNT=2
END:VEVENT
BEGIN:VEVENT
UID:recycling@test
SUMMARY:Recycling
DTSTART;VALUE=DATE:20260303
RRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4
EXDATE;VALUE=DATE:20260317
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


def starts(events, title_start):
    return [e.start for e in events if e.title.startswith(title_start)]


async def test_rdate_exdate_in_utc_and_cancelled_and_moved_overrides_across_dst(calendar):
    events = await calendar.between(date(2026, 3, 1), date(2026, 4, 30), LONDON)
    choir = [(e.start.strftime("%m-%d %H:%M %Z"), e.title) for e in events if e.title.startswith("Choir")]
    assert choir == [
        ("03-05 19:00 GMT", "Choir"), ("03-12 19:00 GMT", "Choir"),
        # 19 March cancelled; 26 March moved to 2 May (outside this range), so gone from here
        ("04-01 19:00 BST", "Choir"),  # RDATE, a Wednesday after the clocks went forward
        ("04-02 19:00 BST", "Choir"),
        # 9 April removed by an EXDATE written in UTC (18:00Z is 19:00 BST)
        ("04-16 19:00 BST", "Choir"),
        ("04-18 11:00 BST", "Choir"),  # an RDATE period: its start, 10:00Z
        ("04-23 19:00 BST", "Choir"), ("04-30 19:00 BST", "Choir"),
    ]
    moved = [e for e in await calendar.between(date(2026, 5, 2), date(2026, 5, 2), LONDON) if e.uid == "choir@test"]
    assert [(e.title, e.start.hour, e.location) for e in moved] == [("Choir concert (moved)", 15, "St Mary's")]


async def test_a_zone_whose_dst_changes_on_another_date_keeps_its_own_wall_time(calendar):
    # New York springs forward on 8 March 2026, London on 29 March: for three weeks the gap is 4 hours.
    events = await calendar.between(date(2026, 3, 1), date(2026, 4, 12), LONDON)
    assert [s.strftime("%m-%d %H:%M") for s in starts(events, "New York")] == [
        "03-02 14:00", "03-09 13:00", "03-16 13:00", "03-23 13:00", "03-30 14:00", "04-06 14:00"]
    assert all(s.astimezone(ZoneInfo("America/New_York")).hour == 9 for s in starts(events, "New York"))


async def test_rdates_without_a_rule_are_instances_too(calendar):
    year = await calendar.between(date(2026, 1, 1), date(2026, 12, 31), LONDON)
    assert [s.date() for s in starts(year, "Dentist")] == [date(2026, 3, 10), date(2026, 9, 15)]
    later = await calendar.between(date(2027, 3, 16), date(2027, 3, 16), LONDON)
    assert [s.isoformat() for s in starts(later, "Dentist")] == ["2027-03-16T08:30:00+00:00"]


async def test_floating_times_are_wall_clock_in_the_device_zone(calendar):
    around_change = await calendar.between(date(2026, 3, 29), date(2026, 3, 30), LONDON)
    assert [s.isoformat() for s in starts(around_change, "Floating")] == [
        "2026-03-29T07:30:00+01:00", "2026-03-30T07:30:00+01:00"]
    in_utc = await calendar.between(date(2026, 3, 29), date(2026, 3, 29), timezone.utc)
    assert [s.isoformat() for s in starts(in_utc, "Floating")] == ["2026-03-29T07:30:00+00:00"]


async def test_all_day_rule_with_a_date_exdate(calendar):
    events = await calendar.between(date(2026, 3, 1), date(2026, 4, 30), LONDON)
    assert [e.start for e in events if e.title == "Recycling"] == [date(2026, 3, 3), date(2026, 3, 31),
                                                                  date(2026, 4, 14)]


async def test_an_edit_is_seen_by_the_next_query(store, tmp_path, calendar):
    first = await calendar.between(date(2026, 3, 5), date(2026, 3, 5), LONDON)
    assert [e.title for e in first] == ["Choir"]
    path = tmp_path / "edit.ics"
    path.write_text(ICS.replace("SUMMARY:Choir\nDTSTART;TZID=Europe/London:20260305",
                                "SUMMARY:Choir rehearsal\nDTSTART;TZID=Europe/London:20260305"), encoding="utf-8")
    report = await import_ics(calendar, path)
    assert report.updated == 1
    assert [e.title for e in await calendar.between(date(2026, 3, 5), date(2026, 3, 5), LONDON)] == ["Choir rehearsal"]


async def test_a_bad_stored_rule_is_logged_and_hides_nothing_else(store, calendar, caplog):
    await store.conn.execute("UPDATE calendar_events SET rrule = 'FREQ=SOMETIMES' WHERE uid = 'nyc@test'")
    await store.conn.commit()
    with caplog.at_level(logging.WARNING, logger="edge_agent.store.events"):
        events = await calendar.between(date(2026, 3, 1), date(2026, 3, 8), LONDON)
    assert "New York standup" not in [e.title for e in events]
    assert [e.title for e in events if e.title.startswith("Choir")] == ["Choir"]
    assert "nyc@test could not be expanded" in caplog.text


ZONED_UNTIL = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:{zone}@until
SUMMARY:Evening class
DTSTART;TZID={zone}:{start}
DTEND;TZID={zone}:{end}
RRULE:FREQ=WEEKLY;UNTIL={until}
END:VEVENT
END:VCALENDAR
"""


@pytest.mark.parametrize("zone,start,end,until,last", [
    # West of Greenwich: 19:15 in Halifax is 23:15Z, as RFC 5545 wants a zoned rule's UNTIL written.
    ("America/Halifax", "20261110T191500", "20261110T201500", "20261201T231500Z", "2026-12-01T19:15:00-04:00"),
    # East of it: 19:15 in Paris is 18:15Z.
    ("Europe/Paris", "20261110T191500", "20261110T201500", "20261201T181500Z", "2026-12-01T19:15:00+01:00"),
    # Across a DST change: the series starts in summer time and ends in winter time.
    ("America/Halifax", "20261020T191500", "20261020T201500", "20261110T231500Z", "2026-11-10T19:15:00-04:00"),
])
async def test_a_utc_until_keeps_the_last_occurrence_in_every_zone(store, tmp_path, zone, start, end, until, last):
    path = tmp_path / "until.ics"
    path.write_text(ZONED_UNTIL.format(zone=zone, start=start, end=end, until=until), encoding="utf-8")
    report = await import_ics(store.calendar, path)
    assert report.rejects == [] and report.added == 1
    here = ZoneInfo(zone)
    events = await store.calendar.between(date(2026, 10, 1), date(2026, 12, 31), here)
    got = [e.start.astimezone(here).isoformat() for e in events if e.uid == f"{zone}@until"]
    assert got[-1] == last, got
    assert all(datetime.fromisoformat(g).hour == 19 for g in got)
