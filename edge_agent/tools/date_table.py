"""The table of date phrasings the resolver (edge_agent/tools/dates.py) matches, as data: one row a phrasing.

Conventions (British and American phrasings alike): weeks run Monday to Sunday and a weekend is
that week's Saturday and Sunday. "this/next/last Friday" is Friday of this/next/last week and a
bare "Friday" is this week's, or the coming one once this week's has gone (unless the text speaks
of the past: "what did I spend on Monday"); "the Friday just gone" is the nearest Friday before today and "this
coming Friday" the nearest after it; "a week on Friday" / "Friday week" is a week after that.
A date without a year ("3 December") is the nearest such date; a day of the month without a
month ("the 3rd") is the next one on or after today (the last one, in a text of the past); "the next 3 days" starts tomorrow, "the
last 3 days" ends yesterday and "the rest of the month" runs from today to its end. Holidays on
a fixed day or tied to Easter are the nearest one; days that differ by country ("Mother's Day",
UK or US) and wordings that name no single date ("3/12", day or month first?) are unresolved.
A phrase that carries a date word ("the end of the month", "in a few days") but matches no row
is reported unresolved too: never guessed.
"""
from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Callable

WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December")
SATURDAY = 5  # date.weekday(): Monday is 0
WEEK = timedelta(days=7)
MAX_AMOUNT = 999  # "in N days": a larger N is not a date anyone means

_WEEKDAY_SPELLINGS = {"monday": 0, "tuesday": 1, "tues": 1, "wednesday": 2, "weds": 2, "thursday": 3,
                      "thurs": 3, "friday": 4, "saturday": 5, "sunday": 6}
