"""The reply: the model chooses among exact spans of what the tools found; code composes the answer.

A small model chooses well and cannot write facts reliably: asked for a sentence, it names the
right note and copies the wrong clause of it ("2025-03-02." for Ravi's birthday, the pound sum
of another line). So it never writes an answer's facts. What it does:

1. Candidates (no model). Every item the tools put in the side channels — notes, memory-log
   entries, the located files' passages, calendar events — is cut into spans: sentences, and
   the parts a list separator divides ("Exeter, UK · sam@example.org · 07700 900655"). A span
   is scored by the question's terms it and its title hold (stemmed, with the synonym table, a
   misspelt word read as the found word one edit away: store/spelling.py; a
   rarer term weighs more; one met only through a synonym less; a term elsewhere in its entry
   counts a little, one named where it comes from again: the electrician's page is about the
   electrician, when the line says what the question asks), then by the terms of the searches
   the model crafted. A part asking for a kind
   of value only a line can hold (a phone number, an email: ASKED_KINDS) is answered from lines
   holding one, or not at all; a part naming a person of the notebook's person pages ("mum",
   "haruto": people_asked) from the entries that mention them; a part asking for the asker's own
   phone, email or address and naming no one ("what's my mobile": asks_own) never from another
   person's page. The best CANDIDATES spans, at most PER_ITEM of one entry,
   chosen so each part of the question gets some, are the candidates; sentences that speak to
   the assistant are never among them (injection.py), and a line from an entry that held one
   says so in the answer.
2. Choice (one generation a part). The numbered candidates and the question; under a grammar
   the model answers {"lines": [numbers]}: the lines that answer it, or 0 for none of them. It
   cannot name a line that is not there. Its "none" is no answer when the first line names every
   word the asker said and the model's own searches named too (thing_words, says_all: "wifi
   pasword" with the wifi password line first). A chosen line that says no more than where it
   comes from but a name or a month ("Santiago Yilmaz is Oisin's friend", a bill's "July 2026":
   adds_nothing) answers only a part whose every word it names: who Santiago is, not his wife's
   name; the broadband bill, not the gas bill. When no chosen line names, with where it comes
   from, any of the words a part's asking clause names the thing by (and the model's searches
   named too: asked_about), the first candidate naming all of them, with the kind of value asked
   for (says_all), answers instead: "what email my mother uses" is her page's email line, not an
   energy bill's. Without such a line, in a one-part question the choice is no answer: "the
   electricity bill last month" is not the lease's rent; nor is the lease its search located,
   unless the file's name names it. (A part of a two-part question keeps the model's choice then:
   it leans on the other part's words, "and the restaurant from his birthday"; measured, holding
   it to its own cost a world/ answer. In a one-part question, chosen lines that name nothing
   asked are dropped beside one that does.) Asked for a kind
   of value, a chosen line giving none brings its entry's line that gives one (with_the_value:
   the invoice's total after "Plumber's work: repair of a blocked sink"); a one-part question
   asking for an amount, a number or an email (WRITTEN_KINDS) that no chosen line nor its entry
   gives a value for is not found ("how much was the boiler service": not the booking message). A
   part asking who whose chosen lines name no one (naming_lines: a field's "Date:" is no name) is
   answered by the best-ranked line that names someone. A two-part question
   ("Who's my plumber, and can you find his invoice?", parts()) is ranked and chosen for part
   by part, each part's candidates ranked by its own words first and the other part's a little.
   After a "who ..." part, a later part's "her" or "his" is whom its chosen lines are about: the
   names they write are looked up in the local stores (a callback the runner passes in), and the
   model reads, in the pronoun's place, the person whose page they come from (page_person), else
   those names; without a "who ..." part, the one person of the notebook the other part names
   ("... meeting alina. her address"; "Ana's brother" names Ana, not the asker's brother).
3. Composition (no model). The chosen spans exactly as stored, each after where it comes from
   ("Ravi Dutta (partner): Birthday 3 May (born 1984)."), and the same in `sources`.

Some answers need no choice at all and are rendered: a calendar question's events of the range
it asked about, with the range named ("Next week, Mon 23 Nov to Sun 29 Nov: ..."); today's date
(or, for a date question naming more than dates, the events it names in the days it names);
the dates a question asks a date phrase means ("which days does this weekend cover": asks_dates),
whatever the plan read.
A question asking a value, a place or a name of a thing no event of the range mentions ("yoga on
thursday what time") is not rendered, and an event that mentions none of that thing's words is
no answer to it when chosen (things_asked_of). In a two-part question each part is answered on
its own: a part naming days a calendar read covered is that calendar answer for its days
(calendar_part), the other part chosen for.
A located file is attached and named. Nothing found, or 0 chosen: the asker hears that nothing
was found. A question that needed none of the user's data (the plan said "none") gets the
model's own short reply only when no span is chosen, and never when that reply is structured data
(is_structured: a tool call it wrote).
"""
from __future__ import annotations

import json
import logging
import math
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Awaitable, Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field, conint, create_model

from edge_agent.harness import by_name, injection, prompts
from edge_agent.harness.channels import SideChannels
from edge_agent.harness.events_text import event_lines, event_text
from edge_agent.harness.reserve import worst_case_tokens
from edge_agent.harness.turn import CalendarRead, LimitReached, ModelCallFailed, TurnContext
from edge_agent.store import spelling
from edge_agent.store.passages import PASSAGE_SEPARATOR
from edge_agent.store.text import (MONTHS, SOFT_WORDS, STOPWORDS, QueryTerm, content_words, literal_terms, query_plan, stems,
                                   text_matches)
from edge_agent.tools import dates
from edge_agent.tools.current_date import payload_today
from edge_agent.tools.date_table import AMOUNT_WORDS, WEEKDAY_NAMES
from edge_agent.tools.query_calendar import day_label

log = logging.getLogger(__name__)

NOT_FOUND = "I could not find anything about that in your notes, files, calendar or memory."
FREE_RANGE = "Nothing on your calendar"
"""How a calendar answer for a range without events begins (an answer, not a "not found")."""
CANDIDATES = 6  # spans the model chooses among (each costs ~30 prompt tokens)
PER_ITEM = 3  # of one note, entry, file or event at most
MAX_PICKS = 3  # lines one answer may be made of (a two-part question needs two)
SPAN_CHARS = 200  # a longer sentence is cut at its commas
WRAP_CHARS = 70  # a file's line at least this long that ends without a stop was wrapped: joined
CONTEXT_WEIGHT = 0.25  # a term only elsewhere in the same entry (the receipt's shop, for its total line)
CRAFTED_WEIGHT = 0.5  # a term of the model's own search words, not the asker's, counts half
SOFT_WEIGHT = 0.5  # a word for a kind of value ("number", "phone": store.text.SOFT_WORDS) counts half:
# "my dentist's phone number" is about the dentist, not about every line with a number
COVERED = 0.5  # a term an earlier candidate holds counts this much more for the next ones
RELATED_WEIGHT = 0.3  # a term of the question's other parts: "can you find his invoice" is about the plumber
ABOUT_WEIGHT = 1.0  # a term named where the line comes from counts this much again: "Enzo Tembo (electrician)"
# is about the electrician; a tenancy line that mentions "contact details" only mentions them
TITLED = ("notebook", "memory")
"""Stores whose every line is about what it is named for: a note's title, a message's sender. A
file's name is about the file, not each of its lines (a receipt's address line is not about the
café); an event is one line with its title in it."""
SYNONYM_WEIGHT = 0.5  # a term met only through the synonym table counts this share ("electrical" for
# "electrician" also stems to every "electricity" bill)
PART_SPLIT = re.compile(
    r"\s*(?:[,;?]\s*(?:and|plus|also|as well as)\b|\s\+\s|[.?!]\s+(?=(?:his|her|their)\s)"
    r"|\s[-—–]\s+(?=(?:what|whats|what's|where|wheres|where's|when|whens|when's|how|who|whos|who's)\b"
    r"[^?.!]*\b(?:he|she|they|him|his|her|them|their)\b)"
    r"|(?:[?.!;]\s+|\band\s+|\s[+&/]\s*|\s[-—–]\s+and\s+)(?=(?:what|whats|what's|when|whens|"
    r"when's|where|wheres|where's|who|whos|who's|which|how|hows|how's|can|could|did|does|do|is|are|has|have|also)\b)"
    r"|\s(?:and|plus|also|as well as|[+&])\s+(?=(?:the|my|his|her|their|our|a|an)\s))\s*",
    re.IGNORECASE)
"""Where a question's second part starts: ", and ...", ", plus ...", "? ..." (or ". ", "; " before a
question word), "and when ...", "and the/my/her ..." (a second thing asked for; "also" and "as well
as" too), "? also ...", "? and ...", ". her address too"; a " + " always, an "&" or a "/" before a
question word as an "and", a dash before "and" or before a question about him or her ("who has the
spare key - whats her number"; "cycling agm - where's it being held" is one question). An "and"
inside one part ("Tom and Mia's address") has neither the comma, a question word nor a determiner
after it."""
JOINING_WORDS = frozenset("also plus too".split())
"""Words that join a second part to a question ("... also his number"), never the thing it asks about."""
CLAUSE_SPLIT = re.compile(r"\s*(?:[,;?!]+|\s[-—–]\s)\s*")
"""Where a clause of a typed question ends: a comma, a question mark, a dash between words."""
ASKING = re.compile(r"\b(?:what|whats|which|who|whos|whom|whose|where|wheres|when|whens|how|hows)\b",
                    re.IGNORECASE)
