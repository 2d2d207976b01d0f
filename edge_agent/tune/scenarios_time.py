"""Questions about time: explicit calendar days, relative days (through the project's own date resolver),
today's date, and things to remember."""
from __future__ import annotations

import random
import re
from datetime import date, timedelta

from edge_agent.harness.prompts import OPEN_RANGE_DAYS
from edge_agent.tools.current_date import RANGE_LABELS, date_ranges
from edge_agent.tools.dates import Span, resolve, resolve_all
from edge_agent.tools.query_calendar import day_label
from edge_agent.tune import vocab as V
from edge_agent.tune.common import MONTHS, WEEKDAYS, PhoneBook, day_month, money
from edge_agent.tune.events import instances
from edge_agent.tune.model import Event
from edge_agent.tune.scenario_kit import DATE_INSTRUCTION, Kit, call
from edge_agent.tune.templates_time import CALENDAR, COUNTDOWN, DATE, RELATIVE, REMEMBER

TIME_RE = re.compile(r"\b\d{2}:\d{2}\b")
MAX_FACTS = 2  # event titles asked for in one calendar answer


def iso_day(text: str) -> date:
    return date.fromisoformat(text)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 11 <= n % 100 <= 13 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def day_phrase(kit: Kit, day: date) -> str:
    """An explicit way to say `day` that the resolver reads as exactly that day."""
    loc, today = kit.hh.locale, kit.hh.today
    options = [day_month(day, loc), f"{_ordinal(day.day)} {MONTHS[day.month - 1]}",
               f"{MONTHS[day.month - 1][:3]} {day.day}", f"the {_ordinal(day.day)}"]
    if loc.american:
        options += [f"{MONTHS[day.month - 1]} {_ordinal(day.day)}"] * 2
    good = [o for o in options if _means(o, today, day, day)]
    return kit.pick(good or [day_month(day, loc)])


def _means(phrase: str, today: date, first: date, last: date) -> bool:
    found = resolve_all(phrase, today)
    span = resolve(phrase, today)
    return len(found) == 1 and span is not None and (span.first, span.last) == (first, last)


def _on(kit: Kit, first: date, last: date, events: list[Event] | None = None) -> list[tuple[Event, object]]:
    """(event, start) of every salient instance in the days, in start order."""
    out = []
    for ev in events if events is not None else kit.hh.events:
        if not ev.salient:
            continue
        for start, _ in instances(ev, first, last, kit.hh.timezone):
            out.append((ev, start))
    out.sort(key=lambda pair: (str(pair[1])[:10], 0 if not pair[0].rrule else 1))
    return out


def _facts(pairs) -> list[str]:
    """Up to two titles, one-offs first."""
    titles = []
    for ev, _ in sorted(pairs, key=lambda p: 1 if p[0].rrule else 0):
        if ev.summary not in titles:
            titles.append(ev.summary)
    return titles[:MAX_FACTS]


def _single_timed(kit: Kit, lo: int, hi: int) -> list[tuple[Event, date]]:
    """Named, timed events with one instance on a day between today+lo and today+hi."""
    today = kit.hh.today
    out = []
    for ev in kit.hh.events:
        if ev.spoken and not ev.all_day and TIME_RE.search(ev.description):
            for start, _ in instances(ev, today + timedelta(days=lo), today + timedelta(days=hi), kit.hh.timezone):
                out.append((ev, start.date()))
    return out


def calendar(kit: Kit, n: int) -> None:
    """calendar: a named event or a day given as an explicit date (queryCalendar only)."""
    rng = kit.rng
    kinds = ["cal.time", "cal.where", "cal.day", "cal.time", "cal.where", "cal.month", "cal.find", "cal.find"]
    rng.shuffle(kinds)
    candidates = _single_timed(kit, -20, 60)
    for kind in kinds[:n]:
        questions, instructions = CALENDAR[kind]
        if kind == "cal.find":
            _find_event(kit, questions, instructions)
            continue
        if kind == "cal.month":
            first = (kit.hh.today.replace(day=1) + timedelta(days=32)).replace(day=1)
            phrase = f"in {MONTHS[first.month - 1]}"
            span = resolve(phrase, kit.hh.today)
            facts = _facts(_on(kit, span.first, span.last))
            if not facts:
                continue
            slots = {"month": phrase, "month_name": MONTHS[first.month - 1], "iso": span.first.isoformat(),
                     "iso_end": span.last.isoformat()}
            text = _styled(kit, kit.fill(kit.pick(questions), slots), [phrase], today=kit.hh.today, span=span)
            if text is None:
                continue
            kit.add("calendar", text, [call("queryCalendar", kit.instruction(instructions, slots),
                                            start=span.first.isoformat(), end=span.last.isoformat())], facts)
            continue
        if not candidates:
            continue
        ev, day = rng.choice(candidates)
        slots = {"event": rng.choice(ev.spoken), "date": day_phrase(kit, day), "iso": day.isoformat()}
        if kind == "cal.time":
            facts = [TIME_RE.search(ev.description).group(0)]
        elif kind == "cal.where":
            if not ev.location:
                continue
            facts = [ev.location.split(",")[0]]
        else:
            facts = _facts(_on(kit, day, day)) or [ev.summary]
        text = _styled(kit, kit.fill(kit.pick(questions), slots), [slots["event"], slots["date"]], today=kit.hh.today,
                       span=Span(day, day))
        if text is None:
            continue
        kit.add("calendar", text, [call("queryCalendar", kit.instruction(instructions, slots),
                                        start=day.isoformat(), end=day.isoformat())], facts)


