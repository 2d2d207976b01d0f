"""Settings: embedded defaults < TOML file < EDGE_AGENT_* environment < command-line flags.

One place for defaults. A bad value stops start-up with ConfigError naming the key and the file.
Nested keys use a double underscore in the environment: EDGE_AGENT_MQTT__PORT=1884.
"""
from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

ENV_PREFIX = "EDGE_AGENT_"
DEFAULT_WINDOW = 4096  # tokens: the product's law
DEFAULT_PREFIX = "edge/v1"


def default_data_dir() -> Path:
    """A per-user data dir: $XDG_DATA_HOME/edge-agent or ~/.local/share/edge-agent."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "edge-agent"


class ConfigError(ValueError):
    """A setting is invalid; the message names the key and where it came from."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ModelSettings(_Section):
    """The language model runtime."""

    path: Path | None = None
    """GGUF file; None = the bundled tiny model, assembled into <data_dir>/models."""
    n_ctx: int = Field(DEFAULT_WINDOW, ge=512, le=DEFAULT_WINDOW)
    """Context window in tokens; never above the 4,096-token window."""
    n_threads: int | None = Field(None, ge=1, le=64)
    """CPU threads for llama.cpp; None = all cores."""
    n_batch: int = Field(256, ge=8, le=4096)
    """Prompt tokens evaluated per batch."""
    keep_sessions: bool = True
    """Snapshot a paused session's KV state (L2 while L3 runs) so resuming prefills only new tokens."""
    adapter: str = "auto"
    """Task adapter (LoRA GGUF): "auto" = the bundled one on the bundled model only, "none", or a path."""
    adapter_merge: Literal["q4_k_m", "q4_0", "q8_0", "q8_0_emb_q5_1", "q8_0_out_q5_1", "q5_k_m", "f16",
                           "none"] = "q8_0_out_q5_1"
    """How the adapter runs: merged into the weights with this quantization recipe (made once, in
    <data_dir>/models; llm/merge.py), or "none" = applied at run time as a LoRA (slower; experiments)."""
    head_cache_mb: float = Field(256.0, ge=0, le=65536)
    """RAM for the KV states of static prompt heads (LRU; also kept on disk in <data_dir>/heads); 0 = off."""


class HarnessSettings(_Section):
    """Bounds of one question's tool loop."""

    max_l2_steps: int = Field(6, ge=1, le=50)
    """L2 steps (call_tool or answer) before exit kind step_limit."""
    deadline_s: float = Field(120.0, gt=0)
    """Wall-clock budget for one question, seconds."""
    token_budget: int = Field(2000, ge=64)
    """Generated tokens allowed across all roles for one question."""
    tool_result_tokens: int = Field(320, ge=16, le=2000)
    """Tokens a tool result may take in L2's transcript (over it: the lines most related to the question)."""
    answer_tokens: int = Field(80, ge=16, le=1024)
    """Cap of the model's own reply to a question that needs none of the user's data (small talk)."""
    tracing: bool = True
    """Store every model session's exact prompt and output in the traces table."""
    log_chats: bool = True
    """Keep each question answered from data in the chat log under its asker (never searched by tools)."""
    by_question: bool = True
    """Search every local store with the question's own words too, whatever the plan chose (no model
    call; harness/retrieval.py)."""


class MqttSettings(_Section):
    """The broker and topics."""

    host: str = "127.0.0.1"
    """Broker host."""
    port: int = Field(1883, ge=1, le=65535)
    """Broker port."""
    username: str | None = None
    """Broker user (the device name after pairing)."""
    password: str | None = None
    """Broker password."""
    prefix: str = DEFAULT_PREFIX
    """Topic prefix."""
    tls_ca: Path | None = None
    """CA file to enable TLS."""
    session_expiry_s: int = Field(7 * 24 * 3600, ge=0)
    """How long the broker keeps the service's session while it is away, seconds."""
    max_payload_bytes: int = Field(16 * 1024, ge=256)
    """Larger requests are rejected."""
    keepalive_s: int = Field(30, ge=5)
    """MQTT keepalive, seconds."""
    queue_limit: int = Field(32, ge=1, le=10000)
    """Questions waiting in the agent's queue (all askers); past it a new one gets a `busy` error."""
    per_asker_limit: int = Field(4, ge=1, le=1000)
    """Questions of one asker queued or running; past it that asker's new ones get `busy`."""
    busy_retry_after_s: float = Field(30.0, gt=0)
    """The retry-after a `busy` error suggests, seconds."""
    receive_maximum: int = Field(8, ge=1, le=65535)
    """MQTT v5 Receive Maximum: requests the broker hands the agent before it has acked them (it holds the rest)."""
    resend_window_s: float = Field(600.0, ge=0)
    """On every reconnect, answers from this many seconds back that the asker has not acked are sent again."""
    pool: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")
    """The household pool this agent also serves (`pair add NAME --role agent --pool POOL`): askers
    who address the pool get one answer from whichever member the broker hands the question to."""