"""A clause that asks: a question word in it ("what's" too: the apostrophe ends the word)."""
EXCLAIMED = re.compile(rf"(?:^|(?<=[.?!]))\s*(?:(?!{ASKING.pattern})[^.?!])+!+", re.IGNORECASE)
"""A remark ending in "!" that holds no question word (ASKING): "morning!", "ugh, the boiler again!"."""
ASIDE_WEIGHT = 0.3  # a word of a clause after the one that asks: "..., i keep getting it wrong"
PRONOUN = re.compile(r"\b(?:he|she|him|her|his|hers|they|them|their|theirs)\b", re.IGNORECASE)
"""A part that says "he" or "her" is about whom the other part names ("a gift for Omar, and what
book he told me to read"): that name counts fully there (see candidates)."""
_WHO_WORDS = "who|whos|who's|whom"
WHO = re.compile(rf"\b(?:{_WHO_WORDS}|someone|somebody|anyone|anybody)\b", re.IGNORECASE)
"""A part that asks for a person ("who has the spare key", "did i lend it to someone"): the name its
answer gives is whom a later part's pronoun means."""
ASKS_WHO = re.compile(rf"\b(?:{_WHO_WORDS})\b", re.IGNORECASE)
"""A part asking who: its answer names someone ("someone messaged ..., what did they say" asks the saying)."""
LIST_SPLIT = re.compile(r"\s+[·•|]\s+|;\s+|\s+—\s+|\s*\n\s*")
"""Where a sentence's parts are separate values: list dots, bars, semicolons, dashes, lines."""
HEADING = re.compile(r"^#{1,6}\s+")
LIST_ITEM = re.compile(r"^(?:[-*•]|\d{1,2}[.)])\s+")
"""A line that is one item of a list ("- [ ] sunglasses", "* eggs", "2. passport")."""
LIST_ASKED = re.compile(r"\b(?:list|checklist|to-?do)\b", re.IGNORECASE)
"""A part asking for a list ("what's on the packing list"): a chosen item brings the list's other items."""
LIST_ITEMS = 12  # of one list at most
"""A markdown heading line: left out of the candidates unless it holds a date, a year or an amount
(HEADING_VALUE), for it names what follows ("## 4. Annual general meeting"); a résumé's "### Analyst,
Heron Trust (2020–2022)" is the only line with those years."""
_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
_YEAR = r"(?:19|20)\d\d"
_DIGITS = r"(?<![a-z])\d[\d ()+\-]{2,}\d(?![a-z])"  # not a postcode's "LB10 3ZT"
_DATE = rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTHS})[a-z]*\b|\b(?:{_MONTHS})[a-z]*\s+\d{{1,2}}\b|\b\d{{4}}-\d\d-\d\d\b|\b\d{{1,2}}/\d{{1,2}}\b"
_TIME = r"\b\d{1,2}[:.]\d\d\b|\b\d{1,2}\s?(?:am|pm)\b"
_AMOUNT = r"[£$€]\s?\d|\b\d[\d,.]*\s?(?:pounds?|euros?|dollars?|pence)\b"
_STREETS = "Street|Road|Close|Lane|Avenue|Way|Drive|Court|Crescent|Terrace|Park|Place|Square|Gardens|Grove|Row|Walk|Mews"
_POSTAL = (rf"(?-i:\b\d{{1,4}}[a-z]?,?\s+(?:[A-Z][\w'-]*\s+){{1,3}}(?:{_STREETS})\b"  # 4 Mill Lane
           r"|\b[A-Z][a-z]+(?:straat|gracht|weg|laan|plein|kade)\s+\d+"  # Aldergracht 118
           r"|\b[A-Z]{1,2}\d[A-Z\d]?\s\d[A-Z]{2}\b|\b[A-Z]\d{2}\s[A-Z\d]{4}\b|\b\d{4}\s?[A-Z]{2}\b)")  # postcodes
_TEMPERATURE = r"\b\d+\s?°\s?[CF]?|\b\d+\s?degrees\b|\bgas mark \d"
_DURATION = (r"\b(?:\d+|" + "|".join((*AMOUNT_WORDS, *"fifteen twenty thirty forty fifty sixty ninety".split()))
             + r"|half an?)\s+(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)\b")
VALUE_SHAPES = {kind: re.compile(pattern, re.IGNORECASE) for kind, pattern in {
    "number": _DIGITS, "email": r"[\w.+-]+@[\w-]+\.\w", "date": _DATE, "time": _TIME, "amount": _AMOUNT,
    "postal": _POSTAL, "temperature": _TEMPERATURE, "duration": _DURATION}.items()}
"""What a value of each kind looks like in a line."""
WRITTEN_KINDS = frozenset({"number", "email", "amount"})
"""Kinds of value always written with digits or an @: a part asking for one is not answered by a
line with no value at all ("bins go out on Thursdays" may answer "when", nothing answers "how much")."""
IDENTIFYING_KINDS = ("number", "email", "date", "time", "amount")
"""Kinds whose values tie two lines to one thing (values_in); "45 minutes" or "170°C" recur in
unrelated lines."""
HEADING_VALUE = re.compile(rf"\b{_YEAR}\b|{_DATE}|{_AMOUNT}", re.IGNORECASE)
"""A value a heading may hold (never a section's number, "## 15. Warranty", or a model's, "YC-2762")."""
VALUE_WORDS = {"number": "number", "numbers": "number", "phone": "number", "mobile": "number", "tel": "number",
               "cell": "number", "cellphone": "number",
               "code": "number", "pin": "number", "reference": "number", "email": "email", "address": "postal",
               "when": "date", "whens": "date", "date": "date", "day": "date", "birthday": "date", "due": "date",
               "time": "time", "cost": "amount", "price": "amount", "much": "amount", "total": "amount",
               "pay": "amount", "paid": "amount", "spend": "amount", "spent": "amount", "charge": "amount",
               "fee": "amount", "owe": "amount", "quote": "amount", "temperature": "temperature",
               "temp": "temperature", "degrees": "temperature", "long": "duration"}
"""A question word asking for a kind of value -> the kind ("when's the MOT" wants a date, "how
much" an amount). Among the lines about the thing asked, one holding such a value ranks first. An
address is a postal one unless the question says email (value_kinds)."""
PLACE_WORDS = frozenset("where wheres place restaurant venue".split())
"""Words asking for a place ("dad where", "the restaurant from her birthday"): a line that only
says who someone is (adds_nothing) gives none."""
NAMING_WORDS = PLACE_WORDS | frozenset("who whos whom whose name named called".split())
"""Words asking for a place, a person or a name: "where was Ines's birthday dinner", "the cafe
from her birthday, what was it called", "what was the place for her birthday" and "which
restaurant was her birthday meal at" ask for the place, not the birthday's date. Measured on
generated held-out households (not world/): 269/320
end to end against 268, and 129/160 against 128 on four more ("place": 5010-5017 gained with the
heading and "mine" changes, 258 -> 264 of 320); world/ gave the same score."""
ASKED_KINDS = {"email": "email", "emails": "email", "phone": "phone", "mobile": "phone", "tel": "phone",
               "cell": "phone", "cellphone": "phone",
               "telephone": "phone", "number": "number", "numbers": "number", "code": "code", "pin": "code"}
"""A word asking for a value only a line that holds one can give (HOLDS): a question part asking
for one is answered from such lines alone, and with none of them found, nothing was found. A
date or an amount is not among them: "how much notice" is answered by "two months"."""
_PHONE = r"(?<![\w+])(?:\+\d{1,3}[ -]?)?\(?\d{3,}\)?(?:[ -]?\d{3,})+(?!\w)"
HOLDS = {"email": VALUE_SHAPES["email"],
         "phone": re.compile(_PHONE),
         "number": re.compile(rf"{_PHONE}|\d{{5,}}|\b(?=[\w-]*\d)(?=[\w-]*[a-z])[\w-]{{4,}}\b", re.IGNORECASE),
         "code": re.compile(r"\d{3,}|\b(?=\w*\d)(?=\w*[a-z])\w{4,}\b", re.IGNORECASE)}
"""What a line holding each asked kind has: an address; a phone number (groups of three digits or
more, a country code before them, no letter glued on: never a date's "22 1992" or a hospital number's
"VN986569"); that, five digits or a reference mixing
letters and digits for another number; three digits for a code."""
PERSONS_NUMBER = re.compile(r"\b(?:(my|his|her|their|our|your)|(\w+)'s)\s+(?:own\s+)?numbers?\b", re.IGNORECASE)
"""Someone's number, with nothing naming another kind between: "what's my number", "the doctor's
number" ask for a phone; "my passport number" does not, and neither does a stopword's "'s" ("it's
number 12": persons_number)."""
MESSAGE_DETERMINERS = frozenset("the that this an a last".split())
"""Words that make the "email" a few words after them a message ("that delivery email", "the
email from the landlord"); without them ("sams email", "what email should I use") it is an address."""
TOLD = re.compile(r"\b(?:say|said|says|sent|send|wrote|write|message|reply|replied|about|mention|mentioned)\b",
                  re.IGNORECASE)
"""A question about what was said ("what did the delivery email say") asks for the saying, not a value."""
SAID = re.compile(r"\b(?:said|told|texted|messaged|wrote|mentioned|replied)\b"
                  r"|\bdid\b.*\b(?:say|tell|text|message|mention|write|reply)\b", re.IGNORECASE)
"""A question about what someone said ("what did leo text me yesterday", "who texted me"): the
calendar of the day it names is not its answer (rendered). "tell me what's on" and "before I say
yes" ask the calendar."""
CALENDAR_NAMES = frozenset(w for name in (*MONTHS, *(d.lower() for d in WEEKDAY_NAMES))
                           for w in (name, name[:3], f"{name}s")) | {"sept"}
"""Capitalised words that name no thing a naming question asks for."""
CAPITALISED = re.compile(r"[A-Z][A-Za-z]*(?:['’]s)?\b")
CLAUSE_START = ".!?:;—–-(\"'‘“@·•|"
"""Characters after which a capitalised word starts a clause (and so says nothing by its capital)."""
COMMON_NAME_ITEMS = 3  # a name in this many found entries is everyone's ("X is Ana's friend": the asker's own)


def names_in(text: str) -> set[str]:
    """The words a line names things by: capitalised inside a clause (a clause's first word is
    capitalised anyway), not a month or a day, not a field's label before its colon; folded, without
    a possessive "'s"."""
    out = set()
    for m in CAPITALISED.finditer(text):
        before = text[:m.start()].rstrip()
        if text[m.end():m.end() + 1] == ":":  # a field's label ("Order 4471   Date: 3 May"), no name
            continue
        if before and before[-1] not in CLAUSE_START:
            word = re.sub(r"['’]s$", "", m.group(0)).lower()
            if word not in CALENDAR_NAMES:
                out.add(word)
    return out


def names_a_thing(text: str, known: set[str]) -> bool:
    """Whether a line names something not `known` (stems: the question's own words, the line's
    title, the names common to the entries found)."""
    return any(not set(stems(word)) & known for word in names_in(text))


