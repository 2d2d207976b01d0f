"""What every real tool is: a manifest (the prompt text), an argument model and an async run().

The harness knows tools only through this module. Tools know nothing of the harness: anything
they need from outside (the store, the clock, a remote file searcher) arrives in ToolContext.
"""
from __future__ import annotations

import abc
import json
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Awaitable, Callable, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edge_agent.paths import TOOLS_DIR

MAX_CALLS_PER_TURN = 3  # real calls of one tool in one turn, when the tool guards itself
DUPLICATE_NUDGE = "You already made that exact call. Use what you have, or do something different."

A = TypeVar("A", bound=BaseModel)


class ToolError(Exception):
    """A tool could not do its job for a reason the model or user should hear (bad args, no data)."""


class ToolBudgetExceeded(ToolError):
    """A directly bound tool was called more than MAX_CALLS_PER_TURN times in one turn."""


class ToolManifest(BaseModel):
    """tools/<name>.toml: everything the model is ever told about a tool."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """The tool's name, as the model writes it."""
    slug: str = ""
    """An alternative spelling the dispatcher also accepts (e.g. query_calendar)."""
    signature: str
    """The exact one line L2 sees: name(args) — purpose."""
    l2_exposed: bool = True
    """False hides the tool from L2's signature list (plumbing such as list_devices)."""
    pill: str
    """The label shown to the asker while the tool runs."""
    description: str
    """The full description, shown to L3 and to the direct baseline."""
    arguments: dict[str, str] = Field(default_factory=dict)
    """Argument name -> what it means, shown to L3 beside the schema."""
    crafting_rules: str = ""
    """How L3 should craft arguments for this tool."""
    has_effect: bool = False
    """True if running it changes the user's data (needs confirmation)."""
    channel: str = "other"
    """Which side channel its payload lands in: files | notes | events | memory | date | devices | effects."""

    @classmethod
    def load(cls, name: str, directory: Path = TOOLS_DIR) -> "ToolManifest":
        path = directory / f"{name}.toml"
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            return cls.model_validate(data)
        except FileNotFoundError as err:
            raise ToolError(f"tool manifest missing: {path}") from err
        except (tomllib.TOMLDecodeError, ValidationError) as err:
            raise ToolError(f"bad tool manifest {path}: {err}") from err


@dataclass
class ToolResult:
    """What one run of a tool produced."""

    text: str
    """Compact text for the model (the control signal, fitted to a token budget by the caller)."""
    payload: Any = None
    """The exact data, JSON-serialisable, for the side channel: the answer's source of truth."""
    channel: str = "other"
    """Side channel the payload belongs to (copied from the manifest)."""
    pill: str = ""
    """Label shown to the asker."""
    found: bool = True
    """False when the tool ran fine but found nothing."""
    weak: bool = False
    """True when it found things but none matches most of the query (a near miss, not an answer)."""

    @property
    def kind(self) -> str:
        """ok | weak | empty: what the harness reports to L2 and the pill shows."""
        if not self.found:
            return "empty"
        return "weak" if self.weak else "ok"


RemoteSearcher = Callable[[str, list[str]], Awaitable[dict]]
"""(query, device ids; [] = all) -> {"hits": [...], "unreachable": [...]} from paired devices."""


@dataclass
class ToolContext:
    """What a tool may use. Passed in by whoever runs it; tools never reach up."""

    store: Any
    """edge_agent.store.Store (typed loosely so tools/ does not import the store at module load)."""
    now: Callable[[], datetime]
    """The clock: an aware datetime in the device's time zone."""
    device_id: str = "pi"
    """This device's id."""
    remote_search: RemoteSearcher | None = None
    """Searches files on paired devices; None = this device only."""
    list_remote_devices: Callable[[], Awaitable[list[dict]]] | None = None
    """Paired devices with online flags; None = none paired."""
    extras: dict[str, Any] = field(default_factory=dict)
    """Anything else a caller wants to pass (tests)."""


class Tool(abc.ABC, Generic[A]):
    """Base class of a real tool. Subclasses set `name`, `Args` and implement `run`.

    Called directly (`await tool(args, ctx)`) a tool guards itself: an exact repeat within a turn
    returns the nudge and a 4th real call raises ToolBudgetExceeded. Inside the harness L3
    constructs tools with enforce_guards=False because dispatch owns those rules.
    """

    name: ClassVar[str]
    Args: ClassVar[type[BaseModel]]

    def __init__(self, enforce_guards: bool = True, manifest: ToolManifest | None = None):
        self.enforce_guards = enforce_guards
        self.manifest = manifest or ToolManifest.load(self.name)
        self._seen: set[str] = set()
        self._calls = 0

    def reset_guards(self) -> None:
        """Start a new turn."""
        self._seen.clear()
        self._calls = 0

    def parse_args(self, raw: dict | str | BaseModel) -> BaseModel:
        if isinstance(raw, BaseModel):
            return raw
        if isinstance(raw, str):
            try:
                raw = json.loads(raw or "{}")
            except json.JSONDecodeError as err:
                raise ToolError(f"{self.name}: arguments are not JSON: {err.msg}") from err
        try:
            return self.Args.model_validate(raw)
        except ValidationError as err:
            raise ToolError(f"{self.name}: bad arguments: {err.errors()[0]['msg']}") from err

    async def __call__(self, raw_args: dict | str | BaseModel, ctx: ToolContext) -> ToolResult:
        args = self.parse_args(raw_args)
        if self.enforce_guards:
            key = json.dumps(args.model_dump(mode="json"), sort_keys=True).lower()
            if key in self._seen:
                return ToolResult(DUPLICATE_NUDGE, None, self.manifest.channel, self.manifest.pill, found=False)
            if self._calls >= MAX_CALLS_PER_TURN:
                raise ToolBudgetExceeded(
                    f"{self.name}: {MAX_CALLS_PER_TURN} calls this turn already; answer with what you have")
            self._seen.add(key)
            self._calls += 1
        result = await self.run(args, ctx)
        result.channel = result.channel if result.channel != "other" else self.manifest.channel
        result.pill = result.pill or self.manifest.pill
        return result

    @abc.abstractmethod
    async def run(self, args: A, ctx: ToolContext) -> ToolResult:
        """Do the work once; guards have already been applied."""

    async def completed(self, args: A, ctx: ToolContext) -> bool | None:
        """For an effect interrupted by a crash: whether its effect is in the store (True), surely
        not (False: it may run again), or cannot be told (None). Read tools have no effect."""
        return None
