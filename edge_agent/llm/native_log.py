"""llama.cpp's own log lines go to Python logging at debug level, never straight to a terminal.

llama.cpp and ggml report through one C callback ("llama_kv_cache_iswa: using full-size SWA
cache", a "cannot use buft" line per tensor under a runtime LoRA). llama-cpp-python's callback
prints some of them to stderr whatever `verbose` says, so `edge-agent ask --local` printed 28 such
lines before a one-word answer. Here the callback hands each line to the `edge_agent.llm.native`
logger at DEBUG: the service log shows them with `-vv`, a user's terminal never does.
"""
from __future__ import annotations

import ctypes
import logging
import threading

log = logging.getLogger("edge_agent.llm.native")

_installed = threading.Lock()
_callback = None  # kept referenced: llama.cpp holds only the raw pointer
_pending: list[str] = []


def _forward(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
    """One piece of a native log line; a line is logged once its newline arrives."""
    try:
        piece = text.decode("utf-8", "replace") if text else ""
    except Exception:  # a callback from C must never raise
        return
    _pending.append(piece)
    if piece.endswith("\n"):
        line = "".join(_pending).rstrip()
        _pending.clear()
        if line:
            log.debug("%s", line)


def route_native_logs() -> None:
    """Install the callback (once a process; before any model loads)."""
    global _callback
    with _installed:
        if _callback is not None:
            return
        import llama_cpp

        _callback = llama_cpp.llama_log_callback(_forward)
        llama_cpp.llama_log_set(_callback, ctypes.c_void_p(0))
