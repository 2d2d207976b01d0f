"""The date resolver: every row of its table against the world's fixed clock, edge days, DST, unresolved phrases."""
import tomllib
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from edge_agent.harness.reply import date_reply
from edge_agent.paths import WORLD_DIR
from edge_agent.tools.clock import device_zone, fixed_clock
from edge_agent.tools import dates
from edge_agent.tools.dates import TABLE, Span, describe, resolve, resolve_all


def date_answer(payload, question):
    return date_reply(payload, question).text


LONDON = ZoneInfo("Europe/London")
WORLD = tomllib.loads((WORLD_DIR / "world.toml").read_text(encoding="utf-8"))
WORLD_TODAY = fixed_clock(WORLD["now"], device_zone(WORLD["timezone"]))().date()


def test_the_world_clock_is_a_wednesday():
    # Every expectation below is worked out by hand from Wednesday 18 November 2026 (weeks start Monday).
    assert WORLD_TODAY == date(2026, 11, 18) and WORLD_TODAY.weekday() == 2


D = date.fromisoformat
CASES = [
    # (phrase, first, last or None for one day)
    ("today", "2026-11-18", None),
    ("tonight", "2026-11-18", None),
    ("tomorrow", "2026-11-19", None),
    ("yesterday", "2026-11-17", None),
    ("last night", "2026-11-17", None),
    ("the day after tomorrow", "2026-11-20", None),
    ("the day before yesterday", "2026-11-16", None),
    ("this Saturday", "2026-11-21", None),
    ("Saturday", "2026-11-21", None),
    ("Monday", "2026-11-23", None),  # a bare weekday whose day this week has gone is the coming one
    ("Thursday", "2026-11-19", None),
    ("Wednesday", "2026-11-18", None),  # today
    ("tmrw", "2026-11-19", None),
    ("tommorow", "2026-11-19", None),
    ("mon 7th", "2026-12-07", None),  # the next Monday that is a 7th
    ("next Friday", "2026-11-27", None),
    ("last Tuesday", "2026-11-10", None),
    ("Tuesday next week", "2026-11-24", None),
    ("next week's Tuesday", "2026-11-24", None),
    ("Thursday last week", "2026-11-12", None),
    ("Monday next", "2026-11-23", None),
    ("the Sunday just gone", "2026-11-15", None),
    ("Friday just gone", "2026-11-13", None),
    ("the Monday just past", "2026-11-16", None),
    ("this past Sunday", "2026-11-15", None),
    ("the previous Wednesday", "2026-11-11", None),  # never today itself
    ("this coming Friday", "2026-11-20", None),
    ("the coming Wednesday", "2026-11-25", None),
    ("Sunday coming", "2026-11-22", None),
    ("a week on Sunday", "2026-11-29", None),
    ("Sunday week", "2026-11-29", None),
    ("a week from this coming Tuesday", "2026-12-01", None),
    ("a fortnight on Saturday", "2026-12-05", None),
    ("Saturday fortnight", "2026-12-05", None),
    ("the Sunday after next", "2026-11-29", None),
    ("the Friday before last", "2026-11-06", None),
    ("a week today", "2026-11-25", None),
    ("a fortnight today", "2026-12-02", None),
    ("a week tomorrow", "2026-11-26", None),
    ("this week", "2026-11-16", "2026-11-22"),
    ("next week", "2026-11-23", "2026-11-29"),
    ("last week", "2026-11-09", "2026-11-15"),
    ("the week after next", "2026-11-30", "2026-12-06"),
    ("the week before last", "2026-11-02", "2026-11-08"),
    ("this weekend", "2026-11-21", "2026-11-22"),
    ("this coming weekend", "2026-11-21", "2026-11-22"),
    ("at the weekend", "2026-11-21", "2026-11-22"),
    ("next weekend", "2026-11-28", "2026-11-29"),
    ("last weekend", "2026-11-14", "2026-11-15"),
    ("the weekend just gone", "2026-11-14", "2026-11-15"),
    ("the weekend after next", "2026-12-05", "2026-12-06"),
    ("the weekend before last", "2026-11-07", "2026-11-08"),
    ("this month", "2026-11-01", "2026-11-30"),
    ("next month", "2026-12-01", "2026-12-31"),
    ("last month", "2026-10-01", "2026-10-31"),
    ("the month after next", "2027-01-01", "2027-01-31"),
    ("next year", "2027-01-01", "2027-12-31"),
    ("the first weekend of next month", "2026-12-05", "2026-12-06"),
    ("the last weekend of next month", "2026-12-26", "2026-12-27"),
    ("the first Monday of next month", "2026-12-07", None),
    ("the last Friday of next month", "2026-12-25", None),
    ("the second Tuesday in December", "2026-12-08", None),
    ("the last weekend of this month", "2026-11-28", "2026-11-29"),
    ("the first day of next month", "2026-12-01", None),
    ("the last day of this month", "2026-11-30", None),
    ("in 3 days", "2026-11-21", None),
    ("in ten days' time", "2026-11-28", None),
    ("in two weeks", "2026-12-02", None),
    ("in a week's time", "2026-11-25", None),
    ("in a fortnight", "2026-12-02", None),
    ("5 days from now", "2026-11-23", None),
    ("in 3 months", "2027-02-18", None),
    ("two weeks ago", "2026-11-04", None),
    ("a month ago", "2026-10-18", None),
    ("the 3rd", "2026-12-03", None),  # a day of the month without a month: the next one
    ("the 21st", "2026-11-21", None),
    ("the 18th", "2026-11-18", None),
    ("the 31st", "2026-12-31", None),  # November has no 31st
    ("the 5th of next month", "2026-12-05", None),
    ("the 2nd of this month", "2026-11-02", None),
    ("3 December", "2026-12-03", None),
    ("the 4th of July", "2026-07-04", None),  # nearest: 137 days ago, not 228 ahead
    ("the 4th of January", "2027-01-04", None),
    ("December 25th", "2026-12-25", None),
    ("Jan 5", "2027-01-05", None),
    ("3 November", "2026-11-03", None),  # just past, not eleven months away
    ("14 February 2028", "2028-02-14", None),
    ("2026-12-24", "2026-12-24", None),
    ("in January", "2027-01-01", "2027-01-31"),
    ("in August", "2026-08-01", "2026-08-31"),
    ("last December", "2025-12-01", "2025-12-31"),
    ("next November", "2027-11-01", "2027-11-30"),
    ("June 2027", "2027-06-01", "2027-06-30"),
    ("the next 7 days", "2026-11-19", "2026-11-25"),  # from tomorrow
    ("the coming two weeks", "2026-11-19", "2026-12-02"),
    ("the last 3 days", "2026-11-15", "2026-11-17"),  # up to yesterday
    ("the past month", "2026-10-18", "2026-11-17"),
    ("the rest of this month", "2026-11-18", "2026-11-30"),  # from today
    ("rest of the week", "2026-11-18", "2026-11-22"),
    ("the remainder of the year", "2026-11-18", "2026-12-31"),
    ("Christmas", "2026-12-25", None),
    ("Christmas Eve", "2026-12-24", None),
    ("Boxing Day", "2026-12-26", None),
    ("New Year's Eve", "2026-12-31", None),
    ("New Year’s Day", "2027-01-01", None),
    ("Bonfire Night", "2026-11-05", None),
    ("Halloween", "2026-10-31", None),
    ("the Fourth of July", "2026-07-04", None),
    ("Easter", "2027-03-28", None),
    ("Good Friday", "2027-03-26", None),
    ("Easter Monday", "2027-03-29", None),
    ("Mothering Sunday", "2027-03-07", None),  # the UK's, three weeks before Easter
]


