"""The harness end to end: plan, follow the skill, search by the question's words, reply.

Exit kinds: complete | halted (a tool's budget ran out) | step_limit (L2 steps, token budget or
window) | timeout | needs_confirmation | error. A halt or a limit is not a failure: the reply is
chosen from whatever the side channels hold. ContextOverflow and runtime failures end as exit
kind error with a clear message; nothing escapes as a crash.
"""
from __future__ import annotations

import asyncio
import functools
import logging
import secrets
from dataclasses import dataclass
from typing import Any, Callable

import aiosqlite

from edge_agent.harness import reply as replies
from edge_agent.harness import retrieval
from edge_agent.harness.startup import static_heads
from edge_agent.harness.direct import run_direct
from edge_agent.harness import prompts
from edge_agent.harness.follower import Follower, FollowEnd
from edge_agent.harness.outcome import Outcome, PendingAction, PillSink
from edge_agent.harness.planner import Planner
from edge_agent.harness.skills import NONE_SKILL, Skill
from edge_agent.harness.toolbox import Toolbox
from edge_agent.harness.turn import ConfirmationRequired, LimitReached, Limits, ModelCallFailed, TurnContext
from edge_agent.llm.base import ContextOverflow, Model
from edge_agent.tools import dates
from edge_agent.store import traces as trace_store
from edge_agent.tools.base import ToolError

log = logging.getLogger(__name__)

MODES = ("harness", "direct")
ATTEMPT = 1  # one plan, one follow: the question's own words search every other store (retrieval.py)
ACTION_ID_BYTES = 16  # 128 random bits: a pending-action id cannot be guessed (32 hex characters)


