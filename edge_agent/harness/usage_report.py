"""Tool utilisation from the traces: calls per tool over a period, and tools used far less than expected.

A tool that exists but is rarely chosen is the quietest failure of a tool loop: questions get
answered some other way. The expected share of questions that dispatch each tool is derived
from the skills: every skill counts as equally likely, the skill's first tool is expected on
every question it serves, and later tools (fallbacks) on a fraction of them.
"""
from __future__ import annotations

from typing import Any

import aiosqlite

from edge_agent.harness.skills import Skill, load_skills
from edge_agent.store.traces import tool_call_counts

DEFAULT_DAYS = 7  # report period
SECONDS_PER_DAY = 86400
FALLBACK_WEIGHT = 0.3  # share of a skill's questions expected to reach a tool listed after the first
UNDERUSE_RATIO = 0.3  # flagged when the actual share is below this fraction of the expected one
MIN_QUESTIONS = 10  # fewer questions than this: shares are reported but nothing is flagged


def expected_shares(skills: dict[str, Skill]) -> dict[str, float]:
    """Expected fraction of questions that dispatch each tool, from the skills."""
    shares: dict[str, float] = {}
    if not skills:
        return shares
    per_skill = 1.0 / len(skills)
    for skill in skills.values():
        for i, tool in enumerate(skill.tools):
            shares[tool] = shares.get(tool, 0.0) + per_skill * (1.0 if i == 0 else FALLBACK_WEIGHT)
    return {tool: round(min(share, 1.0), 3) for tool, share in shares.items()}


async def tool_report(conn: aiosqlite.Connection, since: float, skills: dict[str, Skill] | None = None) -> dict[str, Any]:
    """{"questions", "tools": {name: {"calls", "share", "expected", "underused"}}} since `since`."""
    counts, questions = await tool_call_counts(conn, since)
    expected = expected_shares(skills if skills is not None else load_skills())
    tools: dict[str, Any] = {}
    for name in sorted(set(expected) | set(counts)):
        calls = counts.get(name, 0)
        share = round(calls / questions, 3) if questions else 0.0
        want = expected.get(name, 0.0)
        tools[name] = {"calls": calls, "share": share, "expected": want,
                       "underused": questions >= MIN_QUESTIONS and share < want * UNDERUSE_RATIO}
    return {"questions": questions, "tools": tools}


def format_report(report: dict[str, Any], days: float) -> str:
    lines = [f"{report['questions']} questions in the last {days:g} days",
             f"{'tool':<16}{'calls':>7}{'share':>8}{'expected':>10}"]
    for name, row in report["tools"].items():
        flag = "  UNDERUSED: questions may be answered without it" if row["underused"] else ""
        lines.append(f"{name:<16}{row['calls']:>7}{row['share']:>8.2f}{row['expected']:>10.2f}{flag}")
    if report["questions"] < MIN_QUESTIONS:
        lines.append(f"(fewer than {MIN_QUESTIONS} questions: nothing flagged)")
    return "\n".join(lines)