@pytest.mark.parametrize("question,expected", [
    ("on the 22nd when you get a sec", "The 22nd is Sunday 2026-11-22."),
    ("the 5th if that works", "The 5th is Saturday 2026-12-05."),
    ("anything on the 21st thx", "The 21st is Saturday 2026-11-21."),
])
def test_a_date_followed_by_a_function_word_is_still_a_date(question, expected):
    from edge_agent.tools.dates import describe

    assert describe(question, WORLD_TODAY) == expected


@pytest.mark.parametrize("phrase,first,last", CASES)
def test_each_phrasing_against_the_world_clock(phrase, first, last):
    assert resolve(phrase, WORLD_TODAY) == Span(D(first), D(last or first))


UNRESOLVED = [
    "the end of the month", "3/12", "12/3/2026", "in a few days", "a couple of weeks from now",
    "the 30th of February", "the fifth Friday of next month", "what's on in the coming weeks",
    "the last week of November", "Mother's Day", "the bank holiday", "2026-02-30",
]
NOT_DATES = ["the 3rd floor", "my 2nd draft", "what's the date?", "Sundays are quiet", "every Monday",
             "twice a week", "once a month", "every other Tuesday", "which day of the week?",
             "the Christmas party", "our Halloween costumes", "the Easter egg hunt", "which days?", "what days suit you"]
