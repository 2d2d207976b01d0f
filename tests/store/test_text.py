"""Query normalisation: stems from the index's own tokenizer, synonyms, strength, name terms."""
import pytest

from edge_agent.store import synonyms
from edge_agent.store.text import (fold, fts_query, name_terms, query_plan, query_terms, shorten, stems, strength,
                                   term_strength, text_matches)


def test_fold_strips_case_and_accents_keeping_length():
    assert fold("Résumé ÁLVAREZ") == "resume alvarez"
    assert len(fold("Ångström façade")) == len("Ångström façade")


def test_stems_are_the_porter_tokenizer_s():
    assert stems("Swimming receipts Batteries Résumé") == ("swim", "receipt", "batteri", "resum")
    assert stems("running") == stems("run") and stems("plumbing") == ("plumb",)
    assert stems("") == ()


def test_query_terms_drop_stopwords_unless_nothing_else():
    assert query_terms("What is my dentist's phone number?") == ["dentist", "phone", "number"]
    assert query_terms("the") == ["the"]
    assert query_terms("  ") == []
    assert query_terms("dentist Dentist DENTIST") == ["dentist"]


def test_the_fillers_of_a_question_typed_to_a_phone_are_not_search_words():
    assert query_terms("hiya is there a contact number for my electrician anywhere in my stuff ta") == [
        "contact", "number", "electrician"]
    assert query_terms("um whats the thing Jakub doesnt like again, sorry") == ["jakub", "doesnt", "like"]
    assert "notes" in query_terms("the skip day in the shared notes")  # a file's name: not a filler


def test_word_forms_synonyms_and_phrases_widen_a_term():
    [swim] = query_plan("swimming")
    assert {"swam", "swum"} <= set(swim.phrases)
    [cv] = query_plan("my CV")
    assert {"résumé", "curriculum vitae"} <= set(cv.phrases)
    terms = query_plan("where is the stop tap")
    assert terms[0].word == "stop tap" and "stopcock" in terms[0].phrases
    assert [t.word for t in query_plan("mum's birthday")] == ["mum", "birthday"]
    assert "mother" in query_plan("mum")[0].phrases
    # one level only: "holiday" reaches "break", but not break's own forms
    assert "broke" not in query_plan("holiday")[0].phrases
    assert [t.word for t in query_plan("receipts receipt")] == ["receipts"]


def test_a_phrase_of_the_table_is_found_with_its_stopwords():
    """A synonym phrase holding a stopword is read before stopwords are dropped: "date of birth" is a
    birthday and "does she not like" a dislike, where a bare "like" stays itself."""
    [born] = query_plan("what is her date of birth")
    assert born.word == "date of birth" and "birthday" in born.phrases
    [dislike] = query_plan("what does she not like")
    assert "dislikes" in dislike.phrases
    assert query_plan("what does she like")[0].phrases == ("like",)
    assert [t.word for t in query_plan("the dentist and the stop tap")] == ["dentist", "stop tap"]
    into = query_plan("what my mate rhiannon is into")[-1]  # what someone is into: their gift ideas
    assert into.word == "is into" and "gift" in into.phrases
    # "doesn't" folds to "doesn t": the table's "doesn't like" is read the same way
    assert "dislikes" in query_plan("what's the thing jakub doesn't like")[-1].phrases
    assert "deadline" in query_plan("when is the rota due")[-1].phrases  # a thing due has a deadline


def test_fts_query_ors_the_terms_and_their_alternatives():
    assert fts_query("Receipts TV") == '("receipts" OR "invoice" OR "bill") OR "tv"'
    assert fts_query("2026") == '"2026"'
    assert fts_query("") is None and fts_query("?!") is None


def test_strength_all_most_some():
    assert [strength(m, 4) for m in (4, 3, 2)] == ["all", "most", "some"]
    # missing one word of three is a near miss: "Pickle pet insurance" is not the lease with the pet clause
    assert [strength(m, 3) for m in (3, 2, 1)] == ["all", "some", "some"]
    assert [strength(m, 2) for m in (2, 1)] == ["all", "some"]
    assert strength(4, 5) == "most" and strength(0, 0) == "some"


def test_an_unmatched_value_word_does_not_weaken_a_hit():
    terms = query_plan("dentist email address")
    assert [t.soft for t in terms] == [False, True, True]
    assert term_strength(terms, ["dentist"]) == "all"
    assert term_strength(terms, ["email"]) == "some"
    assert [(t.word, t.soft) for t in query_plan("dentist phone number")] == [("dentist", False), ("phone number", True)]
    assert term_strength(query_plan("email address"), ["email"]) == "some"  # only value words: all count