def naming_lines(spans: Sequence[Span], question: str) -> list[bool]:
    """For each span, whether it names something a naming question did not say: not in the
    question, not in the span's title, not a name COMMON_NAME_ITEMS of the found entries hold."""
    per_item: dict[int, set[str]] = {}
    for s in spans:
        per_item.setdefault(s.item, set()).update(names_in(s.text))
    common = {t for w, n in Counter(w for found in per_item.values() for w in found).items()
              if n >= COMMON_NAME_ITEMS for t in stems(w)}
    known = set(stems(question)) | common  # stems(): cached, and a note's many lines share its title
    return [names_a_thing(s.text, known | set(stems(s.label))) for s in spans]


KIND_WEIGHT = 0.5  # of the question's heaviest term, for a line about it holding the kind of value asked for
DAY_WEIGHT = 1.0  # of the question's heaviest term, for an entry of a day the question names (a memory entry
# written then, an event then)
STORE_OF = {"notes": "notebook", "memory": "memory", "files": "files", "events": "calendar"}
"""Side channel -> the store named in `sources`."""
MEMORY_LABELS = {"message": "Message from {who}, {day}", "call": "Call with {who}, {day}",
                 "journal": "Your journal, {day}", "post": "Your post, {day}", "chat": "Chat, {day}"}
"""How a memory-log entry is named, by its kind."""


@dataclass(frozen=True)
class Span:
    """One candidate: exact text of one stored item, and where it comes from."""

    text: str
    """The span exactly as stored."""
    store: str
    """notebook | memory | files | calendar"""
    title: str
    """The note's title, the file's name, the event's title, the entry's author."""
    label: str
    """Where it comes from, as the asker reads it ("Ravi Dutta (partner)", "lease.pdf on pi")."""
    device: str | None = None
    """The file's device."""
    item: int = 0
    """Which stored item it is (candidates of one item are capped)."""
    attachment: dict[str, Any] | None = None
    """The file to attach when this span is chosen."""
    untrusted: bool = False
    """Its entry also held words aimed at the assistant (injection.py): the answer says so."""
    day: str = ""
    """The day a memory-log entry was written or an event starts (YYYY-MM-DD); "" for notes and files."""


@dataclass(frozen=True)
class Reply:
    """What the asker reads, what it rests on, and the attached file."""

    text: str
    """The answer."""
    sources: list[dict[str, Any]] = field(default_factory=list)
    """[{store, title, device, text: [exact spans]}], one an entry the answer rests on."""
    attachment: dict[str, Any] | None = None
    """The located file (device, path, name), if any."""


# -- 1. candidates ---------------------------------------------------------------------------------
FIELD = re.compile(r"^[A-Z][\w ()%'-]{0,30}:\s")
"""A line that starts a field of its own ("Account number: ...", "VAT at 5%: ..."): never a wrapped line's rest."""


def unwrap(text: str) -> str:
    """A file's text with its wrapped lines joined (a PDF breaks sentences at its margin): a line
    goes on the one before when that one, as written, was long and ended without a stop, and it
    starts no field of its own. A bill's "Supply address: ..., Belfast FA3 1GY" is long and
    unstopped; the "Account number: ..." after it is not its rest."""
    out: list[str] = []
    prev = ""
    for line in text.split("\n"):
        s = line.strip()
        if (len(prev) >= WRAP_CHARS and not prev.endswith((".", "!", "?", ":")) and s and out
                and not s.startswith(("-", "*", "•")) and not FIELD.match(s)):
            out[-1] = f"{out[-1]} {s}"
        else:
            out.append(s)
        prev = s
    return "\n".join(out)


def spans_of(text: str, whole: bool = False) -> list[str]:
    """`text` cut into sentences and list parts, each at most SPAN_CHARS (cut at commas past
    that). With `whole`, a text that short on one line stays whole (a message is one thing said:
    its second sentence often answers what its first names; a note is a list of facts, cut).
    Pieces without a word, and sentences that speak to the assistant, are left out."""
    if whole and len(text) <= SPAN_CHARS and "\n" not in text.strip() and not injection.is_planted(text):
        return [text.strip()] if re.search(r"\w\w", text) else []
    out: list[str] = []
    for part in LIST_SPLIT.split(text):
        if HEADING.match(part.strip()):
            part = HEADING.sub("", part.strip())
            if not HEADING_VALUE.search(part):
                continue  # "## Annual general meeting" names what follows; it answers nothing itself
        for sentence in injection.sentences(part.strip()):
            out += _capped(sentence.strip())
    return [s for s in out if re.search(r"\w\w", s) and not injection.is_planted(s)]


def _capped(sentence: str) -> list[str]:
    if len(sentence) <= SPAN_CHARS:
        return [sentence]
    pieces, current = [], ""
    for clause in sentence.split(", "):
        if current and len(current) + 2 + len(clause) > SPAN_CHARS:
            pieces.append(current)
            current = clause
        else:
            current = f"{current}, {clause}" if current else clause
    return pieces + [current] if current else pieces


def _day(value: Any) -> str:
    try:
        d = date.fromisoformat(str(value)[:10])
    except ValueError:
        return str(value)[:10]
    return f"{d.day} {d:%b} {d.year}"


def memory_label(m: dict[str, Any]) -> str:
    template = MEMORY_LABELS.get(str(m.get("kind")), "{who}, {day}")
    return template.format(who=m.get("who") or "someone", day=_day(m.get("when")))


def wordless_line(hit: dict[str, Any]) -> str:
    """The one line of a file with no words of its own (a photo): what it is, the words of its name,
    when it was made ('image "dog in a bow tie", modified 2026-03-21'). A line of the name's words
    is one the chooser can read as answering "photo of the dog in the tie"; "image, modified ..."
    alone it takes for no answer. Camera names ("IMG_2034") give no words."""
    stem = str(hit.get("name") or "").rsplit(".", 1)[0]
    words = " ".join(w for w in re.split(r"[\W_]+", stem) if w.isalpha() and not (w.isupper() and len(w) <= 4))
    kind, made = str(hit.get("kind") or "file"), str(hit.get("mtime") or "")[:10]
    return f'{kind} "{words}", modified {made}' if words else f"{kind}, modified {made}"


def item_spans(channels: SideChannels) -> list[Span]:
    """Every span of every item found, in channel order (files, notes, events, memory), items in
    the order the tools ranked them."""
    spans: list[Span] = []
    item = 0
    for hit in channels.files:
        item += 1
        name, device = str(hit.get("name") or ""), hit.get("device")
        attachment = {k: hit.get(k) for k in ("device", "path", "name")}
        text = unwrap(str(hit.get("excerpt") or "").replace(PASSAGE_SEPARATOR, "\n"))
        lines = spans_of(text) or [wordless_line(hit)]
        spans += [Span(s, "files", name, f"{name} on {device}", device, item, attachment, injection.is_planted(text))
                  for s in lines]
    for note in channels.notes:
        item += 1
        title, body = str(note.get("title") or ""), str(note.get("body") or "")
        spans += [Span(s, "notebook", title, title, item=item, untrusted=injection.is_planted(body))
                  for s in spans_of(body)]
    for event in channels.events:
        item += 1
        line = event_text(event)
        kept = injection.without_planted(line)
        if re.search(r"\w\w", kept):
            spans.append(Span(kept, "calendar", str(event.get("title") or ""), "Calendar", item=item,
                              untrusted=kept != line, day=str(event.get("start") or "")[:10]))
    for entry in channels.memory:
        item += 1
        who, label, text = str(entry.get("who") or ""), memory_label(entry), str(entry.get("text") or "")
        spans += [Span(s, "memory", who, label, item=item, untrusted=injection.is_planted(text),
                       day=str(entry.get("when") or "")[:10]) for s in spans_of(text, True)]
    return spans


