"""Text normalisation shared by every FTS5 table: the tokenizer, query building and match strength.

Every searched text is indexed by SQLite's Porter stemmer over unicode61 with diacritics
removed, so case, accents and regular word forms never matter ("receipts", "swimming" and
"résumé" index as "receipt", "swim", "resum"). A query is split into terms; each term is stemmed
by the very same tokenizer (an in-memory FTS5 table, so the two can never disagree) and widened
by the synonym table (synonyms.toml, plus the user's own) to the phrases that count as it.
A hit's strength says how many of the query's terms it matched: all, most or some.
"""
from __future__ import annotations

import functools
import re
import sqlite3
import threading
import unicodedata
from dataclasses import dataclass

FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"
"""The tokenizer every FTS5 table in the store uses."""
FIRST_TOKENIZE = "unicode61 remove_diacritics 2"
"""The tokenizer the first migrations created the tables with (kept: migrations are history)."""

MAX_QUERY_TERMS = 12  # a query is a handful of ranking keywords, never a paragraph
SCORE_DECIMALS = 3  # bm25 scores equal to this many decimals count as a tie (recency decides)
MOST_SHARE = 0.75  # a hit matching at least this share of the query's terms (but not all) matches "most"
MAX_PHRASE_WORDS = 3  # the longest synonym phrase looked for in a query

STOPWORDS = frozenset("""
a about above after again all am an and any are as at be been before being below between both but
by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just let me more most my
myself no nor not now of off on once only or other our ours ourselves out over same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will
with would you your yours yourself yourselves please find show tell get give look looking need
want wanted
hey hi hiya hello um uh erm er pls plz thanks thank thx ta cheers sorry ok okay oh yeah btw quick
actually anywhere somewhere anything something stuff thing things remind know again
whats whens wheres whos hows whys thats theres heres im ive youre theyre lets
""".split())
"""Words that carry no ranking signal in a search query, with the fillers of a question typed to a
phone ("hiya is there a number for my electrician anywhere in my stuff ta") and its contractions
typed without the apostrophe ("whens" found every line saying "when"; a "doesnt" stays: it means):
matched in a stored line they make a manual's "anything" or a newsletter's "thanks" look like an answer."""

SOFT_WORDS = frozenset("""
number numbers email address phone tel telephone date dates time times amount amounts name names detail
details info information cost costs price prices total much many
""".split())
"""Words that ask for a kind of value rather than name the thing: a hit missing them is still a
full match ("dentist phone number" is answered by the dentist's page even if it says "tel")."""

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


def content_words(text: str) -> list[str]:
    """`text`'s words that carry a ranking signal: stopwords and one-letter words dropped."""
    return [w for w in words(text) if len(w) > 1 and w not in STOPWORDS]


def query_terms(query: str) -> list[str]:
    """The distinct ranking words of a query (content_words; its stopwords when it has nothing else)."""
    seen: list[str] = []
    kept = content_words(query) or [w for w in words(query) if len(w) > 1]
    for word in kept:
        if word not in seen:
            seen.append(word)
    return seen[:MAX_QUERY_TERMS]


def name_terms(name: str) -> str:
    """Extra searchable words for a file or title: camelCase split, dates spelled as months."""
    spaced = _CAMEL.sub(" ", name)
    extra = []
    for match in _ISO_DATE.finditer(name):
        year, month = match.group(1), int(match.group(2))
        extra.append(f"{MONTHS[month - 1]} {year}")
    return " ".join([spaced, *extra])


