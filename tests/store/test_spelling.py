"""Typos read as the found word one edit away, and nothing else."""
from __future__ import annotations

import pytest

from edge_agent.store.spelling import corrected, one_edit, vocabulary


@pytest.mark.parametrize("a,b,near", [
    ("dentst", "dentist", True),      # a letter missed
    ("birthdday", "birthday", True),  # one added
    ("recipt", "receipt", True),
    ("dentsit", "dentist", True),     # two neighbours swapped
    ("plumbir", "plumber", True),     # one changed
    ("passport", "password", False),  # two changed
    ("dentist", "dentist", False),    # the same word is no edit
    ("dnetsit", "dentist", False),
])
def test_one_edit(a, b, near):
    assert one_edit(a, b) is near and one_edit(b, a) is near


def test_a_misspelt_word_is_read_as_the_commonest_found_word_one_edit_away():
    known = vocabulary(["Dr. Anjali Rao (dentist): check-up on Tuesday.", "Dentist reminder", "Dental floss"])
    assert corrected("dentst", known) == "dentist"
    assert corrected("dentist", known) is None  # found as it is
    assert corrected("rentst", known) is None  # not the same first letter
    assert corrected("passport", vocabulary(["The bank password is in the safe."])) is None
    assert corrected("tuesdy", known) == "tuesday"


def test_short_words_stopwords_and_numbers_are_never_corrected():
    known = vocabulary(["The rent is due when the tent is up. About 12345."])
    assert corrected("rent", known) is None  # four letters: too many neighbours
    assert corrected("whens", known) is None  # "when" is a stopword, not a meaning
    assert corrected("12346", known) is None
    assert "about" not in known and "12345" not in known
