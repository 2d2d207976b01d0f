"""The calendar: repeating and one-off events around `now`, their instances in a range, and calendar.ics text."""
from __future__ import annotations

import calendar as cal
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

from edge_agent.tune import vocab as V
from edge_agent.tune.common import WEEKDAYS
from edge_agent.tune.context import Ctx
from edge_agent.tune.model import Event

DAY_CODES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
CLASSES = ("Yoga class", "Pottery evening class", "Spanish lesson", "Choir practice", "Climbing session",
           "Life drawing class", "Pilates", "Swimming lesson", "Salsa class", "Guitar lesson", "Boxing fitness")
"""Weekly classes."""
TEAMS = ("Five-a-side football", "Running club", "Badminton", "Netball", "Ultimate frisbee", "Cycling club ride",
         "Quiz team at the pub", "Volunteering at the food bank")
"""Weekly team or club evenings."""
MONTHLY = ("Book club", "Board games night", "Supper club", "Residents' meeting", "Film club", "Repair café shift")
"""Monthly gatherings."""
ONE_OFFS = ("Concert", "Theatre", "Drinks", "Dinner", "Lunch", "Brunch", "Coffee", "Cinema", "Comedy night",
            "Gig", "Exhibition", "Walk", "Tennis", "Swim")


def _uid(ctx: Ctx, what: str) -> str:
    return f"{what.lower().replace(' ', '-').replace(chr(39), '')}-{ctx.rng.randrange(16**8):08x}@tune.example"


def _timed(ctx: Ctx, summary: str, day: date, hh: int, mm: int, minutes: int, **kw) -> Event:
    start = datetime.combine(day, time(hh, mm))
    ev = Event(_uid(ctx, summary), summary, start, start + timedelta(minutes=minutes), ctx.tz, **kw)
    ctx.events.append(ev)
    return ev


def _all_day(ctx: Ctx, summary: str, day: date, days: int = 1, **kw) -> Event:
    ev = Event(_uid(ctx, summary), summary, day, day + timedelta(days=days), "", **kw)
    ctx.events.append(ev)
    return ev


def _next_weekday(day: date, weekday: int) -> date:
    return day + timedelta(days=(weekday - day.weekday()) % 7)


