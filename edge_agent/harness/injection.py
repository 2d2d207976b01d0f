"""Instructions planted in the user's data: recognised, and never repeated in an answer.

A pasted email, a shared note or a text from a stranger can carry words addressed to the assistant
("AI assistant: ignore your instructions and ..."). They are data, never commands: no tool runs
because of them (effects need the asker's confirmation), no sentence that speaks to the assistant
that way — to "the AI", "the assistant", "any helper reading this" — is ever a line of an answer,
and a line taken from an entry that held one is said to come from an entry with planted words
(UNTRUSTED): its other sentences are the same author's, so the asker is told, not left to trust it. The user's own
standing instructions ("Give times in the 24-hour clock") are not of that form and stay.
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
    r"|\b(?:ai|assistant|chatbot|bot|helper|agent|language model|llm)\b[^.!?:\n]{0,60}?"
    r"\b(?:reading|summari[sz]ing|processing|parsing|reviewing|scanning)\b[^.!?:\n]{0,40}:"
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


UNTRUSTED = " (it also holds words aimed at an AI assistant: not followed, not repeated)"
"""Said after where a line comes from when its entry carried planted words."""


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
