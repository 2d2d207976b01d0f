"""The eval runner: each question through the service's own Assistant, in-process, scored.

One Assistant a mode, over a data dir holding the sample world, with the world's fixed clock and
every tool instrumented by the recorder. `oracle` is the harness mode driven by the Oracle model;
`harness` and `direct` use the configured GGUF (the bundled tiny model by default).
"""
from __future__ import annotations

import json
import logging
import resource
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TextIO

from edge_agent.config import Settings
from edge_agent.eval import scoring
from edge_agent.eval.oracle import Oracle
from edge_agent.eval.projection import project_seconds
from edge_agent.eval.questions import Question
from edge_agent.eval.recorder import ToolRecorder, dispatched_runs
from edge_agent.eval.summary import summarize
from edge_agent.eval.world_setup import WorldClock
from edge_agent.harness.outcome import Outcome
from edge_agent.llm.base import Model

log = logging.getLogger(__name__)

EVAL_MODES: tuple[str, ...] = ("harness", "direct", "oracle")
HARNESS_MODE = {"harness": "harness", "direct": "direct", "oracle": "harness"}  # what ask() is told
ANSWER_CHARS_IN_PROGRESS = 60  # of the answer echoed on a progress line
ROLE_FIELDS = ("calls", "prompt_tokens", "cached_tokens", "generated_tokens", "forced_tokens")
# The oracle is a test double: its token counts are the double's stand-in (about 4 bytes a token,
# no KV-cache reuse), so nothing is projected from them. `edge-agent bench harness` drives the same
# route through the real model and projects from its counts.
ORACLE_TOKEN_SOURCE = "stand-in estimate (~4 bytes a token, no KV cache): not projected, see bench harness"


def peak_rss_mb() -> float:
    """This process's peak resident set so far (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


@dataclass
class QuestionResult:
    """One question in one mode: the outcome, the score, the cost."""

    mode: str
    """harness | direct | oracle"""
    id: str
    """Question id."""
    category: str
    """Question category."""
    question: str
    """The question text."""
    request_id: str
    """The request id (its trace rows are stored under it)."""
    exit_kind: str
    """How the loop ended."""
    answer: str
    """What the asker read (scored alone)."""
    sources: list[dict[str, Any]]
    """What the answer rests on: store, title, device and the exact spans (not scored, but by the lenient figure)."""
    attachment: str | None
    """The attached file's name, if any."""
    tools_called: list[str]
    """Real tools run, in order."""
    plan: str | None
    """The skill the planner chose."""
    calls: list[dict[str, Any]]
    """The dispatched runs: tool, args, found, error."""
    score: dict[str, Any]
    """The five failure points and the reasons for misses."""
    latency_ms: float
    """Wall time of ask(), measured here."""
    model_calls: int
    """Generations made."""
    prefill_tokens: int
    """Prompt tokens evaluated (not cached)."""
    decode_tokens: int
    """Tokens generated."""
    tool_ms: float
    """Time inside real tools."""
    roles: dict[str, dict[str, Any]]
    """Per role kind (planner, l2, l3, choose, reply): calls, prompt, cached, generated and forced tokens."""
    pi_projected_s: float | None
    """PROJECTION: model seconds on a Pi 5 with a 3B Q4_K_M model (see projection.py)."""
    rss_mb: float
    """Resident set after the question."""
    peak_rss_mb: float
    """Process peak resident set so far."""
    error: str | None = None
    """The Outcome's error, if any."""
    grammar_failures: int = 0
    """Structured generations of the question that did not validate (harness/trace.py)."""
    reason: str | None = None
    """Why the loop stopped early, if it did."""
    pending_preview: str | None = None
    """The previewed effect (needs_confirmation)."""

    @property
    def end_to_end(self) -> bool:
        return bool(self.score.get("end_to_end"))

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class ModeRun:
    """Everything one mode produced."""

    mode: str
    """harness | direct | oracle"""
    model: str
    """The model's name."""
    results: list[QuestionResult] = field(default_factory=list)
    """Per question, in order."""
    wall_s: float = 0.0
    """Time the whole mode took."""
    notebook_delta: int = 0
    """Notes added during the mode (must be 0: effects wait for confirmation)."""
    planned: int = 0
    """Questions the mode was given; more than len(results) when the time box ran out."""

    def summary(self) -> dict[str, Any]:
        source = ORACLE_TOKEN_SOURCE if self.mode == "oracle" else "the model's tokenizer"
        out = summarize(self.mode, self.model, self.results, self.wall_s, self.notebook_delta, source)
        out["planned_questions"] = self.planned
        return out


def observe(outcome: Outcome, runs: list[scoring.ToolRun]) -> scoring.Observation:
    pending = outcome.pending
    return scoring.Observation(
        exit_kind=outcome.exit_kind, answer=outcome.answer or "", sources=list(outcome.sources),
        tools_called=list(outcome.tools_called),
        attachment=outcome.attachment, pending_tool=pending.tool if pending else None,
        pending_args=dict(pending.args) if pending else None, pending_preview=pending.preview if pending else "",
        runs=dispatched_runs(runs, list(outcome.tools_called)), error=outcome.error)


def tool_aliases(tools: dict[str, Any]) -> dict[str, str]:
    """Every spelling (name, slug) -> the real name, from the manifests."""
    out: dict[str, str] = {}
    for name, tool in tools.items():
        out[name] = name
        slug = getattr(tool.manifest, "slug", "")
        if slug:
            out[slug] = name
    return out


def effect_tools(tools: dict[str, Any]) -> list[str]:
    return [name for name, tool in tools.items() if tool.manifest.has_effect]


ProgressFn = Callable[[str], None]