def candidates(channels: SideChannels, question: str, crafted: Sequence[str] = (),
               first_stores: Sequence[str] = (), limit: int = CANDIDATES, related: str = "",
               days: Sequence[tuple[date, date]] = (), person: str = "", pronoun: str = "",
               beyond_days: Sequence[str] = ()) -> list[Span]:
    """The spans most about the question, best first (see the module docstring).

    A term counts fully in the span or in where it comes from (a note titled "Ravi Dutta" is
    about Ravi), CONTEXT_WEIGHT elsewhere in the same entry (a receipt's total is about its
    shop), rarer terms weigh more, words for a kind of value SOFT_WEIGHT, and the model's own
    search words CRAFTED_WEIGHT, and the words of the question's other parts (`related`)
    RELATED_WEIGHT, and words said only in an aside after the clause that asks ASIDE_WEIGHT
    (unless they name where a line comes from); a line already about the question that holds the
    kind of value it asks for (VALUE_WORDS: a date for "when", an amount for "how much"; for
    "where", "who" or "called", a name the question did not say: naming_lines) gains KIND_WEIGHT.
    Candidates
    are taken greedily: once a chosen span holds a term, that term counts COVERED for the next,
    so a two-part question's second part gets its spans too. Ties keep the plan's stores first
    (`first_stores`), then the tools' order. `person`: whom the question's pronoun means, kept to
    as a person it names is (only lines of entries that mention them); `pronoun`: whom it means when
    the part may be answered by an entry that does not name them ("her invoice" names her firm):
    only another person's page that does not mention them is left out ("... and the restaurant
    from her birthday" is not the neighbour's "Dislikes loud restaurants"). An entry of the `days`
    the question names ranks first; when it names something beyond them (`beyond_days`, its words),
    only an entry that holds one of those words does ("what I took home in May, it's on the
    payslip" is no journal line of May's)."""
    spans = item_spans(channels)
    texts = [f"{s.label} {s.text}" for s in spans]  # what each span is matched against
    # "what did tom say about the book": the saying is what is asked for, not a word it holds
    # ("who texted me" has no other word: the day it names ranks)
    plan = query_plan(question)
    said_asked = bool(SAID.search(question))
    asked = spelled([t for t in plan if not (said_asked and SAYING.fullmatch(t.word))] or plan, texts)
    # "mum" is also her name: "Message from Imani Northcott" is from mum (people_asked)
    people = people_asked(channels, asked)
    asked = with_names(asked, people)
    asked_words = {t.word for t in asked}
    others = spelled([t for t in query_plan(related) if t.word not in asked_words], texts) if related else []
    other_words = {t.word for t in others}
    # Whom a pronoun here points at: the other part's words that name an entry's subject (a note's
    # person, a message's sender, "(plumber)").
    subjects = " ".join(s.label for s in spans if s.store in TITLED) if PRONOUN.search(question) else ""
    referent = set(text_matches([t for t in others if not t.soft], subjects)) if subjects else set()
    # The model's search words add what the asker did not say; a word the asker said in another
    # form ("ideas" for "idea") is the asker's, or a line of the other part would count as this one's.
    said = {tuple(stems(t.word)) for t in asked + others}
    terms = _unique(asked + others + [t for q in crafted for t in query_plan(q)
                                      if t.word not in asked_words | other_words and tuple(stems(t.word)) not in said])
    literal = literal_terms(terms)  # the word itself, no synonyms
    if not spans or not terms:
        return []
    own = [set(text_matches(terms, text)) for text in texts]
    direct = [set(text_matches(literal, text)) for text in texts]
    context: dict[int, set[str]] = {}
    for s, found in zip(spans, own):
        context.setdefault(s.item, set()).update(found)
    direct_df = Counter(t for found in direct for t in found)  # a term's rarity is its own word's, not its synonyms'
    df = Counter({t: direct_df[t] or n for t, n in Counter(t for found in own for t in found).items()})
    # Words said only after the clause that asks count less, unless they name where to look: "i keep
    # getting it wrong" is an aside, "according to the shared notes" names the file.
    asking, trailing = aside(question)
    aside_words = asked_words - {t.word for t in query_plan(asking)} - referent if trailing else set()
    aside_words -= {w for label in {s.label for s in spans}
                    for w in text_matches([t for t in asked if t.word in aside_words], label)}
    source = {t.word: ASIDE_WEIGHT if t.word in aside_words else 1.0 if t.word in asked_words | referent
              else RELATED_WEIGHT if t.word in other_words else CRAFTED_WEIGHT for t in terms}
    weight = {t.word: math.log(1 + len(spans) / df[t.word]) * source[t.word] * (SOFT_WEIGHT if t.soft else 1.0)
              for t in terms if df[t.word]}
    cover = dict.fromkeys(weight, 1.0)
    shapes = [VALUE_SHAPES[k] for k in value_kinds(question)]
    kind_bonus = KIND_WEIGHT * max(weight.values(), default=0.0)
    day_bonus = DAY_WEIGHT * max(weight.values(), default=1.0)  # "who texted me yesterday" has no other word
    valued = [any(p.search(s.text) for p in shapes) for s in spans]
    # an entry written on a day the question names ("what did enzo text me last week") says what was said then
    beyond = set(beyond_days)
    on_day = [bool(s.day) and any(first.isoformat() <= s.day <= last.isoformat() for first, last in days)
              and (not beyond or bool(own[i] & beyond)) for i, s in enumerate(spans)]
    naming = asks_a_name(question)
    if naming:  # the kind a naming question asks for is a name
        valued = naming_lines(spans, question)
    named = [t for t in literal if not t.soft]  # a word for a kind of value names no thing: "Pasted email"
    # A line of a note or message named for the question counts its title again when it says what
    # is asked: the value (the electrician's "Phone +44 ..." is about the electrician); for a name, a
    # name and a word of the question in the line itself ("... is Ana's dentist, at Holly Dentistry");
    # a word of it when no kind is asked. "Birthday 22 July" and "Lives at 4 Mill Lane" on Tomasz's
    # page are no more about where his birthday dinner was than their own words say.
    def says(i: int) -> bool:
        worded = bool(text_matches(terms, spans[i].text))
        return valued[i] and worded if naming else valued[i] or (not shapes and worded)

    about = [set(text_matches(named, s.label)) if s.store in TITLED and says(i) else set()
             for i, s in enumerate(spans)]

    def score(i: int) -> float:
        if own[i] and own[i] <= other_words and not own[i] <= referent:  # the other parts' words: their line
            # (a line holding only whom this part's pronoun means, "Tove Dahl (friend): Lives at ...", is this one's)
            return 0.0
        near = context[spans[i].item] - own[i]
        base = (sum(weight[t] * cover[t] * (1.0 if t in direct[i] else SYNONYM_WEIGHT) for t in own[i])
                + ABOUT_WEIGHT * sum(weight[t] * cover[t] for t in about[i])
                + CONTEXT_WEIGHT * sum(weight[t] * cover[t] for t in near))
        return base + (kind_bonus if base > 0 and valued[i] else 0.0) + (day_bonus if on_day[i] else 0.0)

    first = {store: n for n, store in enumerate(first_stores)}
    order = {i: (first.get(s.store, len(first)), i) for i, s in enumerate(spans)}
    left = set(range(len(spans)))
    kind = asked_kind(question)
    if kind is not None:  # only a line holding the value asked for can answer
        left = {i for i in left if HOLDS[kind].search(spans[i].text)}
    which = " ".join(ASKED_WHICH.findall(question))  # "which friend took my drill" asks who, of anyone
    asked_people = [g for g in people if g[0].word not in aside_words and not text_matches(g[:1], which)]
    if person:  # whom the question's pronoun means ("... and what did she say"), as if named
        asked_people.append(name_terms(person))
    for group in asked_people:
        # a person (or pet) the question names: only lines of entries that mention them (by the word
        # asked or their name) can be about them; "mum's address" is not the bill's supply address,
        # and "whats lenas husband called" is no other husband's page
        entries = {s.item for s, text in zip(spans, texts) if text_matches(group, text)}
        left = {i for i in left if spans[i].item in entries}
    if pronoun:
        meant = name_terms(pronoun)
        pages = person_pages(channels)
        theirs = {s.item for s, text in zip(spans, texts) if text_matches(meant, text)}
        left = {i for i in left if spans[i].item in theirs or not (spans[i].store == "notebook" and spans[i].title in pages)}
    if not asked_people and asks_own(question):
        # "what's my mobile", "my own email for the form": the asker's, not a line of someone else's page
        pages = person_pages(channels)
        left = {i for i in left if not (spans[i].store == "notebook" and spans[i].title in pages)}
    # a code the question names ("H14 on the display") is answered by the lines that give it
    codes = [re.compile(rf"\b{re.escape(c)}\b", re.IGNORECASE)
             for c in ASKED_CODE.findall(question) if not NOT_A_CODE.fullmatch(c)]
    gives_code = [any(c.search(s.text) for c in codes) for s in spans]
    out: list[Span] = []
    per_item: Counter = Counter()
    def rank(i: int) -> tuple:
        s = score(i)
        return -(gives_code[i] and s > 0), -s, order[i]
    while left and len(out) < limit:
        best = min(left, key=rank)
        if score(best) <= 0:
            break
        left.discard(best)
        if per_item[spans[best].item] >= PER_ITEM:
            continue
        per_item[spans[best].item] += 1
        out.append(spans[best])
        for t in own[best]:
            cover[t] *= COVERED
    return out


ASKED_WHICH = re.compile(r"\b(?:which|what)\s+([a-z]+)", re.IGNORECASE)
"""The word a "which ..." question asks one of ("which friend"): it names no one known, so it does
not limit the lines to the entries of the people it fits (the drill was lent to a brother)."""
ASKED_CODE = re.compile(r"\b(?=[a-z-]*\d)(?=[\d-]*[a-z])[a-z\d][a-z\d-]{2,}\b", re.IGNORECASE)
"""A code a question names: letters and digits in one word ("H14", "e-12", "BA123")."""
NOT_A_CODE = re.compile(r"\d+(?:st|nd|rd|th|am|pm|s|k|kg|km|mm|cm|ml|mb|gb|p)", re.IGNORECASE)
"""Letters after a number that make it an ordinal, a time or a quantity ("24th", "5pm", "20kg"), no code."""


FIRST_PERSON = re.compile(r"\b(?:my|me|mine|i|myself)\b", re.IGNORECASE)
"""Words by which the asker speaks of themself."""


def asks_own(question: str) -> bool:
    """Whether a question part asks for the asker's own contact detail: it speaks of the asker, asks
    for a phone, an email or a postal address and no person's name ("what's my mobile", "need my own
    email for a form"; not "who fixed my boiler, his number"). Who the people it names are is the
    ranker's (people_asked): with none named, another person's page is not the asker's."""
    asking = aside(question)[0]
    return (bool(FIRST_PERSON.search(asking)) and not asks_a_name(question)
            and (asked_kind(question) in ("phone", "email") or "postal" in value_kinds(question)))


def person_pages(channels: SideChannels) -> set[str]:
    """The titles of the notebook's pages about a person ("Kiri Tembo (plumber)")."""
    return {str(n.get("title") or "") for n in channels.notes if n.get("kind") == "person"}


def people_asked(channels: SideChannels, asked: Sequence[QueryTerm]) -> list[list[QueryTerm]]:
    """For each word of the question that names a person of the notebook's person pages, by their
    name ("haruto") or what they are to the asker ("mum" of "Imani Northcott (mum)", "friend" of
    "(best friend)"; not "best"), that word and the words of the person's name: a line about them
    holds one of them."""
    people = []  # (name, the last word of what they are)
    for n in channels.notes:  # a person's page, or a pet's: "Pancake (dog)"
        if n.get("kind") == "person" or re.search(r"\([^()]+\)\s*$", str(n.get("title") or "")):
            title = str(n.get("title") or "")
            what = " ".join(re.findall(r"\(([^()]*)\)", title)).split()
            people.append((re.sub(r"\(.*?\)", " ", title), what[-1] if what else ""))
    out = []
    for term in asked:
        if term.soft:
            continue
        named = [name for name, what in people if text_matches([term], name) or what and text_matches([term], what)]
        if named:
            words = {w for name in named for w in content_words(name)}
            out.append([term, *(QueryTerm(w, (w,), False) for w in sorted(words))])
    return out


def page_name(title: str) -> str:
    """A page's name without what it is: "Kiri Tembo (plumber)" -> "Kiri Tembo"."""
    return re.sub(r"\s*\(.*?\)", "", title).strip()


POSSESSED = re.compile(r"(?=\b(\w+)['’]s\s+(\w+))")
"""Someone's relation: "Ana's brother" is Ana's, not the asker's brother (a stopword's "'s" is "is")."""