def shorten(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut at a word boundary."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut) + "…"


# -- stemming: the index's own tokenizer, run in memory ------------------------------------------
_local = threading.local()


def _stemmer() -> sqlite3.Connection:
    conn = getattr(_local, "conn", None)
    if conn is None:  # one per thread: sqlite3 connections are not shared across threads
        conn = sqlite3.connect(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE s USING fts5(x, tokenize='{FTS_TOKENIZE}')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(s, 'instance')")
        _local.conn = conn
    return conn


def tokens(text: str) -> tuple[str, ...]:
    """The tokens FTS5 indexes for `text`, in order ("Swimming receipts" -> ("swim", "receipt"))."""
    conn = _stemmer()
    with conn:
        conn.execute("INSERT INTO s(rowid, x) VALUES (1, ?)", (text,))
        out = tuple(row[0] for row in conn.execute("SELECT term FROM v ORDER BY offset"))
        conn.execute("DELETE FROM s")
    return out


@functools.lru_cache(maxsize=8192)
def stems(phrase: str) -> tuple[str, ...]:
    """tokens() of a word or short phrase, cached (query words and synonyms recur)."""
    return tokens(phrase)


# -- queries -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class QueryTerm:
    """One term of a query and every phrase that counts as it."""

    word: str
    """The term as the query wrote it (folded; several words for a synonym phrase)."""
    phrases: tuple[str, ...]
    """The term itself first, then its synonyms and irregular forms."""
    soft: bool = False
    """A value word (SOFT_WORDS): counts toward a hit's strength only when the hit has it."""

    def match(self) -> str:
        """The FTS5 expression matching any of the phrases (stemmed by the table's tokenizer)."""
        quoted = [f'"{p}"' for p in self.phrases if stems(p)]
        return quoted[0] if len(quoted) == 1 else "(" + " OR ".join(quoted) + ")"


def query_plan(query: str) -> list[QueryTerm]:
    """The query's terms, each widened by the synonym table; a known multi-word phrase is one term,
    read with its stopwords ("date of birth", "does she not like")."""
    from edge_agent.store.synonyms import alternatives

    kept = query_terms(query)
    ws = words(query)
    out: list[QueryTerm] = []
    seen: set[tuple[str, ...]] = set()
    i = 0
    while i < len(ws):
        windows = (" ".join(ws[i:i + n]) for n in range(min(MAX_PHRASE_WORDS, len(ws) - i), 1, -1))
        phrase, alts = next(((w, a) for w in windows if (a := alternatives(w))), (ws[i], None))
        i += len(phrase.split())
        if alts is None:  # one word: a stopword, or past the query's first MAX_QUERY_TERMS, is no term
            if phrase not in kept:
                continue
            alts = alternatives(phrase)
        key = stems(phrase)
        if key and key not in seen:  # "receipt receipts" is one term
            seen.add(key)
            out.append(QueryTerm(phrase, (phrase, *[a for a in alts if stems(a) != key]),
                                 soft=all(w in SOFT_WORDS for w in phrase.split())))
    return out


def literal_terms(terms: list[QueryTerm]) -> list[QueryTerm]:
    """The terms by their own words, synonyms and other forms left out ("jog" is no "run")."""
    return [QueryTerm(t.word, t.phrases[:1], t.soft) for t in terms]


def fts_query(query: str | list[QueryTerm]) -> str | None:
    """An FTS5 MATCH expression: any of the query's terms (ranking rewards those with more), or None."""
    terms = query_plan(query) if isinstance(query, str) else query
    return " OR ".join(t.match() for t in terms) if terms else None


def term_strength(terms: list[QueryTerm], matched: list[str]) -> str:
    """all | most | some for a hit that matched the terms named `matched` (unmatched soft terms aside)."""
    hard = [t for t in terms if not t.soft]
    counted = [t for t in terms if not t.soft or t.word in matched] if hard else terms
    return strength(sum(t.word in matched for t in counted), len(counted))


def strength(matched: int, total: int) -> str:
    """all | most | some: how much of a query a hit matched."""
    if total and matched >= total:
        return "all"
    if total and matched / total >= MOST_SHARE:
        return "most"
    return "some"


STRONG = ("all", "most")
"""Strengths that count as a real match; a result whose hits are all weaker is `weak`."""


def text_matches(terms: list[QueryTerm], text: str) -> list[str]:
    """The terms whose phrases occur in `text` (by stems, phrases contiguous): for hits not ranked here."""
    have = tokens(text)
    joined = " " + " ".join(have) + " "
    return [t.word for t in terms
            if any(" " + " ".join(stems(p)) + " " in joined for p in t.phrases if stems(p))]
