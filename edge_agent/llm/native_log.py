"""llama.cpp's own log lines go to Python logging at debug level, never straight to a terminal.

llama.cpp and ggml report through one C callback ("llama_kv_cache_iswa: using full-size SWA
cache", a "cannot use buft" line per tensor under a runtime LoRA). llama-cpp-python's callback
prints some of them to stderr whatever `verbose` says, so `edge-agent ask --local` printed 28 such
lines before a one-word answer. Here the callback hands each line to the `edge_agent.llm.native`
logger at DEBUG: the service log shows them with `-vv`, a user's terminal never does.
"""
from __future__ import annotations

import collections
import ctypes
import logging
import threading

log = logging.getLogger("edge_agent.llm.native")

_installed = threading.Lock()
_callback = None  # kept referenced: llama.cpp holds only the raw pointer
_pending: list[str] = []
_recent: collections.deque[tuple[int, str]] = collections.deque(maxlen=64)
"""The last lines with their running number: a failed load's reason is among them."""
_count = 0


def _forward(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
    """One piece of a native log line; a line is logged once its newline arrives."""
    global _count
    try:
        piece = text.decode("utf-8", "replace") if text else ""
    except Exception:  # a callback from C must never raise
        return
    _pending.append(piece)
    if piece.endswith("\n"):
        line = "".join(_pending).rstrip()
        _pending.clear()
        if line:
            _count += 1
            _recent.append((_count, line))
            log.debug("%s", line)


def mark() -> int:
    """The running number of the last line logged (for lines_since)."""
    return _count


def lines_since(mark_: int) -> list[str]:
    """Lines logged after `mark_` (the newest 64 at most)."""
    return [line for n, line in list(_recent) if n > mark_]


def failure_reason(mark_: int) -> str:
    """What llama.cpp said went wrong after `mark_`: its error lines ("unknown model architecture:
    'x'"), else its last line, else ""."""
    lines = lines_since(mark_)
    errors = [line for line in lines if "error" in line.lower() or "unknown" in line.lower()
              or "failed" in line.lower()]
    return "; ".join(dict.fromkeys(errors[-3:])) or (lines[-1] if lines else "")


def route_native_logs() -> None:
    """Install the callback (once a process; before any model loads)."""
    global _callback
    with _installed:
        if _callback is not None:
            return
        import llama_cpp

        _callback = llama_cpp.llama_log_callback(_forward)
        llama_cpp.llama_log_set(_callback, ctypes.c_void_p(0))
