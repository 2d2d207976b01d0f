"""A question that asks for a kind of value is not answered by facts that hold none of that kind.

"How much did Leo's engagement ring cost?" found Leo's message about the engagement, and "What's
my passport number?" the note with the passport's expiry date: strong matches, so the small model
answered from them ("Amira and I got engaged on Arthur's Seat!"). A question asking for an amount
of money needs a sum in the facts (a currency sign or word beside digits), one asking for a number,
code or reference needs digits that are not part of a date or a time. Facts without one get the
honest answer: nothing found of that kind, and the entry that came closest.
"""
from __future__ import annotations

import re

from edge_agent.tools.date_table import MONTH_NAMES

AMOUNT_QUESTION_RE = re.compile(
    r"\bhow\s+much\b.*\b(?:cost|costs|costing|price|pay|paid|paying|charge|charged|spend|spent|owe|owed|worth|fee)\b"
    r"|\b(?:cost|costs|price|fee|fees|charge|charged)\b.*\?", re.IGNORECASE)
"""Questions asking for a sum of money."""
NUMBER_QUESTION_RE = re.compile(r"\b(?:number|reference|ref|code|pin|policy\s+no)\b", re.IGNORECASE)
"""Questions asking for a number, a code or a reference."""
AMOUNT_RE = re.compile(r"[£$€]\s?\d|\d[\d,.]*\s?(?:pounds?|pence|p\b|dollars?|euros?|gbp|usd|eur)\b", re.IGNORECASE)
"""A sum of money."""
_MON = "(?:" + "|".join(m[:3] for m in MONTH_NAMES) + r")[a-z]*\.?"
DATE_OR_TIME_RE = re.compile(
    rf"\d{{4}}-\d{{2}}-\d{{2}}(?:T[\d:.+-]+)?|\b\d{{1,2}}[:.]\d{{2}}\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MON}(?:,?\s+\d{{4}})?|\b{_MON}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|\b{_MON}\s+\d{{4}}\b|\b(?:19|20)\d\d\b", re.IGNORECASE)
"""Digits that are part of a date or a time."""


def wanted_kind(question: str) -> str | None:
    """"an amount", "a number" or None: the kind of value the question asks for."""
    if AMOUNT_QUESTION_RE.search(question):
        return "an amount"
    if NUMBER_QUESTION_RE.search(question):
        return "a number"
    return None


def holds(kind: str, facts: str) -> bool:
    """Whether `facts` hold a value of `kind`."""
    if kind == "an amount":
        return AMOUNT_RE.search(facts) is not None
    return re.search(r"\d", DATE_OR_TIME_RE.sub(" ", facts)) is not None


def missing_kind(question: str, facts: str) -> str | None:
    """The kind of value the question asks for when the facts hold none of it, else None."""
    kind = wanted_kind(question)
    return kind if kind and not holds(kind, facts) else None
