"""The notebook: a page for each person and pet, facts about the user, instructions and digests, with probes."""
from __future__ import annotations

from datetime import timedelta

from edge_agent.tune import vocab as V
from edge_agent.tune.common import MONTHS, code, day_month, long_date, money
from edge_agent.tune.context import Ctx
from edge_agent.tune.model import Note, Person

PRO_ROLES = ("dentist", "doctor", "plumber", "electrician", "mechanic", "hairdresser", "vet")


def _page_title(p: Person) -> str:
    role = "GP" if p.role == "doctor" else p.role
    return f"{p.display} ({role})"


def person_pages(ctx: Ctx) -> None:
    """One `person` note a person; every sentence a probe points at holds the probe's query words."""
    u, loc = ctx.user, ctx.loc
    for p in ctx.cast.people:
        qw = p.query_word
        slots = {"role": p.role}
        updated = ctx.past_day(1, 200)
        if p.role in PRO_ROLES:
            office = f" Office {p.extra['office']}." if "office" in p.extra else ""
            body = (f"{p.display} is {u.first}'s {'GP' if p.role == 'doctor' else p.role}, at {p.employer}, "
                    f"{p.address}. Phone {p.phone}.{office} Email {p.email}.")
            if p.role == "plumber":
                body += " Fixed the kitchen tap last time; reliable and tidy, send photos of the problem first."
            ctx.notes.append(Note("person", _page_title(p), body, updated))
            ctx.probe("person.phone", "check_notebook", f"{qw} phone", p.phone, slots=slots, person=p.key)
            ctx.probe("person.who", "check_notebook", qw, p.name, slots=slots, person=p.key)
            ctx.probe("person.practice", "check_notebook", qw, p.employer, slots=slots, person=p.key)
            ctx.probe("person.email", "check_notebook", f"{qw} email", p.email, slots=slots, person=p.key)
            continue
        bits = [f"{p.name} is {u.first}'s {p.role}."]
        if p.key == "partner":
            bits.append(f"They live together at {ctx.cast.home}.")
        elif p.key == "neighbour":
            bits.append(f"Lives at number {p.address.split()[0]}, on the same street.")
        else:
            bits.append(f"Lives at {p.address}.")
        if p.key not in ("manager", "colleague"):
            bits.append(f"Works as a {p.job} at {p.employer}.")
        else:
            bits.append(f"Works with {u.first} at {p.employer}; job title {p.job}.")
        bits.append(f"Birthday {day_month(p.birthday, loc)} (born {p.birthday.year}).")
        bits.append(f"Mobile {p.phone}. Email {p.email}.")
        bits.append(f"Gift ideas: {p.likes[0]}, {p.likes[1]}.")
        bits.append(f"Dislikes {p.dislikes[0]}.")
        if "allergy" in p.extra:
            bits.append(f"Allergy: {p.extra['allergy']}.")
        ctx.notes.append(Note("person", f"{p.name} ({p.role})", " ".join(bits), updated))
        ctx.probe("person.phone", "check_notebook", f"{qw} mobile", p.phone, slots=slots, person=p.key)
        ctx.probe("person.birthday", "check_notebook", f"{qw} birthday", day_month(p.birthday, loc), slots=slots,
                  person=p.key)
        ctx.probe("person.email", "check_notebook", f"{qw} email", p.email, slots=slots, person=p.key)
        ctx.probe("person.gift", "check_notebook", f"{qw} gift ideas", p.likes[0], slots=slots, person=p.key)
        ctx.probe("person.dislike", "check_notebook", f"{qw} dislikes", p.dislikes[0], slots=slots, person=p.key)
        if p.key not in ("partner", "neighbour"):
            ctx.probe("person.lives", "check_notebook", f"{qw} lives", p.town, slots=slots, person=p.key)
        if p.key not in ("manager", "colleague"):
            ctx.probe("person.job", "check_notebook", f"{qw} works", p.employer, slots=slots, person=p.key)
        if "allergy" in p.extra:
            ctx.probe("person.allergy", "check_notebook", f"{qw} allergy", p.extra["allergy"], slots=slots,
                      person=p.key)


def pet_pages(ctx: Ctx) -> None:
    """A `fact` note a pet: breed, microchip, vet, food and the next booster."""
    vet = ctx.cast.get("vet")
    for pet in ctx.cast.pets:
        body = (f"{pet.name} is our {pet.breed} {pet.species}, born {long_date(pet.born, ctx.loc)}. "
                f"Microchip {pet.microchip}. Vet: {vet.display} at {vet.employer}. Food: {pet.food}. "
                f"Next vaccination booster due {long_date(pet.booster, ctx.loc)}.")
        ctx.notes.append(Note("fact", f"{pet.name} ({pet.species})", body, ctx.past_day(1, 120)))
        slots = {"pet": pet.name, "species": pet.species, "pos": pet.pos}
        ctx.probe("pet.microchip", "check_notebook", f"{pet.name} microchip", pet.microchip, slots=slots)
        ctx.probe("pet.vet", "check_notebook", f"{pet.name} vet", vet.employer, slots=slots, person="vet")
        ctx.probe("pet.food", "check_notebook", f"{pet.name} food", pet.food, slots=slots)
        ctx.probe("pet.booster", "check_notebook", f"{pet.name} booster", long_date(pet.booster, ctx.loc), slots=slots)


