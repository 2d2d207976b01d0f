"""One `edge-agent eval` invocation: questions, world, modes, files written, the JSON result."""
from __future__ import annotations

import asyncio
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence, TextIO

from edge_agent.config import Settings
from edge_agent.eval.questions import Catalog, Question, QuestionSet, load_questions
from edge_agent.eval.report import RESULTS_NAME, load_run, write_report
from edge_agent.eval.runner import EVAL_MODES, ModeRun, result_line, run_mode, tool_aliases
from edge_agent.eval.world_setup import WorldClock, ensure_world_loaded, world_clock

log = logging.getLogger(__name__)

RUN_STAMP = "%Y%m%d-%H%M%S"  # the default out dir's name: <data dir>/eval/<stamp>-<modes>


@dataclass(frozen=True)
class EvalOptions:
    """What one eval run does."""

    modes: tuple[str, ...]
    """Modes to run, in order."""
    questions: Path
    """The question file."""
    world: Path
    """The world folder the questions are written against."""
    out: Path | None = None
    """Where results go; None = a new dir under <data dir>/eval."""
    limit: int | None = None
    """Only the first N questions."""
    ids: tuple[str, ...] = ()
    """Only these question ids."""
    per_category: int | None = None
    """Only the first K questions of each category (a spread sample for a slow model)."""
    compare: tuple[Path, ...] = field(default_factory=tuple)
    """Earlier out dirs whose modes join the report."""
    time_box_s: float | None = None
    """Per mode: no new question starts after this many seconds."""


def parse_modes(values: Sequence[str]) -> tuple[str, ...]:
    """'harness,direct' and repeated flags -> ('harness', 'direct'); unknown modes raise ValueError."""
    modes: list[str] = []
    for value in values:
        for mode in (m.strip() for m in value.split(",")):
            if not mode:
                continue
            if mode not in EVAL_MODES:
                raise ValueError(f"unknown mode {mode!r}; use {', '.join(EVAL_MODES)}")
            if mode not in modes:
                modes.append(mode)
    if not modes:
        raise ValueError("no mode given")
    return tuple(modes)


def default_out(settings: Settings, modes: Sequence[str]) -> Path:
    return settings.data_dir / "eval" / f"{time.strftime(RUN_STAMP)}-{'-'.join(modes)}"


def pick_questions(qset: QuestionSet, opts: EvalOptions) -> list:
    chosen = qset.questions
    if opts.ids:
        wanted = set(opts.ids)
        unknown = wanted - {q.id for q in chosen}
        if unknown:
            raise ValueError(f"unknown question id(s): {', '.join(sorted(unknown))}")
        chosen = [q for q in chosen if q.id in wanted]
    if opts.per_category is not None:
        taken: dict[str, int] = {}
        spread = []
        for q in chosen:
            if taken.get(q.category, 0) < opts.per_category:
                taken[q.category] = taken.get(q.category, 0) + 1
                spread.append(q)
        chosen = spread
    return chosen if opts.limit is None else chosen[:max(opts.limit, 0)]


def assistant_catalog() -> Catalog:
    """The real tools (with slugs) and skills, for checking a question file's references."""
    from edge_agent.harness.skills import NONE_SKILL, load_skills
    from edge_agent.tools.registry import build_tools

    tools = build_tools(enforce_guards=False)
    skills = {name: tuple(skill.tools) for name, skill in load_skills(known_tools=tools).items()}
    skills[NONE_SKILL] = ()
    return Catalog(tool_aliases(tools), skills, {name: tool.Args for name, tool in tools.items()})


async def _run_modes(settings: Settings, opts: EvalOptions, questions: Sequence[Question], clock: WorldClock,
                     out: Path, err: TextIO) -> list[ModeRun]:
    """Each mode in turn over one loaded model (the oracle needs none); results.jsonl as they come."""
    model = None
    runs: list[ModeRun] = []
    run_id = time.strftime(RUN_STAMP)
    with (out / RESULTS_NAME).open("w", encoding="utf-8") as sink:
        def keep(result) -> None:  # written as it comes: an interrupted benchmark keeps what it measured
            sink.write(result_line(result))
            sink.flush()

        try:
            for mode in opts.modes:
                if mode != "oracle" and model is None:
                    from edge_agent.llm import load_model

                    model = await asyncio.to_thread(load_model, settings)
                runs.append(await run_mode(mode, settings, questions, clock, model=model, run_id=run_id,
                                           progress=lambda line: print(line, file=err, flush=True),
                                           on_result=keep, time_box_s=opts.time_box_s))
        finally:
            if model is not None:
                model.close()
    return runs


def run_eval(settings: Settings, opts: EvalOptions, err: TextIO | None = None) -> dict[str, Any]:
    """Run every mode, write the files, return the JSON result (progress goes to `err`, default stderr)."""
    return asyncio.run(_run_eval(settings, opts, err or sys.stderr))


async def _run_eval(settings: Settings, opts: EvalOptions, err: TextIO) -> dict[str, Any]:
    qset = load_questions(opts.questions, catalog=assistant_catalog())
    for problem in qset.rejected:
        print(f"eval: {opts.questions}: rejected {problem}", file=err)
    for warning in qset.warnings:
        print(f"eval: {opts.questions}: warning {warning}", file=err)
    questions = pick_questions(qset, opts)
    earlier = [(other, *load_run(other)) for other in opts.compare]  # a bad --compare fails before the run
    clock = world_clock(opts.world)
    settings = settings.model_copy(update={"timezone": clock.timezone})
    await ensure_world_loaded(settings, opts.world, err)
    out = opts.out or default_out(settings, opts.modes)
    out.mkdir(parents=True, exist_ok=True)
    print(f"eval: {len(questions)} questions, modes {', '.join(opts.modes)}, clock {clock.now.isoformat()}, "
          f"data {settings.data_dir}, out {out}", file=err)

    runs = await _run_modes(settings, opts, questions, clock, out, err)
    summaries = [r.summary() for r in runs]
    results = [r.as_dict() for run in runs for r in run.results]
    all_summaries, all_results = list(summaries), list(results)
    for other, more_summaries, more_results in earlier:
        for s in more_summaries:
            s["label"] = f"{s.get('label') or s['mode']} ({other.name})"
        all_summaries += more_summaries
        all_results += more_results
    paths = write_report(out, all_summaries, all_results, questions_path=str(opts.questions), own=summaries)
    result: dict[str, Any] = {
        "questions_file": str(opts.questions), "questions": len(questions), "rejected_lines": len(qset.rejected),
        "out": str(out), "report": str(paths["report"]), "chart": str(paths["chart"]),
        "modes": {s["mode"]: s for s in summaries},
    }
    if len(summaries) == 1:  # one mode: its headline figures at the top level too
        result.update({k: v for k, v in summaries[0].items() if k not in ("by_category", "questions")})
    return result