def _progress_printer(err: TextIO) -> ProgressFn:
    return lambda line: print(line, file=err, flush=True)


async def run_mode(mode: str, settings: Settings, questions: Sequence[Question], clock: WorldClock, *,
                   model: Model | None = None, run_id: str = "", progress: ProgressFn | None = None,
                   on_result: Callable[[QuestionResult], None] | None = None,
                   time_box_s: float | None = None) -> ModeRun:
    """Answer every question in one mode; the model (unless oracle) must be given, already loaded.

    on_result receives each result as soon as it is scored (so an interrupted run keeps them).
    With time_box_s, no new question starts once that many seconds have passed.
    """
    from edge_agent.app import build_assistant
    from edge_agent.eval.world_setup import notebook_count
    from edge_agent.tools.registry import build_tools

    if mode not in EVAL_MODES:
        raise ValueError(f"unknown eval mode {mode!r}; use one of {', '.join(EVAL_MODES)}")
    progress = progress or _progress_printer(sys.stderr)  # looked up now: tests swap sys.stderr
    oracle = Oracle(n_ctx=settings.model.n_ctx) if mode == "oracle" else None
    use_model = oracle.model if oracle else model
    if use_model is None:
        raise ValueError(f"mode {mode} needs a loaded model")
    recorder = ToolRecorder()
    tools = recorder.instrument(build_tools(enforce_guards=False))
    aliases, effects = tool_aliases(tools), effect_tools(tools)
    run = ModeRun(mode, getattr(use_model, "name", "model"), planned=len(questions))
    notes_before = await notebook_count(settings)
    started = time.perf_counter()
    passed = 0
    settings.harness.log_chats = False  # one question's answer must not become the next one's memory
    async with build_assistant(settings, model=use_model, now=clock.now, tools=tools) as assistant:
        await assistant.wait_warm()  # every question meets the same head cache: stable token counts
        for i, q in enumerate(questions, 1):
            if time_box_s is not None and time.perf_counter() - started > time_box_s:
                progress(f"[{mode}] time box of {time_box_s:g} s spent: stopping after {i - 1} of {len(questions)}")
                break
            if oracle:
                oracle.begin(q)
            recorder.take()
            request_id = f"eval-{run_id}-{mode}-{q.id}"
            t0 = time.perf_counter()
            outcome = await assistant.ask(q.question, request_id=request_id, mode=HARNESS_MODE[mode])
            latency_ms = (time.perf_counter() - t0) * 1000
            result = _result(mode, q, request_id, outcome, recorder.take(), latency_ms, aliases, effects)
            run.results.append(result)
            if on_result is not None:
                on_result(result)
            passed += result.end_to_end
            progress(_progress_line(mode, i, len(questions), result, passed))
    run.wall_s = time.perf_counter() - started
    run.notebook_delta = await notebook_count(settings) - notes_before
    return run


def _result(mode: str, q: Question, request_id: str, outcome: Outcome, runs: list[scoring.ToolRun],
            latency_ms: float, aliases: dict[str, str], effects: list[str]) -> QuestionResult:
    obs = observe(outcome, runs)
    sc = scoring.score(q, obs, aliases=aliases, effect_tools=effects)
    planned = scoring.score(q, scoring.by_plan(obs, outcome.by_question), aliases=aliases, effect_tools=effects)
    usage = outcome.usage or {}
    prefill, decode = int(usage.get("prefill_tokens", 0)), int(usage.get("decode_tokens", 0))
    forced = int(usage.get("forced_tokens", 0))
    projected = None if mode == "oracle" else round(project_seconds(prefill, decode, forced), 2)
    attachment = outcome.attachment or {}
    return QuestionResult(
        mode=mode, id=q.id, category=q.category, question=q.question, request_id=request_id,
        exit_kind=outcome.exit_kind, answer=outcome.answer or "", sources=list(outcome.sources),
        attachment=attachment.get("name") or attachment.get("path"), tools_called=list(outcome.tools_called),
        plan=outcome.plan,
        calls=[{"tool": r.tool, "args": r.args, "found": r.found, "error": r.error} for r in obs.runs],
        score={**sc.as_dict(), scoring.BY_PLAN: planned.tool_selection}, latency_ms=round(latency_ms, 1),
        model_calls=int(usage.get("model_calls", 0)),
        prefill_tokens=prefill, decode_tokens=decode, tool_ms=float(usage.get("tool_ms", 0.0)),
        roles={k: {f: v.get(f, 0) for f in ROLE_FIELDS} for k, v in (usage.get("roles") or {}).items()
               if isinstance(v, dict) and v.get("calls")},
        pi_projected_s=projected, rss_mb=round(current_rss_mb(), 1),
        peak_rss_mb=round(peak_rss_mb(), 1), error=outcome.error, reason=getattr(outcome, "reason", None),
        grammar_failures=int(usage.get("grammar_failures", 0)),
        pending_preview=outcome.pending.preview if outcome.pending else None)


def _progress_line(mode: str, i: int, n: int, r: QuestionResult, passed: int) -> str:
    mark = "ok  " if r.end_to_end else "MISS"
    failed = ",".join(p for p in scoring.POINTS[:-1] if not r.score.get(p)) or "-"
    answer = " ".join(r.answer.split())[:ANSWER_CHARS_IN_PROGRESS]
    return (f"[{mode} {i}/{n}] {r.id} {r.category:<13} {mark} exit={r.exit_kind:<18} failed={failed:<40} "
            f"{r.latency_ms / 1000:6.1f}s | end to end {passed}/{i} = {passed / i:.2f} | {answer}")


def result_line(result: QuestionResult) -> str:
    """One line of results.jsonl."""
    return json.dumps(result.as_dict(), ensure_ascii=False, sort_keys=True) + "\n"