def test_text_matches_by_stems_and_phrases():
    terms = query_plan("swimming stop tap")
    assert text_matches(terms, "We swam at the lido; the stopcock is under the sink") == ["swimming", "stop tap"]
    assert text_matches(terms, "stop the tap dripping") == []  # a phrase is matched as a phrase
    # the way people type to a phone: a clipped family word, where someone is, what a pet eats
    assert text_matches(query_plan("my bros birthday"), "Kit Lowe (brother): Birthday 2 May") == ["bros", "birthday"]
    assert text_matches(query_plan("which town is she in"), "Lives in Ludlow, by the river") == ["town"]
    assert text_matches(query_plan("what does the cat eat"), "Food: salmon biscuits, twice a day") == ["eat"]
    assert text_matches(query_plan("which reference is ours"), "Home policy number: QX-2210-88") == ["reference"]
    # "mine" and "my own" are the asker's own card
    assert text_matches(query_plan("which email is mine"), "My own details Email ada@example.com") == ["email", "mine"]
    assert text_matches(query_plan("need my own email"), "My own details Email ada@example.com") == ["own", "email"]
    # "ate" stems to "at": as a form of "eat" it would match every line that says "at"
    assert text_matches(query_plan("what does the cat eat"), "Vet: Dr. Lund at Willow Surgery") == []


def test_a_synonym_phrase_is_read_through_the_irregular_forms_of_its_words(tmp_path):
    """"took home" is "take home", so net pay; a user's own forms count the same way."""
    assert text_matches(query_plan("what i took home in june"), "Net pay: 1,204.50") == ["took home"]
    assert text_matches(query_plan("what i took in june"), "Net pay: 1,204.50") == []  # one word: its own forms
    try:
        (tmp_path / "synonyms.toml").write_text('[synonyms]\n"dig up" = ["excavate"]\n[forms]\ndig = ["dug"]\n',
                                               encoding="utf-8")
        assert synonyms.use_user_synonyms(tmp_path) == 2
        assert text_matches(query_plan("when we dug up the lawn"), "We will excavate the lawn") == ["dug up", "lawn"]
    finally:
        synonyms.use_user_synonyms(tmp_path / "nowhere")
    assert text_matches(query_plan("when we dug up the lawn"), "We will excavate the lawn") == ["lawn"]


def test_user_synonyms_extend_the_table_and_a_broken_file_is_ignored(tmp_path):
    try:
        (tmp_path / "synonyms.toml").write_text('[synonyms]\npickle = ["the cat"]\n', encoding="utf-8")
        assert synonyms.use_user_synonyms(tmp_path) == 1
        assert "the cat" in query_plan("Pickle")[0].phrases
        (tmp_path / "synonyms.toml").write_text('[synonyms]\npickle = "not a list"\n', encoding="utf-8")
        assert synonyms.use_user_synonyms(tmp_path) == 0
        (tmp_path / "synonyms.toml").unlink()
        assert synonyms.use_user_synonyms(tmp_path) == 0
        assert "the cat" not in query_plan("Pickle")[0].phrases
    finally:
        synonyms.use_user_synonyms(tmp_path / "nowhere")


def test_the_builtin_table_parses_and_rejects_bad_entries():
    with pytest.raises(synonyms.SynonymError, match="unknown section"):
        synonyms.parse_sections("[colours]\nred = ['crimson']\n", "x.toml")
    with pytest.raises(synonyms.SynonymError, match="empty or over-long"):
        synonyms.parse_sections("[synonyms]\nred = ['']\n", "x.toml")
    assert sum(map(len, synonyms.parse_sections(synonyms.BUILTIN_PATH.read_text(encoding="utf-8"), "builtin").values())) > 40


def test_name_terms_split_camel_case_and_spell_dates():
    assert "Nadia Ferris" in name_terms("NadiaFerris")
    assert "october 2026" in name_terms("wyvern-energy-bill-2026-10")
    assert "march 2025" in name_terms("scan_20250312")
    assert name_terms("ground-rent-2026-27") == "ground-rent-2026-27"


def test_shorten_cuts_at_a_word():
    assert shorten("one two three four", 100) == "one two three four"
    assert shorten("alpha beta gamma delta", 12) == "alpha beta…"
