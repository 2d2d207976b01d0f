"""Helpers for the tune tests: seeds, running a planned call through the real tools, the eval world's names."""
from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from edge_agent.eval.questions import PlannedCall, Question
from edge_agent.tune.households import Household

QUESTION_SEEDS = range(20)
"""Households whose questions are checked."""
LOADED_SEEDS = (0, 3, 5, 8, 11, 14, 17, 19)
"""Households also loaded into a data dir and asked through the real tools."""
SEPARATION_SEEDS = range(50)
"""Households checked against the evaluation world."""


@dataclass
class Generated:
    """One generated household and its questions."""

    household: Household
    """The household (its folder is household.directory)."""
    questions: list[Question]
    """questions_for(household, 0)."""


@dataclass
class CallResult:
    """What one planned call returned, in the shape the tests check."""

    evidence: str
    """Everything the call put in front of the model or the side channels (text + payload JSON)."""
    strong: bool
    """Found something that is not a weak match."""
    best: dict | None
    """find_file's attached best hit."""
    payload: object = None
    """The tool's exact payload."""


async def run_call(tools, ctx, call: PlannedCall) -> CallResult:
    """Run one planned call through the real tool."""
    result = await tools[call.tool](dict(call.args), ctx)
    payload = json.dumps(result.payload, ensure_ascii=False, default=str) if result.payload is not None else ""
    best = result.payload.get("best") if call.tool == "find_file" and isinstance(result.payload, dict) else None
    if call.tool == "find_file":
        evidence = f"{best.get('name')}\n{best.get('excerpt', '')}" if best else ""
    else:
        evidence = f"{result.text}\n{payload}"
    return CallResult(evidence, result.found and not result.weak, best, result.payload)


GENERIC_WORDS = frozenset("""
Academy Airport Always Analytics Bakery Bonfire Canal Celsius Charity Christmas City Compared Contact Court Croft
Crown Debit Dental Dev Direct Downs Earl Eats Energy English Estate Europe Eye Factory Fahrenheit Games Gas Grew Grey
Ferry Haircut Head Hospital Hosting Inn Insights Insured Lantern Leaving Leisure London Market Mews Mild Motors
Old Opticians Pasted Pharmacy Plays Powers Practice Prefers Quay Rebook Retired Road Rooms Safe Santa Saving Savings Secret
Spokes Square Staff Studio Subject Sun Surgery Temple Terminal The Usually GHz Valley Vision Visiting Wharf Woods
January February March April May June July August September October November December
Monday Tuesday Wednesday Thursday Friday Saturday Sunday Sundays Tuesdays Thursdays
""".split())
"""Capitalised words of the eval world that are ordinary English (London and Europe: the time zone's name)."""
_CAP = re.compile(r"\b[A-ZÀ-Ý][\w'’&-]*")


def _caps(text: str) -> list[str]:
    return [t.split("'")[0].split("’")[0] for t in _CAP.findall(text)]


def world_names(world: Path) -> set[str]:
    """Names of people, pets, places and firms in the eval world.

    Certain names: the user, the [people] of world.toml, the person pages' titles, pets ("<Name> the
    cat"), memory authors. Likely names: other capitalised words of world.toml, notebook titles and
    bodies and calendar titles and locations that the world never writes in lower case. Both less
    GENERIC_WORDS, short words and codes.
    """
    info = tomllib.loads((world / "world.toml").read_text(encoding="utf-8"))
    certain = set(_caps(info["user"]))
    likely: set[str] = set()
    for who, what in info.get("people", {}).items():
        certain.update(_caps(who))
        likely.update(_caps(what))
    for line in (world / "notebook.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            note = json.loads(line)
            if note["kind"] == "person":
                certain.update(_caps(note["title"].split("(")[0]))
            pet = re.match(r"(\w+) the (?:cat|dog|rabbit)\b", note["title"])
            if pet:
                certain.add(pet.group(1))
            likely.update(_caps(note["title"]) + _caps(note["body"]))
    for line in (world / "memory.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            certain.update(w for w in _caps(json.loads(line)["who"]) if w not in ("Unknown",))
    for line in (world / "calendar.ics").read_text(encoding="utf-8").splitlines():
        if line.startswith(("SUMMARY", "LOCATION")):
            likely.update(_caps(line.split(":", 1)[1]))
    text = " ".join(p.read_text(encoding="utf-8", errors="ignore") for p in world.rglob("*")
                    if p.is_file() and p.suffix in (".jsonl", ".ics", ".txt", ".md", ".toml") and p.name != "questions.jsonl")
    text = re.sub(r"\S*(?:@|\.example|\w-\w|_)\S*", " ", text)  # emails, domains, file names, slugs and UIDs
    lower = set(re.findall(r"\b[a-zà-ÿ][\w]*", text))
    likely = {n for n in likely if n.lower() not in lower}
    return {n for n in certain | likely if len(n) >= 3 and not n.isupper() and not any(c.isdigit() for c in n)
            and n not in GENERIC_WORDS}


STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both but by
can could did do does doing down during each few for from further had has have having he her here hers herself him
himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other
our ours ourselves out over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which while who whom why will
with would you your yours yourself yourselves s t don ll re ve d m
""".split())
"""English stop words left out of the word-overlap measure."""


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in words(text) if w not in STOP_WORDS and len(w) > 1)


def ngrams(text: str, n: int = 6) -> frozenset[tuple[str, ...]]:
    w = words(text)
    return frozenset(tuple(w[i:i + n]) for i in range(len(w) - n + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


VALUE_PATTERNS = (
    re.compile(r"\b0\d{3,4} ?\d{3} ?\d{3,4}\b"),  # UK phone numbers (07700 900412, 0117 496 0733)
    re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),  # email addresses
    re.compile(r"[£$€]\s?\d[\d,]*\.(?!00)\d\d\b"),  # sums with pence (see DISTINCT_SUM_DIGITS)
    re.compile(r"\b[A-Z]{2,}[A-Z0-9]*(?:-[A-Z0-9]*\d[A-Z0-9]*)+\b"),  # codes: HLI-7730291, DPS-4471-2209
    re.compile(r"\b[A-Z]{2}\d{2} ?[A-Z]{3}\b"),  # a UK registration plate
)
"""The kinds of value a question asks for, as the eval world writes them."""
DISTINCT_SUM_DIGITS = 5  # a sum is the world's own from this many digits (£206.30); £6.50 is any café's price


def world_values(world: Path) -> set[str]:
    """Phone numbers, email addresses, sums with pence, codes and plates the eval world holds
    (its notebook, memory log, calendar and files' text)."""
    texts = [(world / name).read_text(encoding="utf-8") for name in ("notebook.jsonl", "memory.jsonl", "calendar.ics")]
    texts += [p.read_text(encoding="utf-8", errors="ignore") for p in (world / "files").rglob("*")
              if p.suffix in (".txt", ".md")]
    found = {m.group(0) for text in texts for pattern in VALUE_PATTERNS for m in pattern.finditer(text)}
    return {v for v in found if v[0] not in "£$€" or sum(c.isdigit() for c in v) >= DISTINCT_SUM_DIGITS}
