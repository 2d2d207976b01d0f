"""An effect writes what the asker said, not what the model made of it.

remember adds to the user's notebook. A small model crafting the note keeps the shape of its
training and fills in a value of its own ("The user's locker number is 4417." for "my locker is
112"); the preview would show it and a hurried confirm would store it. So each text argument of an
effect is checked against the question before it is previewed: a number or email the asker did not
write, a number, name or quoted value they gave that is missing, or a text that keeps less than
KEEP_SHARE of the asker's content words, is replaced by the
asker's own sentence with the request phrase ("remember that", "make a note:") taken off. The
asker still sees the exact preview and confirms it; nothing is written before that.
"""
from __future__ import annotations

import re
from typing import Any

from edge_agent.harness.fitting import FUNCTION_WORDS, WORD_RE, content_words
from edge_agent.store.spelling import one_edit

KEEP_SHARE = 0.5  # a crafted text must keep at least this share of the asker's content words
NUMBER_RE = re.compile(r"\d+")
EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
QUOTED_RE = re.compile(r"['\"\u2018\u201c]([^'\"\u2019\u201d]{2,60})['\"\u2019\u201d](?!\w)")
LEAD = r"(?:(?:please|pls|can you|could you|would you|hey|hi|ok|okay|oh|and|so|right|quick one|quickly|heads up)[\s,]+)*"
"""Words a request may open with before it asks ("hey, quick one, note down ...")."""
NOTES = r"(?:add|put)(?: this| that| it)? (?:to|in|into) (?:my|the) (?:notes|notebook)"
"""A request phrase naming where it goes: "add to my notes", "put it in the notebook"."""
KEEP_FOR = r"for (?:next time|future reference|reference|the record|later)"
"""Words that say a statement is for keeping: "for next time: Ana is vegan", "for the record, ..."."""
SAVE_VERBS = (rf"{NOTES}|{KEEP_FOR}|remember|make a note|take a note|add a note|keep a note|note|jot down|jot|"
              r"keep in mind|save|store|write down|don'?t forget|do not forget")
"""The verbs that ask to keep a fact; a note's request phrase may also be "log" or "record"."""
SPELLED = ("remember", "notebook", "record", "forget")
"""Save words long enough that a word one edit from one is that word misspelt ("remeber",
"remmember"); shorter ones have real words one edit away ("note": "not", "store": "stone")."""
AFTER_VERB = r"(?:\s+(?:of|down|this|that|for me|for later|in my notes|in the notebook))*\s*[:,\-–—]?"
"""What may follow the verb before the fact: "down", "this for me", "in my notes", a colon."""
REQUEST_RE = re.compile(rf"^\s*{LEAD}(?:{SAVE_VERBS}|log|record){AFTER_VERB}\s*", re.IGNORECASE)
"""The request phrase a note starts with ("remember that", "make a note:"), taken off what is saved."""
SAVE_REQUEST_RE = re.compile(
    rf"^\s*{LEAD}(?:{SAVE_VERBS})\b{AFTER_VERB}\s+(?!(?:when|where|what|who|whom|whose|how|if|whether|why|which)\b)\S",
    re.IGNORECASE)
"""A statement that asks to keep a fact ("Please note that...", "hey, save that Rhiannon likes an
aisle seat"), not a question about the past ("Remember when we went to Lisbon?" ends with "?")."""
QUESTION_START_RE = re.compile(
    rf"^\s*{LEAD}(?:did|do|does|have|has|had|was|were|is|are|am)\b", re.IGNORECASE)
"""A sentence that opens as a yes-no question ("did I ever note down my boiler serial number"); one
opening with a question word may still say what to keep ("where I parked: level 3 - remember it")."""
QUESTION_WORD_RE = re.compile(r"\b(?:what|when|where|who|whose|which|how|why)\b", re.IGNORECASE)
SAVE_WORD_RE = re.compile(r"\b(?:remember|note|notes|notebook|jot|save|store|keep|forget|write|log|record|add|"
                          r"later|next time|future|update|heads up)\b", re.IGNORECASE)
