"""The generator knows nothing of the evaluation: no name of its world, no question close to its questions.

Only this test reads world/ (through WORLD_DIR), to prove the separation.
"""
from __future__ import annotations

import builtins
import io
import json
import re
from pathlib import Path

import pytest

import edge_agent.tune
from edge_agent.paths import WORLD_DIR
from edge_agent.tune.dataset import generate
from edge_agent.tune.households import generate_household
from edge_agent.tune.scenarios import questions_for

from tunekit import SEPARATION_SEEDS, content_words, jaccard, ngrams, world_names, world_values

MAX_OVERLAP = 0.5  # word-set overlap (Jaccard, stop words out) every generated question stays below
SHARED_RUN = 6  # words in a row no generated question may share with an evaluation question
SHORT_WORDS = 2  # content words of a question typed as two words (phrasing.fragment)
TUNE_SOURCE = Path(edge_agent.tune.__file__).parent


@pytest.fixture(scope="module")
def fifty(tmp_path_factory):
    """50 households: (folder, questions)."""
    root = tmp_path_factory.mktemp("tune-separation")
    out = []
    for seed in SEPARATION_SEEDS:
        hh = generate_household(seed, root / f"h{seed}")
        out.append((hh.directory, questions_for(hh, 0)))
    return out


def generated_text(folder: Path, questions) -> str:
    parts = [p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file() and p.suffix != ".png"]
    parts += [str(p.relative_to(folder)) for p in folder.rglob("*")]
    parts += [q.model_dump_json() for q in questions]
    return "\n".join(parts)


def test_no_name_from_the_eval_world_appears(fifty):
    names = world_names(WORLD_DIR)
    assert len(names) > 40 and {"Bristol", "Biscuit"} <= names  # the measure sees the world's names at all
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, names))) + r")\b", re.IGNORECASE)
    found: dict[str, str] = {}
    for folder, questions in fifty:
        for m in pattern.finditer(generated_text(folder, questions)):
            found.setdefault(m.group(0), folder.name)
    assert found == {}


def test_no_value_from_the_eval_world_appears(fifty):
    """No phone number, email, sum, code or plate of the eval world is in a generated household,
    its questions or their expected facts."""
    values = world_values(WORLD_DIR)
    assert len(values) > 40 and {"0117 496 0733", "HLI-7730291", "WU17 KXP"} <= values  # the measure sees them
    found = {v: folder.name for folder, questions in fifty for v in values if v in generated_text(folder, questions)}
    assert found == {}


def test_no_note_title_or_file_name_is_the_eval_worlds(fifty):
    titles = {json.loads(line)["title"].lower() for line in
              (WORLD_DIR / "notebook.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()}
    files = {p.name.lower() for p in (WORLD_DIR / "files").rglob("*") if p.is_file()}
    for folder, _ in fifty:
        ours = {json.loads(line)["title"].lower() for line in
                (folder / "notebook.jsonl").read_text(encoding="utf-8").splitlines()}
        assert not ours & titles, ours & titles
        assert not {p.name.lower() for p in (folder / "files").rglob("*")} & files


def test_no_question_is_close_to_an_eval_question(fifty):
    """Word overlap for questions of three content words or more; a two-word question ("dentist
    when", "lease deposit") shares half its words with any eval question on its topic, so it only
    may not be one of them word for word."""
    eval_questions = [json.loads(line)["question"] for line in
                      (WORLD_DIR / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    evals = [(q, content_words(q), ngrams(q, SHARED_RUN)) for q in eval_questions]
    worst, shared, same, count, short = (0.0, "", ""), [], [], 0, 0
    for _, questions in fifty:
        for q in questions:
            count += 1
            words, runs = content_words(q.question), ngrams(q.question, SHARED_RUN)
            short += len(words) <= SHORT_WORDS
            for text, ewords, eruns in evals:
                if len(words) > SHORT_WORDS:
                    worst = max(worst, (jaccard(words, ewords), q.question, text))
                elif words == ewords:
                    same.append((q.question, text))
                if runs & eruns:
                    shared.append((q.question, text))
    assert count > 1500 and short > 50  # the two-word questions are there, and checked
    assert worst[0] < MAX_OVERLAP, worst
    assert shared == [] and same == []


def test_the_generator_source_never_names_the_eval_world():
    for path in TUNE_SOURCE.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for needle in ("WORLD_DIR", "world/", "retrieval.jsonl", '"world"', "'world'"):
            assert needle not in text, f"{path.name} mentions {needle}"


def test_generating_opens_nothing_under_world(tmp_path, monkeypatch):
    world = WORLD_DIR.resolve()
    real_open, real_io_open = builtins.open, io.open

    def guarded(opener):
        def open_(file, *args, **kwargs):
            if isinstance(file, (str, Path)) and Path(file).resolve().is_relative_to(world):
                raise AssertionError(f"the generator opened {file}")
            return opener(file, *args, **kwargs)
        return open_

    monkeypatch.setattr(builtins, "open", guarded(real_open))
    monkeypatch.setattr(io, "open", guarded(real_io_open))
    pairs = generate(2, 11, tmp_path / "run")
    assert len(pairs) == 2 and all(qs for _, qs in pairs)


def test_the_shipped_training_set_holds_nothing_of_the_eval_world():
    """The text of the examples the shipped adapter was trained on (beside it, in its card): no name,
    no value and no question of the eval world."""
    import gzip

    from edge_agent.llm.adapter import ADAPTERS_DIR, BUNDLED_ADAPTER, TRAINING_SET, read_card
    from edge_agent.llm.bundled import sha256_file

    card = read_card(ADAPTERS_DIR / BUNDLED_ADAPTER)
    shipped = ADAPTERS_DIR / TRAINING_SET
    assert card["training_set"]["sha256"] == sha256_file(shipped)  # the set this adapter was trained on
    with gzip.open(shipped, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    assert len(rows) == card["data"]["examples"]
    text = "\n".join(r["prompt"] + "\n" + r["target"] for r in rows)
    names = world_names(WORLD_DIR)
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, names))) + r")\b", re.IGNORECASE)
    assert {m.group(0) for m in pattern.finditer(text)} == set()
    assert {v for v in world_values(WORLD_DIR) if v in text} == set()
    evals = [content_words(json.loads(line)["question"])
             for line in (WORLD_DIR / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    asked = {r["prompt"].rsplit("### User\n", 1)[1].split("\n")[0] for r in rows if r["role"] == "planner"}
    long = [content_words(q) for q in asked if len(content_words(q)) > SHORT_WORDS]
    assert max(jaccard(q, e) for q in long for e in evals) < MAX_OVERLAP
    assert not {content_words(q) for q in asked if len(content_words(q)) <= SHORT_WORDS} & set(evals)