_MONTH_SPELLINGS = {name.lower(): i for i, name in enumerate(MONTH_NAMES, 1)}
_MONTH_SPELLINGS.update({name.lower()[:3]: i for i, name in enumerate(MONTH_NAMES, 1) if name != "May"})
_MONTH_SPELLINGS["sept"] = 9
AMOUNT_WORDS = {w: i for i, w in enumerate(("one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                             "ten", "eleven", "twelve"), 1)}
AMOUNT_WORDS.update({"a": 1, "an": 1})
"""A count in words ("in two weeks", "a fortnight"); reply.py reads lengths of time with it too."""
_NTH = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
        "fifth": 5, "5th": 5, "last": -1}
_UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14}

_WD_ALT = "|".join(sorted(_WEEKDAY_SPELLINGS, key=len, reverse=True))
_WD = rf"(?P<wd>{_WD_ALT})"
_MON = r"(?P<mon>" + "|".join(sorted(_MONTH_SPELLINGS, key=len, reverse=True)) + r")\.?"
_MONTH_REF = rf"(?:(?P<rel>this|next|last)\s+month|the\s+month\s+after\s+next|{_MON}(?:\s+(?P<y>\d{{4}}))?)"
_AMOUNT = r"(?P<n>\d{1,3}|" + "|".join(AMOUNT_WORDS) + r")"
_ORD = r"(?P<d>[0-3]?\d)(?:st|nd|rd|th)"
# An ordinal followed by a noun ("the 3rd floor", "the 2nd draft") is not a date.
# Function words may follow a date ("on the 22nd when you get a sec", "the 5th if that works").
_NOT_A_NOUN = (r"(?!\s+(?!(?:of|at|in|on|and|or|to|for|from|until|till|then|please|is|was|will|when|if|so|but|"
               r"again|right|this|that|with|by|as|are|be|would|could|can|do|does|did|too|i|we|you|it|my|me|"
               r"thanks|thx|ok|okay|yes|no)\b)[a-z])")


@dataclass(frozen=True)
class Span:
    """An inclusive run of days."""

    first: date
    """First day."""
    last: date
    """Last day (the same as first for one day)."""

    def bounds(self, zone: tzinfo) -> tuple[datetime, datetime]:
        """[start of the first day, start of the day after the last) as aware times in `zone`.

        Built from wall-clock midnights, so a span across a DST change is 23 or 25 hours longer
        or shorter than its days times 24, as the clock on the wall says.
        """
        return datetime.combine(self.first, time(), zone), datetime.combine(self.last + timedelta(days=1), time(), zone)

    def iso(self) -> list[str]:
        return [self.first.isoformat(), self.last.isoformat()]


Rule = Callable[[re.Match, date], "Span | None"]


@dataclass(frozen=True)
class Phrasing:
    """One row of the table."""

    name: str
    """Row name (shown in Resolution.rule)."""
    pattern: re.Pattern
    """What it matches, case-insensitive."""
    rule: Rule
    """Days the match means, given today; None when the words name no real date."""
    is_date: bool = True
    """False for wordings that use date words without naming a date ("every Monday", "twice a week")."""


def _day(d: date) -> Span:
    return Span(d, d)


def _monday(today: date) -> date:
    return today - timedelta(days=today.weekday())


def _weekday(m: re.Match) -> int:
    return _WEEKDAY_SPELLINGS[m.group("wd").lower()]


def _in_week(m: re.Match, today: date, weeks: int) -> Span:
    return _day(_monday(today) + weeks * WEEK + timedelta(days=_weekday(m)))


def _coming(m: re.Match, today: date) -> date:
    """The nearest such weekday after today."""
    return today + timedelta(days=(_weekday(m) - today.weekday() - 1) % 7 + 1)


PAST = re.compile(r"\b(?:did|was|were|went|had|happened|spent|paid|said|told|ago)\b", re.IGNORECASE)
"""Words that put a text in the past: a bare weekday there is this week's even when it has gone."""


def _bare_weekday(m: re.Match, today: date) -> Span:
    """A weekday with no word before it: this week's, or the coming one when this week's has gone
    and the text does not speak of the past (on a Saturday "what am I up to Monday" is the next)."""
    day = _monday(today) + timedelta(days=_weekday(m))
    return _day(_coming(m, today) if day < today and not PAST.search(m.string) else day)


def _gone(m: re.Match, today: date) -> date:
    """The nearest such weekday before today."""
    return today - timedelta(days=(today.weekday() - _weekday(m) - 1) % 7 + 1)


def _weekend(today: date, weeks: int) -> Span:
    saturday = _monday(today) + timedelta(days=SATURDAY) + weeks * WEEK
    return Span(saturday, saturday + timedelta(days=1))


def _week(today: date, weeks: int) -> Span:
    monday = _monday(today) + weeks * WEEK
    return Span(monday, monday + timedelta(days=6))


def _rest_of(m: re.Match, today: date) -> Span:
    """"the rest of this week/month/year": today to the end of that period."""
    unit = m.group("unit").lower()
    whole = (_week(today, 0) if unit == "week" else _month(today.year, today.month) if unit == "month"
             else Span(date(today.year, 1, 1), date(today.year, 12, 31)))
    return Span(today, whole.last)


def _add_months(year: int, month: int, months: int) -> tuple[int, int]:
    index = year * 12 + month - 1 + months
    return index // 12, index % 12 + 1


def _month(year: int, month: int) -> Span:
    return Span(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _nearest_year(month: int, day: int, today: date) -> date | None:
    """The date with that month and day closest to today (this year, last year or next)."""
    candidates = []
    for year in (today.year - 1, today.year, today.year + 1):
        try:
            candidates.append(date(year, month, day))
        except ValueError:
            continue
    return min(candidates, key=lambda d: (abs((d - today).days), d < today), default=None)


def _month_ref(m: re.Match, today: date) -> tuple[int, int]:
    """(year, month) of "this/next/last month", "the month after next" or a month name."""
    if m.group("mon"):
        month = _MONTH_SPELLINGS[m.group("mon").lower()]
        if m.group("y"):
            return int(m.group("y")), month
        nearest = _nearest_year(month, 1, today.replace(day=1))
        return nearest.year, month
    shift = {"this": 0, "next": 1, "last": -1}.get((m.group("rel") or "").lower(), 2)
    return _add_months(today.year, today.month, shift)


def _nth_in_month(m: re.Match, today: date) -> Span | None:
    year, month = _month_ref(m, today)
    whole = _month(year, month)
    nth = _NTH[m.group("nth").lower()]
    what = m.group("what").lower()
    if what == "day":
        return _day(_pick(_days(whole), nth))
    if what == "weekend":  # only weekends whose Saturday and Sunday both fall in the month
        saturdays = [d for d in _days(whole) if d.weekday() == SATURDAY and d < whole.last]
        chosen = _pick(saturdays, nth)
        return Span(chosen, chosen + timedelta(days=1)) if chosen else None
    chosen = _pick([d for d in _days(whole) if d.weekday() == _WEEKDAY_SPELLINGS[what]], nth)
    return _day(chosen) if chosen else None


def _days(span: Span) -> list[date]:
    return [span.first + timedelta(days=i) for i in range((span.last - span.first).days + 1)]


def _pick(days: list[date], nth: int) -> date | None:
    if nth == -1:
        return days[-1] if days else None
    return days[nth - 1] if len(days) >= nth else None


def _explicit(m: re.Match, today: date) -> Span | None:
    month, day = _MONTH_SPELLINGS[m.group("mon").lower()], int(m.group("d"))
    if m.group("y"):
        try:
            return _day(date(int(m.group("y")), month, day))
        except ValueError:
            return None
    found = _nearest_year(month, day, today)
    return _day(found) if found else None


def _iso(m: re.Match, today: date) -> Span | None:
    try:
        return _day(date.fromisoformat(m.group(0)))
    except ValueError:
        return None


def _ordinal(m: re.Match, today: date) -> Span | None:
    """"the 3rd" (of a named month, or the next 3rd on or after today; in a text that speaks of the
    past, the last 3rd on or before it)."""
    day = int(m.group("d"))
    if not 1 <= day <= 31:
        return None
    if "of" in m.group(0).lower().split():
        year, month = _month_ref(m, today)
        return _day(date(year, month, day)) if day <= calendar.monthrange(year, month)[1] else None
    # "what did mum say on the 11th": the 11th just gone
    return _numbered_day(day, today, -1 if PAST.search(m.string) else 1)


_WEEKDAY_SHORT = {**_WEEKDAY_SPELLINGS, "mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}
"""Weekdays as a phone types them before a day of the month ("mon 24th"); alone, "sat" and "wed" are words."""
MONTHS_AHEAD = 12  # how far a day of the month (on a weekday) is looked for


def _weekday_ordinal(m: re.Match, today: date) -> Span | None:
    """"mon 24th", "saturday the 29th": the next day of the month with that number that falls on
    that weekday (in a text of the past, the last one); None when none does within a year."""
    return _numbered_day(int(m.group("d")), today, -1 if PAST.search(m.string) else 1,
                         _WEEKDAY_SHORT[m.group("wds").lower()])


def _numbered_day(day: int, today: date, step: int, weekday: int | None = None) -> Span | None:
    """The first day of the month numbered `day` on or after today (step 1; on or before it, step
    -1), on `weekday` when one is given, months stepped one at a time ("the 31st" in a 30-day month:
    the next that has it); None when none is within MONTHS_AHEAD months."""
    if not 1 <= day <= 31:
        return None
    year, month = today.year, today.month
    for _ in range(MONTHS_AHEAD + 1):
        if day <= calendar.monthrange(year, month)[1]:
            found = date(year, month, day)
            if (found >= today if step > 0 else found <= today) and weekday in (None, found.weekday()):
                return _day(found)
        year, month = _add_months(year, month, step)
    return None


def _amount(m: re.Match) -> int:
    text = (m.groupdict().get("n") or "1").lower()  # "the past week": one
    return int(text) if text.isdigit() else AMOUNT_WORDS[text]


def _offset(m: re.Match, today: date, sign: int) -> Span | None:
    n, unit = _amount(m), m.group("unit").lower().rstrip("s")
    if n > MAX_AMOUNT:
        return None
    if unit == "month":
        year, month = _add_months(today.year, today.month, sign * n)
        return _day(date(year, month, min(today.day, calendar.monthrange(year, month)[1])))
    return _day(today + timedelta(days=sign * n * _UNIT_DAYS[unit]))


def _p(text: str, then: str = "") -> re.Pattern:
    """`text` as whole words, case-insensitive; `then` is a lookahead on what follows it."""
    return re.compile(rf"\b(?:{text})\b{then}", re.IGNORECASE)


def _rel(m: re.Match) -> int:
    """this/coming -> 0, next -> 1, last -> -1 (the last word of the "rel" group)."""
    return {"this": 0, "coming": 0, "next": 1, "last": -1}[m.group("rel").split()[-1].lower()]


def _named_month(m: re.Match, today: date) -> Span:
    """"in December" is the nearest December; "next/last December" the one after/before this month."""
    rel = (m.group("rel") or "").lower()
    if not rel or m.group("y"):
        return _month(*_month_ref(m, today))
    month = _MONTH_SPELLINGS[m.group("mon").lower()]
    year = today.year + (month <= today.month if rel == "next" else -(month >= today.month) if rel == "last" else 0)
    return _month(year, month)


def _easter(year: int) -> date:
    """Easter Sunday (Gregorian; the anonymous algorithm of Meeus/Jones/Butcher)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    leap = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * leap) // 451
    month, day = divmod(h + leap - 7 * m + 114, 31)
    return date(year, month, day + 1)


HOLIDAYS = {"christmas eve": (12, 24), "christmas": (12, 25), "christmas day": (12, 25), "boxing day": (12, 26),
            "new years eve": (12, 31), "hogmanay": (12, 31), "new years day": (1, 1), "valentines day": (2, 14),
            "valentines": (2, 14), "halloween": (10, 31), "bonfire night": (11, 5), "guy fawkes night": (11, 5),
            "independence day": (7, 4), "fourth of july": (7, 4)}
"""Holidays on a fixed day of the year; the nearest one is meant."""
EASTER_OFFSETS = {"good friday": -2, "easter": 0, "easter sunday": 0, "easter monday": 1, "mothering sunday": -21}
"""Holidays that move with Easter, in days from Easter Sunday (Mothering Sunday is the UK's)."""
AMBIGUOUS_DAYS = r"mother'?s\s+day|thanksgiving|bank\s+holiday(?:\s+monday)?|half[\s-]+term|the\s+holidays"
"""Named days that differ by country or year and are not guessed (US and UK Mother's Day, which bank holiday)."""


def _holiday(m: re.Match, today: date) -> Span | None:
    name = re.sub(r"\s+", " ", m.group(0).lower().replace("'", "").replace("\u2019", "")).removeprefix("the ")
    if name in HOLIDAYS:
        found = _nearest_year(*HOLIDAYS[name], today)
        return _day(found) if found else None
    offset = timedelta(days=EASTER_OFFSETS[name])
    days = [_easter(year) + offset for year in (today.year - 1, today.year, today.year + 1)]
    return _day(min(days, key=lambda d: (abs((d - today).days), d < today)))


def _within(m: re.Match, today: date, sign: int) -> Span | None:
    """"the next 3 days" (tomorrow on) or "the last 3 days" (up to yesterday)."""
    far = _offset(m, today, sign)
    if far is None:
        return None
    near = today + timedelta(days=sign)
    return Span(near, far.first) if sign > 0 else Span(far.first, near)


_UNITS = r"(?P<unit>days?|weeks?|fortnights?|months?)"
_APOS = "['\u2019]?"

TABLE: tuple[Phrasing, ...] = (
    # Most specific first: a span claimed by an earlier row is not matched again by a later one.
    Phrasing("iso_date", _p(r"\d{4}-\d{2}-\d{2}"), _iso),
    Phrasing("nth_in_month", _p(rf"(?:the\s+)?(?P<nth>first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|last)\s+"
                                rf"(?P<what>day|weekend|{_WD_ALT})\s+(?:of|in)\s+{_MONTH_REF}"), _nth_in_month),
    Phrasing("nth_week_in_month",
             _p(rf"(?:the\s+)?(?:first|second|third|fourth|last)\s+week\s+(?:of|in)\s+{_MONTH_REF}"),
             lambda m, t: None),  # which week (the one holding the 1st? the first whole one?) is not guessed
    # A holiday followed by a noun names an event, not the day ("the Christmas party" may be on the 18th).
    Phrasing("holiday", _p(r"(?:the\s+)?fourth\s+of\s+july|christmas\s+(?:eve|day)|christmas|boxing\s+day|hogmanay"
                           rf"|new\s+year{_APOS}s?\s+(?:eve|day)|valentine{_APOS}s(?:\s+day)?|hallowe{_APOS}en"
                           r"|bonfire\s+night|guy\s+fawkes\s+night|independence\s+day|good\s+friday"
                           r"|easter(?:\s+sunday|\s+monday)?|mothering\s+sunday", then=_NOT_A_NOUN), _holiday),
    Phrasing("ambiguous_day", _p(AMBIGUOUS_DAYS), lambda m, t: None),
    Phrasing("day_month", _p(rf"(?:the\s+)?(?P<d>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?{_MON}(?:,?\s+(?P<y>\d{{4}}))?"),
             _explicit),
    Phrasing("month_day", _p(rf"{_MON}\s+(?:the\s+)?(?P<d>[0-3]?\d)(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{{4}}))?"),
             _explicit),
    Phrasing("ordinal_of_month", _p(rf"the\s+{_ORD}\s+of\s+{_MONTH_REF}"), _ordinal),
    Phrasing("weekday_ordinal", _p(rf"(?P<wds>{'|'.join(sorted(_WEEKDAY_SHORT, key=len, reverse=True))})\.?\s+"
                                   rf"(?:the\s+)?{_ORD}"), _weekday_ordinal),
    Phrasing("ordinal", _p(rf"the\s+{_ORD}", then=_NOT_A_NOUN), _ordinal),
    Phrasing("day_after_tomorrow", _p(r"(?:the\s+)?day\s+after\s+tomorrow"), lambda m, t: _day(t + timedelta(days=2))),
    Phrasing("day_before_yesterday", _p(r"(?:the\s+)?day\s+before\s+yesterday"),
             lambda m, t: _day(t - timedelta(days=2))),
    Phrasing("week_on_weekday", _p(rf"(?:a|one)\s+week\s+(?:on|from)\s+(?:this\s+(?:coming\s+)?)?{_WD}"),
             lambda m, t: _day(_coming(m, t) + WEEK)),
    Phrasing("week_on_weekday", _p(rf"{_WD}\s+week"), lambda m, t: _day(_coming(m, t) + WEEK)),
    Phrasing("fortnight_on_weekday", _p(rf"(?:a|one)\s+fortnight\s+(?:on|from)\s+{_WD}"),
             lambda m, t: _day(_coming(m, t) + 2 * WEEK)),
    Phrasing("fortnight_on_weekday", _p(rf"{_WD}\s+fortnight"), lambda m, t: _day(_coming(m, t) + 2 * WEEK)),
    Phrasing("week_today", _p(r"(?:a|one)\s+(?P<unit>week|fortnight)\s+(?:today|from\s+today|tonight)"),
             lambda m, t: _day(t + timedelta(days=_UNIT_DAYS[m.group("unit").lower()]))),
    Phrasing("week_tomorrow", _p(r"(?:a|one)\s+(?P<unit>week|fortnight)\s+tomorrow"),
             lambda m, t: _day(t + timedelta(days=_UNIT_DAYS[m.group("unit").lower()] + 1))),
    Phrasing("weekday_after_next", _p(rf"(?:the\s+)?{_WD}\s+after\s+next"), lambda m, t: _day(_coming(m, t) + WEEK)),
    Phrasing("weekday_before_last", _p(rf"(?:the\s+)?{_WD}\s+before\s+last"), lambda m, t: _day(_gone(m, t) - WEEK)),
    Phrasing("weekday_gone", _p(rf"(?:the\s+)?{_WD}\s+(?:just\s+)?(?:gone|past)"), lambda m, t: _day(_gone(m, t))),
    Phrasing("weekday_gone", _p(rf"(?:this|the)\s+(?:past|previous)\s+{_WD}"), lambda m, t: _day(_gone(m, t))),
    Phrasing("weekday_coming", _p(rf"(?:this|the)\s+coming\s+{_WD}"), lambda m, t: _day(_coming(m, t))),
    Phrasing("weekday_coming", _p(rf"{_WD}\s+coming"), lambda m, t: _day(_coming(m, t))),
    Phrasing("weekday_of_week", _p(rf"{_WD}\s+(?P<rel>this|next|last)\s+week"), lambda m, t: _in_week(m, t, _rel(m))),
    Phrasing("weekday_of_week", _p(rf"(?P<rel>this|next|last)\s+week'?s?\s+{_WD}"),
             lambda m, t: _in_week(m, t, _rel(m))),
    Phrasing("weekday_next", _p(rf"{_WD}\s+next(?!\s+(?:week|month|year))"), lambda m, t: _in_week(m, t, 1)),
    Phrasing("weekday_rel", _p(rf"(?P<rel>this|next|last)\s+{_WD}"), lambda m, t: _in_week(m, t, _rel(m))),
    Phrasing("weekend_after_next", _p(r"(?:the\s+)?weekend\s+after\s+next"), lambda m, t: _weekend(t, 2)),
    Phrasing("weekend_before_last", _p(r"(?:the\s+)?weekend\s+before\s+last"), lambda m, t: _weekend(t, -2)),
    Phrasing("weekend_gone", _p(r"(?:the\s+)?weekend\s+(?:just\s+)?gone|(?:this|the)\s+(?:past|previous)\s+weekend"),
             lambda m, t: _weekend(t, -1)),
    Phrasing("weekend_rel", _p(r"(?P<rel>this\s+coming|the\s+coming|this|next|last)\s+weekend"),
             lambda m, t: _weekend(t, _rel(m))),
    Phrasing("weekend", _p(r"(?:at|on|over|for)\s+the\s+weekend"), lambda m, t: _weekend(t, 0)),
    Phrasing("rest_of", _p(r"(?:the\s+)?(?:rest|remainder)\s+of\s+(?:this|the)\s+(?P<unit>week|month|year)"), _rest_of),
    Phrasing("week_after_next", _p(r"(?:the\s+)?week\s+after\s+next"), lambda m, t: _week(t, 2)),
    Phrasing("week_before_last", _p(r"(?:the\s+)?week\s+before\s+last"), lambda m, t: _week(t, -2)),
    Phrasing("within_next", _p(rf"(?:the\s+)?(?:next|coming|following)\s+{_AMOUNT}\s+{_UNITS}"),
             lambda m, t: _within(m, t, 1)),
    Phrasing("within_last", _p(rf"(?:the\s+)?(?:last|past|previous)\s+{_AMOUNT}\s+{_UNITS}"),
             lambda m, t: _within(m, t, -1)),
    Phrasing("within_last", _p(r"the\s+past\s+(?P<unit>week|fortnight|month)"), lambda m, t: _within(m, t, -1)),
    Phrasing("week_rel", _p(r"(?P<rel>this|next|last)\s+week"), lambda m, t: _week(t, _rel(m))),
    Phrasing("month_after_next", _p(r"(?:the\s+)?month\s+after\s+next"),
             lambda m, t: _month(*_add_months(t.year, t.month, 2))),
    Phrasing("month_rel", _p(r"(?P<rel>this|next|last)\s+month"),
             lambda m, t: _month(*_add_months(t.year, t.month, _rel(m)))),
    Phrasing("year_rel", _p(r"(?P<rel>this|next|last)\s+year"),
             lambda m, t: Span(date(t.year + _rel(m), 1, 1), date(t.year + _rel(m), 12, 31))),
    Phrasing("in_amount", _p(rf"in\s+{_AMOUNT}\s+{_UNITS}(?:'?s?'?\s+time)?"), lambda m, t: _offset(m, t, 1)),
    Phrasing("in_amount", _p(rf"{_AMOUNT}\s+{_UNITS}\s+(?:from\s+(?:now|today)|hence)"),
             lambda m, t: _offset(m, t, 1)),
    Phrasing("in_amount", _p(r"in\s+a\s+fortnight(?:'?s\s+time)?"), lambda m, t: _day(t + 2 * WEEK)),
    Phrasing("amount_ago", _p(rf"{_AMOUNT}\s+{_UNITS}\s+ago"), lambda m, t: _offset(m, t, -1)),
    Phrasing("not_a_date", _p(rf"(?:every|each|per|once\s+a|twice\s+a|a|an)\s+(?:other\s+|second\s+)?"
                              rf"(?:{_WD_ALT}|day|week|weekend|fortnight|month)|days?\s+of\s+the\s+week"),
             lambda m, t: None, is_date=False),
    Phrasing("tomorrow", _p(r"tom+or+ow|tmrw|tmr|tmw|2mo?r+ow"), lambda m, t: _day(t + timedelta(days=1))),
    Phrasing("yesterday", _p(r"yesterday|last\s+night"), lambda m, t: _day(t - timedelta(days=1))),
    Phrasing("today", _p(r"today|todays|tonight|tonite|this\s+(?:morning|afternoon|evening)"), lambda m, t: _day(t)),
    Phrasing("month_year", _p(rf"{_MON}\s+(?P<y>\d{{4}})"), lambda m, t: _month(*_month_ref(m, t))),
    Phrasing("month_name", _p(rf"(?:(?P<rel>this|next|last)|in|during|for)\s+{_MON}(?:\s+(?P<y>\d{{4}}))?"),
             _named_month),
    Phrasing("weekday", _p(_WD), _bare_weekday),
)
"""The phrasings, in matching order."""


CUE = re.compile(
    r"\b(?:" + "|".join(_WEEKDAY_SPELLINGS) + r"|weekends?|weeks?|fortnights?|months?|(?<!which )(?<!what )days|tomorrow|yesterday"
    r"|" + "|".join(n.lower() for n in MONTH_NAMES if n != "May") + r"|[0-3]?\d(?:st|nd|rd|th)\b" + _NOT_A_NOUN +
    r"|\d{1,2}/\d{1,2}(?:/\d{2,4})?)\b", re.IGNORECASE)
"""Words that make a phrase about a date; one outside every resolved phrase is reported unresolved."""
