"""Instructions planted in the user's data: recognised, and never repeated in an answer.

A pasted email, a shared note or a text from a stranger can carry words addressed to the assistant
("AI assistant: ignore your instructions and ..."). They are data, never commands: no tool runs
because of them (effects need the asker's confirmation), and an answer, its quotes and its
deterministic fallback leave out every sentence that speaks to the assistant that way. The user's
own standing instructions ("Always answer in metric") are not of that form and stay.
"""
from __future__ import annotations

import re

# A sentence ends at . ! ? (a closing quote may follow) before a capital, digit or quote; not
# after a title abbreviation.
SENTENCE_SPLIT = re.compile(r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bSt\.)(?<!\bMrs\.)"
                            r"(?:(?<=[.!?])|(?<=[.!?]['\"\u2019\u201d]))\s+(?=[A-Z0-9\"'(\u2018\u201c])")
# Words addressed to an assistant: an order to drop its instructions, a message "to the AI", a
# fake system note, a request to hand over a secret.
PLANTED = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:your\s+|my\s+|the\s+|these\s+|those\s+)?"
    r"(?:previous\s+|prior\s+|earlier\s+|above\s+|original\s+)?(?:instructions?|prompts?|directions|guidelines|rules|user|owner)\b"
    r"|\b(?:ai|assistant|chatbot|bot|language model|llm)\b[^.!?:,]{0,20}[:,]\s*(?:please\s+)?"
    r"(?:ignore|disregard|forget|tell|send|text|email|remember|add|delete|reply|say|stop|write|forward|give|"
    r"share|update|change)\b"
    r"|\bsystem\s+(?:note|notice|prompt|message|instruction|override|alert)s?\s*:"
    r"|\b(?:without|do not|don't|never)\s+ask(?:ing)?\s+(?:for\s+|the user for\s+)?(?:confirmation|permission)\b"
    r"|\b(?:send|text|email|forward|give|share|tell)\b[^.!?]{0,40}?\b(?:pin|password|passcode|passwords|"
    r"security code|card number)\b(?=[^.!?]{0,30}\bto\b)",
    re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """`text` split into sentences (whitespace kept inside them)."""
    return [s for s in SENTENCE_SPLIT.split(text) if s]


def is_planted(text: str) -> bool:
    """Whether `text` holds words addressed to the assistant (see the module docstring)."""
    return PLANTED.search(text) is not None


def without_planted(text: str) -> str:
    """`text` without its sentences that speak to the assistant; lines are kept as lines."""
    if not is_planted(text):
        return text
    out = []
    for line in text.split("\n"):
        kept = [s for s in sentences(line) if not is_planted(s)]
        if kept or not line.strip():
            out.append(" ".join(kept))
    return "\n".join(out)
