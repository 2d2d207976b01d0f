"""JSON-schema grammars as llama.cpp takes them: exact, strict and compact.

llama-cpp-python's converter turns a JSON schema into GBNF; the rewrites here make the grammar
enforce what pydantic will check and write JSON the way the runtime wants it decoded.
"""
from __future__ import annotations

import json
import re
from typing import Any


def gbnf_for(json_schema: dict) -> str:
    """The GBNF text for a pydantic model's JSON schema: field order kept, bounded integers and
    digit classes enforced, no raw control characters in strings, no optional whitespace."""
    from llama_cpp import LlamaGrammar

    converted = LlamaGrammar.from_json_schema(json.dumps(grammar_ready(json_schema)), verbose=False)
    return compact_json(strict_json_strings(converted._grammar))


MAX_ENUM_INT_RANGE = 1000  # bounded integers up to this many values become enums in the grammar


# Regex classes llama-cpp-python's pattern converter takes literally ("\d" becomes the text \d).
_PATTERN_CLASSES = {r"\d": "[0-9]", r"\w": "[A-Za-z0-9_]"}
# Its JSON string rule admits raw control characters, which are not valid JSON; llama.cpp's own
# json.gbnf excludes them.
_LOOSE_CHAR = 'char ::= [^"\\\\] |'
_STRICT_CHAR = 'char ::= [^"\\\\\\x7F\\x00-\\x1F] |'


def strict_json_strings(gbnf: str) -> str:
    """The grammar with JSON strings that cannot contain raw control characters."""
    return gbnf.replace(_LOOSE_CHAR, _STRICT_CHAR)


# The converter lets a space follow every brace, comma and colon. Compact JSON admits none, so
# between a key and the next one there is exactly one continuation (`","name":"`): jump-forward
# appends it without sampling, and no decode step is spent choosing whitespace.
_SPACE_RULE = re.compile(r"^space ::= .*$", re.MULTILINE)


def compact_json(gbnf: str) -> str:
    """The grammar with no optional whitespace between JSON tokens."""
    return _SPACE_RULE.sub('space ::= ""', gbnf)


def grammar_ready(node: Any) -> Any:
    """A JSON schema rewritten so the grammar converter enforces what pydantic will check:
    small bounded integer ranges become enums (minimum/maximum are otherwise ignored) and
    \\d / \\w in patterns become explicit classes. Key order is kept: it is the output order."""
    if isinstance(node, list):
        return [grammar_ready(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: grammar_ready(v) for k, v in node.items()}
    if isinstance(out.get("pattern"), str):
        for cls, explicit in _PATTERN_CLASSES.items():
            out["pattern"] = out["pattern"].replace(cls, explicit)
    if out.get("type") == "integer" and "enum" not in out:
        lo = out.get("minimum", out["exclusiveMinimum"] + 1 if "exclusiveMinimum" in out else None)
        hi = out.get("maximum", out["exclusiveMaximum"] - 1 if "exclusiveMaximum" in out else None)
        if lo is not None and hi is not None and 0 <= hi - lo < MAX_ENUM_INT_RANGE:
            out = {"enum": list(range(int(lo), int(hi) + 1))}
    return out
