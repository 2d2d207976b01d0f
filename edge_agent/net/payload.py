"""Reading an inbound JSON payload with bounds: size, UTF-8, and nesting depth.

Python's json module recurses once a nesting level, so 9 KB of `[[[...` raises RecursionError
(not a ValueError) deep inside the parser. Every payload that comes in over MQTT — requests,
acks, file-search replies, reply events — goes through parse_json, which measures the nesting
first in one flat pass and refuses anything deeper than any real payload needs.
"""
from __future__ import annotations

import json

MAX_JSON_DEPTH = 16  # our deepest real payload (a file_results event) nests 4 levels
MAX_STATUS_BYTES = 16 * 1024  # a device's retained status: metrics, a few hundred bytes
_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")
_QUOTE = ord('"')
_BACKSLASH = ord("\\")


class PayloadError(ValueError):
    """A payload that is too large, not UTF-8, too deeply nested, or not JSON; the message says which."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        """too_large | bad_request"""


def json_depth(data: bytes) -> int:
    """The deepest nesting of [ and { outside strings (no parsing, no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == _BACKSLASH:
                escaped = True
            elif byte == _QUOTE:
                in_string = False
        elif byte == _QUOTE:
            in_string = True
        elif byte in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif byte in _CLOSE:
            depth -= 1
    return deepest


def parse_json(payload: bytes, *, max_bytes: int, max_depth: int = MAX_JSON_DEPTH) -> object:
    """The decoded JSON value; PayloadError for every way the bytes can be bad (never RecursionError)."""
    if len(payload) > max_bytes:
        raise PayloadError("too_large", f"payload is {len(payload)} bytes; the limit is {max_bytes}")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PayloadError("bad_request", f"payload is not valid UTF-8 (byte {err.start})") from err
    depth = json_depth(payload)
    if depth > max_depth:
        raise PayloadError("bad_request", f"payload nests {depth} levels deep; the limit is {max_depth}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise PayloadError("bad_request", f"payload is not JSON: {err.msg} at line {err.lineno} "
                                          f"column {err.colno}") from err
    except ValueError as err:  # a number past Python's int-digits limit ("Exceeds the limit (4300 digits)")
        raise PayloadError("bad_request", f"payload is not usable JSON: {err}") from err
    except RecursionError as err:  # cannot happen below max_depth; kept so it never escapes
        raise PayloadError("bad_request", "payload nests too deeply") from err
