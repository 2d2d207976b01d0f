"""Text normalisation shared by every FTS5 table: the tokenizer, query building and excerpts.

Documents are tokenized by SQLite's unicode61 tokenizer with diacritics removed, so case and
accents never matter. Plurals are handled on the query side: each query word is reduced to a
light singular and matched exactly and as a prefix (which catches the plural in the document);
a long -er/-ing/-ed word is also matched by its root ("plumber" finds "plumbing").
"""
from __future__ import annotations

import re
import unicodedata

FTS_TOKENIZE = "unicode61 remove_diacritics 2"
"""The tokenizer every FTS5 table in the store uses."""

MIN_PREFIX_LEN = 3  # shorter words are matched exactly: "tv*" would match far too much
MIN_ROOT_LEN = 5  # -er/-ing/-ed is stripped only when this much is left: "meeting" -> "meet*" is too loose
MAX_QUERY_TERMS = 12  # a query is a handful of ranking keywords, never a paragraph
EXCERPT_CHARS = 1500  # text given to the answer around a file match
SCORE_DECIMALS = 3  # bm25 scores equal to this many decimals count as a tie (recency decides)

STOPWORDS = frozenset("""
a about above after again all am an and any are as at be been before being below between both but
by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just let me more most my
myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will
with would you your yours yourself yourselves please find show tell get give look looking need
want wanted
""".split())
"""Words that carry no ranking signal in a search query."""

_WORD = re.compile(r"\w+", re.UNICODE)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_ISO_DATE = re.compile(r"(?<!\d)((?:19|20)\d\d)[-_.]?(0[1-9]|1[0-2])(?:[-_.]?([0-3]\d))?(?!\d)")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")


def fold(text: str) -> str:
    """Lower-case and strip accents, keeping one output character per input character."""
    out = []
    for ch in text:
        base = unicodedata.normalize("NFD", ch)[:1] or ch
        out.append(base.casefold()[:1] or base)
    return "".join(out)


def words(text: str) -> list[str]:
    """Folded word tokens of `text`, in order."""
    return _WORD.findall(fold(text))


def singular(word: str) -> str:
    """A light, deliberately conservative plural strip: receipts -> receipt, batteries -> batter."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3]
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def word_root(word: str) -> str | None:
    """A shorter root for -er/-ing/-ed words (plumber, plumbing -> plumb), if one is long enough."""
    for suffix in ("ing", "er", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_ROOT_LEN:
            return word[: -len(suffix)]
    return None


def query_terms(query: str) -> list[str]:
    """The distinct ranking words of a query, stopwords and one-letter words dropped."""
    seen: list[str] = []
    raw = [w for w in words(query) if len(w) > 1]
    kept = [w for w in raw if w not in STOPWORDS] or raw
    for word in kept:
        if word not in seen:
            seen.append(word)
    return seen[:MAX_QUERY_TERMS]


def fts_query(query: str) -> str | None:
    """An FTS5 MATCH expression (terms OR-ed; each its light singular, exact and as a prefix), or None."""
    parts = []
    for word in query_terms(query):
        stem = singular(word)
        if len(stem) >= MIN_PREFIX_LEN and not stem.isdigit():
            # The exact word scores on top of the prefix, so "hot" outranks "hotter"; a root
            # prefix adds the word's relatives ("plumber" also finds "plumbing") at lower weight.
            root = word_root(stem)
            parts.append(f'"{stem}" OR "{stem}"*' + (f' OR "{root}"*' if root else ""))
        else:
            parts.append(f'"{word}"')
    return " OR ".join(parts) if parts else None


def name_terms(name: str) -> str:
    """Extra searchable words for a file or title: camelCase split, dates spelled as months."""
    spaced = _CAMEL.sub(" ", name)
    extra = []
    for match in _ISO_DATE.finditer(name):
        year, month = match.group(1), int(match.group(2))
        extra.append(f"{MONTHS[month - 1]} {year}")
    return " ".join([spaced, *extra])


def excerpt(text: str, query: str, limit: int = EXCERPT_CHARS) -> str:
    """Up to `limit` characters of `text` around the first query match (all of it if short)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    folded = fold(text)
    positions = []
    for word in query_terms(query):
        stem = singular(word)
        match = re.search(r"\b" + re.escape(stem), folded)
        if match:
            positions.append(match.start())
    anchor = min(positions) if positions else 0
    start = max(0, anchor - limit // 4)
    # Start on a line or word boundary so the excerpt does not open mid-word.
    if start:
        boundary = text.rfind("\n", 0, start + 1)
        if boundary == -1 or start - boundary > limit // 4:
            boundary = text.rfind(" ", 0, start + 1)
        start = boundary + 1 if boundary != -1 else start
    end = min(len(text), start + limit)
    cut = text[start:end]
    if end < len(text):
        space = cut.rfind(" ")
        cut = cut[:space] if space > limit // 2 else cut
    return ("… " if start else "") + cut.strip() + (" …" if end < len(text) else "")


def shorten(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut at a word boundary."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut) + "…"
