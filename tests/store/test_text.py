"""Query normalisation, name terms and excerpts (pure functions)."""
from edge_agent.store.text import (EXCERPT_CHARS, excerpt, fold, fts_query, name_terms, query_terms, shorten, singular,
                                   word_root)


def test_fold_strips_case_and_accents_keeping_length():
    assert fold("Résumé ÁLVAREZ") == "resume alvarez"
    assert len(fold("Ångström façade")) == len("Ångström façade")


def test_singular_is_light():
    assert singular("receipts") == "receipt"
    assert singular("batteries") == "batter"
    assert singular("boxes") == "box"
    assert singular("glass") == "glass"
    assert singular("bus") == "bus"
    assert singular("bills") == "bill"


def test_word_root_only_for_long_enough_words():
    assert word_root("plumber") == "plumb" and word_root("plumbing") == "plumb"
    assert word_root("heating") is None and word_root("water") is None and word_root("lease") is None
    assert fts_query("plumber") == '"plumber" OR "plumber"* OR "plumb"*'


def test_query_terms_drop_stopwords_unless_nothing_else():
    assert query_terms("What is my dentist's phone number?") == ["dentist", "phone", "number"]
    assert query_terms("the") == ["the"]
    assert query_terms("  ") == []
    assert query_terms("dentist Dentist DENTIST") == ["dentist"]


def test_fts_query_prefixes_singular_and_keeps_short_words_exact():
    assert fts_query("Receipts TV") == '"receipt" OR "receipt"* OR "tv"'
    assert fts_query("2026") == '"2026"'
    assert fts_query("") is None


def test_name_terms_split_camel_case_and_spell_dates():
    assert "Clara Brennan" in name_terms("ClaraBrennan")
    assert "october 2026" in name_terms("severn-energy-bill-2026-10")
    assert "march 2025" in name_terms("scan_20250312")
    assert name_terms("council-tax-2026-27") == "council-tax-2026-27"


def test_excerpt_returns_short_text_whole_and_windows_long_text():
    assert excerpt("  short text  ", "x") == "short text"
    long = ("filler words here. " * 200) + "The deposit was 1,150 pounds. " + ("more filler. " * 200)
    cut = excerpt(long, "deposit")
    assert "The deposit was 1,150 pounds." in cut
    assert len(cut) <= EXCERPT_CHARS + 4
    assert cut.startswith("… ") and cut.endswith(" …")


def test_shorten_cuts_at_a_word():
    assert shorten("one two three four", 100) == "one two three four"
    assert shorten("alpha beta gamma delta", 12) == "alpha beta…"