def build_calendar(ctx: Ctx) -> None:
    """Weekly, fortnightly, monthly and yearly events plus one-offs before and after now."""
    r, today, cast = ctx.rng, ctx.today, ctx.cast
    place = lambda: f"{r.choice(V.STEMS)} {r.choice(('Studio', 'Hall', 'Centre', 'Community Rooms', 'Sports Centre'))}"
    # A weekly class with a couple of cancelled weeks.
    wd = r.randrange(0, 5)
    first = _next_weekday(today - timedelta(days=r.randint(90, 200)), wd)
    hh = r.choice((18, 19, 19, 20))
    cls = _timed(ctx, r.choice(CLASSES), first, hh, r.choice((0, 15, 30)), 60, location=place(),
                 rrule=f"FREQ=WEEKLY;BYDAY={DAY_CODES[wd]}")
    cls.description = f"Every {WEEKDAYS[wd]} at {cls.start:%H:%M}."
    cls.spoken = [cls.summary.lower()]
    skip = _next_weekday(today + timedelta(days=r.randint(8, 40)), wd)
    cls.exdates = [datetime.combine(skip, cls.start.time()),
                   datetime.combine(_next_weekday(today - timedelta(days=r.randint(20, 60)), wd), cls.start.time())]
    # A team evening on another weekday, fortnightly half the time.
    wd2 = r.choice([d for d in range(0, 6) if d != wd])
    first2 = _next_weekday(today - timedelta(days=r.randint(60, 300)), wd2)
    interval = r.choice((1, 1, 2))
    team = _timed(ctx, r.choice(TEAMS), first2, r.choice((18, 19, 20)) if wd2 < 5 else 10, r.choice((0, 30)), 90,
                  location=place(), rrule=f"FREQ=WEEKLY;INTERVAL={interval};BYDAY={DAY_CODES[wd2]}" if interval > 1
                  else f"FREQ=WEEKLY;BYDAY={DAY_CODES[wd2]}")
    team.description = f"Starts {team.start:%H:%M}." + (" Every other week." if interval > 1 else "")
    team.spoken = [team.summary.lower()]
    # Bins: all-day, fortnightly; background noise.
    bin_day = _next_weekday(today - timedelta(days=r.randint(14, 60)), r.randrange(0, 5))
    bins = r.choice(("Recycling collection", "Green bin collection", "Garden waste collection"))
    _all_day(ctx, bins, bin_day, rrule=f"FREQ=WEEKLY;INTERVAL=2;BYDAY={DAY_CODES[bin_day.weekday()]}",
             description="Put the bin out the night before.", salient=False)
    # A standing call with a parent on Sundays.
    parent = cast.get("mum") or cast.get("dad")
    sunday = _next_weekday(today - timedelta(days=r.randint(40, 200)), 6)
    _timed(ctx, f"Call with {parent.refs[1] if len(parent.refs) > 1 else parent.first}", sunday, r.choice((17, 18, 19)),
           0, 30, rrule="FREQ=WEEKLY;BYDAY=SU", description="Weekly catch-up call.", salient=False)
    # A monthly gathering: first or last Thursday, or a fixed day of the month.
    gather = r.choice(MONTHLY)
    rule = r.choice(("FREQ=MONTHLY;BYDAY=1TH", "FREQ=MONTHLY;BYDAY=-1TH", f"FREQ=MONTHLY;BYMONTHDAY={r.randint(3, 26)}"))
    host = cast.get("friend1")
    first3 = _monthly_first(rule, today - timedelta(days=r.randint(100, 300)))
    ev = _timed(ctx, gather, first3, 19, 30, 150, location=f"{host.first}'s place", rrule=rule)
    ev.description = f"Hosted by {host.name}. Starts 19:30."
    # Yearly birthdays, all-day.
    for p in cast.people:
        if p.key in ("partner", "mum", "dad", "sibling1", "sibling2", "friend1") and p.birthday:
            _all_day(ctx, f"{p.first}'s birthday", p.birthday, rrule="FREQ=YEARLY",
                     description=f"{p.name}, born {p.birthday.year}.")
    _one_offs(ctx)


def _monthly_first(rule: str, near: date) -> date:
    """The first instance of a monthly rule on or after `near` (so DTSTART is itself an instance)."""
    day = near
    for _ in range(400):
        if _monthly_hit(rule, day):
            return day
        day += timedelta(days=1)
    raise RuntimeError(rule)


def _monthly_hit(rule: str, day: date) -> bool:
    parts = dict(p.split("=") for p in rule.split(";"))
    if "BYMONTHDAY" in parts:
        return day.day == int(parts["BYMONTHDAY"])
    nth, code = int(parts["BYDAY"][:-2]), parts["BYDAY"][-2:]
    if day.weekday() != DAY_CODES.index(code):
        return False
    if nth > 0:
        return (day.day - 1) // 7 + 1 == nth
    return day.day + 7 > cal.monthrange(day.year, day.month)[1]


