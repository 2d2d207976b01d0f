"""Many households at once, each folder with its questions.jsonl beside world.toml (no CLI).

    pairs = generate(20, seed=1, out_dir=Path("tune-data"))
    # tune-data/household-0000/{world.toml, ..., questions.jsonl}, ...

Household i of a run gets seed `seed * HOUSEHOLDS_PER_SEED + i`, so runs with different seeds never
share a household and the same (n, seed) always writes the same bytes.
"""
from __future__ import annotations

import json
from pathlib import Path

from edge_agent.eval.questions import Question
from edge_agent.tune.households import generate_household
from edge_agent.tune.scenarios import questions_for

HOUSEHOLDS_PER_SEED = 100_000  # a run's households are seed * this + 0, 1, 2, ...
QUESTIONS_FILE = "questions.jsonl"


def household_seed(seed: int, index: int) -> int:
    """The seed of household `index` of a run with `seed`."""
    if not 0 <= index < HOUSEHOLDS_PER_SEED:
        raise ValueError(f"at most {HOUSEHOLDS_PER_SEED} households a run")
    return seed * HOUSEHOLDS_PER_SEED + index


def question_row(q: Question) -> dict:
    """One line of questions.jsonl, keys in the evaluation file's order (forbidden_facts only when set)."""
    row = {"id": q.id, "question": q.question, "category": q.category, "expected_tools": list(q.expected_tools),
           "expected_facts": list(q.expected_facts)}
    if q.forbidden_facts:
        row["forbidden_facts"] = list(q.forbidden_facts)
    row.update({"expected_file": q.expected_file, "expected_exit": q.expected_exit,
                "plan": q.plan.model_dump(mode="json")})
    return row


def write_questions(path: Path, questions: list[Question]) -> Path:
    """Write questions as JSON Lines, one Question a line, in the evaluation question file format."""
    path = Path(path)
    path.write_text("".join(json.dumps(question_row(q), ensure_ascii=False) + "\n" for q in questions),
                    encoding="utf-8")
    return path


def generate(n_households: int, seed: int, out_dir: Path) -> list[tuple[Path, list[Question]]]:
    """Write n household folders under out_dir, each with its questions.jsonl; return (folder, questions)."""
    out_dir = Path(out_dir)
    out: list[tuple[Path, list[Question]]] = []
    for i in range(n_households):
        folder = out_dir / f"household-{i:04d}"
        hh = generate_household(household_seed(seed, i), folder)
        questions = questions_for(hh, seed)
        write_questions(folder / QUESTIONS_FILE, questions)
        out.append((folder, questions))
    return out