def person_named(channels: SideChannels, text: str) -> str:
    """The one person (or pet) of the notebook's pages that `text` names (people_asked), as their
    page names them, not by a relation of someone else's ("Ana's brother" names Ana); '' when it
    names none or several: whom "he" in another part means."""
    possessed = {m.group(2).lower() for m in POSSESSED.finditer(text) if m.group(1).lower() not in STOPWORDS}
    groups = [g for g in people_asked(channels, query_plan(text)) if g[0].word not in possessed]
    words = {frozenset(t.word for t in g[1:]) for g in groups}
    if len(words) != 1:
        return ""
    (name,) = words
    titles = [page_name(str(n.get("title") or "")) for n in channels.notes]
    return next((t for t in titles if {w.lower() for w in content_words(t)} == set(name)), "")


SAYING = re.compile(r"\b(?:said|says|say|tell|told|tells|text|texted|wrote|write|writes|mention|mentioned|replied|asked)\b",
                    re.IGNORECASE)
"""A line reporting what someone said ("Ana said it was the best deck"); "He recommended X" on
their page is the asker's note about them, not their words."""
SPOKEN = tuple(MEMORY_LABELS[k].split("{")[0] for k in ("message", "call"))
"""How the memory-log entries that are someone's own words are named ("Message from ", "Call with ")."""


def their_words(spans: Sequence[Span], part: str, channels: SideChannels) -> list[Span]:
    """For a part asking what one person of the notebook said ("what did tom say about the book"),
    the lines of their own words about what it asks first (a message or call from them, a line
    saying they said it) and the lines of their page that report no saying left out, when such a
    line is among them: the page describes them; what they said is in their words. The spans
    unchanged otherwise."""
    name = person_named(channels, part) if SAID.search(part) else ""
    if not name:
        return list(spans)
    first = name.split()[0].lower()
    # what it is about: the part's words but the person and the saying ("tom", "say")
    topic = [t for t in query_plan(part) if not t.soft and not SAYING.fullmatch(t.word) and not text_matches([t], name)]
    own = [s for s in spans if (s.store == "memory" and s.label.startswith(SPOKEN) and s.title.lower() == name.lower()
                                or SAYING.search(s.text) and text_matches([QueryTerm(first, (first,), False)], s.text))
           and (not topic or text_matches(topic, s.text))]
    if not own:
        return list(spans)
    rest = [s for s in spans if s not in own
            and not (s.store == "notebook" and page_name(s.title) == name and not SAYING.search(s.text))]
    return own + rest


def name_terms(name: str) -> list[QueryTerm]:
    """The words of a name as terms matched by themselves (no synonyms): "Tove Dahl" -> tove, dahl."""
    return [QueryTerm(w, (w,), False) for w in content_words(name)]


def with_names(terms: list[QueryTerm], people: list[list[QueryTerm]]) -> list[QueryTerm]:
    """The terms, a word naming a person (people_asked) also matched by their name."""
    names = {g[0].word: [" ".join(t.word for t in g[1:])] for g in people}
    return [QueryTerm(t.word, (*t.phrases, *names.get(t.word, ())), t.soft) for t in terms]


def spelled(terms: list[QueryTerm], texts: Sequence[str]) -> list[QueryTerm]:
    """Each one-word term that none of the spans' `texts` holds, read as their word one edit away
    when there is one (store/spelling.py: "dentst" is the "dentist" of the dentist's page)."""
    if not terms or not texts:
        return terms
    held = set(text_matches(terms, "\n".join(texts)))
    missing = [t for t in terms if " " not in t.word and t.word not in held]
    if not missing:
        return terms
    known = spelling.vocabulary(texts)
    fixes = {t.word: spelling.corrected(t.word, known) for t in missing}
    return [QueryTerm(t.word, (fixes[t.word], *t.phrases), t.soft) if fixes.get(t.word) else t for t in terms]


SPARE_TIME = re.compile(r"\b(?:(?:free|spare|some|any|enough|no|much)\s+time"
                        r"|(?:plan|plann|manag|organi[sz]|spend)(?:e|es|ing)?\s+(?:my|your|our)\s+time"
                        r"|time\s+(?:off|to|for)\b(?!\s+(?:the|my|your|our|his|her|their)\b))\b", re.IGNORECASE)
""""time" naming a stretch of one's own time, not asking for a clock time: "trying to plan my time,
what have i booked", "will i have time to relax in 3 days", "booking time off" ("what time", "the
time of the dentist", "time for the dentist" and "what was my time in the 10K" still ask one)."""


def value_kinds(question: str) -> list[str]:
    """The kinds of value a question part asks for (VALUE_WORDS), none when it asks for a place, a
    person or a name (NAMING_WORDS): then its value words name the occasion, not the thing asked.
    The clauses from the one that asks on name them when they name any: in "posting a birthday
    card to my boss, what's the address" the birthday is the occasion and the address is asked;
    in "when am i meeting aarav? he texted me the time" the time is asked too. How long until
    something asks its date: the reply counts the days from it (counted)."""
    if dates.asks_how_long(question):
        return ["date"]
    if asks_a_name(question):
        return []
    emailing = any(w.startswith("email") for w in _plain_words(question))  # "I email X at", "emailnig"

    def kinds(text: str) -> list[str]:
        return list(dict.fromkeys("email" if emailing and VALUE_WORDS[w] == "postal" else VALUE_WORDS[w]
                                  for w in _plain_words(SPARE_TIME.sub(" ", text)) if w in VALUE_WORDS))
    return kinds(asked_from(question)) or kinds(question)


def asks_a_name(question: str) -> bool:
    """Whether a question part asks for a place, a person or a name (NAMING_WORDS)."""
    return bool(NAMING_WORDS.intersection(_plain_words(question)))


def asks_a_place(question: str) -> bool:
    """Whether a question part asks for a place (PLACE_WORDS)."""
    return bool(PLACE_WORDS.intersection(_plain_words(question)))


NUMBER_SHORT = re.compile(r"\b(?:no|num|nr)\b\.?(?=\s*(?:[?!,;]|$))|#", re.IGNORECASE)
""""number" written short where a clause ends: "car insurance policy no?", "ref num", "#"."""


def _plain_words(question: str) -> list[str]:
    """A question's runs of letters, lower case, "no." read "number": the words the kind-of-value
    lists are looked up by."""
    return re.findall(r"[a-z]+", NUMBER_SHORT.sub(" number", question).lower())


def persons_number(question: str) -> bool:
    """Whether the question asks for someone's number (PERSONS_NUMBER): "my number", "the doctor's
    number", never "it's" or "what's number 5" (a stopword before the "'s", store.text.STOPWORDS)."""
    return any(m.group(1) or m.group(2).lower() not in STOPWORDS for m in PERSONS_NUMBER.finditer(question))


def asked_kind(question: str) -> str | None:
    """The one kind of value (ASKED_KINDS) a question part asks for, or None: none named, two
    named ("email and phone"), or a question about what was said. "phone number" and a person's
    number (persons_number) are a phone;
    "email" is an address before "address" or without a determiner just before it."""
    if TOLD.search(question):
        return None
    ws = _plain_words(question)
    kinds = {ASKED_KINDS[w] for i, w in enumerate(ws) if w in ASKED_KINDS and ws[i + 1: i + 2] != ["of"]
             and (ASKED_KINDS[w] != "email" or ws[i + 1: i + 2] == ["address"]
                  or not set(ws[max(0, i - 3): i]) & MESSAGE_DETERMINERS)}
    if kinds == {"phone", "number"} or (kinds == {"number"} and persons_number(question)):
        return "phone"
    return kinds.pop() if len(kinds) == 1 else None


def _unique(terms: list[QueryTerm]) -> list[QueryTerm]:
    seen: set[str] = set()
    return [t for t in terms if not (t.word in seen or seen.add(t.word))]


def _clauses(question: str) -> tuple[list[str], int]:
    """The question's clauses (CLAUSE_SPLIT) and the index of the first that asks (ASKING), or
    their number when none does."""
    clauses = [c for c in CLAUSE_SPLIT.split(question) if c.strip()]
    return clauses, next((i for i, c in enumerate(clauses) if ASKING.search(c)), len(clauses))


def aside(question: str) -> tuple[str, str]:
    """The question up to its first clause that asks, and the clauses after it ("which number
    reaches dad", "i keep getting it wrong"); the whole question and '' when no clause asks."""
    clauses, head = _clauses(question)
    return " ".join(clauses[:head + 1]), " ".join(clauses[head + 1:])


def asked_from(question: str) -> str:
    """The question from its first clause that asks to its end ("what's the address these days",
    after "posting a birthday card to my boss"), or '' when no clause asks."""
    clauses, head = _clauses(question)
    return " ".join(clauses[head:])


def parts(question: str) -> list[str]:
    """The things a question asks, each with words of its own to rank by (PART_SPLIT): "Who's my
    plumber, and can you find his invoice?" is two; a question that splits into fewer than two
    pieces with such words (a word naming a thing, not only a kind of value, or a pronoun) is one:
    "where's that again" asks about what the piece before it said, "- what time" about it too. An
    exclamation that asks nothing ("morning! which plans did i have thursday") is no part."""
    pieces = [p.strip(" ,;?") for p in PART_SPLIT.split(EXCLAIMED.sub("", question))]
    pieces = [p for p in pieces if set(content_words(p)) - SOFT_WORDS or PRONOUN.search(p)]
    return pieces if len(pieces) > 1 else [question]


# -- 2. choice -------------------------------------------------------------------------------------
def choice_schema(n: int) -> type[BaseModel]:
    """{"lines": [numbers]}: up to MAX_PICKS of 0..n (0: none of them)."""
    return create_model("Choice", __config__=ConfigDict(extra="forbid"),
                        lines=(list[conint(ge=0, le=n)], Field(max_length=MAX_PICKS)))  # type: ignore[valid-type]


def numbered(spans: Sequence[Span]) -> str:
    """The candidates as the model reads them: "1. Ravi Dutta (partner): Birthday 3 May."."""
    return "\n".join(f"{i}. {s.label}: {s.text}" for i, s in enumerate(spans, 1))


