"""The wiring: model + tools + skills + store + harness = an Assistant (the Asker the service calls).

    async with build_assistant(settings) as assistant:          # start() on enter, close() on exit
        outcome = await assistant.ask("When is Leo's birthday?", request_id="r1", on_pill=print)
        done = await assistant.confirm(outcome.pending.id, request_id="r2")   # for needs_confirmation

`build_assistant` returns an Assistant that is an async context manager; callers that manage
lifetimes themselves may call `await assistant.start()` and `await assistant.close()` instead.
start() loads the model (unless one was passed), builds the tools with their guards off, loads
and validates the skills (a broken skill file raises SkillError naming the file), checks every
role's prompt fits the window and opens the database. ask()/confirm() implement the Asker
protocol of edge_agent.harness.outcome.
"""
from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from edge_agent.config import Settings
from edge_agent.harness.outcome import Outcome, PillSink
from edge_agent.harness.runner import Harness
from edge_agent.harness.skills import load_skills
from edge_agent.harness.startup import check_prompts_fit
from edge_agent.harness.toolbox import Toolbox
from edge_agent.harness.turn import Limits
from edge_agent.llm.base import Model
from edge_agent.paths import SKILLS_DIR
from edge_agent.store.db import connect
from edge_agent.tools.base import RemoteSearcher, Tool, ToolContext

log = logging.getLogger(__name__)

NowArg = Callable[[], datetime] | datetime | str | None


class AssistantNotStarted(RuntimeError):
    """ask/confirm was called before start() (or after close())."""


class Assistant:
    """One process's assistant: serves many concurrent requests; generations queue on the model lock."""

    def __init__(self, settings: Settings, *, model: Model | None = None, remote_search: RemoteSearcher | None = None,
                 list_remote_devices: Callable[[], Any] | None = None, now: NowArg = None,
                 tools: dict[str, Tool] | None = None, skills_dir: Path = SKILLS_DIR, confirm_only: bool = False,
                 warm_heads: bool = True):
        self.settings = settings
        self.model = model
        self._owns_model = model is None
        self._remote_search = remote_search
        self._list_remote_devices = list_remote_devices
        self._now = now
        self._tools = tools
        self._skills_dir = skills_dir
        self._confirm_only = confirm_only
        """True: no model is loaded; only confirm() works (the CLI's `confirm --local`)."""
        self.warm_heads = warm_heads
        """Evaluate every static prompt head in the background after start (questions that arrive
        meanwhile queue on the model lock between heads)."""
        self.store: Any = None
        self.harness: Harness | None = None
        self._db = None
        self.prompt_sizes: dict[str, int] = {}
        """Worst-case prompt tokens of each role, measured at start."""
        self._warming: asyncio.Task | None = None

    async def __aenter__(self) -> "Assistant":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        from edge_agent.store.api import Store
        from edge_agent.tools.registry import build_tools

        tools = self._tools if self._tools is not None else build_tools(enforce_guards=False)
        skills = load_skills(self._skills_dir, known_tools=tools)
        if self.model is None and not self._confirm_only:
            from edge_agent.llm import load_model

            self.model = await asyncio.to_thread(load_model, self.settings)
        try:
            self.store = await Store.connect(self.settings.db_path)
            self._db = await connect(self.settings.db_path)
            ctx = ToolContext(store=self.store, now=self._clock(), device_id=self.settings.device_id,
                              remote_search=self._remote_search, list_remote_devices=self._list_remote_devices)
            toolbox = Toolbox(tools, ctx)
            limits = Limits.from_settings(self.settings.harness)
            if self.model is not None:
                self.prompt_sizes = check_prompts_fit(self.model, skills, toolbox, limits)
            self.harness = Harness(self.model, toolbox, skills, limits, self._db, self.settings.harness.tracing,
                                   log_chats=self.settings.harness.log_chats,
                                   by_question=self.settings.harness.by_question)
            await self.harness.recover_interrupted()
        except BaseException:
            await self.close()
            raise
        if self.model is not None and self.warm_heads:
            self._warming = asyncio.create_task(self._warm(self.harness), name="warm-heads")
        log.info("assistant ready: %d skills, %d tools, model %s", len(skills), len(tools),
                 getattr(self.model, "name", "none (confirm only)"))

    async def _warm(self, harness: Harness) -> None:
        t0 = asyncio.get_running_loop().time()
        try:
            heads = await harness.static_heads()
            await self.model.warm_heads(heads)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # a head that cannot be kept costs speed, never the service
            log.warning("prompt heads not warmed: %s", err)
            return
        log.info("prompt heads warm: %d in %.1f s (%s)", len(heads), asyncio.get_running_loop().time() - t0,
                 self.model.head_cache_stats())

    @property
    def warming(self) -> bool:
        """Whether the static prompt heads are still being evaluated."""
        return self._warming is not None and not self._warming.done()

    async def wait_warm(self) -> None:
        """Until the start-up warming has finished (benchmarks start measuring after it)."""
        if self._warming is not None:
            await asyncio.shield(self._warming)

    def status(self) -> dict[str, Any]:
        """What the status topic adds about the assistant: warming, and the head cache's size."""
        stats = self.model.head_cache_stats() if self.model is not None else {}
        return {"heads": "warming" if self.warming else "ready",
                "head_cache_mb": round(stats.get("ram_bytes", 0) / 2**20, 1)}

    def _clock(self) -> Callable[[], datetime]:
        from edge_agent.tools.clock import device_zone, fixed_clock, system_clock

        zone = device_zone(self.settings.timezone)
        if callable(self._now):
            return self._now
        if self._now is not None:
            return fixed_clock(self._now, zone)
        return system_clock(zone)

    async def close(self) -> None:
        if self._warming is not None:
            self._warming.cancel()
            try:
                await self._warming
            except (asyncio.CancelledError, Exception):
                pass
            self._warming = None
        self.harness = None
        for closer in (self._db, self.store):
            if closer is not None:
                try:
                    await closer.close()
                except Exception as err:  # closing must not hide the error that led here
                    log.warning("close failed: %s", err)
        self._db = self.store = None
        if self._owns_model and self.model is not None and hasattr(self.model, "close"):
            self.model.close()
            self.model = None

    def _ready(self) -> Harness:
        if self.harness is None:
            raise AssistantNotStarted("the assistant is not started")
        return self.harness

    async def ask(self, question: str, *, request_id: str, mode: str = "harness",
                  on_pill: PillSink | None = None, device: str | None = None) -> Outcome:
        if self.model is None:
            raise AssistantNotStarted("this assistant was started without a model (confirm only)")
        return await self._ready().ask(question, request_id=request_id, mode=mode, on_pill=on_pill, device=device)

    async def confirm(self, action_id: str, *, request_id: str) -> Outcome:
        return await self._ready().confirm(action_id, request_id=request_id)


def build_assistant(settings: Settings, *, model: Model | None = None, remote_search: RemoteSearcher | None = None,
                    list_remote_devices: Callable[[], Any] | None = None, now: NowArg = None,
                    **kwargs: Any) -> Assistant:
    """An unstarted Assistant; use it as `async with` (or call start()/close())."""
    return Assistant(settings, model=model, remote_search=remote_search, list_remote_devices=list_remote_devices,
                     now=now, **kwargs)
