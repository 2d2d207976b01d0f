"""The synonym table applied to search queries: the package's reviewed list plus the user's own.

synonyms.toml (beside this module) holds `[synonyms]` (key = [phrases]) and `[forms]`
(irregular word forms). Every entry is a group; a query phrase's alternatives are the members of
every group it belongs to (one level: "holiday" -> "break" does not lead on to "broke"). Phrases
are compared by their stems, so "CVs", "Résumé" and "resume" are the same key.
"""
from __future__ import annotations

import logging
import tomllib
from pathlib import Path

from edge_agent.store.text import STOPWORDS, stems

log = logging.getLogger(__name__)

BUILTIN_PATH = Path(__file__).with_name("synonyms.toml")
USER_FILE_NAME = "synonyms.toml"  # in the data dir, beside the database
MAX_PHRASE_CHARS = 60  # a synonym is a word or short phrase
SECTIONS = ("synonyms", "forms")


class SynonymError(ValueError):
    """A synonym file that cannot be used (its path and the reason)."""


def parse_sections(text: str, origin: str) -> dict[str, list[tuple[str, ...]]]:
    """The groups of one synonym file's text by section ({"synonyms": groups, "forms": groups});
    raises SynonymError naming `origin` and the entry."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SynonymError(f"{origin}: not valid TOML: {err}") from err
    unknown = set(data) - set(SECTIONS)
    if unknown:
        raise SynonymError(f"{origin}: unknown section(s) {sorted(unknown)}; use [synonyms] or [forms]")
    sections: dict[str, list[tuple[str, ...]]] = {}
    for section in SECTIONS:
        groups = sections.setdefault(section, [])
        for key, values in (data.get(section) or {}).items():
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise SynonymError(f"{origin}: [{section}] {key} must be a list of strings")
            phrases = tuple(dict.fromkeys(p.replace('"', " ").strip().lower() for p in (key, *values)))
            if any(not p or len(p) > MAX_PHRASE_CHARS or not stems(p) for p in phrases):
                raise SynonymError(f"{origin}: [{section}] {key} has an empty or over-long phrase")
            groups.append(phrases)
    return sections


class SynonymTable:
    """Phrase (by stems) -> the phrases that count as it."""

    def __init__(self, sections: dict[str, list[tuple[str, ...]]]):
        self._by_stems: dict[tuple[str, ...], list[str]] = {}
        # A phrase that stems to stopwords only is no alternative: the irregular form "ate" stems to
        # "at", and as a form of "eat" it would match every line that says "at".
        stop = {t for w in STOPWORDS for t in stems(w)}
        self._base = {stems(w): group[0] for group in sections["forms"] for w in group[1:]
                      if len(stems(w)) == 1 and not set(stems(w)) <= stop}
        """An irregular form's stem -> its base form ("took" -> "take"), from the [forms] groups."""
        for group in (g for groups in sections.values() for g in groups):
            usable = [p for p in group if not set(stems(p)) <= stop]
            for phrase in group:
                alts = self._by_stems.setdefault(stems(phrase), [])
                alts.extend(p for p in usable if p not in alts)

    def alternatives(self, phrase: str) -> list[str]:
        """The phrases that count as `phrase`; a phrase of several words is also looked up with its
        irregular forms in their base form ("took home" is "take home")."""
        found = self._by_stems.get(stems(phrase))
        if found is None and len(phrase.split()) > 1:
            found = self._by_stems.get(stems(" ".join(self._base.get(stems(w), w) for w in phrase.split())))
        return list(found or [])


_builtin = parse_sections(BUILTIN_PATH.read_text(encoding="utf-8"), str(BUILTIN_PATH))
_table = SynonymTable(_builtin)
_user_path: Path | None = None


def alternatives(phrase: str) -> list[str]:
    """Every phrase that counts as `phrase` in a query (itself included), [] when it has none."""
    return _table.alternatives(phrase)


def use_user_synonyms(data_dir: Path) -> int:
    """Add <data_dir>/synonyms.toml to the built-in table (replacing any earlier user file).

    Returns the user's group count. A broken file is logged and ignored: search still works
    with the built-in table, and the user learns what to fix.
    """
    global _table, _user_path
    path = Path(data_dir) / USER_FILE_NAME
    if not path.is_file():
        if _user_path is not None:
            _table, _user_path = SynonymTable(_builtin), None
        return 0
    try:
        user = parse_sections(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, SynonymError) as err:
        log.warning("user synonyms ignored: %s", err)
        return 0
    _table, _user_path = SynonymTable({s: _builtin[s] + user[s] for s in SECTIONS}), path
    return sum(map(len, user.values()))
