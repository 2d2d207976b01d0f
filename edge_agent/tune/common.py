"""Small helpers shared by the household builders: dates, money, slugs, phone numbers, postcodes."""
from __future__ import annotations

import random
import re
import unicodedata
from datetime import date

from edge_agent.tune.vocab_places import Locale

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
LETTERS = "ABCDEFGHJKLMNPRSTUVWXYZ"  # no I, O or Q: they read as digits


def day_month(d: date, loc: Locale) -> str:
    """"14 March" or "March 14", the way the locale writes a birthday."""
    return f"{MONTHS[d.month - 1]} {d.day}" if loc.american else f"{d.day} {MONTHS[d.month - 1]}"


def long_date(d: date, loc: Locale, weekday: bool = False) -> str:
    """"Tuesday 24 November 2026" or "Tuesday, November 24, 2026"."""
    wd = WEEKDAYS[d.weekday()]
    if loc.american:
        return (f"{wd}, " if weekday else "") + f"{MONTHS[d.month - 1]} {d.day}, {d.year}"
    return (f"{wd} " if weekday else "") + f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def money(amount: float, loc: Locale) -> str:
    """"£1,150.00" (always two decimals, thousands separated)."""
    return f"{loc.currency}{amount:,.2f}"


def whole_money(amount: int, loc: Locale) -> str:
    """"£950" for round amounts."""
    return f"{loc.currency}{amount:,}"


def ascii_fold(text: str) -> str:
    text = text.replace("ß", "ss").replace("ø", "o").replace("ł", "l")
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def slug(text: str) -> str:
    """"Dr. Ana O'Neil & Co" -> "dr-ana-oneil-co"."""
    text = ascii_fold(text).lower().replace("'", "")
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


def code(rng: random.Random, pattern: str) -> str:
    """A reference code from a pattern: A = letter, 9 = digit, N = digit but 0, anything else kept."""
    return "".join(rng.choice(LETTERS) if ch == "A" else str(rng.randrange(10)) if ch == "9"
                   else str(rng.randrange(1, 10)) if ch == "N" else ch for ch in pattern)


class PhoneBook:
    """Hands out distinct phone numbers from fiction ranges: 555-01xx in the US, Ofcom's drama ranges elsewhere.

    Outside the UK the Ofcom numbers are written with +44 (contacts with UK numbers): other regions'
    regulators publish short lists of single numbers (Australia's ACMA: 30 mobiles), not ranges.
    """

    def __init__(self, rng: random.Random, loc: Locale):
        self.rng = rng
        self.loc = loc
        self.used: set[str] = set()

    def _draw(self, make) -> str:
        for _ in range(200):
            number = make()
            if number not in self.used:
                self.used.add(number)
                return number
        raise RuntimeError("phone range exhausted")

    def mobile(self) -> str:
        r = self.rng
        if self.loc.phones == "us555":
            return self._draw(lambda: f"({r.choice(('917', '646', '347', '332'))}) 555-01{r.randrange(100):02d}")
        prefix = "07700 900" if self.loc.country == "uk" else "+44 7700 900"
        return self._draw(lambda: f"{prefix}{r.randrange(1000):03d}")

    def landline(self) -> str:
        r = self.rng
        if self.loc.phones == "us555":
            return self._draw(lambda: f"({r.choice(('212', '718', '312', '617', '415', '215'))}) 555-01{r.randrange(100):02d}")
        if self.loc.country == "uk":
            head = r.choice(("0113 496 0", "0161 496 0", "020 7946 0"))
            return self._draw(lambda: f"{head}{r.randrange(1000):03d}")
        head = r.choice(("+44 113 496 0", "+44 161 496 0", "+44 20 7946 0"))
        return self._draw(lambda: f"{head}{r.randrange(1000):03d}")


def postcode(rng: random.Random, loc: Locale) -> str:
    """An invented postal code in the region's format."""
    r = rng
    style = loc.postcode
    if style == "uk":
        return f"{r.choice(LETTERS)}{r.choice(LETTERS)}{r.randrange(1, 20)} {r.randrange(10)}{r.choice(LETTERS)}{r.choice(LETTERS)}"
    if style == "ie":
        return f"{r.choice('ADFHKNPTVWXY')}{r.randrange(10, 99)} {code(r, 'A9A9')}"
    if style == "us":
        return f"{r.randrange(10000, 99999)}"
    if style in ("au", "nz"):
        return f"{r.randrange(1000, 9999)}"
    if style == "nl":
        return f"{r.randrange(1000, 9999)} {r.choice(LETTERS)}{r.choice(LETTERS)}"
    return f"{r.randrange(10000, 99999)}"  # de, es


def street(rng: random.Random, loc: Locale, stems: tuple[str, ...]) -> str:
    """"23 Linden Grove" or "Lindenstraße 23" or "Calle Linden 23"."""
    stem, number = rng.choice(stems), rng.randrange(2, 120)
    kind = rng.choice(loc.street_types)
    if loc.suffix_street:
        return f"{stem}{kind} {number}"
    if loc.country == "es":
        return f"{kind} {stem} {number}"
    return f"{number} {stem} {kind}"


def pick_unique(rng: random.Random, pool: tuple[str, ...], taken: set[str]) -> str:
    """A word from `pool` not in `taken` (then taken)."""
    choices = [w for w in pool if w not in taken]
    word = rng.choice(choices)
    taken.add(word)
    return word
