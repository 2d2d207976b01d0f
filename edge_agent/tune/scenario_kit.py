"""What every question builder shares: the household, a seeded random stream, templates rendered and styled,
references to people, and Question objects in the evaluation's own schema."""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from edge_agent.eval.questions import Question
from edge_agent.tune.households import Household
from edge_agent.tune.model import Person
from edge_agent.tune.phrasing import casual, fragment

INSTRUCTION_CHARS = 120  # call_tool's instruction limit (harness follower)
FRAGMENT_RATE = 0.15  # of person, document, recall and unanswerable questions typed as two words
SKILL_OF = {"person": "person_facts", "document": "find_document", "recall": "recall_conversation",
            "calendar": "calendar_question", "relative_date": "calendar_question", "date": "date_question",
            "remember": "remember_this", "injection": None, "unanswerable": None, "multi": None}
"""The skill a category's questions use (None: it depends on the question)."""
DATE_INSTRUCTION = ("today's date and the ranges for relative expressions", "today's date first",
                    "what today is, to work out the dates", "today's date, to resolve the relative day")
"""L2's instruction for the current_date call that comes before a relative calendar range."""


@dataclass(frozen=True)
class Ref:
    """One way to refer to a person: in the question, in L2's instruction, and as a search keyword."""

    q: str
    """As the user says it: "my dentist", "Kofi"."""
    i: str
    """As L2 writes it: "the user's dentist", "Kofi"."""
    kw: str
    """The notebook keyword: "dentist", "Kofi"."""


def possessive(text: str) -> str:
    return text + "'s"


def refs_for(p: Person, others: list[Person]) -> list[Ref]:
    """Every natural way to name `p` that still finds their notebook page."""
    first = p.first
    if p.key in ("dentist", "plumber", "electrician", "mechanic", "hairdresser", "vet"):
        return [Ref(f"my {p.role}", f"the user's {p.role}", p.role), Ref(f"the {p.role}", f"the user's {p.role}", p.role)]
    if p.key == "doctor":
        return [Ref("my GP", "the user's GP", "GP"), Ref("my doctor", "the user's doctor", "doctor")]
    if p.key in ("mum", "dad"):
        word = p.role
        formal = "mother" if p.key == "mum" else "father"
        return [Ref(f"my {word}", f"the user's {word}", word), Ref(word, f"the user's {word}", word),
                Ref(f"my {formal}", f"the user's {formal}", formal)]
    if p.key == "partner":
        # how people name a partner in a question: the search finds the "(partner)" page through
        # the synonym table (girlfriend -> partner), so the keyword is the asker's own word
        loved = {"f": ("girlfriend", "wife", "missus"), "m": ("boyfriend", "husband", "hubby")}.get(p.gender, ())
        return [Ref(first, f"{first} (the user's {p.role})", first), Ref(f"my {p.role}", f"the user's {p.role}", p.role),
                *[Ref(f"my {w}", f"the user's {w}", w) for w in loved if w != "missus" and w != "hubby"],
                *[Ref(w, f"the user's {w}", w) for w in loved[:1]]]
    if p.key.startswith("sibling"):
        out = [Ref(first, first, first), Ref(f"my {p.role} {first}", f"{first}, the user's {p.role}", first)]
        if sum(o.role == p.role for o in others) == 1:
            out.append(Ref(f"my {p.role}", f"the user's {p.role}", p.role))
            short = {"brother": "bro", "sister": "sis"}.get(p.role)
            if short:
                out.append(Ref(f"my {short}", f"the user's {p.role}", p.role))
        return out
    if p.key == "manager":
        return [Ref("my manager", "the user's manager", "manager"), Ref("my boss", "the user's boss", "boss"),
                Ref(first, f"{first}, the user's manager", first)]
    if p.key == "landlord":
        return [Ref(f"my {p.role}", f"the user's {p.role}", p.role), Ref(first, f"{first}, the {p.role}", first)]
    if p.key == "colleague":
        return [Ref(first, first, first), Ref(f"{first} from work", f"{first}, the user's colleague", first)]
    if p.key == "neighbour":
        return [Ref(first, first, first), Ref(f"{first} next door", f"{first}, the {p.role}", first)]
    return [Ref(first, first, first), Ref(f"my friend {first}", f"{first}, the user's friend", first),
            Ref(f"my mate {first}", f"{first}, the user's friend", first)]