class OpsSettings(_Section):
    """Monitoring and guards."""

    status_interval_s: float = Field(30.0, gt=0)
    """Status is published this often and after each request, seconds."""
    min_available_mb: int = Field(300, ge=0)
    """Below this much available memory new requests are refused ("busy: low memory")."""
    log_text: bool = False
    """Put question and answer text in info-level logs."""
    latency_window: int = Field(100, ge=1)
    """Requests in the sliding window for latency percentiles."""
    hass_discovery: bool = True
    """Publish Home Assistant discovery configs (retained) for this board's status sensors (net/hass.py)."""
    stop_limit_s: float = Field(25.0, gt=0)
    """A clean stop that takes longer is cut short: every thread's stack to the log, exit status 1
    (under systemd's TimeoutStopSec of 30 s, which would SIGKILL without a word)."""


class Settings(_Section):
    """All settings of one edge-agent process."""

    data_dir: Path = Field(default_factory=default_data_dir)
    """SQLite file, models, pending actions."""
    device_id: str = Field("pi", pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")
    """This device's name on MQTT."""
    timezone: str | None = None
    """IANA zone for dates; None = the system's local zone."""
    files_roots: list[Path] = Field(default_factory=list)
    """Folders this device indexes for find_file."""
    model: ModelSettings = Field(default_factory=ModelSettings)
    harness: HarnessSettings = Field(default_factory=HarnessSettings)
    mqtt: MqttSettings = Field(default_factory=MqttSettings)
    ops: OpsSettings = Field(default_factory=OpsSettings)

    @property
    def db_path(self) -> Path:
        return self.data_dir / "edge-agent.db"

    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"

    @property
    def heads_dir(self) -> Path:
        """Cached prompt heads (KV states), so a restarted service is warm at once."""
        return self.data_dir / "heads"


def _set_path(tree: dict[str, Any], dotted: list[str], value: Any) -> None:
    node = tree
    for key in dotted[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            raise ConfigError(f"{'.'.join(dotted)}: {key} is not a section")
    node[dotted[-1]] = value


def env_overrides(environ: dict[str, str]) -> dict[str, Any]:
    """The EDGE_AGENT_* variables as a nested settings tree (EDGE_AGENT_MQTT__PORT -> mqtt.port)."""
    tree: dict[str, Any] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name == ENV_PREFIX + "CONFIG":
            continue
        dotted = name[len(ENV_PREFIX):].lower().split("__")
        if dotted == ["model"]:  # EDGE_AGENT_MODEL is the model path, as the CLI's --model
            dotted = ["model", "path"]
        _set_path(tree, dotted, value)
    return tree


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def config_path_from(environ: dict[str, str] | None = None, explicit: Path | None = None) -> Path | None:
    environ = dict(os.environ) if environ is None else environ
    if explicit is not None:
        return explicit
    if environ.get(ENV_PREFIX + "CONFIG"):
        return Path(environ[ENV_PREFIX + "CONFIG"])
    return None


def load_settings(
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
) -> Settings:
    """Build Settings from defaults, the TOML file, the environment and `overrides` (dotted keys)."""
    environ = dict(os.environ) if environ is None else environ
    config_file = config_path_from(environ, config_file)
    sources: list[tuple[str, dict[str, Any]]] = []
    if config_file is not None:
        try:
            sources.append((str(config_file), tomllib.loads(config_file.read_text(encoding="utf-8"))))
        except FileNotFoundError as err:
            raise ConfigError(f"config file not found: {config_file}") from err
        except tomllib.TOMLDecodeError as err:
            raise ConfigError(f"{config_file}: not valid TOML: {err}") from err
    sources.append(("environment", env_overrides(environ)))
    flags: dict[str, Any] = {}
    for dotted, value in (overrides or {}).items():
        if value is not None:
            _set_path(flags, dotted.split("."), value)
    sources.append(("command line", flags))

    merged: dict[str, Any] = {}
    for origin, tree in sources:
        merged = _merge(merged, tree)
        try:  # validate after each layer so the error names the layer that broke it
            Settings.model_validate(merged)
        except ValidationError as err:
            first = err.errors()[0]
            key = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"{origin}: {key}: {first['msg']} (got {first.get('input')!r})") from err
    return Settings.model_validate(merged)