NEVER_RESOLVE = {"nth_week_in_month", "ambiguous_day"}  # rows that exist to say "not guessed"


def test_every_row_of_the_table_is_exercised():
    texts = [phrase for phrase, *_ in CASES] + UNRESOLVED + NOT_DATES
    for row in TABLE:
        assert any(row.pattern.search(t) for t in texts), f"no test phrase for row {row.name}"
    used = {r.rule for phrase, *_ in CASES for r in resolve_all(phrase, WORLD_TODAY)}
    assert {row.name for row in TABLE if row.is_date} - NEVER_RESOLVE <= used


@pytest.mark.parametrize("text", UNRESOLVED)
def test_phrases_it_cannot_work_out_are_unresolved_never_guessed(text):
    found = resolve_all(text, WORLD_TODAY)
    assert found and all(r.span is None and r.rule == "unresolved" for r in found), found
    assert resolve(text, WORLD_TODAY) is None
    assert "could not work out" in describe(text, WORLD_TODAY)


@pytest.mark.parametrize("text", NOT_DATES)
def test_words_that_are_not_dates_are_left_alone(text):
    assert resolve_all(text, WORLD_TODAY) == []


def test_a_bare_weekday_or_day_of_the_month_that_has_gone_is_the_coming_one_unless_the_text_speaks_of_the_past():
    """On a Wednesday "what am I up to Monday" asks about next Monday; "what did I spend on
    Monday" about two days ago."""
    [ahead] = resolve_all("what am i up to monday", WORLD_TODAY)
    [before] = resolve_all("what did i spend on monday", WORLD_TODAY)
    assert (ahead.span.first, before.span.first) == (D("2026-11-23"), D("2026-11-16"))
    [coming] = resolve_all("what's on the 11th", WORLD_TODAY)
    [gone] = resolve_all("what did mum say on the 11th", WORLD_TODAY)
    [gone_last_month] = resolve_all("what did mum say on the 20th", WORLD_TODAY)
    assert (coming.span.first, gone.span.first, gone_last_month.span.first) == (
        D("2026-12-11"), D("2026-11-11"), D("2026-10-20"))


def test_a_weekday_with_a_day_of_the_month_is_the_next_day_of_that_number_on_that_weekday():
    """"mon 24th" as a phone types it (today Wed 18 Nov 2026): the next Monday that is a 24th; in a text
    of the past the last one; "sat" alone stays a word."""
    [ahead] = resolve_all("anything on mon 7th?", WORLD_TODAY)
    [named] = resolve_all("saturday the 28th, am i free", WORLD_TODAY)
    [gone] = resolve_all("what did i do on fri 13th", WORLD_TODAY)
    assert (ahead.span.first, named.span.first, gone.span.first) == (
        D("2026-12-07"), D("2026-11-28"), D("2026-11-13"))
    assert ahead.rule == named.rule == gone.rule == "weekday_ordinal"
    assert resolve_all("sat 3 exams", WORLD_TODAY) == []


def test_phrases_inside_a_question_in_reading_order_and_described():
    found = resolve_all("Am I free the weekend after next, or a week on Sunday? Not the 3rd floor one.", WORLD_TODAY)
    assert [(r.phrase, r.rule) for r in found] == [("the weekend after next", "weekend_after_next"),
                                                   ("a week on Sunday", "week_on_weekday")]
    assert describe("what's on the Sunday just gone and next week?", WORLD_TODAY) == (
        "The Sunday just gone is Sunday 2026-11-15. Next week runs from 2026-11-23 to 2026-11-29.")


@pytest.mark.parametrize("today,phrase,expected", [
    ("2026-11-22", "the Sunday just gone", "2026-11-15"),  # on a Sunday: the one before, not today
    ("2026-11-22", "this coming Sunday", "2026-11-29"),
    ("2026-11-22", "this Sunday", "2026-11-22"),
    ("2026-11-22", "a week on Sunday", "2026-12-06"),
    ("2026-11-23", "last Sunday", "2026-11-22"),  # on a Monday, last week's Sunday was yesterday
    ("2026-11-23", "the weekend just gone", "2026-11-21"),
    ("2026-11-21", "this weekend", "2026-11-21"),  # on a Saturday, this weekend is now
    ("2026-12-31", "tomorrow", "2027-01-01"),
    ("2026-12-31", "the first Monday of next month", "2027-01-04"),
    ("2027-01-30", "in 1 month", "2027-02-28"),  # no 30 February: the month's last day
    ("2028-02-29", "in 2 days", "2028-03-02"),
    ("2026-05-31", "the 31st", "2026-05-31"),
    ("2026-06-01", "the 31st", "2026-07-31"),
    ("2026-08-01", "the first weekend of this month", "2026-08-01"),
    ("2027-01-05", "Christmas", "2026-12-25"),  # the nearest one: eleven days ago
    ("2027-08-01", "Christmas", "2027-12-25"),
    ("2026-04-10", "Easter", "2026-04-05"),
    ("2026-11-01", "the first weekend of this month", "2026-11-07"),  # Sun 1 November is no whole weekend
])
def test_edge_days(today, phrase, expected):
    assert resolve(phrase, D(today)).first == D(expected)