async def choose(turn: TurnContext, spans: Sequence[Span], question: str | None = None) -> list[Span]:
    """The spans the model picks for `question` (the turn's, or one part of it); none for 0 or
    nothing; on a failed or cut-off choice, the ranker's best one, said in the step log."""
    lines = numbered(spans)
    schema = choice_schema(len(spans))
    t0 = time.perf_counter()
    try:
        value, _, usage = await turn.structured("choose", prompts.choose_messages(lines, question or turn.question),
                                                schema,
                                                max_tokens=worst_case_tokens(schema), bound_tools=[], input=lines,
                                                head=prompts.choose_static())
    except (ModelCallFailed, LimitReached) as err:
        log.warning("request %s: no choice made (%s); the best-ranked line answers", turn.request_id, err)
        return list(spans[:1])
    picks = [n for n in dict.fromkeys(getattr(value, "lines")) if 1 <= n <= len(spans)]
    turn.tracer.log_step(0, "choose", tool=None, result=",".join(map(str, picks)) or "0",
                         ms=(time.perf_counter() - t0) * 1000, tokens_in=usage.prompt_tokens,
                         tokens_out=usage.generated_tokens)
    return [spans[n - 1] for n in picks]


def thing_words(part: str, channels: SideChannels, today: date | None, crafted: Sequence[str] | None,
                every: Sequence[Span]) -> list[QueryTerm]:
    """The words of a part's asking clause that name the thing it asks about and that the model's
    own searches named too (`crafted`; None: every such word): not its dates, not a word for a kind
    of value or for the calendar, spelt as the found lines (`every`) spell them, a person's
    relation word also by their name."""
    asking = aside(part)[0]
    if today is not None:
        asking = by_name.without_dates(asking, today)[0]
    searched = {st for q in crafted for t in query_plan(q) for st in stems(t.word)} if crafted is not None else None
    terms = [t for t in by_name.topic_terms(asking) if not t.soft and t.word not in STOPWORDS
             and t.word not in VALUE_WORDS and t.word not in NAMING_WORDS
             and (searched is None or set(stems(t.word)) & searched)]
    terms = spelled(terms, [f"{s.label} {s.text}" for s in every])
    return with_names(terms, people_asked(channels, terms))


def asked_about(part: str, channels: SideChannels, today: date | None, crafted: Sequence[str],
                every: Sequence[Span]) -> list[QueryTerm]:
    """The words naming what a part asks about (thing_words, the model's searches naming them too),
    from its asking clause, or its first clause when none asks ("remind me of my mobile, the form
    wants it"); "also", "plus" are no thing. A line that names none of them, with where it comes
    from, does not answer the part: "the electricity bill last month" is not the lease's rent."""
    clauses, head = _clauses(part)
    asking = clauses[head] if head < len(clauses) else clauses[0] if clauses else part
    terms = [t for t in thing_words(asking, channels, today, crafted, every) if t.word not in JOINING_WORDS]
    # a phrase a term counts as is met by any one of its words: a person asked about by relation
    # by either name alone ("Birthday dinner for Deepika")
    return [QueryTerm(t.word, tuple(dict.fromkeys((*t.phrases, *(w for p in t.phrases[1:] for w in p.split())))),
                      t.soft) for t in terms]


def about(text: str, terms: Sequence[QueryTerm]) -> bool:
    """Whether `text` (a line with where it comes from, a file's name) names any of `terms` (asked_about)."""
    return bool(by_name.mentioned(re.sub(r"[-_.]", " ", text), list(terms)))


def adds_nothing(span: Span) -> bool:
    """Whether a line says no more than where it comes from but a name or a month: "Santiago Yilmaz
    is Oisin's friend" on "Santiago Yilmaz (friend)", "July 2026" on "broadband-bill-2026-07.md",
    "ALDER ELECTRICALS" on "receipt-alder-electricals.txt". It tells who or what that is, nothing else."""
    return not set(content_words(span.text)) - set(content_words(span.label)) - names_in(span.text) - CALENDAR_NAMES


def names_every(span: Span, terms: Sequence[QueryTerm]) -> bool:
    """Whether a line, with where it comes from, names every one of `terms`."""
    return not {t.word for t in terms} - by_name.mentioned(f"{span.label}: {span.text}", list(terms))


def says_all(span: Span, terms: Sequence[QueryTerm], part: str) -> bool:
    """Whether a line (with where it comes from) names every thing word (thing_words; there must be
    one) and holds the kind of value the part asks for, if any: the model's "none" is then no
    answer ("wifi pasword" with "wifi password Palmerston-4658-kite" first)."""
    kinds = value_kinds(part)
    return bool(terms) and names_every(span, terms) and (
        not kinds or any(VALUE_SHAPES[k].search(span.text) for k in kinds))


def holds_a_value(text: str) -> bool:
    """Whether a line gives any value at all: a digit, or a value of some kind ("two months")."""
    return bool(re.search(r"\d", text)) or any(shape.search(text) for shape in VALUE_SHAPES.values())


def sum_of(text: str) -> float:
    """The largest sum a line gives (WHOLE_AMOUNT), 0 for none."""
    return max((float(re.sub(r"[^\d.]", "", m.group(0)) or 0) for m in WHOLE_AMOUNT.finditer(text)), default=0.0)


def with_the_value(picked: Sequence[Span], spans: Sequence[Span], part: str) -> list[Span]:
    """The chosen lines, and when the part asks for a kind of value (value_kinds) and no chosen line
    gives any value, the line of a chosen entry that gives one of that kind, after it: the entry's
    first, or for a sum its largest. "what did the sink repair cost" chooses the invoice's
    "Plumber's work: repair of a blocked sink"; its total answers, and where it comes from is named."""
    kinds = [k for k in value_kinds(part) if k in VALUE_SHAPES]
    if not kinds or any(holds_a_value(s.text) for s in picked):
        return list(picked)
    for i, chosen in enumerate(picked):
        giving = [s for s in spans if s.item == chosen.item and any(VALUE_SHAPES[k].search(s.text) for k in kinds)]
        if giving:
            best = max(giving, key=lambda s: sum_of(s.text)) if kinds[0] == "amount" else giving[0]
            return [*picked[:i + 1], best, *picked[i + 1:]]
    return list(picked)


def with_the_list(picked: Sequence[Span], spans: Sequence[Span], part: str) -> list[Span]:
    """The chosen lines, and for a part asking for a list, the other items of a chosen item's list
    (the same entry's list lines, in their order, LIST_ITEMS at most): "what's on the packing list"
    is the list, not its first item."""
    if not LIST_ASKED.search(part):
        return list(picked)
    out = list(picked)
    for item in dict.fromkeys(s.item for s in picked if LIST_ITEM.match(s.text)):
        out += [s for s in spans if s.item == item and LIST_ITEM.match(s.text) and s not in out][:LIST_ITEMS - 1]
    return out


# -- 3. composition --------------------------------------------------------------------------------
def named_by_answer(picked: Sequence[Span], question: str) -> str:
    """The names the lines chosen for a "who ..." part give that the question did not say, as
    written ("Lent Tove Dahl my sewing machine" -> "Tove Dahl"): whom a later part's "her" means."""
    said = set(stems(question))
    written = [re.sub(r"['’]s$", "", m.group(0)) for s in picked for m in CAPITALISED.finditer(s.text)]
    named = {w for s in picked for w in names_in(s.text)}
    return " ".join(dict.fromkeys(w for w in written if w.lower() in named and not set(stems(w)) & said))


def page_person(picked: Sequence[Span], channels: SideChannels) -> str:
    """The one person whose notebook page every line chosen from pages comes from, by the page's
    name ("Kiri Tembo (plumber)" -> "Kiri Tembo"); '' when they come from no person's page or from
    several. Whom a later part's "her" means: the person the answer is about, not every name its
    line writes ("Kiri Tembo is Quinn's plumber, at Windsor Plumbing")."""
    pages = person_pages(channels)
    names = {page_name(s.title) for s in picked if s.store == "notebook" and s.title in pages}
    return names.pop() if len(names) == 1 else ""


def named_days_of(part: str, today: date | None) -> list[dates.Resolution]:
    """Every date phrase of a part that names days ("monday": the coming one; "last week")."""
    return [r for r in dates.resolve_all(part, today) if r.span is not None] if today is not None else []


def with_days(part: str, named: Sequence[dates.Resolution]) -> str:
    """A part with the days each date phrase means after it, as the lines name days, for the model
    choosing its lines: "what did enzo text me last week (12 Jul to 18 Jul)"."""
    for r in named:
        assert r.span is not None
        days = day_label(r.span.first, False) if r.span.first == r.span.last else \
            f"{day_label(r.span.first, False)} to {day_label(r.span.last, False)}"
        part = part.replace(r.phrase, f"{r.phrase} ({days})", 1)
    return part


def pronoun_named(part: str, name: str) -> str:
    """A part with its pronouns replaced by whom they mean, for the model choosing its lines: "whats
    her address" -> "whats Tove Dahl's address"; "what he's bringing" -> "what Tove Dahl is bringing"."""
    part = re.sub(r"\b(?:he|she)['’]s\b", f"{name} is", part, flags=re.IGNORECASE)
    part = re.sub(r"\b(?:his|her|their)\b(?=\s+\w)", f"{name}'s", part, flags=re.IGNORECASE)
    return PRONOUN.sub(name, part)


def is_structured(text: str) -> bool:
    """Whether the model's own words are empty or a JSON object or list (a tool call it wrote,
    '{"query": "audiology appointment"}') rather than something to say to a person."""
    text = text.strip()
    if not text or text.startswith(('{"', '["', "[{")):  # a cut-off call too
        return True
    try:
        return isinstance(json.loads(text), (dict, list))
    except ValueError:
        return False


def composed(chosen: Sequence[Span]) -> Reply:
    """The chosen spans after where each comes from, one line an entry, in the order chosen."""
    groups: dict[tuple, list[Span]] = {}
    for s in chosen:
        groups.setdefault((s.store, s.label, s.device), []).append(s)
    lines = [f"{g[0].label}{injection.UNTRUSTED if any(s.untrusted for s in g) else ''}: "
             f"{' '.join(s.text for s in g)}" for g in groups.values()]
    sources = [{"store": g[0].store, "title": g[0].title, "device": g[0].device, "text": [s.text for s in g]}
               for g in groups.values()]
    attachment = next((s.attachment for s in chosen if s.attachment), None)
    return Reply("\n".join(lines), sources, attachment)


