"""Output reserves: the most tokens a grammar-bound value can take, read from its JSON schema.

Reserving at least that many tokens means a constrained generation cannot be cut off mid-value
(a cut-off is the one way a grammar-bound output can still be malformed). Strings are counted at
one token a character: digits and punctuation often tokenize that way, and a small model's
degenerate output ("1000000...") is exactly what must still fit.
"""
from __future__ import annotations

import functools
import json
from typing import Any

from pydantic import BaseModel

UNBOUNDED_STRING_TOKENS = 64  # a string without maxLength (dates, ids with a pattern)
NUMBER_TOKENS = 12  # an integer or float, sign and digits
DEFAULT_ARRAY_ITEMS = 8  # an array without maxItems
PROPERTY_OVERHEAD_TOKENS = 6  # quotes, colon, comma and the whitespace a JSON grammar admits
OBJECT_OVERHEAD_TOKENS = 4  # braces and surrounding whitespace


def _walk(node: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> int:
    if depth > 20:  # recursive schemas are not used by tools; bound the walk anyway
        return UNBOUNDED_STRING_TOKENS
    if "$ref" in node:
        return _walk(defs[node["$ref"].rsplit("/", 1)[-1]], defs, depth + 1)
    for key in ("anyOf", "oneOf"):
        if key in node:
            return max(_walk(n, defs, depth + 1) for n in node[key])
    if "const" in node:
        return len(json.dumps(node["const"])) + 2
    if "enum" in node:
        return max(len(json.dumps(v)) for v in node["enum"]) + 2
    kind = node.get("type")
    if kind == "object" or "properties" in node:
        props = node.get("properties", {})
        return OBJECT_OVERHEAD_TOKENS + sum(len(name) + PROPERTY_OVERHEAD_TOKENS + _walk(sub, defs, depth + 1)
                                            for name, sub in props.items())
    if kind == "array":
        if "prefixItems" in node:
            return OBJECT_OVERHEAD_TOKENS + sum(_walk(n, defs, depth + 1) + 2 for n in node["prefixItems"])
        items = node.get("maxItems", DEFAULT_ARRAY_ITEMS)
        return OBJECT_OVERHEAD_TOKENS + items * (_walk(node.get("items", {}), defs, depth + 1) + 2)
    if kind == "string":
        return node.get("maxLength", UNBOUNDED_STRING_TOKENS) + 2
    if kind in ("integer", "number"):
        return NUMBER_TOKENS
    if kind in ("boolean", "null"):
        return 5
    return UNBOUNDED_STRING_TOKENS


@functools.lru_cache(maxsize=128)
def worst_case_tokens(schema: type[BaseModel]) -> int:
    """Tokens the longest value `schema` admits can take (one token a character for strings)."""
    spec = schema.model_json_schema()
    return _walk(spec, spec.get("$defs", {}))