@dataclass
class Harness:
    """Answers questions and confirms pending actions. One instance serves many requests."""

    model: Model
    """The runtime every generation goes through (its FIFO lock serializes them)."""
    toolbox: Toolbox
    """Real tools, guards off, and their context."""
    skills: dict[str, Skill]
    """Validated skills by name."""
    limits: Limits
    """Bounds of one question."""
    db: aiosqlite.Connection
    """Traces and pending actions."""
    tracing: bool = True
    """Store trace rows."""
    clock: Callable[[], float] | None = None
    """Monotonic clock override (tests)."""
    constrain_l2: bool = True
    """L2's grammar admits only exposed tool names and a call as the first step."""
    log_chats: bool = False
    """Append each answered question and its answer to the memory log (kind chat)."""
    by_question: bool = True
    """Search every local store with the question's own words too (retrieval.py)."""

    def __post_init__(self) -> None:
        self.planner = Planner.for_tools(self.skills, self.toolbox.tools)
        self.follower = Follower(self.toolbox, self.constrain_l2)
        self.local = retrieval.local_only(self.toolbox)
        """The tools over this device's data only: what the question's words search."""
        self.searchable = retrieval.searchable(self.toolbox.tools) if self.by_question else ()
        """The stores the question's words search (retrieval.searchable)."""
        self.calendar = retrieval.by_days(self.toolbox.tools, "events") if self.by_question else None
        """The calendar the question's words search by name (retrieval.by_days)."""

    async def static_heads(self) -> list[str]:
        """Every static prompt head as of today, rendered: what the runtime evaluates once and keeps."""
        return await static_heads(self.model, self.skills, self.toolbox)

    async def ask(self, question: str, *, request_id: str, mode: str = "harness",
                  on_pill: PillSink | None = None, device: str | None = None) -> Outcome:
        kwargs: dict[str, Any] = {"clock": self.clock} if self.clock else {}
        turn = TurnContext(request_id, question, self.model, self.limits, on_pill, device, **kwargs)
        try:
            if mode not in MODES:
                return self._finish(turn, "error", replies.Reply(f"unknown mode {mode!r}; use one of {', '.join(MODES)}"),
                                    error=f"unknown mode {mode!r}")
            outcome = await self._ask(turn, mode)
            if self.log_chats:
                await self._log_chat(turn, outcome)
            return outcome
        finally:
            forget = getattr(self.model, "forget_session", None)
            if forget is not None:
                for attempt in (ATTEMPT, "direct"):
                    forget(f"l2:{request_id}:{attempt}")
            await self._save_traces(turn)

    async def _ask(self, turn: TurnContext, mode: str) -> Outcome:
        end: FollowEnd | None = None
        skill: Skill | None = None
        try:
            if mode == "direct":
                end = await run_direct(turn, self.toolbox)
            else:
                plan = await self.planner.plan(turn)
                turn.plan = plan.skill
                if plan.skill != NONE_SKILL:
                    skill = self.skills[plan.skill]
                    end = await self.follower.run(turn, skill, plan.rationale, ATTEMPT)
            final = await self._reply(turn, skill, mode)
            kind = end.kind if end else "complete"
            return self._finish(turn, kind, final, reason=end.reason if end else "")
        except ConfirmationRequired as effect:
            return await self._needs_confirmation(turn, effect)
        except LimitReached as limit:
            final = await self._reply(turn, skill, mode, after_limit=True)
            return self._finish(turn, limit.kind, final, reason=limit.reason)
        except ModelCallFailed as failed:
            message = (f"the prompt for {failed.role} does not fit the model's window: {failed.cause}"
                       if isinstance(failed.cause, ContextOverflow) else f"the model failed in {failed.role}: {failed.cause}")
            log.warning("request %s: %s", turn.request_id, message)
            final = await self._reply(turn, skill, mode, after_limit=True)
            if final.text == replies.NOT_FOUND:
                final = replies.Reply(f"Sorry, I could not answer: {message}")
            return self._finish(turn, "error", final, error=message)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # our bug: reported as exit kind error, never a dead service
            log.exception("request %s failed", turn.request_id)
            message = f"internal error: {type(err).__name__}: {err}"
            return self._finish(turn, "error", replies.Reply(f"Sorry, I could not answer: {message}"), error=message)

    async def _reply(self, turn: TurnContext, skill: Skill | None, mode: str, *,
                     after_limit: bool = False) -> replies.Reply:
        """A rendered answer (a date, a calendar range); else search by the question's words too
        (unless time is up) and the reply chosen from everything found. With the plan's "none" and
        nothing chosen from the user's data: the model's own short reply."""
        channels = [self.toolbox.manifest(t).channel for t in (skill.tools if skill else ()) if t in self.toolbox.tools]
        stores = [replies.STORE_OF.get(c, c) for c in channels]
        today = self.local.ctx.now().date()
        if self.by_question and not after_limit and dates.asks_how_long(turn.question):
            await retrieval.read_today(turn, self.local)  # "how long until ...": counted from today's date
        done = replies.rendered(turn, stores, today)
        if done is not None:
            return replies.counted(done, turn.question, today)
        if self.by_question and not after_limit and turn.elapsed_s() <= turn.limits.deadline_s:
            await retrieval.search_everywhere(turn, self.local, self.searchable, self.calendar)
        try:
            look_up = functools.partial(retrieval.search_words, turn, self.local, self.searchable) \
                if self.by_question and not after_limit else None
            final = await replies.reply(turn, needs_data=skill is not None or mode == "direct", first_stores=stores,
                                        located=turn.located[-1] if turn.located else None, look_up=look_up,
                                        today=today)
        except (ModelCallFailed, LimitReached):
            final = None
        if final is not None:
            return replies.counted(final, turn.question, today)
        if after_limit or not turn.can_generate(turn.limits.answer_tokens):
            return replies.Reply(replies.NOT_FOUND)
        text, _ = await turn.text("reply", prompts.no_tools_messages(turn.question),
                                  max_tokens=turn.limits.answer_tokens, input=turn.question,
                                  head=prompts.no_tools_static())
        if replies.is_structured(text):  # a tool call or object it wrote is nothing to say to a person
            log.info("request %s: the model's own reply was structured data; not shown", turn.request_id)
            return replies.Reply(replies.NOT_FOUND)
        return replies.Reply(text.strip())

    async def _needs_confirmation(self, turn: TurnContext, effect: ConfirmationRequired) -> Outcome:
        action = PendingAction(secrets.token_hex(ACTION_ID_BYTES), effect.tool, effect.arguments, effect.preview)
        await trace_store.add_pending(self.db, action.id, turn.request_id, action.tool, action.args, action.preview)
        text = f"{action.preview}\nNothing is saved until you confirm it (action {action.id})."
        outcome = self._finish(turn, "needs_confirmation", replies.Reply(text))
        outcome.pending = action
        return outcome

    def _finish(self, turn: TurnContext, kind: str, final: replies.Reply, *,
                reason: str = "", error: str | None = None) -> Outcome:
        return Outcome(turn.request_id, kind, final.text,  # type: ignore[arg-type]
                       attachment=final.attachment, sources=list(final.sources),
                       tools_called=list(turn.tools_called), by_question=list(turn.by_question),
                       usage=turn.tracer.usage_summary(), error=error, reason=reason or None,
                       pills=list(turn.pills), plan=turn.plan)

    async def _log_chat(self, turn: TurnContext, outcome: Outcome) -> None:
        """The exchange goes to the chat log under its asker's name, never into the user's memory.

        Only answers built from a tool's data are kept: an answer the model made up without
        looking anything up is not worth recalling. The asker is the sender part of the
        service's request id ("<sender>.<request id>"); a local ask is logged as "local".
        """
        if outcome.exit_kind in ("error", "needs_confirmation") or not turn.tools_called:
            return  # nothing was answered from data; a preview is not a fact
        asker = turn.request_id.split(".", 1)[0] if "." in turn.request_id else "local"
        try:
            when = self.toolbox.ctx.now().isoformat(timespec="seconds")
            await self.toolbox.ctx.store.memory.log_chat(asker, when, turn.question, outcome.answer,
                                                         list(dict.fromkeys(turn.tools_called)))
        except Exception as err:  # a full disk must not turn an answer into a failure
            log.warning("request %s: chat not logged: %s", turn.request_id, err)

    async def _save_traces(self, turn: TurnContext) -> None:
        if not self.tracing or not turn.tracer.records:
            return
        try:
            await trace_store.save_traces(self.db, turn.tracer.records)
        except Exception as err:  # a full disk must not turn an answer into a failure
            log.warning("request %s: traces not stored: %s", turn.request_id, err)

    async def recover_interrupted(self) -> dict[str, str]:
        """At start: every action a crash left `running` ends done (its effect is in the store),
        pending again (surely not: confirming runs it) or failed (cannot be told); never stuck."""
        ended: dict[str, str] = {}
        for row in await trace_store.interrupted(self.db):
            tool = self.toolbox.tools.get(row.tool)
            try:
                done = await tool.completed(tool.parse_args(row.args), self.toolbox.ctx) if tool else None
            except Exception as err:  # a check that fails tells nothing
                log.warning("action %s: cannot tell whether it completed: %s", row.id, err)
                done = None
            if done is True:
                await trace_store.finish_pending(self.db, row.id, True, "completed before a restart")
            elif done is False:
                await trace_store.reopen_pending(self.db, row.id)
            else:
                await trace_store.finish_pending(self.db, row.id, False, "interrupted by a restart; ask again")
            ended[row.id] = {True: "done", False: "pending"}.get(done, "failed")  # type: ignore[arg-type]
            log.warning("action %s was interrupted by a restart: now %s", row.id, ended[row.id])
        return ended

    async def confirm(self, action_id: str, *, request_id: str) -> Outcome:
        """Run exactly the previewed action, once."""
        action_id = action_id.strip()
        row = await trace_store.get_pending(self.db, action_id)
        if row is None:
            return Outcome(request_id, "error", f"There is no pending action {action_id!r}.",
                           error=f"unknown action {action_id!r}")
        if not await trace_store.claim_pending(self.db, action_id):
            return Outcome(request_id, "error", f"Action {action_id} was already confirmed ({row.status}); "
                                                f"it will not run again.",
                           error=f"action {action_id} was already confirmed ({row.status}); it will not run again")
        tool = self.toolbox.tools.get(row.tool)
        try:
            if tool is None:
                raise ToolError(f"tool {row.tool} is not available")
            result = await tool(row.args, self.toolbox.ctx)
        except Exception as err:  # recorded as failed so the action never hangs in "running"
            if not isinstance(err, ToolError):
                log.exception("action %s failed", action_id)
            await trace_store.finish_pending(self.db, action_id, False, str(err))
            return Outcome(request_id, "error", f"{row.preview} — failed: {err}", tools_called=[row.tool],
                           error=str(err))
        await trace_store.finish_pending(self.db, action_id, True, result.text)
        return Outcome(request_id, "complete", f"Done. {row.preview}", tools_called=[row.tool],
                       sources=[{"store": "notebook", "title": "new note", "device": None, "text": [row.preview]}])