def source_lines(sources: Sequence[Any]) -> list[str]:
    """The sources as a terminal prints them under an answer: where each comes from, one a line
    ("  - notebook: Leo Marsh (brother)"). Takes the dicts of `Reply.sources` or their models."""
    def get(s: Any, key: str) -> Any:
        return s.get(key) if isinstance(s, dict) else getattr(s, key, None)
    return [f"  - {get(s, 'store')}: {get(s, 'title')}" + (f" on {get(s, 'device')}" if get(s, 'device') else "")
            for s in sources if get(s, "title")]


WHOLE_AMOUNT = re.compile(r"[£$€]\s?\d[\d,]*(?:\.\d\d)?")
"""A sum with all its digits (VALUE_SHAPES' amount only spots that a line has one)."""
CODE = re.compile(r"\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{4,}\b")
"""A reference in capitals and digits ("GS0BW5", "JZY-3549-8145"): one booking, policy or parcel."""
TIE_SHAPES = (*(VALUE_SHAPES[k] for k in IDENTIFYING_KINDS), WHOLE_AMOUNT, CODE)
"""The shapes values_in reads, built once: it runs over every line a turn found."""


def values_in(text: str) -> set[str]:
    """The dates, times, sums, emails, numbers and references a line gives (IDENTIFYING_KINDS,
    CODE), as written; a bare year or a number under four digits is too common to tie two lines
    together."""
    found = {m.group(0).strip().lower() for p in TIE_SHAPES for m in p.finditer(text)}
    return {v for v in found if not re.fullmatch(rf"{_YEAR}|\d{{1,3}}|[£$€]\s?\d", v)}


def file_with_the_value(picked: Sequence[Span], spans: Sequence[Span]) -> dict[str, Any] | None:
    """A file among `spans` (every line the turn found) that holds a value a chosen note, message
    or event line gives: the document the answer is written in ("when is the booster, on the
    vaccination record"; the flight's booking reference, on the booking confirmation), attached
    and named beside the line."""
    values = {v for s in picked if s.attachment is None for v in values_in(s.text)}
    if not values or any(s.attachment for s in picked):
        return None
    return next((s.attachment for s in spans if s.attachment and values & values_in(s.text)), None)


def with_file(reply: Reply, hit: dict[str, Any] | None) -> Reply:
    """The plan's located file attached, and named when no chosen line comes from it."""
    if hit is None or reply.attachment is not None:
        return reply
    attachment = {k: hit.get(k) for k in ("device", "path", "name")}
    found = f"Found {hit.get('name')} on {hit.get('device')}."
    text = found if reply.text == NOT_FOUND else f"{reply.text}\n{found}"
    source = {"store": "files", "title": hit.get("name"), "device": hit.get("device"), "text": []}
    return Reply(text, [*reply.sources, source], attachment)


def calendar_reply(read: CalendarRead, question: str) -> Reply:
    """A calendar question's answer: the events of the range it asked about, the range named;
    of those, the ones the question names when it names some (by_name.most_mentioned)."""
    where = day_label(read.first, False) if read.first == read.last else \
        f"{day_label(read.first, False)} to {day_label(read.last, False)}"
    header = f"{read.phrase[:1].upper()}{read.phrase[1:]}, {where}" if read.phrase else "Calendar"
    asked = question
    for phrase in read.phrase.split(" and "):  # the days asked about are not what is asked for
        asked = re.sub(re.escape(phrase), " ", asked, flags=re.IGNORECASE) if phrase else asked
    events = by_name.most_mentioned(read.events, asked) or read.events
    if not events:
        text = f"{FREE_RANGE} {read.phrase} ({where})." if read.phrase else f"{FREE_RANGE} from {where}."
        return Reply(text, [{"store": "calendar", "title": where, "device": None, "text": []}])
    lines = [injection.without_planted(line) + (injection.UNTRUSTED if injection.is_planted(line) else "")
             for line in event_lines(events)]
    text = f"{header}: {lines[0]}" if len(lines) == 1 else f"{header}:\n" + "\n".join(lines)
    return Reply(text, [{"store": "calendar", "title": where, "device": None, "text": lines}])


def date_reply(payload: dict[str, Any], question: str) -> Reply:
    """Today's date, plus every date phrase the question names, by the one date resolver (a phrase
    it cannot work out is said so, never guessed)."""
    text = f"Today is {payload.get('weekday')}, {payload.get('today')}."
    today = payload_today(payload)
    extra = dates.describe(question, today) if today is not None else ""
    text = f"{text} {extra}" if extra else text
    return Reply(text, [{"store": "date", "title": "today", "device": None, "text": [text]}])


NOT_FOUND_RE = re.compile(
    r"\b(?:could\s*n[o']?t|can\s*n[o']?t|cannot|did\s*n[o']?t|was\s*n[o']?t\s+able\s+to|unable\s+to|"
    r"not\s+able\s+to)\s+(?:find|locate|see)\b"
    r"|\bno\s+(?:record|mention|information|info|entry|entries|event|events|note|notes|file|files|result|results|"
    r"match|matches|details?)\b"
    r"|\bnothing\s+(?:about|on|found|matching|in|was\s+found)\b"
    r"|\bnot\s+(?:found|mentioned|recorded)\b"
    r"|\bdo(?:es)?\s*n[o']?t\s+(?:know|have|say|mention)\b"
    r"|\b(?:is|are)\s*n[o']?t\s+(?:in|mentioned|recorded)\b",
    re.IGNORECASE)
"""An answer that says nothing was found: NOT_FOUND and the phrasings a model's own reply uses."""


def says_not_found(answer: str) -> bool:
    """Whether an answer says nothing was found (the eval's check for an unanswerable question)."""
    return NOT_FOUND_RE.search(answer or "") is not None


# -- the whole answer ------------------------------------------------------------------------------
def dated(turn: TurnContext, first_stores: Sequence[str]) -> bool:
    """Whether the plan read the date alone."""
    return bool(first_stores) and set(first_stores) == {"date"} and bool(turn.channels.date)


def starting_in(events: Sequence[dict[str, Any]], first: date, last: date) -> list[dict[str, Any]]:
    """The events that start on a day from `first` to `last`."""
    return [e for e in events if first.isoformat() <= str(e.get("start", ""))[:10] <= last.isoformat()]


def events_named(turn: TurnContext) -> Reply | None:
    """A date question that names an event ("film club next month, what's the date"): the events
    found by its words (the calendar by name, retrieval.py) in the days it names, as a calendar
    answer; None when no event mentions every word it names beyond its dates."""
    today = payload_today(turn.channels.date)
    if today is None:
        return None
    asked, found = by_name.without_dates(aside(turn.question)[0], today)
    events = turn.channels.events
    if found:
        first, last = min(r.span.first for r in found), max(r.span.last for r in found)
        events = starting_in(events, first, last)
    events = by_name.most_mentioned(events, asked)
    if not events or not by_name.names_all(events, asked):  # "work out next week": no "working party"
        return None
    days = sorted(str(e.get("start", ""))[:10] for e in events)
    first_day, last_day = (first, last) if found else (date.fromisoformat(days[0]), date.fromisoformat(days[-1]))
    phrase = " and ".join(r.phrase for r in found)
    return calendar_reply(CalendarRead(first_day, last_day, phrase, events), asked)


def names_more_than_dates(turn: TurnContext) -> bool:
    """Whether the question's asking clause names something beyond its dates (by_name.beyond_dates):
    "what day of the week is it, holiday brain" names no holiday."""
    today = payload_today(turn.channels.date)
    return today is not None and bool(by_name.beyond_dates(aside(turn.question)[0], today))


def calendar_part(turn: TurnContext, part: str, named: Sequence[dates.Resolution], today: date | None) -> Reply | None:
    """One part of a two-part question that asks about days a calendar read of the plan covered
    ("where am i meeting bartek on friday, also whats his mobile"): those days' events, rendered as a
    calendar question's are (the ones the part names, when it names some). None when it names no
    day, asks what was said, no read covered its days, or no event of those days mentions every
    word it names beyond them: its lines are then ranked and chosen like any part's."""
    if not named or today is None or SAID.search(part):
        return None
    first, last = min(r.span.first for r in named if r.span), max(r.span.last for r in named if r.span)
    read = next((r for r in turn.calendar_reads if r.first <= first and last <= r.last), None)
    if read is None:
        return None
    events = starting_in(read.events, first, last)
    asked = by_name.without_dates(part, today)[0]
    if by_name.beyond_dates(part, today) and not by_name.names_all(events, asked):
        return None  # "meeting bartek on friday": not Friday's "Meeting Santiago"
    return calendar_reply(CalendarRead(first, last, " and ".join(r.phrase for r in named), events), part)


def joined(answers: Sequence[Reply]) -> Reply:
    """The answers to a question's parts as one reply: their lines, sources and first attachment."""
    return Reply("\n".join(a.text for a in answers), [s for a in answers for s in a.sources],
                 next((a.attachment for a in answers if a.attachment), None))


def things_asked_of(part: str, today: date | None) -> list[QueryTerm]:
    """The words (beyond its dates) naming the thing a part asks a value, a place or a name of:
    "yoga" in "yoga on thursday what time"; none for a part asking nothing of a thing ("anything
    fun on friday"). An event that mentions none of them is no answer to it. Only the clause that
    asks counts, its dates cut out ("what plans did i have the day before yesterday? writing up
    expenses" asks no value), and a part with no clause that asks asks a value only by ending on
    its word ("yoga thursday time"; not "any free time in 10 days or is it packed")."""
    if today is None:
        return []
    asking = by_name.without_dates(aside(part)[0], today)[0]
    last_word = set(_plain_words(asking)[-1:])
    if not (value_kinds(asking) or asks_a_name(asking)) or not (
            asked_from(asking) or last_word & (VALUE_WORDS.keys() | NAMING_WORDS)):
        return []
    return by_name.beyond_dates(asking, today)


def elsewhere(read: CalendarRead, things: list[QueryTerm]) -> bool:
    """Whether a question asks something of a thing (things_asked_of) no event of the range read
    mentions ("yoga on thursday what time", Thursday's events: a life drawing class): the range's
    events are no answer; what was found is ranked and chosen from."""
    return bool(things) and not any(by_name.mentions(e, things) for e in read.events)


