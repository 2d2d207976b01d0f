"""Long documents with the answer deep inside: a CV, a lease, an appliance manual, house notes, a clinic
letter, recipes and meeting notes, each with its probes."""
from __future__ import annotations

from datetime import datetime, time, timedelta

from edge_agent.tune import doc_filler, vocab as V
from edge_agent.tune.common import code, long_date, slug, whole_money
from edge_agent.tune.context import Ctx
from edge_agent.tune.model import Event


def cv(ctx: Ctx) -> None:
    """The user's CV or résumé on the personal computer."""
    r, loc, u = ctx.rng, ctx.loc, ctx.user
    word = "resume" if loc.american or r.random() < 0.3 else "CV"
    year = ctx.today.year - (1 if ctx.today.month < 3 else 0)
    name = f"{u.first}-{u.last}-{word}-{year}.md".replace(" ", "-").replace("'", "")
    start = ctx.today.year - r.randint(1, 6)
    earlier = [(f"{r.choice(V.BRAND_A)} {r.choice(('Group', 'Partners', 'Trust', 'Studio'))}", start - r.randint(2, 5))]
    earlier.append((f"{r.choice(V.BRAND_A)} {r.choice(('Council', 'Agency', 'Co-operative'))}", earlier[0][1] - r.randint(2, 4)))
    text = "\n".join([
        f"# {u.name}", "",
        f"Email: {u.email} · Mobile: {u.phone} · {u.town}", "",
        "## Profile",
        f"{u.job.capitalize()} with {ctx.today.year - earlier[1][1]} years of experience. I like untangling messy "
        "problems, explaining them plainly and leaving things better documented than I found them.", "",
        "## Experience",
        f"### {u.job.capitalize()}, {u.employer} ({start}–present)",
        "- Lead a small team and run the weekly planning meeting.",
        "- Cut the time a routine request takes from days to hours by rewriting the process.", "",
        f"### {u.job.capitalize()}, {earlier[0][0]} ({earlier[0][1]}–{start})",
        "- Looked after the biggest client accounts and trained three new starters.", "",
        f"### Junior role, {earlier[1][0]} ({earlier[1][1]}–{earlier[0][1]})",
        "- First job after my studies: a bit of everything, which taught me a lot.", "",
        "## Education",
        f"{r.choice(('BSc', 'BA', 'MSc', 'Diploma'))} from a university I am still fond of, graduated {earlier[1][1] - 1}.", "",
        "## Skills",
        "Clear writing, spreadsheets, presenting to people who are short of time, first aid certificate.", "",
        "## Interests",
        f"{u.likes[0].capitalize()} and {u.likes[1]}.", "", "References on request."])
    ctx.doc("Documents", name, text, ctx.past_day(20, 200), device=ctx.work_device)
    # The question names it as people write it (the file keeps its own word): "résumé" too.
    slots = {"word": word if r.random() < 0.5 else r.choice(("résumé", "resume", "CV", "cv"))}
    ctx.probe("doc.cv_email", "find_file", f"{word} email", u.email, slots=slots, file=name, device=ctx.work_device)
    employer_word = earlier[0][0].split()[0]
    ctx.probe("doc.cv_years", "find_file", f"{word} {employer_word}", f"{earlier[0][1]}–{start}",
              slots={**slots, "employer": earlier[0][0]}, file=name, device=ctx.work_device)


