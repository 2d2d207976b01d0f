"""Questions about a synthetic household, each with the ideal plan the oracle replays.

    questions = questions_for(household, seed=0)   # edge_agent.eval.questions.Question objects

Every category is covered: person, document, recall, calendar, relative_date, date, remember,
unanswerable, multi and injection. Facts come from the probes planted while the household was
built, so each is in the item its planned call returns. The generator knows nothing of the
evaluation set.
"""
from __future__ import annotations

from edge_agent.eval.questions import Question
from edge_agent.tune import scenarios_time
from edge_agent.tune.households import Household
from edge_agent.tune.model import Probe
from edge_agent.tune.scenario_kit import Kit, Ref, call, refs_for, topic_of
from edge_agent.tune.templates_docs import DEVICE_ASKS, DEVICE_INSTRUCTIONS, DEVICE_PASSING, DOCS
from edge_agent.tune.templates_people import DIGEST, ME, ME_THINGS, PERSON, PET
from edge_agent.tune.templates_recall import CLAUSES, FIRST_CLAUSES, INJECT, JOINERS, RECALL, UNANSWERABLE

COUNTS = {"person": 6, "document": 6, "recall": 5, "calendar": 4, "relative_date": 4, "date": 2, "remember": 4,
          "unanswerable": 4, "multi": 3, "injection": 2}
"""Questions a household gets in each category (fewer when it lacks the material)."""
COUNTDOWNS = 1
"""Calendar questions asking how long until an event (scenarios_time.countdown), beyond COUNTS."""
NOTEBOOK_TEMPLATES = {**PERSON, **PET, **ME, **DIGEST}
UNKNOWN_DOCS = ("marriage certificate", "piano lesson invoice", "boat insurance policy", "wedding invitation",
                "solar panel warranty", "caravan booking", "adoption papers", "planning permission letter",
                "jury summons")
UNKNOWN_FACTS = ("frequent flyer number", "loyalty card number", "pension scheme number", "boiler serial number",
                 "house alarm code", "locker number")
UNSTORED_ABOUT_PEOPLE = ("middle name", "favourite colour", "dress size", "star sign", "shirt size", "wedding anniversary",
                         "favourite band", "maiden name")
"""Things no generated notebook page holds about anyone (un.known_person asks for them)."""
UNKNOWN_EVENTS = ("wedding", "karaoke night", "ski trip", "sailing course", "tattoo", "lottery win", "house move")
UN_PERSON_TOPICS = (("birthday", "birthday"), ("number", "phone"), ("live", "lives"), ("email", "email"),
                    ("work", "works"), ("address", "address"), ("present", "gift ideas"), ("allergic", "allergy"))


def questions_for(household: Household, seed: int = 0) -> list[Question]:
    """About 35 questions over every category (fewer where the household lacks something)."""
    kit = Kit(household, seed)
    notebook(kit, [p for p in household.probes if p.tool == "check_notebook" and not p.intent.startswith("inject")],
             COUNTS["person"])
    documents(kit, [p for p in household.probes if p.tool == "find_file" and not p.intent.startswith("inject")],
              COUNTS["document"])
    recall(kit, [p for p in household.probes if p.intent.startswith("recall.")], COUNTS["recall"])
    scenarios_time.calendar(kit, COUNTS["calendar"])
    scenarios_time.relative(kit, COUNTS["relative_date"])
    scenarios_time.dates(kit, COUNTS["date"])
    scenarios_time.remember(kit, COUNTS["remember"])
    unanswerable(kit, COUNTS["unanswerable"])
    multi(kit, COUNTS["multi"])
    injection(kit, [p for p in household.probes if p.intent.startswith("inject.")], COUNTS["injection"])
    scenarios_time.countdown(kit, COUNTDOWNS)  # last: the questions before it stay as they were
    return kit.questions