def _once_in_open_range(kit: Kit) -> list[tuple[Event, date]]:
    """The timed, non-repeating events with a spoken name that have one instance in the open range
    the harness gives L3 (prompts.OPEN_RANGE_DAYS), each with that instance's day."""
    first, last = _open_range(kit)
    once = []
    for ev in kit.hh.events:
        if ev.spoken and not ev.rrule and not ev.all_day:
            found = list(instances(ev, first, last, kit.hh.timezone))
            if len(found) == 1:
                once.append((ev, found[0][0].date()))
    return once


def _open_range(kit: Kit) -> tuple[date, date]:
    today = kit.hh.today
    first, last = (today + timedelta(days=d) for d in OPEN_RANGE_DAYS)
    return first, last


def _find_event(kit: Kit, questions, instructions) -> None:
    """A named event asked about with no day: L3 searches the open range the harness gives
    (prompts.OPEN_RANGE_DAYS); only an event with one instance in that range is asked about."""
    today = kit.hh.today
    first, last = _open_range(kit)
    once = [ev for ev, _ in _once_in_open_range(kit) if TIME_RE.search(ev.description)]
    if not once:
        return
    ev = kit.rng.choice(once)
    slots = {"event": kit.rng.choice(ev.spoken)}
    facts = [TIME_RE.search(ev.description).group(0)]
    text = kit.style(kit.fill(kit.pick(questions), slots), [slots["event"]])
    if any(r.span is not None for r in resolve_all(text, today)):
        return  # styling or the event's name reads as a day: the open range would be wrong
    kit.add("calendar", text, [call("queryCalendar", kit.instruction(instructions, slots),
                                    start=first.isoformat(), end=last.isoformat())], facts)


def countdown(kit: Kit, n: int) -> None:
    """calendar: how long until a named event with no day (current_date, then the open range); only
    an event with one instance in that range, after tomorrow, is asked about. The fact is its day as
    the calendar writes it ("Fri 6 Nov"): a fact must be in what the tools return, and the count
    ("in 17 days") is the reply's own sum from that day (reply.counted, tested there)."""
    today = kit.hh.today
    first, last = _open_range(kit)
    once = [(ev, day) for ev, day in _once_in_open_range(kit) if day > today + timedelta(days=1)]
    questions, instructions = COUNTDOWN
    for ev, day in kit.rng.sample(once, min(n, len(once))):
        slots = {"event": kit.rng.choice(ev.spoken)}
        text = kit.style(kit.fill(kit.pick(questions), slots), [slots["event"]])
        if any(r.span is not None for r in resolve_all(text, today)):
            continue  # styling or the event's name reads as a day: the open range would be wrong
        calls = [call("current_date", kit.instruction(DATE_INSTRUCTION, slots)),
                 call("queryCalendar", kit.instruction(instructions, slots), start=first.isoformat(),
                      end=last.isoformat())]
        kit.add("calendar", text, calls, [day_label(day, False)])


def _phrases(today: date) -> list[str]:
    """Relative phrasings worth asking about from `today` (each checked against the resolver later)."""
    out = ["tomorrow", "the day after tomorrow", "yesterday", "the day before yesterday", "this weekend",
           "next weekend", "the weekend after next", "last weekend", "the weekend just gone", "next week",
           "the week after next", "last week", "this week", "in a fortnight", "the first weekend of next month",
           "next month"]
    for wd in WEEKDAYS:
        out += [f"next {wd}", f"this coming {wd}", f"the {wd} just gone", f"last {wd}", f"a week on {wd}",
                f"{wd} week", f"the {wd} after next", f"this {wd}"]
    for n in (2, 3, 4, 5, 10):
        out += [f"in {n} days", f"{n} days from now", f"{n} days ago", f"the next {n} days", f"the last {n} days"]
    return out


