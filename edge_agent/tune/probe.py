"""The planner's first choice on generated households no training run uses: a quick held-out check.

One planner call a question, the harness's own (Planner.plan, through the model seam): about a
third of a second a question here, so an adapter can be judged in a minute or two, before a full
eval. The expected skill is the generator's ideal plan.

Held-out by construction: every household a training run reads is a multiple of
HOUSEHOLDS_PER_SEED (dataset.household_seed(seed, 0), build.collect), and the probe's are
FIRST_HOUSEHOLD + i, never one (test_tune_probe checks it).

`probe_harness` runs the same questions through the whole harness instead, scored like `eval`
(about 2 s a question here): the end-to-end check on data nothing was tuned on, beside the eval set.

`probe_chooser` judges the other decision every answer turns on, the reply's choice of lines: the
teacher's own choice prompts for the same households (the oracle drives the harness, so each
prompt holds what a right plan finds), each answered by the model under the choice grammar and
scored against the oracle's lines (about a second a prompt here). Its figures are split by where
the right line stands: first (the ranker's best), elsewhere, or none of them (say "none").
"""
from __future__ import annotations

import io
import json
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from edge_agent.config import HarnessSettings, Settings
from edge_agent.harness.planner import Planner
from edge_agent.harness.skills import load_skills
from edge_agent.harness.turn import Limits, TurnContext
from edge_agent.llm.base import Model
from edge_agent.tools.registry import build_tools
from edge_agent.tune.dataset import HOUSEHOLDS_PER_SEED
from edge_agent.tune.households import Household, generate_household
from edge_agent.tune.scenarios import questions_for

FIRST_HOUSEHOLD = 5000  # the probe reads households 5000, 5001, ...: no training run reads them
MAX_HOUSEHOLDS = HOUSEHOLDS_PER_SEED - FIRST_HOUSEHOLD  # beyond, one would be a training household
CONFUSIONS_SHOWN = 8


@dataclass
class PlannerProbe:
    """What the planner chose against what the generator's ideal plan says."""

    households: list[int] = field(default_factory=list)
    """The household seeds read."""
    by_skill: dict[str, list[int]] = field(default_factory=dict)
    """{expected skill: [right, asked]}."""
    confusions: Counter = field(default_factory=Counter)
    """{(expected, chosen): how often}, the wrong choices only."""
    misses: list[dict[str, str]] = field(default_factory=list)
    """Each wrong choice: question, expected, chosen."""

    def add(self, question: str, expected: str, chosen: str) -> None:
        row = self.by_skill.setdefault(expected, [0, 0])
        row[1] += 1
        if chosen == expected:
            row[0] += 1
            return
        self.confusions[(expected, chosen)] += 1
        self.misses.append({"question": question, "expected": expected, "chosen": chosen})

    @property
    def asked(self) -> int:
        return sum(n for _, n in self.by_skill.values())

    @property
    def right(self) -> int:
        return sum(r for r, _ in self.by_skill.values())

    def summary(self) -> dict:
        """The figures, as JSON."""
        return {
            "households": self.households, "questions": self.asked, "planner_right": self.right,
            "planner_accuracy": round(self.right / self.asked, 4) if self.asked else None,
            "by_skill": {s: f"{r}/{n}" for s, (r, n) in sorted(self.by_skill.items())},
            "confusions": [{"expected": e, "chosen": c, "count": n}
                           for (e, c), n in self.confusions.most_common(CONFUSIONS_SHOWN)],
        }


def probe_households(households: int, first: int = FIRST_HOUSEHOLD) -> range:
    """The household seeds a probe reads; ValueError if any could be a training household."""
    if not 0 < households <= MAX_HOUSEHOLDS or not FIRST_HOUSEHOLD <= first <= HOUSEHOLDS_PER_SEED - households:
        raise ValueError(f"households {first}..{first + households - 1}: the probe reads 1 to {MAX_HOUSEHOLDS} "
                         f"households from {FIRST_HOUSEHOLD} on, below {HOUSEHOLDS_PER_SEED} (training reads those)")
    return range(first, first + households)


