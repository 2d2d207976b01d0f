"""The cast of a synthetic household: the user, family, friends, colleagues, professionals and pets."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta

from edge_agent.tune import vocab as V
from edge_agent.tune.common import PhoneBook, ascii_fold, code, pick_unique, postcode, slug, street
from edge_agent.tune.model import Person, Pet
from edge_agent.tune.vocab_places import BUSINESS_TYPES, EMPLOYER_TYPES, Locale

PRO_ROLES = ("dentist", "doctor", "plumber", "electrician", "mechanic", "hairdresser")
"""Professionals a household may have (the vet and landlord come with a pet or a tenancy)."""


@dataclass
class Cast:
    """Everyone in the household's life, and the home they share."""

    user: Person
    """The user."""
    people: list[Person]
    """Everyone else, in a stable order."""
    pets: list[Pet]
    """The household's animals."""
    home: str
    """The user's address."""
    town: str
    """The user's town."""
    renting: bool
    """True: there is a landlord and a lease."""
    car: dict[str, str] = field(default_factory=dict)
    """make, colour, reg (empty when there is no car)."""
    used_first: set[str] = field(default_factory=set)
    """First names taken (so an absent person can be picked)."""
    phones: PhoneBook | None = None
    """Hands out more distinct numbers (businesses, booking lines)."""

    def get(self, key: str) -> Person | None:
        return next((p for p in self.people if p.key == key), None)

    def by_role(self, *roles: str) -> list[Person]:
        return [p for p in self.people if p.role in roles or p.key in roles]


def _first(rng: random.Random, gender: str, taken: set[str]) -> str:
    pool = {"f": V.FEMALE_NAMES, "m": V.MALE_NAMES}.get(gender, V.NEUTRAL_NAMES)
    return pick_unique(rng, pool, taken)


def _gender(rng: random.Random) -> str:
    return rng.choices(("f", "m", "x"), (46, 46, 8))[0]


def _email(rng: random.Random, first: str, last: str, domain: str | None = None) -> str:
    f, l = slug(first).replace("-", ""), slug(last).replace("-", "")
    local = rng.choice((f"{f}.{l}", f"{f}{l}", f"{f[0]}{l}", f"{f}.{l}{rng.randrange(10, 99)}", f"{f}_{l}"))
    return f"{local}@{domain or rng.choice(('example.com', 'mail.example', 'post.example', 'inbox.example'))}"


def _birthday(rng: random.Random, today: date, lo: int, hi: int) -> date:
    year = today.year - rng.randint(lo, hi)
    return date(year, rng.randint(1, 12), rng.randint(1, 28))


class CastBuilder:
    """Makes people one at a time, keeping names and numbers distinct."""

    def __init__(self, rng: random.Random, loc: Locale, today: date):
        self.rng, self.loc, self.today = rng, loc, today
        self.phones = PhoneBook(rng, loc)
        self.first_taken: set[str] = set()
        self.last_taken: set[str] = set()
        self.stems_taken: set[str] = set()

    def surname(self) -> str:
        return pick_unique(self.rng, V.SURNAMES, self.last_taken)

    def address(self) -> tuple[str, str]:
        r, loc = self.rng, self.loc
        town = r.choice(loc.towns)
        area = r.choice(loc.areas) if r.random() < 0.4 else ""
        flat = f"Flat {r.randrange(1, 9)}, " if loc.country in ("uk", "ie") and r.random() < 0.35 else ""
        apt = f", Apt {r.randrange(1, 30)}{r.choice('ABCD')}" if loc.american and r.random() < 0.4 else ""
        where = f"{area}, {town}" if area else town
        return f"{flat}{street(r, loc, V.STEMS)}{apt}, {where} {postcode(r, loc)}", town

    def employer(self) -> str:
        return f"{pick_unique(self.rng, V.BRAND_A, self.stems_taken)} {self.rng.choice(EMPLOYER_TYPES)}"

    def person(self, key: str, role: str, *, gender: str | None = None, last: str | None = None,
               age: tuple[int, int] = (22, 60), refs: list[str] | None = None, query_word: str | None = None,
               title: str = "", mobile: bool = True) -> Person:
        r = self.rng
        gender = gender or _gender(r)
        first = _first(r, gender, self.first_taken)
        last = last or self.surname()
        self.last_taken.add(last)
        p = Person(key=key, first=first, last=last, gender=gender, role=role, title=title)
        p.refs = refs if refs is not None else [first]
        p.query_word = query_word or first
        p.phone = self.phones.mobile() if mobile else self.phones.landline()
        p.email = _email(r, first, last)
        p.address, p.town = self.address()
        p.birthday = _birthday(r, self.today, *age)
        p.job = r.choice(V.JOBS)
        p.employer = self.employer()
        p.likes = r.sample(V.LIKES, 2)
        p.dislikes = r.sample(V.DISLIKES, 1)
        if r.random() < 0.3:
            p.extra["allergy"] = r.choice(V.ALLERGIES)
        return p

    def pro(self, role: str, town: str) -> Person:
        """A professional with a practice or firm, a work landline and a business address."""
        r = self.rng
        titled = role in ("dentist", "doctor", "vet")
        word = {"doctor": "GP"}.get(role, role)
        p = self.person(role, role, age=(30, 64), refs=[f"my {word}", f"the {word}"], query_word=role,
                        title="Dr." if titled else "", mobile=not titled)
        business = f"{pick_unique(r, V.STEMS, self.stems_taken)} {r.choice(BUSINESS_TYPES[role])}"
        p.employer = business
        p.job = {"doctor": "GP"}.get(role, role)
        p.address = f"{street(r, self.loc, V.STEMS)}, {town} {postcode(r, self.loc)}"
        p.town = town
        p.email = f"{r.choice(('hello', 'bookings', 'reception', 'info', ascii_fold(p.first).lower()))}@{slug(business)}.example"
        if not titled and r.random() < 0.5:
            p.extra["office"] = self.phones.landline()
        return p


