"""Skill menus for training: the real skills renamed, reworded and joined by invented ones.

The adapter must learn the protocol (read the menu, pick by description, follow the steps), not
one menu. Each household gets a variant: every real skill under its own or another fitting name
(which also changes the menu's order, since skills load in name order), its description in one
of a few wordings, and up to two invented skills over the same real tools for subjects no
question asks about. A variant is written as a skills folder the Assistant loads like the real one. Half the
households get the real menu unchanged: it is the one the device actually shows the planner (and examples
sharing a menu share a prompt head, which training computes once a batch).
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from edge_agent.harness.skills import Skill, load_skills

REAL_MENU_SHARE = 0.5  # households whose menu is the shipped skills folder as it is (what the device runs)
# Other names a skill could carry (the first is the real one).
NAMES: dict[str, tuple[str, ...]] = {
    "calendar_question": ("calendar_question", "calendar", "schedule_lookup", "agenda", "events_check"),
    "date_question": ("date_question", "dates", "what_day", "date_math", "today_info"),
    "find_document": ("find_document", "documents", "file_lookup", "find_file_contents", "paperwork"),
    "person_facts": ("person_facts", "people", "contact_info", "about_someone", "family_friends"),
    "recall_conversation": ("recall_conversation", "recall", "past_chats", "memory_search", "what_was_said"),
    "remember_this": ("remember_this", "remember", "save_fact", "note_this", "keep_for_later"),
}
# Other wordings of a description (the real one is always among the choices).
DESCRIPTIONS: dict[str, tuple[str, ...]] = {
    "calendar_question": ("Appointments, meetings and events on the user's calendar for a day or a period.",
                          "Look up what the user has scheduled: events, plans and bookings on given days."),
    "date_question": ("Dates and weekdays: today, or which days a relative period such as next week covers.",
                      "Work out today's date, a weekday, or the dates of 'this weekend', 'next month' and so on."),
    "find_document": ("Locate one of the user's files (document, scan, photo, recording) and read from it.",
                      "Open the user's own paperwork or media and read a detail out of it."),
    "person_facts": ("What the user's notes say about someone they know: birthdays, addresses, jobs, tastes.",
                     "Details about a person in the user's life: contact details, family, preferences."),
    "recall_conversation": ("Something said or done before: a chat, message, call, journal entry or post.",
                            "Search what happened or was said earlier: past messages, calls, posts, journal."),
    "remember_this": ("The user wants a new fact saved to their notebook for later.",
                      "Keep something the user tells you, to be confirmed before it is written."),
}
# Invented skills over real tools, for subjects the questions never ask about (menu distractors).
INVENTED: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("plant_care", "Watering, feeding and repotting the user's house plants.", "check_notebook",
     ("Call check_notebook about the plant and what the user wants to know.", "Answer from what it returned.")),
    ("recipes", "Recipes and cooking notes the user has kept: ingredients, times, oven settings.", "check_notebook",
     ("Call check_notebook with the dish and what is needed.", "Answer from the note, or say there is none.")),
    ("workout_log", "The user's exercise log: runs, rides, gym sessions and personal bests.", "grep_memory",
     ("Call grep_memory with the activity and period.", "Answer from the entries found.")),
    ("music_practice", "Pieces the user is practising and how their lessons are going.", "grep_memory",
     ("Call grep_memory about the piece or lesson.", "Answer in one sentence from what was found.")),
    ("car_maintenance", "Servicing, tyres and repairs of the user's car.", "find_file",
     ("Call find_file and describe the service record or invoice.", "Answer from the file found.")),
)


@dataclass(frozen=True)
class Menu:
    """One skills folder for training, and how its names map to the real skills."""

    directory: Path
    """The folder of skill files."""
    names: dict[str, str]
    """Real skill name -> the name it has in this menu."""


def _write(directory: Path, name: str, description: str, tools: tuple[str, ...], steps: tuple[str, ...],
           stop_after: tuple[str, ...] = ()) -> None:
    lines = ["---", f"name: {name}", f"description: {description}", f"tools: {', '.join(tools)}"]
    if stop_after:
        lines.append(f"stop_after: {', '.join(stop_after)}")
    lines.append("---")
    lines += [f"{i}. {s}" for i, s in enumerate(steps, 1)]
    (directory / f"{name}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_menu(directory: Path, seed: int, skills: dict[str, Skill] | None = None) -> Menu:
    """A variant of the real skills (see the module docstring), written to `directory`."""
    rng = random.Random(seed)
    skills = skills if skills is not None else load_skills()
    directory.mkdir(parents=True, exist_ok=True)
    names: dict[str, str] = {}
    shipped = rng.random() < REAL_MENU_SHARE  # no further draws then: the same seed makes the same menu
    for real, skill in skills.items():
        name = real if shipped or rng.random() < 0.4 else rng.choice(NAMES.get(real, (real,)))
        description = skill.description if shipped or rng.random() < 0.5 else \
            rng.choice(DESCRIPTIONS.get(real, (skill.description,)))
        names[real] = name
        _write(directory, name, description, skill.tools, skill.steps, skill.stop_after)
    for name, description, tool, steps in ([] if shipped else rng.sample(INVENTED, rng.randint(0, 2))):
        _write(directory, name, description, (tool,), steps)
    return Menu(directory, names)