def user_facts(ctx: Ctx) -> None:
    """Facts about the user: own details, the car, bins, memberships, sizes and codes."""
    r, u, loc, cast = ctx.rng, ctx.user, ctx.loc, ctx.cast
    ctx.notes.append(Note("fact", "My own details", (
        f"My own details: {u.name}, {cast.home}. Mobile {u.phone}. Email {u.email}. I work as a {u.job} at "
        f"{u.employer}. Birthday {day_month(u.birthday, loc)} {u.birthday.year}."), ctx.past_day(5, 150)))
    ctx.probe("me.mobile", "check_notebook", "own details mobile", u.phone)
    ctx.probe("me.email", "check_notebook", "own details email", u.email)
    if cast.car:
        car = cast.car
        check = "inspection" if loc.american else "MOT"
        due = ctx.future_day(20, 300)
        ctx.notes.append(Note("fact", "The car", (
            f"Our car is a {car['colour']} {car['make']}, registration {car['reg']}. The {check} is due on "
            f"{long_date(due, loc)}. Tyre pressure 33 psi front, 30 rear."), ctx.past_day(5, 200)))
        ctx.probe("me.car_reg", "check_notebook", "car registration", car["reg"], slots={"make": car["make"]})
        ctx.probe("me.car_check", "check_notebook", f"car {check}", long_date(due, loc),
                  slots={"make": car["make"], "check": check})
    extras = [
        ("Gym membership", lambda: (lambda n, gym: (f"Gym membership at {gym}: member number {n}. Locker code is the "
                                                    f"same as the bike lock.", "gym membership number", n))(
            code(r, "GM-99999"), f"{r.choice(V.STEMS)} Leisure Club")),
        ("Library card", lambda: (lambda n: (f"Library card number {n}, for the {cast.town} libraries. Books are due "
                                            "back after three weeks.", "library card number", n))(code(r, "N999 9999 99"))),
        ("Clothes sizes", lambda: (lambda s: (f"Clothes sizes: shoe size {s}, jeans 32 long, medium tops.",
                                              "shoe size", f"shoe size {s}"))(r.choice(("5", "6", "7", "8", "9", "10", "11")))),
        ("Bike lock", lambda: (lambda c: (f"Bike lock combination is {c}. The bike is the green one in the shed.",
                                          "bike lock combination", c))(f"{r.randrange(10000):04d}")),
        ("Parking permit", lambda: (lambda n: (f"Residents' parking permit {n}, zone {r.choice('ABCDEFK')}. Renew it "
                                              "online before it runs out.", "parking permit", n))(code(r, "PP99999"))),
        ("Blood donor", lambda: (lambda g: (f"Blood donor: my blood group is {g}. Donor card in the wallet.",
                                            "blood group", g))(r.choice(("O positive", "A negative", "B positive", "AB positive", "O negative")))),
    ]
    for title, make in r.sample(extras, r.randint(3, 5)):
        body, query, fact = make()
        ctx.notes.append(Note("fact", title, body, ctx.past_day(3, 300)))
        ctx.probe("me.fact", "check_notebook", query, fact, slots={"thing": title.lower()})
        ctx.topics.append(f"fact:{title.lower()}")
    bins_day = r.choice(V_WEEKDAYS[:5])
    ctx.notes.append(Note("fact", "Rubbish collection", (
        f"Bin day: general waste goes out every {bins_day} night for the morning collection; recycling and garden "
        "waste alternate weeks, see the calendar."), ctx.past_day(10, 300)))
    ctx.probe("me.fact", "check_notebook", "bin day", bins_day, slots={"thing": "bins"})


V_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def instructions(ctx: Ctx) -> None:
    """Standing instructions to the assistant (background; no probes)."""
    r, u = ctx.rng, ctx.user
    pool = [f"Call me {r.choice(V.NICKNAMES)}, not {u.first}.", "Use 24-hour times in answers.",
            "Give temperatures in Celsius and distances in kilometres.",
            "Short answers please: one or two sentences.", "Never book anything on a Sunday morning.",
            "When I ask about money, round to the nearest whole amount."]
    for text in r.sample(pool, 2):
        ctx.notes.append(Note("instruction", text.split(",")[0].split(":")[0].rstrip("."), text, ctx.past_day(20, 300)))


DIGESTS = (("New broadband deal", "broadband deal", "the new broadband deal", "compared three offers; went with "
            "{brand} Broadband at {price} a month on an 18-month contract, starting {date}."),
           ("Picking a sofa", "sofa", "the new sofa", "looked at four; ordered the {brand} three-seater in green "
            "for {price}, delivery on {date}."),
           ("Raised beds for the garden", "garden beds", "the raised beds for the garden", "decided on raised beds from "
            "{brand} Timber for {price}; the delivery is booked for {date}."),
           ("Replacing the boiler", "boiler quotes", "the new boiler", "got three quotes; chose {brand} Heating at "
            "{price}, fitting on {date}."))


def digests(ctx: Ctx) -> None:
    """One or two digests of past conversations, each with the decision in it."""
    r, loc = ctx.rng, ctx.loc
    for title, query, spoken, body in r.sample(DIGESTS, r.choice((1, 2))):
        brand = r.choice(V.BRAND_A)
        price = money(r.uniform(25, 1900) if "broadband" not in query else r.uniform(20, 45), loc)
        when = ctx.future_day(5, 60) if r.random() < 0.6 else ctx.past_day(5, 60)
        text = f"Digest, {MONTHS[(ctx.today - timedelta(days=20)).month - 1]}: " + body.format(
            brand=brand, price=price, date=long_date(when, loc))
        ctx.notes.append(Note("digest", f"Digest: {title.lower()}", text, ctx.past_day(2, 40)))
        ctx.probe("digest.price", "check_notebook", f"digest {query}", price, slots={"topic": spoken})
        ctx.probe("digest.brand", "check_notebook", f"digest {query}", brand, slots={"topic": spoken})
