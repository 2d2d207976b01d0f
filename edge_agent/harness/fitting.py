"""Fitting text to a token budget by relevance: the lines sharing most words with the question.

A tool result or a block of facts that is over its budget keeps its first line (the tool's
summary) and then the lines that share the most content words with the question, in their
original order, and says how many it left out. Ties keep the original order, so a question that
shares no words with the lines (a whole week's events) gets the first lines. Cutting from the end
instead would drop the Christmas party from December's events whatever the question asked.
"""
from __future__ import annotations

import re
from typing import Any

WORD_RE = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
# Words that carry no value of their own (also for answer.states_a_value).
FUNCTION_WORDS = frozenset("""
a an and are as at be been but by for from had has have he her his i if in is it its me my no not of on or our
she so that the their them there they this to was we were what when where which who will with you your
""".split())
OMITTED_TOKENS = 12  # room kept for the "(N more lines not shown)" note


def content_words(text: str) -> set[str]:
    return {w.lower() for w in WORD_RE.findall(text) if w.lower() not in FUNCTION_WORDS and len(w) > 2}


def fit_relevant(model: Any, text: str, budget: int, query: str) -> str:
    """`text` within `budget` tokens: whole if it fits, else its first line and the lines most
    related to `query` (see the module docstring); plain truncation when no line fits whole."""
    if model.count_tokens(text) <= budget:
        return text
    lines = text.split("\n")
    asked = content_words(query)
    ranked = sorted(range(1, len(lines)), key=lambda i: -len(asked & content_words(lines[i])))
    room = budget - OMITTED_TOKENS
    used = model.count_tokens(lines[0]) + 1
    kept = {0}
    for i in ranked:
        cost = model.count_tokens(lines[i]) + 1
        if used + cost <= room:
            kept.add(i)
            used += cost
    if len(kept) == 1 or used > room:
        return model.fit_to_tokens(text, budget)
    out = [lines[i] for i in sorted(kept)]
    if len(kept) < len(lines):
        out.append(f"({len(lines) - len(kept)} more lines not shown)")
    return "\n".join(out)
