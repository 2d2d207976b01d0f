"""The model runtime: Model protocol, LlamaCppModel, FIFO GenerationLock, window accounting,
grammars, chat templates, the bundled tiny model, and ScriptedModel/FunctionModel doubles.

Knows nothing of tools or skills.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from edge_agent.llm.base import (ChatMessage, Completion, ContextOverflow, GenerationTimeout, Model, ModelError,
                                 ModelLoadError, Structured, StructuredOutputError, Usage)
from edge_agent.llm.lock import GenerationLock

if TYPE_CHECKING:
    from edge_agent.config import Settings
    from edge_agent.llm.llamacpp import LlamaCppModel

__all__ = ["ChatMessage", "Completion", "ContextOverflow", "GenerationLock", "GenerationTimeout", "Model",
           "ModelError", "ModelLoadError", "Structured", "StructuredOutputError", "Usage", "load_model",
           "resolve_model_path"]


def resolve_model_path(settings: "Settings") -> Path:
    """The configured GGUF (modelfile.files.configured_model_path), the bundled one assembled
    into the data dir on first use."""
    from edge_agent.modelfile.files import configured_model_path

    if settings.model.path is not None:
        return configured_model_path(settings)
    from edge_agent.llm.bundled import ensure_bundled_model

    return ensure_bundled_model(settings.models_dir)


def load_model(settings: "Settings", lock: GenerationLock | None = None) -> "LlamaCppModel":
    """Load the configured model with the configured window."""
    from edge_agent.config import DEFAULT_WINDOW
    from edge_agent.llm.llamacpp import LlamaCppModel

    from edge_agent.llm.adapter import choose_adapter

    m = settings.model
    path = resolve_model_path(settings)
    adapter = choose_adapter(m.adapter, path, settings.models_dir)
    common = dict(n_ctx=m.n_ctx, n_threads=m.n_threads, n_batch=m.n_batch, keep_sessions=m.keep_sessions,
                  window=DEFAULT_WINDOW, lock=lock, head_cache_mb=m.head_cache_mb, head_cache_dir=settings.heads_dir)
    if adapter is not None and m.adapter_merge != "none":
        from edge_agent.llm.merge import ensure_merged

        merged = ensure_merged(path, adapter, settings.models_dir, m.adapter_merge)
        return LlamaCppModel(merged.path, merged_adapter=adapter.sha256, **common)
    return LlamaCppModel(path, lora_path=adapter.path if adapter else None,
                         lora_sha256=adapter.sha256 if adapter else None, **common)