def relative(kit: Kit, n: int) -> None:
    """relative_date: current_date, then queryCalendar over the days the phrase means (resolved here)."""
    rng, today = kit.rng, kit.hh.today
    phrases = _phrases(today)
    rng.shuffle(phrases)
    made = 0
    timed = {d: ev for ev, d in _single_timed(kit, -14, 40)}
    for phrase in phrases:
        if made >= n:
            break
        span = resolve(phrase, today)
        if span is None or not _means(phrase, today, span.first, span.last) or (span.last - span.first).days > 31:
            continue
        past = span.last < today
        if span.first == span.last and span.first in timed and not past and rng.random() < 0.5:
            ev = timed[span.first]
            kind, facts = "rel.time", [TIME_RE.search(ev.description).group(0)]
            slots = {"phrase": phrase, "event": rng.choice(ev.spoken)}
        else:
            facts = _facts(_on(kit, span.first, span.last))
            if not facts:
                continue
            kind = "rel.past" if past else rng.choice(("rel.events", "rel.events", "rel.free"))
            slots = {"phrase": phrase}
        questions, instructions = RELATIVE[kind]
        text = _styled(kit, kit.fill(kit.pick(questions), slots), [phrase, slots.get("event", "")], today=today,
                       span=span)
        if text is None:
            continue  # no styling keeps the date readable: skip rather than mislabel
        calls = [call("current_date", kit.pick(DATE_INSTRUCTION)),
                 call("queryCalendar", kit.instruction(instructions, slots), start=span.first.isoformat(),
                      end=span.last.isoformat())]
        kit.add("relative_date", text, calls, facts)
        made += 1


def _phrase_kept(text: str, today: date, span: Span) -> bool:
    """Whether the resolver still reads the whole question as meaning `span` (fillers can break a phrase:
    "the 22nd when you get a sec" reads as "the 22nd <noun>")."""
    return any(r.span is not None and (r.span.first, r.span.last) == (span.first, span.last)
               for r in resolve_all(text, today))


def _styled(kit: Kit, text: str, protect: list[str], *, today: date, span: Span, tries: int = 8) -> str | None:
    """The question styled so that its date phrase still resolves to `span` (plain text as a last resort)."""
    for _ in range(tries):
        styled = kit.style(text, protect)
        if _phrase_kept(styled, today, span):
            return styled
    return text if _phrase_kept(text, today, span) else None


def dates(kit: Kit, n: int) -> None:
    """date: current_date alone answers (today, its weekday, or one of its ready-made ranges)."""
    rng, today = kit.rng, kit.hh.today
    ranges = date_ranges(today)
    kinds = ["date.today", "date.weekday", "date.range", "date.day", "date.range"]
    rng.shuffle(kinds)
    for kind in kinds[:n]:
        questions, instructions = DATE[kind]
        slots = {"wrong_day": rng.choice([w for w in WEEKDAYS if w != WEEKDAYS[today.weekday()]])}
        if kind == "date.today":
            facts = [today.isoformat()]
        elif kind == "date.weekday":
            facts = [WEEKDAYS[today.weekday()], today.isoformat()]
        else:
            keys = ("next_week", "last_week", "this_weekend", "this_week", "this_month", "next_month") \
                if kind == "date.range" else ("tomorrow", "yesterday")
            key = rng.choice(keys)
            first, last = ranges[key]
            slots["phrase"] = RANGE_LABELS[key]
            facts = [first.isoformat()] if first == last else [first.isoformat(), last.isoformat()]
        protect = [slots.get("phrase", ""), slots["wrong_day"]]
        if "phrase" in slots:
            text = _styled(kit, kit.fill(kit.pick(questions), slots), protect, today=today, span=Span(first, last))
            if text is None:
                continue
        else:
            text = kit.style(kit.fill(kit.pick(questions), slots), protect)
        kit.add("date", text, [call("current_date", kit.instruction(instructions, slots))], facts)


CODES = ("locker code at the gym", "door code for the office", "gate code at the allotment", "key safe code",
         "alarm code", "code for the bike shed", "PIN for the garage door")
ITEMS = ("spare car keys", "Christmas decorations", "warranty cards", "good scissors", "spare batteries",
         "winter duvets", "tent pegs", "birthday candles", "spare light bulbs")
PLACES = ("top drawer of the desk", "loft above the bathroom", "blue box under the bed", "shed, on the left shelf",
          "hall cupboard", "kitchen drawer by the oven", "suitcase on the wardrobe")