def make_cast(rng: random.Random, loc: Locale, today: date) -> Cast:
    """The user and everyone else, in an order that is the same for the same random state."""
    b = CastBuilder(rng, loc, today)
    r = rng
    user = b.person("user", "", age=(24, 66), refs=["me"], query_word="")
    home, town = b.address()
    user.address, user.town = home, town
    people: list[Person] = []
    if r.random() < 0.8:
        g = r.choice(("f", "m", "x"))
        role = r.choice({"f": ("partner", "wife", "girlfriend"), "m": ("partner", "husband", "boyfriend")}
                        .get(g, ("partner",)))
        last = user.last if role in ("wife", "husband") and r.random() < 0.5 else None
        partner = b.person("partner", role, gender=g, last=last, age=(24, 66),
                           refs=[f"my {role}", "the other half"] if role != "partner" else ["my partner"],
                           query_word=role)
        partner.address, partner.town = home, town
        people.append(partner)
    mum = b.person("mum", loc.mum, gender="f", last=user.last if r.random() < 0.7 else None, age=(52, 88),
                   refs=[f"my {loc.mum}", loc.mum, "my mother"], query_word=loc.mum)
    mum.job = r.choice(("retired " + r.choice(V.JOBS), mum.job))
    people.append(mum)
    if r.random() < 0.7:
        dad = b.person("dad", "dad", gender="m", last=user.last, age=(54, 90), refs=["my dad", "dad", "my father"],
                       query_word="dad")
        if r.random() < 0.5:
            dad.address, dad.town = mum.address, mum.town
        people.append(dad)
    for i in range(r.choice((1, 1, 2))):
        g = r.choice(("f", "m"))
        role = "sister" if g == "f" else "brother"
        people.append(b.person(f"sibling{i + 1}", role, gender=g, last=user.last if r.random() < 0.6 else None,
                               age=(18, 62)))
    for i in range(r.choice((2, 3))):
        role = "best friend" if i == 0 and r.random() < 0.5 else "friend"
        people.append(b.person(f"friend{i + 1}", role))
    people.append(b.person("manager", "manager", refs=["my manager", "my boss"], query_word="manager"))
    people[-1].employer = user.employer
    people.append(b.person("colleague", "colleague"))
    people[-1].employer = user.employer
    if r.random() < 0.5:
        people.append(b.person("neighbour", "neighbor" if loc.american else "neighbour"))
        people[-1].address = f"{r.randrange(1, 90)} on the same street"
        people[-1].town = town
    renting = r.random() < 0.6
    if renting:
        g = r.choice(("f", "m"))
        role = "landlady" if g == "f" and not loc.american and r.random() < 0.6 else "landlord"
        ll = b.person("landlord", role, gender=g, age=(35, 75), refs=[f"my {role}", f"the {role}"], query_word=role)
        people.append(ll)
    pros = ["dentist", "doctor", "plumber"] + [p for p in ("electrician", "hairdresser") if r.random() < 0.5]
    car: dict[str, str] = {}
    if r.random() < 0.6:
        car = {"make": r.choice(V.CARS), "colour": r.choice(V.COLOURS), "reg": _registration(r, loc)}
        pros.append("mechanic")
    pets: list[Pet] = []
    if r.random() < 0.75:
        pros.append("vet")
        for _ in range(r.choice((1, 1, 2))):
            pets.append(_pet(r, today, {p.name for p in pets}))
    for role in pros:
        people.append(b.pro(role, town))
    return Cast(user, people, pets, home, town, renting, car, b.first_taken, b.phones)


def _registration(rng: random.Random, loc: Locale) -> str:
    if loc.country == "uk":
        return code(rng, "AA99 AAA")
    if loc.country == "us":
        return code(rng, "AAA-9999")
    if loc.country == "de":
        return code(rng, "AA-A 999")
    return code(rng, "999-AAA")


def _pet(rng: random.Random, today: date, taken: set[str]) -> Pet:
    species = rng.choices(tuple(V.PET_KINDS), (50, 40, 10))[0]
    name = rng.choice([n for n in V.PET_NAMES if n not in taken])
    born = today - timedelta(days=rng.randint(200, 4000))
    booster = today + timedelta(days=rng.randint(20, 300))
    return Pet(name=name, species=species, breed=rng.choice(V.PET_KINDS[species]), sex=rng.choice("fm"),
               microchip=f"{rng.choice(('826', '985', '941', '900'))}{rng.randrange(10**11, 10**12)}", born=born,
               food=rng.choice(V.PET_FOODS), vet_key="vet", booster=booster)