def lease(ctx: Ctx) -> None:
    """A tenancy agreement of a dozen clauses, when the household rents."""
    if not ctx.cast.renting:
        return
    r, loc, u = ctx.rng, ctx.loc, ctx.user
    ll = ctx.cast.get("landlord")
    rent = r.randrange(650, 2400, 25)
    deposit = rent + r.choice((0, rent // 4, rent // 5))
    notice = r.choice(("one month", "two months", "30 days", "60 days"))
    their_notice = r.choice(("two months", "three months", "90 days"))
    start = ctx.past_day(120, 700)
    street_part = ctx.cast.home.split(",")[0] if not ctx.cast.home.startswith("Flat") else ctx.cast.home.split(",")[1]
    name = f"{r.choice(('tenancy-agreement', 'lease'))}-{slug(street_part)}.md"
    pay_day = r.choice(("1st", "15th", "28th"))
    pets = ("The tenant may keep one cat or small dog with the landlord's written consent, which is given for "
            + " and ".join(p.name for p in ctx.cast.pets) + "." if ctx.cast.pets else
            "The tenant must not keep any pets at the property without the landlord's written consent.")
    clauses = [
        ("Parties", f"This agreement is between {ll.name} (the landlord) and {u.name} (the tenant)."),
        ("The property", f"The property is {ctx.cast.home}, let furnished with the items on the attached inventory."),
        ("Term", f"The tenancy starts on {long_date(start, loc)} for a fixed term of twelve months and then runs "
                 "from month to month."),
        ("Rent", f"The rent is {whole_money(rent, loc)} per calendar month, paid on the {pay_day} of each month by "
                 "standing order to the landlord's account."),
        ("Deposit", f"The tenant pays a deposit of {whole_money(deposit, loc)}, held in a government-approved "
                    "deposit protection scheme and returned within ten days of the end of the tenancy, less any "
                    "agreed deductions."),
        ("Bills", "The tenant pays electricity, gas, water, broadband and council tax or local rates."),
        ("Repairs", f"The landlord keeps the structure, boiler and wiring in good repair. Report repairs to "
                    f"{ll.first} on {ll.phone} or {ll.email}."),
        ("Access", "The landlord gives at least 24 hours' written notice before visiting, except in an emergency."),
        ("Pets", pets),
        ("Smoking", "No smoking or vaping anywhere inside the property."),
        *r.sample(doc_filler.LEASE, r.randint(5, len(doc_filler.LEASE))),
        ("Ending the tenancy", f"After the fixed term, the tenant may end the tenancy by giving {_notice(notice)} "
                               f"in writing. The notice period for the landlord is {their_notice}."),
        ("Keys", "Three sets of keys are given at the start and all must be returned at the end."),
        ("Signatures", f"Signed by {ll.name} and {u.name} on {long_date(start - timedelta(days=9), loc)}."),
    ]
    text = "\n\n".join([f"# {'Lease agreement' if loc.american else 'Assured shorthold tenancy agreement'}"]
                       + [f"## {i}. {title}\n{body}" for i, (title, body) in enumerate(clauses, 1)])
    ctx.doc("Documents", name, text, start - timedelta(days=9))
    notice_fact = notice
    for intent, query, fact in (("doc.lease_notice", "lease notice period", notice_fact),
                                ("doc.lease_deposit", "lease deposit", whole_money(deposit, loc)),
                                ("doc.lease_rent", "lease rent calendar month", whole_money(rent, loc))):
        ctx.probe(intent, "find_file", query, fact, slots={"landlord": ll.first}, file=name, device=ctx.home_device,
                  person="landlord")


def _notice(length: str) -> str:
    """"one month" -> "one month's notice"; "60 days" -> "60 days' notice"."""
    return f"{length}'s notice" if length.startswith("one ") else f"{length}' notice"


APPLIANCES = {
    "dishwasher": (("E15", "water in the base tray: unplug, tilt the machine forward and drain the tray"),
                   ("E24", "the drain filter is blocked: clean the filter under the lower basket"),
                   ("E09", "the heater has failed: call an engineer")),
    "washing machine": (("F18", "the pump filter is blocked: open the flap at the bottom right and clean it"),
                        ("F05", "the door lock is faulty: switch off for ten minutes and try again"),
                        ("F21", "the drum is overloaded: take out a third of the laundry")),
    "boiler": (("F28", "the ignition failed: check the gas supply and press reset once"),
               ("F22", "the water pressure is low: top up to 1.5 bar using the filling loop"),
               ("F75", "the pump cannot detect a pressure rise: bleed the radiators")),
    "tumble dryer": (("D12", "the lint filter is full: empty and rinse it"),
                     ("D07", "the condenser is clogged: rinse the condenser unit under a tap")),
    "heat pump": (("H33", "the outdoor unit is iced up: run the defrost cycle from the settings menu"),
                  ("H14", "the flow rate is low: clean the magnetic filter")),
}
"""Appliance -> (error code, what it means and what to do)."""


def manual(ctx: Ctx) -> None:
    """One or two long appliance manuals with an error-code table deep inside."""
    r = ctx.rng
    for appliance in r.sample(tuple(APPLIANCES), r.choice((1, 2))):
        brand = r.choice(V.BRAND_A)
        model = code(r, "AA-9999")
        warranty = r.choice(("two years", "three years", "five years", "24 months"))
        codes = APPLIANCES[appliance]
        name = f"{slug(brand)}-{appliance.replace(' ', '-')}-manual-{model.lower()}.md"
        filler = [
            ("Safety", f"Read these instructions before using your {appliance}. Keep children away while it runs. "
                       "Never open the casing: there are no user-serviceable parts inside. Disconnect the power "
                       "before any cleaning or maintenance."),
            ("Installation", "The appliance must stand level on a firm floor. Leave a 2 cm gap at the back for "
                             "the hoses. The mains socket must stay reachable after installation."),
            ("Getting started", "Press the power button, choose a programme with the dial and press Start. The "
                                "display counts down the time left. Eco programmes take longer but use less energy."),
            ("Programmes", "Eco 50, Quick 30, Intensive 70, Delicate 40 and Self-clean. The quick programme is "
                           "for light loads only."),
            ("Cleaning", "Wipe the seals with a damp cloth every month. Run the self-clean programme with an empty "
                         "machine every two months to keep it fresh."),
        ]
        code_lines = "\n".join(f"- {c}: {what}." for c, what in codes)
        sections = filler[:3] + r.sample(doc_filler.MANUAL, r.randint(5, 8)) + filler[3:] + [
            ("Error codes", f"If the display of your {appliance} shows an error code, look it up here.\n{code_lines}"),
            ("Warranty", f"Your {appliance} comes with a {warranty} manufacturer's warranty from the date of "
                         f"purchase. Register it at {slug(brand)}.example/register with model number {model}."),
            ("Disposal", "At the end of its life, take the appliance to a recycling centre. Do not put it in "
                         "household waste."),
        ]
        text = f"# {brand} {appliance} {model}: user manual\n\n" + "\n\n".join(
            f"## {i}. {title}\n{body}" for i, (title, body) in enumerate(sections, 1))
        ctx.doc("Documents", name, text, ctx.past_day(100, 900), device=ctx.home_device)
        err, what = r.choice(codes)
        slots = {"appliance": appliance, "code": err, "brand": brand}
        ctx.probe("doc.manual_error", "find_file", f"{appliance} manual error {err}", what.split(": ")[1],
                  slots=slots, file=name, device=ctx.home_device)
        ctx.probe("doc.manual_warranty", "find_file", f"{appliance} manual warranty", warranty, slots=slots,
                  file=name, device=ctx.home_device)
        ctx.topics.append(f"appliance:{appliance}")


def house_notes(ctx: Ctx) -> None:
    """The household's own notes on where things are: stopcock, fuse box, wifi, spare key."""
    r = ctx.rng
    stopcock = r.choice(("under the kitchen sink, behind the bleach", "in the cupboard under the stairs",
                         "in the downstairs loo, behind the panel", "beside the washing machine"))
    fuse = r.choice(("in the hall cupboard, top shelf", "above the front door", "in the garage by the freezer",
                     "behind the coats in the porch"))
    wifi_name = f"{r.choice(V.STEMS)}-{r.randrange(10, 99)}"
    wifi_pw = f"{r.choice(V.STEMS)}-{r.randrange(1000, 9999)}-{r.choice(('kite', 'moss', 'fern', 'gull', 'wren', 'pike'))}"
    keyholder = next((p for p in ctx.cast.people if p.key in ("neighbour", "friend1")), ctx.cast.people[0])
    name = r.choice(("house-notes.md", "home-info.md", "where-things-are.md"))
    text = "\n".join([
        "# Notes about the house", "",
        "## Water", f"The stopcock (the stop tap for the water) is {stopcock}. Turn it clockwise to shut the water off.", "",
        "## Electricity", f"The fuse box and the electricity meter are {fuse}. The meter reading goes in on the first of the month.", "",
        "## Internet", f"Wi-Fi network {wifi_name}, wifi password {wifi_pw}. The router is behind the television.", "",
        "## Keys", f"A spare key is with {keyholder.name}.", "",
        "## Heating", "The thermostat is in the hall; 19 degrees is plenty. The boiler timer runs 6:30-8:30 and 17:00-22:00."])
    ctx.doc("Notes", name, text, ctx.past_day(30, 300), device=ctx.home_device)
    ctx.probe("doc.stopcock", "find_file", "stopcock house notes", stopcock, file=name, device=ctx.home_device)
    ctx.probe("doc.fusebox", "find_file", "fuse box house", fuse, file=name, device=ctx.home_device)
    ctx.probe("doc.wifi", "find_file", "wifi password house", wifi_pw, file=name, device=ctx.home_device)
    ctx.probe("doc.spare_key", "find_file", "spare key house notes", keyholder.name, file=name,
              device=ctx.home_device, person=keyholder.key)


CLINICS = (("physiotherapy", "Physiotherapy Department", "bring shorts and a T-shirt"),
           ("dermatology", "Dermatology Clinic", "do not wear moisturiser on the day"),
           ("audiology", "Audiology Service", "ask someone to come with you if you like"),
           ("cardiology", "Cardiology Outpatients", "wear a loose top and avoid caffeine that morning"),
           ("orthopaedic", "Orthopaedic Clinic", "bring any scans or X-ray reports you have"))
"""(department word, department name, what to do) for clinic letters."""


def clinic_letter(ctx: Ctx) -> None:
    """A long letter from a hospital clinic about a coming appointment."""
    r, loc, u = ctx.rng, ctx.loc, ctx.user
    dept, dept_name, advice = r.choice(CLINICS)
    hospital = f"{r.choice(V.STEMS)} {r.choice(('General Hospital', 'Community Hospital', 'Infirmary'))}"
    when = ctx.future_day(6, 40)
    hh, mm = r.choice((8, 9, 10, 11, 13, 14, 15)), r.choice((0, 10, 20, 30, 40, 45))
    time_s = f"{hh:02d}:{mm:02d}"
    sent = ctx.past_day(3, 20)
    clinician = f"{r.choice(V.FEMALE_NAMES + V.MALE_NAMES)} {r.choice(V.SURNAMES)}"
    ref = code(r, "AA999999")
    name = f"{slug(hospital)}-{dept}-letter-{sent.isoformat()}.md"
    text = "\n\n".join([
        f"{hospital}\n{dept_name}", f"{long_date(sent, loc)}\nHospital number: {ref}",
        f"Dear {u.first} {u.last},",
        f"Thank you for your referral to the {dept_name.lower()}. We have read the notes from your GP and "
        "would like to see you for an assessment. This letter explains what will happen and how to prepare.",
        "About the clinic\nThe clinic runs every weekday. You will see a specialist who will ask about your "
        "symptoms, examine you and agree a plan with you. Most appointments last between 30 and 45 minutes.",
        "Getting here\nThe hospital is on the number 4 and 12 bus routes. Parking is limited and charged by the "
        "hour, so please allow extra time. Drop-off bays are by the main entrance.",
        f"Your appointment\nYour {dept} appointment is on {long_date(when, loc, weekday=True)} at {time_s} with "
        f"{clinician}. Please {advice}, and arrive ten minutes early to check in at the {dept_name.lower()} desk.",
        f"If you cannot come\nPlease call the booking team on {ctx.cast.phones.landline()} "
        "at least two days before, so the slot can be offered to someone else.",
        f"Yours sincerely,\n{dept_name} booking team"])
    ctx.doc("Documents", name, text, sent, device=ctx.home_device)
    slots = {"dept": dept, "hospital": hospital, "date": long_date(when, loc)}
    ctx.probe("doc.letter_time", "find_file", f"{dept} letter appointment", time_s, slots=slots, file=name,
              device=ctx.home_device)
    ctx.probe("doc.letter_advice", "find_file", f"{dept} appointment letter prepare", advice, slots=slots, file=name,
              device=ctx.home_device)
    start = datetime.combine(when, time(hh, mm))
    ctx.events.append(Event(f"clinic-{when.isoformat()}-{r.randrange(10**6)}@tune.example",
                            f"{dept.capitalize()} appointment", start, start + timedelta(minutes=45), ctx.tz,
                            location=f"{hospital}, {dept_name}",
                            description=f"{dept.capitalize()} appointment at {time_s} with {clinician}. "
                                        f"Please {advice}.", spoken=[f"{dept} appointment", "hospital appointment"]))


def recipes(ctx: Ctx) -> None:
    """One or two recipes in the notes folder."""
    r = ctx.rng
    for dish, temp, bake in r.sample(V.DISHES, r.choice((1, 2))):
        who = r.choice([p for p in ctx.cast.people if p.key in ("mum", "dad", "friend1", "friend2", "partner")]
                       or ctx.cast.people)
        name = f"recipe-{slug(dish)}.md"
        text = "\n".join([
            f"# {dish.capitalize()} ({who.first}'s recipe)", "",
            "## Ingredients", "- the usual: butter, flour, eggs, a pinch of salt", "- whatever needs using up", "",
            "## Method", "1. Get everything out and weighed first, it saves a mess.",
            "2. Mix the dry things, then the wet things, then fold them together gently.",
            f"3. Heat the oven to {temp} and bake the {dish} for {bake}, until golden.",
            "4. Leave it to stand for ten minutes before cutting.", "",
            f"Notes: {who.first} says it freezes well for a month."])
        ctx.doc("Notes", name, text, ctx.past_day(10, 300), device=ctx.spare_device())
        ctx.probe("doc.recipe_temp", "find_file", f"{dish} recipe oven", temp, slots={"dish": dish},
                  file=name, device=None)
        ctx.probe("doc.recipe_time", "find_file", f"{dish} recipe bake", bake, slots={"dish": dish},
                  file=name, device=None)


TOPICS = ("budget", "website relaunch", "office move", "quarterly report", "hiring plan", "client workshop",
          "supplier review", "summer rota")
"""Meeting topics."""


def meeting_notes(ctx: Ctx) -> None:
    """Notes of a work meeting with an action item for a colleague."""
    r, loc = ctx.rng, ctx.loc
    topic = r.choice(TOPICS)
    day = ctx.past_day(2, 25)
    due = day + timedelta(days=r.randint(7, 21))
    colleague, manager = ctx.cast.get("colleague"), ctx.cast.get("manager")
    room = f"{r.choice(V.STEMS)} Room"
    name = f"meeting-notes-{day.isoformat()}-{slug(topic)}.md"
    text = "\n".join([
        f"# {topic.capitalize()} meeting, {long_date(day, loc)}", "",
        f"Present: {manager.name}, {colleague.name}, {ctx.user.name}. Room: {room}.", "",
        "## Discussion", f"We went through where the {topic} stands. Most of it is on track; the open questions are "
                         "the cost estimate and who signs it off.", "",
        "## Actions", f"- {colleague.first} to send the revised {topic} figures by {long_date(due, loc)}.",
        f"- {manager.first} to book the follow-up meeting.", f"- {ctx.user.first} to draft the summary email.", ""])
    ctx.doc("Documents", name, text, day, device=ctx.work_device)
    ctx.probe("doc.meeting_due", "find_file", f"{topic} meeting notes actions", long_date(due, loc),
              slots={"topic": topic, "colleague": colleague.first}, file=name, device=ctx.work_device,
              person="colleague")


def photos(ctx: Ctx) -> None:
    """A couple of tiny real PNGs, found by their names."""
    r = ctx.rng
    scenes = [(f"{p.name.lower()}-{what}", f"{p.name} {what.replace('-', ' ')}", f"photo {p.name} {key}")
              for p in ctx.cast.pets
              for what, key in [r.choice((("asleep-on-the-sofa", "asleep sofa"), ("in-the-snow", "snow"),
                                          ("at-the-beach", "beach"), ("wearing-a-bow-tie", "bow tie")))]]
    for what, spoken, key in r.sample((("sunset-from-the-pier", "the sunset from the pier", "sunset pier"),
                                       ("snowy-garden", "the garden in the snow", "snowy garden"),
                                       ("allotment-harvest", "the allotment harvest", "allotment harvest"),
                                       ("birthday-cake", "the birthday cake", "birthday cake")), 1):
        scenes.append((what, spoken, f"photo {key}"))
    for stem, spoken, query in scenes:
        day = ctx.past_day(5, 200)
        name = f"{stem}-{day.isoformat()}.png"
        ctx.doc("Photos", name, "", day, device=ctx.spare_device())
        ctx.probe("doc.photo", "find_file", query, name, slots={"scene": spoken}, file=name, device=None)
