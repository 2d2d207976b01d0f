"""Loading a GGUF into llama-cpp-python: the file checked first, and the CPU quirks worked around."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

from edge_agent.llm.base import ModelLoadError

GGUF_MAGIC = b"GGUF"


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity: a container's or systemd's CPU limit counts)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def cpu_advertises_amx() -> bool:
    """Whether the CPU reports Intel AMX tiles. llama.cpp then routes quantized matmuls through its
    AMX buffer type, which segfaults in llama_decode on VMs that advertise AMX without granting its
    state (reproduced on this project's Firecracker dev machines with llama-cpp-python 0.3.36)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="ignore") as fh:
            return any(line.startswith("flags") and " amx_tile" in line for line in fh)
    except OSError:
        return False


@contextlib.contextmanager
def model_params(use_extra_bufts: bool):
    """llama-cpp-python's Llama() does not expose use_extra_bufts; patch the defaults it reads."""
    import llama_cpp.llama as llama_mod

    original = llama_mod.llama_cpp.llama_model_default_params
    if use_extra_bufts:
        yield
        return

    def params():
        out = original()
        out.use_extra_bufts = False
        return out

    llama_mod.llama_cpp.llama_model_default_params = params
    try:
        yield
    finally:
        llama_mod.llama_cpp.llama_model_default_params = original


def check_model_file(path: Path) -> None:
    if not path.exists():
        raise ModelLoadError(f"model file not found: {path}")
    if not path.is_file():
        raise ModelLoadError(f"model path is not a file: {path}")
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as err:
        raise ModelLoadError(f"cannot read model file {path}: {err}") from err
    if magic != GGUF_MAGIC:
        raise ModelLoadError(f"not a GGUF model file (bad magic {magic!r}): {path}")