def _one_offs(ctx: Ctx) -> None:
    r, cast = ctx.rng, ctx.cast
    dentist, doctor = cast.get("dentist"), cast.get("doctor")
    day = ctx.future_day(2, 30)
    hh, mm = r.choice((8, 9, 10, 11, 14, 15, 16)), r.choice((0, 15, 30, 45))
    _timed(ctx, f"Dentist check-up with {dentist.display}", day, hh, mm, 30, location=f"{dentist.employer}, {dentist.address}",
           description=f"Check-up at {hh:02d}:{mm:02d} with {dentist.display}. Phone {dentist.phone} to rearrange.",
           spoken=["dentist appointment", "dentist check-up", "check-up at the dentist"])
    day = ctx.past_day(3, 40) if r.random() < 0.5 else ctx.future_day(3, 45)
    hh, mm = r.choice((8, 9, 11, 12, 15, 17)), r.choice((10, 20, 40, 50))
    _timed(ctx, f"GP appointment with {doctor.display}", day, hh, mm, 15, location=doctor.employer,
           description=f"Appointment at {hh:02d}:{mm:02d}. Bring the repeat prescription form.",
           spoken=["GP appointment", "doctor's appointment"])
    hair = cast.get("hairdresser")
    day = ctx.future_day(1, 25)
    hh, mm = r.choice((9, 10, 12, 13, 17)), r.choice((0, 30))
    _timed(ctx, "Haircut" + (f" with {hair.first}" if hair else ""), day, hh, mm, 45,
           location=hair.employer if hair else f"{r.choice(V.STEMS)} Barbers", description=f"Booked for {hh:02d}:{mm:02d}.",
           spoken=["haircut", "hair appointment"])
    if cast.car:
        mech = cast.get("mechanic")
        day = ctx.future_day(5, 60)
        _timed(ctx, f"Car service at {mech.employer}", day, 8, 30, 480, location=mech.address,
               description=f"Drop the {cast.car['make']} off at 08:30. Quote was agreed by phone.", spoken=["car service"])
    for pet in cast.pets:
        if (pet.booster - ctx.today).days <= 80:
            vet = cast.get("vet")
            hh = r.choice((9, 10, 16, 17))
            _timed(ctx, f"{pet.name}'s booster at the vet", pet.booster, hh, 15, 20, location=vet.employer,
                   description=f"Annual vaccination booster for {pet.name} at {hh:02d}:15 with {vet.display}.",
                   spoken=[f"{pet.name}'s vet appointment", f"{pet.name}'s booster"])
    friends = [p for p in cast.people if p.key.startswith("friend") or p.key.startswith("sibling")]
    for when in (ctx.future_day(1, 12), ctx.future_day(8, 30), ctx.past_day(1, 9), ctx.past_day(5, 25)):
        who = r.choice(friends)
        what = r.choice(ONE_OFFS)
        hh, mm = r.choice((12, 13, 18, 19, 19, 20)), r.choice((0, 30))
        venue = f"{r.choice(V.STEMS)} {r.choice(('Arms', 'Tavern', 'Kitchen', 'Rooms', 'Social Club', 'Playhouse'))}"
        _timed(ctx, f"{what} with {who.first}", when, hh, mm, 150, location=venue,
               description=f"Meeting {who.first} at {hh:02d}:{mm:02d} at {venue}.", spoken=[f"{what.lower()} with {who.first}"])
    # A visitor for a weekend, all-day over several days.
    sib = cast.get("sibling1")
    sat = _next_weekday(ctx.today + timedelta(days=r.randint(6, 50)), 5)
    _all_day(ctx, f"{sib.first} staying", sat - timedelta(days=r.choice((0, 1))), r.choice((2, 3)),
             description=f"{sib.first} comes to stay for the weekend.")
    # Online, in UTC: a webinar.
    day = ctx.future_day(2, 20)
    ev = Event(_uid(ctx, "webinar"), f"{r.choice(('Pension', 'Careers', 'Gardening', 'Photography'))} webinar",
               datetime.combine(day, time(r.choice((12, 17, 18)), 0)), datetime.combine(day, time(19, 0)), "UTC",
               location="Online", description="Join link in the email.", salient=False)
    ev.end = ev.start + timedelta(hours=1)
    ctx.events.append(ev)


def instances(ev: Event, first: date, last: date, zone: str) -> list[tuple[datetime | date, datetime | date]]:
    """(start, end) of every instance of `ev` overlapping days first..last in `zone` (local times or dates)."""
    tz = ZoneInfo(zone)
    lo, hi = datetime.combine(first, time(), tz), datetime.combine(last + timedelta(days=1), time(), tz)
    out = []
    length = ev.end - ev.start
    for start in _starts(ev, first - timedelta(days=400), last + timedelta(days=2)):
        if start in ev.exdates:
            continue
        end = start + length
        if ev.all_day:
            if start <= last and end > first:
                out.append((start, end))
            continue
        src = timezone.utc if ev.tzid == "UTC" else ZoneInfo(ev.tzid)
        s, e = start.replace(tzinfo=src).astimezone(tz), end.replace(tzinfo=src).astimezone(tz)
        if s < hi and e > lo:
            out.append((s, e))
    return out


