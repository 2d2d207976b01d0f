"""How people really type: fillers, lower case, missing question marks, dropped apostrophes,
spelling variants, a few typos, and two-word questions ("dentist when", "joels birthday").

Typos never touch a protected span (names, numbers, date phrases, device ids, the words a call's
arguments copy), so the question still says what the call needs.
"""
from __future__ import annotations

import random
import re

OPENERS = ("hey ", "hi, ", "quick one: ", "quick q - ", "can you check ", "um ", "ok so ", "hey, quick one, ",
           "sorry, ", "right, ", "question: ", "hiya ", "so ", "random one but ", "morning! ", "ok ")
"""Starts a question may get (only "can you check" changes the grammar, so it goes before a bare clause)."""
CLOSERS = (" thanks", " thx", " pls", " please", " cheers", " ta", "??", " ?", "...", " x", " if you can",
           " when you get a sec")
"""Ends a question may get."""
AMERICAN = {"favourite": "favorite", "colour": "color", "centre": "center", "neighbour": "neighbor",
            "organise": "organize", "programme": "program", "tyre": "tire", "licence": "license",
            "cheque": "check", "travelling": "traveling", "cancelled": "canceled", "diary": "calendar",
            "holiday": "vacation", "post code": "zip code", "mobile": "cell",
            "flat": "apartment", "ring": "call", "queue": "line", "car park": "parking lot"}
"""British word -> American word, applied whole-word (American households mostly)."""
BRITISH = {v: k for k, v in AMERICAN.items() if " " not in v and v not in ("check", "call", "calendar", "line")}
"""American word -> British word, for a British household that types the other way now and then."""
DATE_WORDS = frozenset("""
today tomorrow yesterday tonight week weeks weekend weekends fortnight month months year day days next last
this coming gone just ago after before from now time morning afternoon evening night first second third fourth
monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
september october november december
""".split())
"""Words a date phrase is made of: never misspelled (the date resolver reads the question)."""


def american(text: str, rng: random.Random, rate: float = 0.85) -> str:
    """British spellings and words made American (each word with probability `rate`)."""
    for uk, us in AMERICAN.items():
        text = re.sub(rf"\b{uk}\b", lambda m: _case(m.group(0), us) if rng.random() < rate else m.group(0), text)
    return text


def british(text: str, rng: random.Random, rate: float = 0.9) -> str:
    for us, uk in BRITISH.items():
        text = re.sub(rf"\b{us}\b", lambda m: _case(m.group(0), uk) if rng.random() < rate else m.group(0), text)
    return text


def _case(original: str, word: str) -> str:
    return word[0].upper() + word[1:] if original[0].isupper() else word


def typo(word: str, rng: random.Random) -> str:
    """One swapped, dropped or doubled letter (or a missing apostrophe)."""
    if "'" in word and rng.random() < 0.5:
        return word.replace("'", "", 1)
    if len(word) < 4:
        return word
    i = rng.randrange(1, len(word) - 1)
    kind = rng.choice(("swap", "drop", "double"))
    if kind == "swap" and word[i].isalpha() and word[i + 1].isalpha():
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == "drop":
        return word[:i] + word[i + 1:]
    return word[:i] + word[i] + word[i:]


def protected_spans(text: str, protect: list[str]) -> list[tuple[int, int]]:
    spans = []
    for p in protect:
        if not p:
            continue
        for m in re.finditer(re.escape(p), text, re.IGNORECASE):
            spans.append((m.start(), m.end()))
    return spans


def add_typos(text: str, rng: random.Random, protect: list[str], rate: float = 0.04, most: int = 2) -> str:
    """Misspell a few unprotected words (no digits, no capitalised names, no date words)."""
    spans = protected_spans(text, protect)
    out, done, last = [], 0, 0
    for m in re.finditer(r"[A-Za-z']+", text):
        word = m.group(0)
        free = (not any(s < m.end() and m.start() < e for s, e in spans) and not word[0].isupper()
                and word.lower() not in DATE_WORDS and len(word) >= 4)
        out.append(text[last:m.start()])
        if free and done < most and rng.random() < rate:
            word = typo(word, rng)
            done += 1
        out.append(word)
        last = m.end()
    out.append(text[last:])
    return "".join(out)


FRAGMENT_WH = ("how much", "when", "where", "who")
"""Question words a two-word question keeps (what/which add nothing after a keyword)."""


def fragment(keywords: str, question: str, rng: random.Random) -> str:
    """The question typed as two words: its search's first keyword (a name sometimes with its
    possessive "s" and no apostrophe) and either the search's last keyword or the question's own
    "when"/"where"/"who"/"how much", lower case ("joels birthday", "dentist when", "lease deposit?")."""
    words = keywords.split()
    if not words:
        return question
    first = words[0] + ("s" if words[0][:1].isupper() and len(words) > 1 and rng.random() < 0.5 else "")
    found = re.search(r"\b(" + "|".join(FRAGMENT_WH) + r")\b", question.lower())
    seconds = ([words[-1]] if len(words) > 1 else []) + ([found.group(1)] if found else [])
    text = f"{first} {rng.choice(seconds)}" if seconds else first
    return text.lower() + rng.choice(("", "?"))


def casual(text: str, rng: random.Random, protect: list[str], *, american_spelling: bool, style: float = 1.0) -> str:
    """The question as someone would type it: spelling, filler, case, punctuation, typos."""
    text = american(text, rng) if american_spelling else (british(text, rng) if rng.random() < 0.1 else text)
    if american_spelling is False and rng.random() < 0.08:
        text = american(text, rng, rate=0.5)  # British users type American spellings too
    body = text.rstrip("?.! ")
    mark = text[len(body):].strip()
    if rng.random() < 0.3 * style:
        opener = rng.choice(OPENERS)
        if opener.startswith("can you check") and not re.match(r"(?i)(what|when|where|who|which|how|if|whether)\b", body):
            opener = "hey "
        body = opener + (body[0].lower() + body[1:] if body[:1].isupper() and not _starts_with_name(body, protect)
                         else body)
    if rng.random() < 0.55:
        mark = mark if rng.random() < 0.5 else ""
    if rng.random() < 0.25 * style:
        body += rng.choice(CLOSERS)
        mark = "" if body.endswith(("?", ".")) else mark
    text = body + mark
    if rng.random() < 0.3 * style:
        text = text.lower()
    elif rng.random() < 0.15:
        text = text[0].upper() + text[1:]
    if rng.random() < 0.35 * style:
        text = add_typos(text, rng, protect)
    if rng.random() < 0.3 * style:  # "whats leos number": no apostrophes, but in a value the asker gives
        text = _without_apostrophes(text, protect)
    text = re.sub(r"\b(\w+)( \1\b)+", r"\1", text)  # "please please" from a closer after the same word
    return re.sub(r"\s{2,}", " ", text).strip()


def _without_apostrophes(text: str, protect: list[str]) -> str:
    """`text` with its apostrophes dropped outside the protected phrases (a note's "doesn't")."""
    kept = [p for p in protect if p and ("'" in p or "\u2019" in p)]
    if not kept:
        return text.replace("'", "").replace("\u2019", "")
    pieces = re.split("(" + "|".join(re.escape(p) for p in kept) + ")", text, flags=re.IGNORECASE)
    return "".join(piece if i % 2 else piece.replace("'", "").replace("\u2019", "") for i, piece in enumerate(pieces))


def _starts_with_name(body: str, protect: list[str]) -> bool:
    return any(p and body.startswith(p) for p in protect)
