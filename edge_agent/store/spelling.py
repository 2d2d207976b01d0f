"""Typos: a query word that matches nothing found is read as the found word one edit away.

People type to a phone ("whens my dentst appointment", "birthdy"), and a misspelt word matches
nothing: its term carries no weight and the line it names ranks like any other. A word of at least
MIN_CHARS letters that occurs in none of the texts searched is read as the word of those texts it
is one edit from (a letter missed, added, changed, or two swapped), with the same first letter and
not a stopword; among several, the commonest. Only the texts at hand are the vocabulary, so a
word is never "corrected" into something the user's data does not say.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable

from edge_agent.store.text import STOPWORDS, words

MIN_CHARS = 5
"""Shorter words have too many neighbours one edit away ("rent", "tent", "rest")."""


def vocabulary(texts: Iterable[str]) -> Counter:
    """The alphabetic words of `texts` (folded) long enough to be meant, with their counts."""
    return Counter(w for text in texts for w in words(text)
                   if len(w) >= MIN_CHARS - 1 and w.isalpha() and w not in STOPWORDS)


def one_edit(a: str, b: str) -> bool:
    """Whether `b` is `a` with one letter missed, added, changed, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    return short[i:] == long_[i + 1:]


def corrected(word: str, known: Counter) -> str | None:
    """The word of `known` that `word` (absent from it) was most likely meant as, or None."""
    if len(word) < MIN_CHARS or not word.isalpha() or word in known:
        return None
    near = [w for w in known if w[0] == word[0] and one_edit(word, w)]
    return min(near, key=lambda w: (-known[w], w)) if near else None