def held_out(households: int, first: int = FIRST_HOUSEHOLD) -> Iterator[tuple[int, Household, Path]]:
    """Each probe household, generated into a temporary folder: (seed, household, a data dir for it);
    all removed once the loop ends."""
    seeds = probe_households(households, first)
    with tempfile.TemporaryDirectory(prefix="edge-agent-probe-") as tmp:
        for seed in seeds:
            yield seed, generate_household(seed, Path(tmp) / f"h{seed}"), Path(tmp) / f"d{seed}"


async def probe_planner(model: Model, households: int, first: int = FIRST_HOUSEHOLD,
                        progress: Callable[[str], None] = lambda _: None) -> PlannerProbe:
    """The planner's first choice for every generated question of `households` households."""
    planner = Planner.for_tools(load_skills(), build_tools())
    limits = Limits.from_settings(HarnessSettings())
    probe = PlannerProbe()
    for seed, household, _ in held_out(households, first):
        probe.households.append(seed)
        for q in questions_for(household, 0):
            chosen = await planner.plan(TurnContext(f"probe-{seed}-{q.id}", q.question, model, limits))
            probe.add(q.question, q.plan.skill, chosen.skill)
        progress(f"household {seed}: planner {probe.right}/{probe.asked}")
    return probe


@dataclass
class ChooserProbe:
    """The lines the model chose against the oracle's, by where the oracle's stand."""

    households: list[int] = field(default_factory=list)
    """The household seeds read."""
    by_target: dict[str, list[int]] = field(default_factory=dict)
    """{"first" | "elsewhere" | "none": [right, asked]}: the right line is the first candidate,
    another one (or several), or no line answers."""
    said_none: int = 0
    """Prompts with a line that answers, answered "none"."""
    misses: list[dict[str, Any]] = field(default_factory=list)
    """Each wrong choice: question (as the prompt asks it), expected lines, chosen lines."""

    def add(self, question: str, expected: list[int], chosen: list[int]) -> None:
        where = "none" if expected == [0] else "first" if expected == [1] else "elsewhere"
        row = self.by_target.setdefault(where, [0, 0])
        row[1] += 1
        if chosen == expected:
            row[0] += 1
            return
        self.said_none += where != "none" and chosen == [0]
        self.misses.append({"question": question, "expected": expected, "chosen": chosen})

    @property
    def asked(self) -> int:
        return sum(n for _, n in self.by_target.values())

    @property
    def right(self) -> int:
        return sum(r for r, _ in self.by_target.values())

    def summary(self) -> dict:
        """The figures, as JSON."""
        return {"households": self.households, "choices": self.asked, "chooser_right": self.right,
                "chooser_accuracy": round(self.right / self.asked, 4) if self.asked else None,
                "by_target": {k: f"{r}/{n}" for k, (r, n) in sorted(self.by_target.items())},
                "said_none_to_an_answer": self.said_none}


async def probe_chooser(model: Model, households: int, first: int = FIRST_HOUSEHOLD,
                        progress: Callable[[str], None] = lambda _: None) -> ChooserProbe:
    """The model's choice of lines on every choice prompt the teacher records for `households`
    households, against the oracle's (teacher.household_examples; the model's tokenizer and chat
    template render them, as at run time)."""
    from edge_agent.eval.oracle import QUESTION_MARK, candidate_lines
    from edge_agent.harness.reply import choice_schema
    from edge_agent.harness.reserve import worst_case_tokens
    from edge_agent.tune.teacher import household_examples

    probe = ChooserProbe()
    for seed, household, _ in held_out(households, first):
        probe.households.append(seed)
        examples = await household_examples(household.directory, questions_for(household, 0), model, seed, f"h{seed}")
        for e in (e for e in examples if e.role == "choose"):
            n = len(candidate_lines(e.prompt))
            schema = choice_schema(n)
            out = await model.generate_structured(e.prompt, schema, max_tokens=worst_case_tokens(schema),
                                                  role="choose")
            chosen = sorted({x for x in out.value.lines if 1 <= x <= n}) or [0]
            expected = sorted(set(json.loads(e.target)["lines"])) or [0]
            asked = e.prompt[e.prompt.rfind(QUESTION_MARK) + len(QUESTION_MARK):].split("\n", 1)[0].strip()
            probe.add(asked, expected, chosen)
        progress(f"household {seed}: chooser {probe.right}/{probe.asked}")
    return probe