def _spread(kit: Kit, probes: list[Probe], n: int) -> list[Probe]:
    """n probes of as many different intents as possible."""
    by_intent: dict[str, list[Probe]] = {}
    for p in probes:
        by_intent.setdefault(p.intent, []).append(p)
    intents = list(by_intent)
    kit.rng.shuffle(intents)
    return [kit.pick(by_intent[i]) for i in intents[:n]]


def _templates(p: Probe):
    if p.intent == "me.fact":
        return ME_THINGS[p.slots["thing"]]
    return NOTEBOOK_TEMPLATES[p.intent]


def notebook(kit: Kit, probes: list[Probe], n: int) -> None:
    """person: a notebook page about someone, a pet or the user (check_notebook)."""
    for p in _spread(kit, probes, n):
        questions, instructions = _templates(p)
        slots, query, protect = dict(p.slots), p.query, list(p.slots.values())
        person = kit.person(p.person)
        if person is not None and p.intent.startswith("person."):
            ref: Ref = kit.pick(refs_for(person, kit.hh.cast.people))
            slots.update(kit.person_slots(person, ref))
            query = f"{ref.kw} {topic_of(p.query, person.query_word)}".strip() if p.intent not in (
                "person.who", "person.practice") else ref.kw
            protect += [ref.q, person.first]
        if p.intent.startswith("pet."):
            slots["ppos"] = slots.get("pos", "its")
        text = kit.terse(kit.style(kit.fill(kit.pick(questions), slots), protect), query)
        instr = kit.instruction(instructions, slots)
        kit.add("person", text, [call("check_notebook", instr, query=query)], [p.fact])


def _device_wrap(kit: Kit, text: str, instr: str, device: str | None) -> tuple[str, str, list[str]]:
    """Maybe ask to search one device explicitly (the call lists it) or mention one in passing (it does not)."""
    roll = kit.rng.random()
    if device and roll < 0.15:
        prefix = kit.fill(kit.pick(DEVICE_ASKS), {"device": device})
        return prefix + text[0].lower() + text[1:], instr + kit.fill(kit.pick(DEVICE_INSTRUCTIONS), {"device": device}), [device]
    if roll < 0.27:
        other = kit.pick(kit.hh.devices)
        return kit.fill(kit.pick(DEVICE_PASSING), {"device": other}) + text[0].lower() + text[1:], instr, []
    return text, instr, []


def documents(kit: Kit, probes: list[Probe], n: int) -> None:
    """document: a fact inside a file (find_file), sometimes on one named device."""
    for p in _spread(kit, probes, n):
        questions, instructions = DOCS[p.intent]
        slots = dict(p.slots)
        slots.setdefault("ppos", "its")
        text = kit.fill(kit.pick(questions), slots)
        instr = kit.instruction(instructions, slots)
        device = p.device or kit.file_device.get(p.file or "")
        text, instr, devices = _device_wrap(kit, text, instr, device if p.file else None)
        text = kit.style(text, list(slots.values()) + kit.hh.devices)
        text = text if devices else kit.terse(text, p.query)
        facts = [] if p.intent == "doc.photo" else [p.fact]
        kit.add("document", text, [call("find_file", instr[:120], query=p.query, devices=devices)], facts, file=p.file)


def recall(kit: Kit, probes: list[Probe], n: int) -> None:
    """recall: something said or done earlier, in the memory log (grep_memory)."""
    for p in _spread(kit, probes, n):
        questions, instructions = RECALL[p.intent]
        slots = dict(p.slots)
        person = kit.person(p.person)
        if person is not None:
            slots.update({"name": person.first, "subj": person.subj, "pos": person.pos, "role": person.role})
        slots["mum"] = kit.hh.locale.mum
        slots["make"] = kit.hh.cast.car.get("make", "car")
        text = kit.terse(kit.style(kit.fill(kit.pick(questions), slots), list(slots.values())), p.query)
        kit.add("recall", text, [call("grep_memory", kit.instruction(instructions, slots), query=p.query)], [p.fact])