PREFS = ("is vegetarian now", "doesn't drink coffee any more", "prefers oat milk", "is gluten-free",
         "can't do Tuesdays", "likes an aisle seat", "is training for a marathon", "hates surprise parties")

FACTS = (("ring size", "letter"), ("library card number", "digits"), ("frequent flyer number", "ref"),
         ("membership number at the climbing wall", "ref"), ("wifi password", "word"), ("seat at the theatre", "seat"),
         ("bike frame number", "ref"), ("coat size", "size"),
         ("car park permit number", "ref"), ("customer reference with the council", "ref"),
         ("usual coffee order", "coffee"), ("tyre pressure", "digits"))
"""(thing, value shape) of everyday facts a user asks to keep."""


def _fact_value(rng: random.Random, shape: str) -> str:
    """A fresh value of the given shape, never the same few: the adapter must copy it, not recall it."""
    letters = "ABCDEFGHJKLMNPRSTUVWXYZ"
    if shape == "size":
        return rng.choice(("UK ", "EU ", "US ", "")) + str(rng.randint(3, 46))
    if shape == "letter":
        return rng.choice(letters[:20])
    if shape == "digits":
        return str(rng.randrange(1, 10 ** rng.randint(2, 6)))
    if shape == "ref":
        return "".join(rng.choice(letters) for _ in range(rng.randint(2, 3))) + "-" + str(rng.randrange(10 ** 4, 10 ** 7))
    if shape == "word":
        return rng.choice(V.STEMS).lower() + rng.choice(("-", "")) + str(rng.randint(10, 999))
    if shape == "seat":
        return f"row {rng.choice(letters[:14])}, seat {rng.randint(1, 40)}"
    return rng.choice(("flat white", "oat latte", "double espresso", "tea with milk, no sugar", "iced americano",
                       "decaf cappuccino", "chai latte with oat milk"))


def remember(kit: Kit, n: int) -> None:
    """remember: one self-contained sentence to save; the loop stops for confirmation."""
    rng, hh = kit.rng, kit.hh
    u = hh.user
    kinds = list(REMEMBER)
    rng.shuffle(kinds)
    close = [p for p in hh.cast.people if p.key.startswith(("friend", "sibling")) or p.key == "partner"]
    for kind in kinds[:n]:
        questions, instructions = REMEMBER[kind]
        who = rng.choice((f"{u.first}'s", "The user's"))
        subj = u.first if who.endswith("'s") and who != "The user's" else "The user"
        person = rng.choice(close)
        rel = "partner" if person.key == "partner" else person.role
        if kind == "rem.code":
            slots = {"thing": rng.choice(CODES), "value": f"{rng.randrange(10 ** 3, 10 ** rng.choice((4, 5, 6)))}"}
            note, facts = f"{who} {slots['thing']} is {slots['value']}.", [slots["value"], slots["thing"]]
        elif kind == "rem.where":
            slots = {"item": rng.choice(ITEMS), "place": rng.choice(PLACES)}
            note, facts = f"{subj} put the {slots['item']} in the {slots['place']}.", [slots["item"], slots["place"]]
        elif kind == "rem.number":
            book = PhoneBook(rng, hh.locale)
            book.used = set(hh.cast.phones.used)  # new, and never a number the household already has
            slots = {"name": person.first, "value": book.mobile()}
            note, facts = f"{who} {rel} {person.first} has a new mobile number: {slots['value']}.", [slots["value"]]
        elif kind == "rem.pref":
            slots = {"name": person.first, "pref": rng.choice(PREFS)}
            note, facts = f"{who} {rel} {person.first} {slots['pref']}.", [person.first, slots["pref"]]
        elif kind == "rem.parking":
            slots = {"level": str(rng.randint(1, 6)), "bay": f"{rng.choice('ABCDEFGH')}{rng.randint(1, 60)}"}
            note, facts = f"{subj} parked on level {slots['level']}, bay {slots['bay']}.", [f"bay {slots['bay']}"]
        elif kind == "rem.fact":
            thing, shape = rng.choice(FACTS)
            slots = {"thing": thing, "value": _fact_value(rng, shape)}
            note, facts = f"{who} {thing} is {slots['value']}.", [slots["value"]]
        else:
            slots = {"name": person.first, "value": money(rng.randrange(10, 400, 5), hh.locale)[:-3]}
            note, facts = f"{subj} lent {person.first} {slots['value']}.", [slots["value"], person.first]
        text = kit.style(kit.fill(kit.pick(questions), slots), list(slots.values()))
        kit.add("remember", text, [call("remember", kit.instruction(instructions, slots), note=note)], facts,
                exit_kind="needs_confirmation")
