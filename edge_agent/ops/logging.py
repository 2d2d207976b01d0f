"""Logs as JSON lines on stdout, which journald stores one record a line.

A record passed `extra={"request_id": ...}` carries it; other extras (device, exit_kind, ms...)
are kept when JSON-able. Question and answer text (extras named in TEXT_FIELDS) reach the log
only at DEBUG or when `log_text` is set; otherwise just their length does, so an info-level
journal holds no user text.
"""
from __future__ import annotations

import json
import logging
import sys
from datetime import datetime, timezone
from typing import Any, TextIO

TEXT_FIELDS = ("question", "answer", "text")
"""Extras that hold user text."""
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


class JsonLinesFormatter(logging.Formatter):
    """One JSON object a record: ts, level, logger, msg, request_id and other extras."""

    def __init__(self, log_text: bool = False):
        super().__init__()
        self.log_text = log_text

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        show_text = self.log_text or (isinstance(record.levelno, int) and record.levelno <= logging.DEBUG)
        for key, value in vars(record).items():
            if key in _STANDARD or key.startswith("_"):
                continue
            if key in TEXT_FIELDS and not show_text:
                out[f"{key}_chars"] = len(value) if isinstance(value, str) else None
                continue
            out[key] = _jsonable(value)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def setup_logging(level: int | str, json_lines: bool, *, log_text: bool = False,
                  stream: TextIO | None = None) -> logging.Handler:
    """Replace the root handlers with one on stdout: JSON lines, or plain text for a terminal."""
    handler = logging.StreamHandler(stream or sys.stdout)
    if json_lines:
        handler.setFormatter(JsonLinesFormatter(log_text=log_text))
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    return handler