DATES_ASKED = re.compile(r"\b(?:what|which)\s+(?:date|dates|day|days)\s+(?:is|are|does|do|will|was|were)\b"
                         r"|\bwhen\s+does\b.*\b(?:start|begin|end|finish)"
                         r"|\b(?:start|beginning)\s+(?:and|to)\s+(?:end|finish)\b", re.IGNORECASE)
"""A clause asking which days a date phrase means: "what date is it this Saturday", "which days does
this weekend cover", "when does this month start and finish" ("what days am i free" asks the calendar)."""
RANGE_WORDS = frozenset("start starts begin begins end ends finish finishes cover covers run runs exactly".split())
"""Words a clause asking for a range's dates says about the range, not about a thing in it."""


def asks_dates(question: str, today: date | None) -> bool:
    """Whether the question's asking clause asks for the dates of a date phrase it names and names
    nothing else beyond its dates and RANGE_WORDS: its answer is those dates (date_reply), whatever
    the plan read; "what date is the dentist next week" names the dentist and is searched."""
    clauses, head = _clauses(question)
    asking = clauses[head] if head < len(clauses) else question
    if today is None or not DATES_ASKED.search(asking):
        return False
    if not any(r.span is not None for r in dates.resolve_all(asking, today)):
        return False
    return not {t.word for t in by_name.beyond_dates(asking, today)} - RANGE_WORDS


def rendered(turn: TurnContext, first_stores: Sequence[str] = (), today: date | None = None) -> Reply | None:
    """An answer that needs no choice: today's date for a plan of the date alone when the question
    names nothing beyond dates ("film club next month, what's the date" is searched), the dates a
    question asks which days a phrase means (asks_dates, whatever the plan read), the events of a
    calendar range the plan read (by the day the asker named, unless the question asks what was
    said, or by name when an event mentions every word that could name one); None otherwise:
    everything found is ranked. `today`: the device's day (else the date the plan read)."""
    if dated(turn, first_stores) and not names_more_than_dates(turn):
        return date_reply(turn.channels.date, turn.question)
    day = today or payload_today(turn.channels.date)
    if day is not None and asks_dates(turn.question, day):
        return date_reply(turn.channels.date or {"today": day.isoformat(), "weekday": dates.weekday_name(day)},
                          turn.question)
    if len(parts(turn.question)) > 1:  # each part is answered on its own (calendar_part)
        return None
    asked_of = things_asked_of(turn.question, day)
    named = [r for r in turn.calendar_reads
             if r.phrase and not SAID.search(turn.question) and not elsewhere(r, asked_of)]
    if named:
        return calendar_reply(named[-1], turn.question)
    found_by_name = [r for r in turn.calendar_reads if r.events and by_name.names_all(r.events, turn.question)]
    if found_by_name:
        return calendar_reply(found_by_name[-1], turn.question)
    return None


def counted(answer: Reply, question: str, today: date) -> Reply:
    """For a question asking how long until something ("how long till the dentist"), the first
    date the answer writes after `today`, counted from today, before it ("Sat 5 Dec is in 17
    days."): code counts, from the date of the line chosen. The answer as it is otherwise."""
    if not dates.asks_how_long(question) or says_not_found(answer.text):
        return answer
    day = dates.first_day_after(answer.text, today)
    if day is None:
        return answer
    line = f"{day_label(day, False)} is {dates.days_until(day, today)}."
    today_source = {"store": "date", "title": "today", "device": None, "text": [f"Today is {day_label(today, False)}."]}
    return Reply(f"{line}\n{answer.text}", [*answer.sources, today_source], answer.attachment)


async def reply(turn: TurnContext, *, needs_data: bool = True, first_stores: Sequence[str] = (),
                located: dict[str, Any] | None = None,
                look_up: Callable[[str], Awaitable[Any]] | None = None, today: date | None = None) -> Reply | None:
    """The answer from what the turn found: rendered, or chosen among its spans and composed
    (None: nothing was chosen and the plan said the question needs no data). `first_stores`: the
    stores of the plan's tools; `located`: the file its own find_file located; `look_up(words)`:
    searches the local stores into the turn's side channels (for named_by_answer); `today`: the
    device's day, for the days a part names (a memory entry written then ranks higher)."""
    done = rendered(turn, first_stores, today)
    if done is not None:
        return done
    if dated(turn, first_stores):  # it names more than dates: the events it names, or the dates
        return events_named(turn) or date_reply(turn.channels.date, turn.question)
    chosen: list[Span] = []
    written_in: dict[str, Any] | None = None
    every = item_spans(turn.channels)  # where a chosen value may be written
    asked = parts(turn.question)
    answered_names = ""  # the names a "who ..." part's chosen lines gave
    answered_person = ""  # the one person whose page those lines come from, if so
    on_days: list[Reply] = []  # the parts answered by the calendar of the days they name
    vetoed: list[QueryTerm] = []  # what a one-part question asked about when no chosen line named it
    for part in asked:  # a two-part question: each part ranked and chosen for on its own
        related = " ".join(p for p in asked if p != part)
        meant = ""  # whom the part's pronoun means
        if answered_names and look_up is not None and PRONOUN.search(part):
            await look_up(answered_names)  # "... and what's her address": her page, found by her name
            related, meant = f"{related} {answered_names}", answered_person or answered_names
        elif len(asked) > 1 and PRONOUN.search(part):
            meant = person_named(turn.channels, related)  # "where am i meeting alina. her address too"
        shown = pronoun_named(part, meant) if meant else part
        every_day = named_days_of(part, today)
        part_on_days = calendar_part(turn, part, every_day, today) if len(asked) > 1 else None
        if part_on_days is not None:
            on_days.append(part_on_days)
            continue
        days = [(r.span.first, r.span.last) for r in every_day]
        named_days = [r for r in every_day if today is not None and r.span.first <= today]  # days gone
        said = bool(SAID.search(part))  # it asks what someone said
        # "who texted me yesterday": the day is no word to find; "the electric in june": the bill says June
        ranked_by = by_name.without_dates(part, today)[0] if named_days and said else part
        # what it names beyond the days, unless it asks what was said then ("who texted me yesterday")
        beyond_days = [t.word for t in by_name.beyond_dates(part, today)] if days and today and not said else []
        spans = candidates(turn.channels, ranked_by, turn.queries, first_stores, related=related, days=days,
                           beyond_days=beyond_days,
                           limit=CANDIDATES + PER_ITEM if said else CANDIDATES,  # their_words may leave out a page
                           # what she said is hers or names her; "her invoice" may name only her firm
                           person=meant if said else "", pronoun="" if said else meant)
        spans = their_words(spans, shown, turn.channels)[:CANDIDATES]
        shown = with_days(shown, named_days)
        picked = await choose(turn, spans, shown if len(asked) > 1 or named_days else None) if spans else []
        things = thing_words(part, turn.channels, today, turn.queries, every) if spans else []
        if spans and not picked and says_all(spans[0], things, part):
            # "wifi pasword": "none", with the wifi password line first; the model's own searches
            # named what that line names, so it answers
            log.info("request %s: none chosen; the first line names all the part asks", turn.request_id)
            picked = [spans[0]]
        if any(adds_nothing(s) for s in picked):  # "whats santiagos wifes name": "Santiago Yilmaz is
            named_words = thing_words(part, turn.channels, today, None, every)  # Oisin's friend" names no wife
            picked = [s for s in picked if not adds_nothing(s) or names_every(s, named_words)]
        if (asked_of := things_asked_of(part, today)) and any(s.store == "calendar" for s in picked):
            picked = [s for s in picked if s.store != "calendar" or by_name.mentioned(s.text, asked_of)]
        about_part = asked_about(part, turn.channels, today, turn.queries, every) if picked else []
        kept = [s for s in picked if about(f"{s.label}: {s.text}", about_part)] if about_part else picked
        if picked and not kept:
            # what was chosen names nothing the part asks about: a line naming all it asks answers
            # ("what email my mother uses": her page's email line, not an energy bill's)
            saying = next((s for s in spans if says_all(s, things, part)), None)
            if saying is not None:
                log.info("request %s: the chosen lines name nothing asked; a line naming all of it answers",
                         turn.request_id)
                picked = [saying]
            elif len(asked) == 1:
                vetoed += about_part
                picked = []
        elif len(asked) == 1:
            picked = kept
        if picked and ASKS_WHO.search(part) and not said:
            # "who cuts my hair": a chosen line naming no one ("Appointments on Fridays, every six
            # weeks") gives way to the best-ranked line that names someone the question did not
            naming = [s for s, names in zip(spans, naming_lines(spans, part)) if names]
            if naming and not any(s in naming for s in picked):
                log.info("request %s: the chosen lines name no one; the first line naming someone answers",
                         turn.request_id)
                picked = naming[:1]
        if picked and asks_a_place(part) and not said and all(adds_nothing(s) for s in picked):
            # "dad where": "Enzo Bhatt is Quinn's dad" says who he is, not where; the best-ranked
            # line that names something the question did not ("Lives at ..., Hamburg") answers
            placing = [s for s, names in zip(spans, naming_lines(spans, part)) if names and not adds_nothing(s)]
            if placing:
                log.info("request %s: the chosen lines say only who; the first line naming a place answers",
                         turn.request_id)
                picked = placing[:1]
        picked = with_the_list(with_the_value(picked, every, part), every, part)
        if (len(asked) == 1 and picked and set(value_kinds(part)) & WRITTEN_KINDS
                and not any(holds_a_value(s.text) for s in picked)):
            # "how much was the boiler service": a line giving no value at all, nor its entry, is no answer
            log.info("request %s: the part asks for a value and no chosen line gives one", turn.request_id)
            vetoed += about_part
            picked = []
        chosen += [s for s in picked if s not in chosen]
        written_in = written_in or file_with_the_value(picked, every)
        if WHO.search(part):
            answered_names = named_by_answer(picked, turn.question)
            answered_person = page_person(picked, turn.channels)
    if chosen:  # the file a chosen value is written in, before the plan's best search hit
        return joined([*on_days, with_file(composed(chosen), written_in or located)])
    if on_days:
        return joined(on_days)
    if not needs_data and located is None:
        return None
    if vetoed and located is not None and not about(str(located.get("name") or ""), vetoed):
        located = None  # "the electricity bill last month": not the lease its search found
    return with_file(Reply(NOT_FOUND), located)