"""Any word that may ask to keep something, wherever it stands ("parked on level 3 - remember that",
"heads up for later, ...")."""
REQUEST_WORDS = frozenset("please remember note make take add jot keep mind save store write down forget "
                          "log record later notes notebook".split())


def save_words_spelt(question: str) -> str:
    """The question with a misspelt save word (SPELLED) read as that word: "remeber my ..." asks
    what "remember my ..." does. Other words stay as they are."""
    return _save_words_spelt(question)[0]


def _save_words_spelt(question: str) -> tuple[str, list[tuple[int, int]]]:
    """save_words_spelt(question), and where each word read otherwise ends in it with how many
    characters longer the text is from there on (to find a place in the question again)."""
    ends: list[tuple[int, int]] = []
    out, at, grown = [], 0, 0
    for match in re.finditer(r"[A-Za-z]{5,}", question):
        word = match.group(0)
        lower = word.lower()
        meant = next((s for s in SPELLED if lower != s and lower[0] == s[0] and one_edit(lower, s)), None)
        if meant is None:
            continue
        out += [question[at:match.start()], meant]
        ends.append((match.start() + grown + len(meant), grown + len(meant) - len(word)))
        at, grown = match.end(), ends[-1][1]
    return "".join(out) + question[at:], ends


def asks_to_save(question: str) -> bool:
    """Whether the asker tells the assistant to keep a fact (SAVE_REQUEST_RE, and no "?" at the end)."""
    return SAVE_REQUEST_RE.search(save_words_spelt(question)) is not None and not question.rstrip().endswith("?")


def only_asks(question: str) -> bool:
    """Whether the asker only asks, keeping nothing: a yes-no question ("did I ever note down ..."),
    or a question word or "?" and no word that could ask to keep a fact, spelt right or not ("manager
    when"). "remember where the keys went?" and "remeber my order is a flat white ?" are neither:
    the planner may still take them for a note."""
    if asks_to_save(question):
        return False
    if QUESTION_START_RE.search(question) is not None:
        return True
    asks = question.rstrip().endswith("?") or QUESTION_WORD_RE.search(question) is not None
    return asks and SAVE_WORD_RE.search(save_words_spelt(question)) is None


def asker_words(question: str) -> str:
    """The fact the asker stated, in their words: the request phrase off, a capital and a full stop."""
    read, ends = _save_words_spelt(question)
    request = REQUEST_RE.match(read)
    cut = 0
    if request is not None:  # where the request phrase ends in the asker's own text
        cut = request.end() - next((grown for end, grown in reversed(ends) if end <= request.end()), 0)
    text = question[cut:].strip() or question.strip()
    text = text[0].upper() + text[1:] if text else text
    return text if text.endswith((".", "!", "?")) else f"{text}."


def names(text: str) -> set[str]:
    """The asker's values that are not numbers: quoted phrases and capitalised words past the first."""
    quoted = {q.strip().lower() for q in QUOTED_RE.findall(text) if q.strip()}
    words = WORD_RE.findall(text)
    return quoted | {w.lower() for w in words[1:] if w[0].isupper() and w.lower() not in FUNCTION_WORDS}


def grounded_in(text: str, question: str) -> bool:
    """Whether `text` states nothing the asker did not (numbers, emails), keeps every number, name
    and quoted value they gave, and enough of their words."""
    asked, fact = question.lower(), asker_words(question)
    if set(NUMBER_RE.findall(text)) != set(NUMBER_RE.findall(fact)):
        return False
    if any(name not in text.lower() for name in names(fact)):
        return False
    if any(e not in asked for e in EMAIL_RE.findall(text.lower())):
        return False
    wanted = content_words(asker_words(question)) - REQUEST_WORDS
    if not wanted:
        return True
    return len(wanted & content_words(text)) / len(wanted) >= KEEP_SHARE


def from_the_asker(args: dict[str, Any], question: str) -> dict[str, Any]:
    """An effect's arguments with every text that is not grounded in the question replaced by the
    asker's own words (see the module docstring)."""
    return {k: (asker_words(question) if isinstance(v, str) and v.strip() and not grounded_in(v, question) else v)
            for k, v in args.items()}