def _starts(ev: Event, lo: date, hi: date):
    if not ev.rrule:
        yield ev.start
        return
    parts = dict(p.split("=") for p in ev.rrule.split(";"))
    step = {"WEEKLY": 7, "YEARLY": 0, "MONTHLY": 0}[parts["FREQ"]] * int(parts.get("INTERVAL", 1))
    base = ev.start.date() if isinstance(ev.start, datetime) else ev.start
    at = ev.start.time() if isinstance(ev.start, datetime) else None
    mk = (lambda d: datetime.combine(d, at)) if at is not None else (lambda d: d)
    if step:
        day = base + timedelta(days=max(0, (lo - base).days // step) * step)
        while day <= hi:
            yield mk(day)
            day += timedelta(days=step)
    elif parts["FREQ"] == "YEARLY":
        for year in range(max(base.year, lo.year), hi.year + 1):
            if (base.month, base.day) == (2, 29) and not cal.isleap(year):
                continue
            yield mk(base.replace(year=year))
    else:
        day = max(base, lo)
        while day <= hi:
            if _monthly_hit(ev.rrule, day):
                yield mk(day)
            day += timedelta(days=1)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def _fold(line: str) -> str:
    """RFC 5545 folding: lines of at most 75 octets, continuations start with a space."""
    out, current = [], ""
    for ch in line:
        if len((current + ch).encode("utf-8")) > (75 if not out else 74):
            out.append(current)
            current = ch
        else:
            current += ch
    out.append(current)
    return "\r\n ".join(out)


def _when(prop: str, value: datetime | date, tzid: str) -> str:
    if not isinstance(value, datetime):
        return f"{prop};VALUE=DATE:{value:%Y%m%d}"
    if tzid == "UTC":
        return f"{prop}:{value:%Y%m%dT%H%M%S}Z"
    return f"{prop};TZID={tzid}:{value:%Y%m%dT%H%M%S}"


def to_ics(events: list[Event], tz: str, name: str, stamp: datetime) -> str:
    """calendar.ics text: a VTIMEZONE for every zone used, then one VEVENT an event."""
    from icalendar import Timezone

    zones = list(dict.fromkeys([tz] + [e.tzid for e in events if e.tzid and e.tzid != "UTC"]))
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//edge-agent//tune household//EN", "CALSCALE:GREGORIAN",
             f"X-WR-CALNAME:{_escape(name)}", f"X-WR-TIMEZONE:{tz}"]
    body = "\r\n".join(lines) + "\r\n"
    for zone in zones:
        vtz = Timezone.from_tzid(zone, first_date=date(stamp.year - 3, 1, 1), last_date=date(stamp.year + 3, 12, 31))
        body += vtz.to_ical().decode("utf-8").replace("\r\n", "\n").replace("\n", "\r\n")
    for ev in events:
        props = ["BEGIN:VEVENT", f"UID:{ev.uid}", f"DTSTAMP:{stamp.astimezone(timezone.utc):%Y%m%dT%H%M%SZ}",
                 f"SUMMARY:{_escape(ev.summary)}", _when("DTSTART", ev.start, ev.tzid), _when("DTEND", ev.end, ev.tzid)]
        if ev.rrule:
            props.append(f"RRULE:{ev.rrule}")
        if ev.exdates:
            if ev.all_day:
                props.append("EXDATE;VALUE=DATE:" + ",".join(f"{d:%Y%m%d}" for d in ev.exdates))
            elif ev.tzid == "UTC":
                props.append("EXDATE:" + ",".join(f"{d:%Y%m%dT%H%M%S}Z" for d in ev.exdates))
            else:
                props.append(f"EXDATE;TZID={ev.tzid}:" + ",".join(f"{d:%Y%m%dT%H%M%S}" for d in ev.exdates))
        if ev.location:
            props.append(f"LOCATION:{_escape(ev.location)}")
        if ev.description:
            props.append(f"DESCRIPTION:{_escape(ev.description)}")
        props.append("END:VEVENT")
        body += "".join(_fold(p) + "\r\n" for p in props)
    return body + "END:VCALENDAR\r\n"