def test_dst_spring_forward_today_comes_from_the_wall_clock_and_spans_keep_wall_midnights():
    # 23:30 UTC on Sunday 29 March 2026 is already 00:30 BST on Monday 30 March in London.
    today = fixed_clock(datetime(2026, 3, 29, 23, 30, tzinfo=timezone.utc), LONDON)().date()
    assert today == date(2026, 3, 30)
    assert resolve("the Sunday just gone", today) == Span(date(2026, 3, 29), date(2026, 3, 29))
    last_week = resolve("last week", today)
    assert last_week == Span(date(2026, 3, 23), date(2026, 3, 29))
    start, end = last_week.bounds(LONDON)
    assert (start.utcoffset(), end.utcoffset()) == (timedelta(0), timedelta(hours=1))
    assert end - start == timedelta(days=7) and end.astimezone(timezone.utc) - start.astimezone(timezone.utc) == \
        timedelta(hours=167)  # the week that loses an hour
    before = fixed_clock("2026-03-28T23:30:00", LONDON)().date()  # Saturday night before the change
    assert resolve("in 7 days", before).first == date(2026, 4, 4)
    assert resolve("tomorrow", before).bounds(LONDON)[1].astimezone(timezone.utc) - \
        resolve("tomorrow", before).bounds(LONDON)[0].astimezone(timezone.utc) == timedelta(hours=23)


def test_dst_fall_back_weekend_is_49_hours():
    today = fixed_clock("2026-10-25T01:30:00", LONDON)().date()  # the repeated hour, Sunday 25 October
    weekend = resolve("this weekend", today)
    assert weekend == Span(date(2026, 10, 24), date(2026, 10, 25))
    start, end = weekend.bounds(LONDON)
    assert end.astimezone(timezone.utc) - start.astimezone(timezone.utc) == timedelta(hours=49)


def test_the_date_only_answer_uses_the_resolver_and_admits_what_it_cannot_work_out():
    payload = {"today": "2026-11-18", "weekday": "Wednesday", "ranges": {}}
    assert date_answer(payload, "What date was the Sunday just gone?") == (
        "Today is Wednesday, 2026-11-18. The Sunday just gone is Sunday 2026-11-15.")
    assert date_answer(payload, "When's the weekend after next?").endswith(
        "The weekend after next runs from 2026-12-05 to 2026-12-06.")
    unsure = date_answer(payload, "What date is 3/12?")
    assert unsure == 'Today is Wednesday, 2026-11-18. I could not work out which date "What date is 3/12" means.'
    assert date_answer({"today": "not a date", "weekday": "?"}, "next week?") == "Today is ?, not a date."


@pytest.mark.parametrize("question, asks", [
    ("how long until the dentist", True), ("how many days till xmas?", True), ("how soon is my flight", True),
    ("days to go until the trip", True), ("how long have i got till the MOT", True),
    ("how long is the film", False), ("how long have i worked at acme", False), ("how many days is the trip", False),
])
def test_a_question_asking_how_long_until_something(question, asks):
    assert dates.asks_how_long(question) is asks


def test_the_days_until_the_first_date_written_after_today():
    today = date(2026, 11, 18)
    assert dates.first_day_after("Pottery — Tue 20 Oct, Tue 3 Nov, Tue 24 Nov, Tue 1 Dec", today) == date(2026, 11, 24)
    assert dates.first_day_after("Lunch on Saturday 5 December 2026", today) == date(2026, 12, 5)  # not "Saturday"
    assert dates.first_day_after("Birthday 9 January 1992.", today) is None  # a year gone
    assert dates.first_day_after("Today is 2026-11-18.", today) is None
    assert dates.days_until(date(2026, 12, 5), today) == "in 17 days"
    assert dates.days_until(date(2026, 11, 19), today) == "tomorrow"