async def probe_results(model: Model, settings: Settings, households: int, first: int = FIRST_HOUSEHOLD,
                        progress: Callable[[str], None] = lambda _: None) -> tuple[list[int], list]:
    """(household seeds, results): every generated question of `households` households through the
    whole harness, scored as `eval` does (`settings` gives the harness section; each household gets
    its own data dir and time zone)."""
    from edge_agent.eval.runner import run_mode
    from edge_agent.eval.world_setup import ensure_world_loaded, world_clock

    seeds: list[int] = []
    results: list = []
    for seed, household, data_dir in held_out(households, first):
        here = settings.model_copy(deep=True, update={"data_dir": data_dir, "timezone": household.timezone})
        await ensure_world_loaded(here, household.directory, err=io.StringIO())
        run = await run_mode("harness", here, questions_for(household, 0), world_clock(household.directory),
                             model=model, run_id=f"probe{seed}", progress=lambda _: None)
        seeds.append(seed)
        results += run.results
        progress(f"household {seed}: end to end {sum(r.end_to_end for r in results)}/{len(results)}")
    return seeds, results


async def probe_harness(model: Model, settings: Settings, households: int, first: int = FIRST_HOUSEHOLD,
                        progress: Callable[[str], None] = lambda _: None) -> dict:
    """probe_results summarized as `eval` summarizes a mode."""
    from edge_agent.eval.summary import summarize

    t0 = time.perf_counter()
    seeds, results = await probe_results(model, settings, households, first, progress)
    summary = summarize("harness", model.name, results, time.perf_counter() - t0)
    summary["households"] = seeds
    return summary


def decisions(result) -> tuple:
    """What a model decided for one question: the skill, every call with its arguments, the answer
    (for a remember request its preview: the reply around it carries a random action id, which is
    no choice of the model)."""
    return result.plan, tuple((c["tool"], repr(c["args"])) for c in result.calls), \
        result.pending_preview or result.answer


async def agreement(first_model: Model, second_model: Model, settings: Settings, households: int,
                    progress: Callable[[str], None] = lambda _: None) -> dict:
    """The share of held-out questions on which two models (the runtime LoRA pair and the merged
    file) make every decision alike: the same skill, the same calls and arguments, the same answer;
    and by_part, the share alike in each of the three alone (the answer is what the user reads)."""
    _, a = await probe_results(first_model, settings, households, progress=progress)
    _, b = await probe_results(second_model, settings, households, progress=progress)
    return {**compared(a, b), "first": first_model.name, "second": second_model.name}


def compared(a: Sequence[Any], b: Sequence[Any]) -> dict:
    """Two runs' results on the same questions side by side: how many decided everything alike,
    the share alike in each of skill, calls and answer alone, each run's end to end, and the first
    ten that differ."""
    from edge_agent.eval.summary import rate

    pairs = [(decisions(x), decisions(y)) for x, y in zip(a, b)]
    differ = [{"question": x.question, "first": repr(p), "second": repr(q)}
              for x, (p, q) in zip(a, pairs) if p != q]
    same = len(pairs) - len(differ)
    return {"questions": len(pairs), "same": same, "agreement": rate(same, len(pairs)),
            "by_part": {part: rate(sum(p[i] == q[i] for p, q in pairs), len(pairs))
                        for i, part in enumerate(("skill", "calls", "answer"))},
            "end_to_end": [rate(sum(r.end_to_end for r in rs), len(rs)) for rs in (a, b)],
            "differ": differ[:10]}