def injection(kit: Kit, probes: list[Probe], n: int) -> None:
    """injection: a fact next to a planted instruction; the answer must be the fact, never the payload."""
    kit.rng.shuffle(probes)
    for p in probes[:n]:
        questions, instructions = INJECT[p.intent]
        slots = dict(p.slots)
        if p.intent == "inject.event":
            day = scenarios_time.iso_day(p.query)
            slots.update({"date": scenarios_time.day_phrase(kit, day), "iso": p.query})
            calls = [call("queryCalendar", kit.instruction(instructions, slots), start=p.query, end=p.query)]
            skill = "calendar_question"
        else:
            tool = p.tool
            args = {"query": p.query} if tool != "find_file" else {"query": p.query, "devices": []}
            calls = [call(tool, kit.instruction(instructions, slots), **args)]
            skill = {"check_notebook": "person_facts", "find_file": "find_document",
                     "grep_memory": "recall_conversation"}[tool]
        text = kit.style(kit.fill(kit.pick(questions), slots), list(slots.values()))
        kit.add("injection", text, calls, [p.fact], skill=skill, file=p.file, forbidden=[p.forbidden])


def unanswerable(kit: Kit, n: int) -> None:
    """unanswerable: a person, file, fact or event the household does not have; the answer is "not found"."""
    hh, rng = kit.hh, kit.rng
    kinds = ["un.person", "un.doc", "un.fact", "un.memory", "un.known_person", "un.known_memory"]
    rng.shuffle(kinds)
    names = absent_names(hh)
    for kind in (kinds * 2)[:n]:
        questions, instructions = UNANSWERABLE["un.memory" if kind == "un.known_memory" else kind]
        template = kit.pick(questions)
        name = rng.choice(names)
        if kind == "un.known_memory":  # someone who is there, about something never talked of
            name = rng.choice(hh.cast.people).first
        if kind == "un.known_person":
            person = rng.choice(hh.cast.people)
            ref = rng.choice(refs_for(person, hh.cast.people))
            slots = {**kit.person_slots(person, ref), "thing": rng.choice(UNSTORED_ABOUT_PEOPLE)}
            tool, query, skill = "check_notebook", f"{ref.kw} {slots['thing']}", "person_facts"
        elif kind == "un.person":
            topic = next(q for word, q in UN_PERSON_TOPICS if word in template)
            slots, tool, query, skill = {"name": name}, "check_notebook", f"{name} {topic}", "person_facts"
        elif kind == "un.doc":
            things = list(UNKNOWN_DOCS)
            if not any(t == "insurance:pet" for t in hh.topics):
                things.append(f"{hh.pets[0].name} pet insurance" if hh.pets else "pet insurance")
            thing = rng.choice(things)
            slots, tool, query, skill = {"thing": thing}, "find_file", thing, "find_document"
        elif kind == "un.fact":
            missing = [f for f in UNKNOWN_FACTS if f != "locker number" or "fact:gym membership" not in hh.topics]
            thing = rng.choice(missing)
            slots, tool, query, skill = {"thing": thing}, "check_notebook", thing, "person_facts"
        else:
            thing = rng.choice(UNKNOWN_EVENTS)
            slots, tool, query, skill = {"name": name, "thing": thing}, "grep_memory", f"{name} {thing}", "recall_conversation"
        protect = [v for k, v in slots.items() if k in ("name", "who", "whos", "thing")]
        args = {"query": query, "devices": []} if tool == "find_file" else {"query": query}
        text = kit.terse(kit.style(kit.fill(template, slots), protect), query)
        kit.add("unanswerable", text, [call(tool, kit.instruction(instructions, slots), **args)], [], skill=skill)


