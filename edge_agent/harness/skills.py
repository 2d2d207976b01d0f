"""Skills: skills/<name>.md — front matter (name, description, tools) and numbered steps.

A skill file is a prompt: its steps go verbatim into L2's instructions and its description into
the planner's menu. Loading is strict; any problem raises SkillError naming the file.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from edge_agent.paths import SKILLS_DIR

log = logging.getLogger(__name__)

NAME_RE = re.compile(r"^[a-z][a-z0-9_]{1,39}$")
STEP_RE = re.compile(r"^(\d+)\.\s+(\S.*)$")
MAX_STEPS = 8  # more steps than this is more than a small model follows
MAX_DESCRIPTION_CHARS = 200  # one line in the planner's menu
NONE_SKILL = "none"  # the planner's choice for answering without tools
REQUIRED_KEYS = ("name", "description", "tools")
OPTIONAL_KEYS = ("stop_after",)


class SkillError(ValueError):
    """A skill file is broken; the message names the file and the problem."""


@dataclass(frozen=True)
class Skill:
    """One skill, as L1 chooses it and L2 follows it."""

    name: str
    """Identifier the planner writes."""
    description: str
    """One line: when this skill fits (shown to the planner)."""
    tools: tuple[str, ...]
    """Tools the skill binds, in order."""
    steps: tuple[str, ...]
    """The numbered steps, without their numbers."""
    path: Path
    """Where it was loaded from."""
    stop_after: tuple[str, ...] = ()
    """Tools whose useful result completes the skill: L2 then stops without another generation
    and answer selection builds the answer (for a result that is the answer, such as the date)."""

    def steps_text(self) -> str:
        return "\n".join(f"{i}. {s}" for i, s in enumerate(self.steps, 1))


def parse_skill(path: Path) -> Skill:
    """Parse one skill file; SkillError names the file and what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise SkillError(f"{path}: cannot read: {err}") from err
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise SkillError(f"{path}: must start with a '---' front-matter line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration as err:
        raise SkillError(f"{path}: front matter is not closed with '---'") from err
    meta: dict[str, str] = {}
    for n, line in enumerate(lines[1:end], 2):
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        key = key.strip()
        if not sep or key not in REQUIRED_KEYS + OPTIONAL_KEYS:
            raise SkillError(f"{path}:{n}: expected one of {', '.join(REQUIRED_KEYS + OPTIONAL_KEYS)} as "
                             f"'key: value', got {line!r}")
        if key in meta:
            raise SkillError(f"{path}:{n}: {key} given twice")
        meta[key] = value.strip()
    for key in REQUIRED_KEYS:
        if not meta.get(key):
            raise SkillError(f"{path}: front matter lacks {key}")
    name = meta["name"]
    if not NAME_RE.match(name):
        raise SkillError(f"{path}: name {name!r} must be lowercase letters, digits and _ (2-40 chars)")
    if name == NONE_SKILL:
        raise SkillError(f"{path}: {NONE_SKILL!r} is reserved for answering without tools")
    if name != path.stem:
        raise SkillError(f"{path}: name {name!r} does not match the file name {path.stem!r}")
    if len(meta["description"]) > MAX_DESCRIPTION_CHARS:
        raise SkillError(f"{path}: description longer than {MAX_DESCRIPTION_CHARS} characters")
    tools = _names(meta["tools"])
    if not tools:
        raise SkillError(f"{path}: tools is empty")
    if len(set(tools)) != len(tools):
        raise SkillError(f"{path}: a tool is listed twice in {list(tools)}")
    stop_after = _names(meta.get("stop_after", ""))
    if set(stop_after) - set(tools):
        raise SkillError(f"{path}: stop_after names {sorted(set(stop_after) - set(tools))}, not among its tools")
    return Skill(name, meta["description"], tools, _parse_steps(path, lines, end + 1), path, stop_after)


def _names(value: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in value.strip("[]").split(",") if t.strip())


def _parse_steps(path: Path, lines: list[str], start: int) -> tuple[str, ...]:
    steps: list[str] = []
    for n, line in enumerate(lines[start:], start + 1):
        if not line.strip():
            continue
        m = STEP_RE.match(line.strip())
        if m and not line[0].isspace():
            if int(m.group(1)) != len(steps) + 1:
                raise SkillError(f"{path}:{n}: step numbered {m.group(1)}, expected {len(steps) + 1}")
            steps.append(m.group(2).strip())
        elif line[0].isspace() and steps:
            steps[-1] = f"{steps[-1]} {line.strip()}"  # an indented line continues the step
        else:
            raise SkillError(f"{path}:{n}: expected a numbered step like '1. ...', got {line.strip()!r}")
    if not steps:
        raise SkillError(f"{path}: no numbered steps")
    if len(steps) > MAX_STEPS:
        raise SkillError(f"{path}: {len(steps)} steps; at most {MAX_STEPS}")
    return tuple(steps)


def load_skills(directory: Path = SKILLS_DIR, known_tools: Iterable[str] | None = None) -> dict[str, Skill]:
    """All skills in `directory`, validated; with known_tools, every listed tool must exist."""
    paths = sorted(directory.glob("*.md"))
    if not paths:
        raise SkillError(f"{directory}: no skill files (*.md)")
    skills: dict[str, Skill] = {}
    known = set(known_tools) if known_tools is not None else None
    for path in paths:
        skill = parse_skill(path)
        if known is not None:
            missing = [t for t in skill.tools if t not in known]
            if missing:
                raise SkillError(f"{path}: unknown tool(s) {', '.join(missing)}; known: {', '.join(sorted(known))}")
        skills[skill.name] = skill
    log.debug("loaded %d skills from %s", len(skills), directory)
    return skills