class Kit:
    """A household plus everything a question builder needs to turn its probes into questions."""

    def __init__(self, hh: Household, seed: int):
        self.hh = hh
        self.rng = random.Random(f"edge-agent tune questions {hh.seed} {seed}")
        self.questions: list[Question] = []
        self.file_device = {d.name: d.device for d in hh.docs}
        self._ids = 0

    @property
    def american(self) -> bool:
        return self.hh.locale.american

    def person(self, key: str | None) -> Person | None:
        return self.hh.cast.get(key) if key else None

    def pick(self, items):
        return self.rng.choice(list(items))

    def fill(self, template: str, slots: dict[str, str]) -> str:
        return template.format_map(_Slots(slots))

    def person_slots(self, p: Person, ref: Ref) -> dict[str, str]:
        return {"who": ref.q, "whos": possessive(ref.q), "i_who": ref.i, "i_whos": possessive(ref.i),
                "name": p.first, "subj": p.subj, "obj": p.obj, "pos": p.pos}

    def instruction(self, templates, slots: dict[str, str]) -> str:
        text = self.fill(self.pick(templates), slots)
        text = text[0].upper() + text[1:] if self.rng.random() < 0.3 else text
        if len(text) > INSTRUCTION_CHARS:
            text = text[:INSTRUCTION_CHARS].rsplit(" ", 1)[0]
        return text

    def style(self, text: str, protect: list[str], style: float = 1.0) -> str:
        return casual(text[0].upper() + text[1:] if self.rng.random() < 0.6 else text, self.rng,
                      [p for p in protect if p], american_spelling=self.american, style=style)

    def terse(self, text: str, keywords: str) -> str:
        """Now and then (FRAGMENT_RATE) the question typed as two words instead: a keyword of its
        search and its own "when"/"where" or the search's topic (phrasing.fragment)."""
        if keywords.strip() and self.rng.random() < FRAGMENT_RATE:
            return fragment(keywords, text, self.rng)
        return text

    def add(self, category: str, question: str, calls: list[dict[str, Any]], facts: list[str], *,
            skill: str | None = None, file: str | None = None, forbidden: list[str] | None = None,
            exit_kind: str = "complete") -> Question:
        """Make, validate and keep one Question (the evaluation schema, edge_agent.eval.questions)."""
        self._ids += 1
        tools = list(dict.fromkeys(c["tool"] for c in calls))
        row = {"id": f"t{self.hh.seed:05d}-{self._ids:02d}", "question": question, "category": category,
               "expected_tools": tools, "expected_facts": list(dict.fromkeys(facts)), "expected_file": file,
               "expected_exit": exit_kind, "plan": {"skill": skill or SKILL_OF[category], "calls": calls}}
        if forbidden:
            row["forbidden_facts"] = forbidden
        q = Question.model_validate(row)
        self.questions.append(q)
        return q


def call(tool: str, instruction: str, **args: Any) -> dict[str, Any]:
    """One planned call."""
    return {"tool": tool, "instruction": instruction, "args": args}


def topic_of(query: str, keyword: str) -> str:
    """The query's words after its person keyword ("dentist phone" -> "phone")."""
    words = query.split()
    return " ".join(words[1:]) if words and words[0].lower() == keyword.lower() else query


class _Slots(dict):
    """format_map that leaves an unknown slot visible instead of raising (caught by tests)."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


SLOT_RE = re.compile(r"\{[a-z_]+\}")
"""A slot that was never filled."""