def absent_names(hh: Household) -> list[str]:
    """First names nobody in the household has and that no word of its notes or memory stems to.

    The index stems words (Porter), so "Mai" would find "May" and "Sky" "skies": such a name is not absent.
    """
    from edge_agent.store.text import stems, tokens
    from edge_agent.tune import vocab as V

    taken = hh.cast.used_first | {pet.name for pet in hh.pets}
    seen = set(tokens(" ".join([n.title + " " + n.body for n in hh.notes] + [m.who + " " + m.text for m in hh.memories])))
    return [x for x in V.FEMALE_NAMES + V.MALE_NAMES if x not in taken and not set(stems(x)) & seen]


PAIRS = (("person.", "recall.", "person_facts"), ("person.", "doc.", "find_document"), ("doc.", "me.", "find_document"),
         ("recall.", "person.", "recall_conversation"))
"""(first probe kind, second probe kind, skill) of two-part questions."""


def multi(kit: Kit, n: int) -> None:
    """multi: two calls, each bringing one of the facts (notebook + memory, notebook + file, memory + notebook)."""
    hh, rng = kit.hh, kit.rng
    usable = [p for p in hh.probes if p.intent in CLAUSES]
    options = []
    for a in usable:
        for b in usable:
            if a is b or a.tool == b.tool:
                continue
            for first, second, skill in PAIRS:
                if not (a.intent.startswith(first) and b.intent.startswith(second)):
                    continue
                same_person = a.person and a.person == b.person
                if (first, second) != ("doc.", "me.") and not same_person:
                    continue
                if first == "recall." and a.intent not in FIRST_CLAUSES:
                    continue
                if {a.intent, b.intent} == {"doc.cv_email", "me.email"}:
                    continue
                options.append((a, b, skill))
    rng.shuffle(options)
    seen: set[str] = set()
    for a, b, skill in options:
        key = f"{a.intent}|{b.intent}"
        if key in seen or len(seen) >= n:
            continue
        seen.add(key)
        _two_part(kit, a, b, skill)


def _two_part(kit: Kit, a: Probe, b: Probe, skill: str) -> None:
    slots: dict[str, str] = {**a.slots, **b.slots}
    person = kit.person(a.person or b.person)
    slots.update({"mum": kit.hh.locale.mum, "make": kit.hh.cast.car.get("make", "car")})
    if person is not None:
        slots.update({"name": person.first, "role": person.role})
    calls = []
    for probe in (a, b):
        query = probe.query
        if probe.intent.startswith("person.") and person is not None:
            ref = kit.pick(refs_for(person, kit.hh.cast.people))
            slots.update(kit.person_slots(person, ref))
            query = ref.kw if probe.intent == "person.who" else f"{ref.kw} {topic_of(probe.query, person.query_word)}"
        elif person is not None:
            slots.update({"subj": person.subj, "pos": person.pos, "obj": person.obj})
        slots.setdefault("ppos", "its")
        slots.setdefault("pos", "their")
        slots.setdefault("subj", "they")
        instr = kit.instruction(_instructions(probe.intent, probe), slots)
        args = {"query": query, "devices": []} if probe.tool == "find_file" else {"query": query}
        calls.append(call(probe.tool, instr, **args))
    first = kit.fill(kit.pick(FIRST_CLAUSES.get(a.intent) or CLAUSES[a.intent]), slots)
    second = kit.fill(kit.pick(CLAUSES[b.intent]), slots)
    text = kit.style(kit.fill(kit.pick(JOINERS), {"a": first, "b": second}), list(slots.values()))
    file = next((p.file for p in (a, b) if p.tool == "find_file"), None)
    kit.add("multi", text, calls, [a.fact, b.fact], skill=skill, file=file)


def _instructions(intent: str, probe: Probe):
    if intent == "me.fact":
        return ME_THINGS[probe.slots["thing"]][1]
    for table in (NOTEBOOK_TEMPLATES, DOCS, RECALL):
        if intent in table:
            return table[intent][1]
    raise KeyError(intent)
