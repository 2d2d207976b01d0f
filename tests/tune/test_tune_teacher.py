"""The teacher replays synthetic households through the real harness: every role, exact prompts,
targets as the runtime decodes them, varied menus, and nothing of the evaluation world."""
from __future__ import annotations

import asyncio
import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest

from edge_agent.harness import prompts
from edge_agent.harness.skills import load_skills
from edge_agent.paths import SKILLS_DIR, TOOLS_DIR, WORLD_DIR
from edge_agent.tune.build import MAX_EXAMPLE_TOKENS, collect, kind, quotas, summary
from edge_agent.tune.dataset import generate
from edge_agent.tune.menus import write_menu
from edge_agent.eval.oracle import candidate_lines
from edge_agent.tune.teacher import Example, household_examples, shuffled_choice

from tunekit import content_words, jaccard, world_names

pytestmark = pytest.mark.real_model  # the bundled model's tokenizer (vocab-only: no weights)


@pytest.fixture(scope="module")
def tokenizer(tiny_model_path):
    from edge_agent.llm.llamacpp import LlamaCppModel

    model = LlamaCppModel(tiny_model_path, vocab_only=True, head_cache_mb=0)
    yield model
    model.close()


@pytest.fixture(scope="module")
def examples(tokenizer, tmp_path_factory):
    out = []
    for seed in (11, 12):
        ((folder, questions),) = generate(1, seed, tmp_path_factory.mktemp(f"teach{seed}"))
        out += asyncio.run(household_examples(folder, questions, tokenizer, seed))
    return out


def test_every_role_is_taught(examples):
    roles = {e.role for e in examples}
    assert {"planner", "choose", "reply"} <= roles and "l2" not in roles  # L2's steps are determined
    assert {r for r in roles if r.startswith("l3.")} >= {"l3.check_notebook", "l3.find_file", "l3.grep_memory"}
    assert "l3.remember" not in roles  # the note is the asker's own words: nothing generated
    kinds = {kind(e) for e in examples}
    assert kinds == {"planner", "choose", "l3", "reply"}
    plans = [json.loads(e.target)["skill"] for e in examples if e.role == "planner"]
    assert "none" in plans  # small talk
    picks = [json.loads(e.target)["lines"] for e in examples if e.role == "choose"]
    assert [0] in picks and any(p != [0] for p in picks)
    # A two-part question is chosen for part by part: two choices of one question, each one line.
    per_question = Counter(e.source for e in examples if e.role == "choose")
    two = [e for e in examples if e.role == "choose" and per_question[e.source] == 2]
    assert two and all(len(json.loads(e.target)["lines"]) == 1 for e in two)


def test_targets_are_written_as_the_runtime_decodes_them(examples):
    for e in examples:
        if e.role == "reply":
            assert e.target and not e.target.startswith("{")
            continue
        value = json.loads(e.target)
        assert e.target == json.dumps(value, ensure_ascii=False, separators=(",", ":")), e.target  # compact JSON


def test_prompts_are_the_harness_prompts_with_the_real_tokenizer(examples, tokenizer):
    for e in examples:
        assert e.prompt.startswith("### Instructions\n") and e.prompt.endswith("### Assistant\n"), e.role
        assert tokenizer.count_tokens(e.prompt) < tokenizer.n_ctx
    chooses = [e for e in examples if e.role == "choose"]
    assert chooses and all("Lines:\n1. " in e.prompt and "\n\nQuestion: " in e.prompt for e in chooses)
    l3 = [e for e in examples if e.role.startswith("l3.")]
    questions = {e.prompt.rsplit("### User\n", 1)[1].split("\n")[0] for e in examples if e.role == "planner"}
    firsts = [e.prompt.rsplit("### User\n", 1)[1].split("\n")[0] for e in l3]
    assert firsts and all(any(q.startswith(f) for q in questions) for f in firsts)  # L3 reads the question


def test_menus_vary_names_order_and_invented_skills(tmp_path):
    real = load_skills()
    menus = [write_menu(tmp_path / f"m{seed}", seed) for seed in range(24)]
    assert len({tuple(sorted(m.names.values())) for m in menus}) > 8
    for m in menus:
        variant = load_skills(m.directory)
        for name, renamed in m.names.items():
            assert variant[renamed].steps == real[name].steps and variant[renamed].tools == real[name].tools
    assert any(len(load_skills(m.directory)) > len(real) for m in menus)  # invented distractors


def test_about_half_the_menus_are_the_shipped_one_unchanged(tmp_path):
    real = load_skills()
    menus = [write_menu(tmp_path / f"m{seed}", seed) for seed in range(60)]
    unchanged = [m for m in menus if {n: (s.description, s.steps) for n, s in load_skills(m.directory).items()}
                 == {n: (s.description, s.steps) for n, s in real.items()}]
    assert 0.35 <= len(unchanged) / len(menus) <= 0.65


def test_a_balanced_tokenized_set_with_bos_and_eos(tokenizer, tmp_path):
    rows = asyncio.run(collect(40, 5, tmp_path, tokenizer, progress=lambda _: None))
    want = quotas(40)
    got = summary(rows)["by_kind"]
    assert got == want
    bos, eos = tokenizer.tokenize("", add_bos=True)[0], tokenizer.eos_id
    for r in rows:
        assert r["prompt_ids"][0] == bos and r["target_ids"][-1] == eos
        assert len(r["prompt_ids"]) + len(r["target_ids"]) <= MAX_EXAMPLE_TOKENS
        assert r["prompt_ids"][1:] == tokenizer.tokenize(r["prompt"])
    assert len({(r["prompt"], r["target"]) for r in rows}) == len(rows)
    assert summary(rows)["households"] > 1  # no share is filled from one household


def test_no_eval_name_and_no_eval_question_in_the_training_text(examples):
    names = world_names(WORLD_DIR)
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, names))) + r")\b", re.IGNORECASE)
    found = {m.group(0) for e in examples for m in pattern.finditer(e.prompt + "\n" + e.target)}
    assert found == set()
    evals = [content_words(json.loads(line)["question"])
             for line in (WORLD_DIR / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    asked = {e.prompt.rsplit("### User\n", 1)[1].split("\n")[0] for e in examples if e.role == "planner"}
    assert max(jaccard(content_words(q), ev) for q in asked for ev in evals) < 0.5


def test_the_product_prompts_name_nothing_of_the_eval_world():
    """Tool, skill and prompt texts are also training text: none may carry the sample world's names."""
    names = world_names(WORLD_DIR)
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, names))) + r")\b")
    texts = [p.read_text(encoding="utf-8") for d in (SKILLS_DIR, TOOLS_DIR) for p in Path(d).iterdir() if p.is_file()]
    texts.append(Path(prompts.__file__).read_text(encoding="utf-8"))
    assert {m.group(0) for t in texts for m in pattern.finditer(t)} == set()


def test_a_shuffled_choice_keeps_its_lines_and_follows_them_with_its_target():
    prompt = ("### Instructions\nPick.\n### User\nLines:\n1. Leo (brother): Birthday 3 May.\n2. Leo (brother): "
              "Lives in Leeds.\n3. Car: Blue.\n\nQuestion: when is leos bday\n### Assistant\n")
    example = Example("choose", prompt, '{"lines":[1]}', "h/q1")
    seen = set()
    for seed in range(12):
        out = shuffled_choice(example, random.Random(seed))
        lines = candidate_lines(out.prompt)
        assert sorted(lines.values()) == sorted(candidate_lines(prompt).values())  # the same lines, renumbered
        [n] = json.loads(out.target)["lines"]
        assert lines[n] == "Leo (brother): Birthday 3 May."  # the target follows its line
        assert out.prompt.endswith("\n\nQuestion: when is leos bday\n### Assistant\n")
        seen.add(n)
    assert len(seen) > 1  # and the line is not always first
    none = shuffled_choice(Example("choose", prompt, '{"lines":[0]}', "h/q2"), random.Random(1))
    assert none.target == '{"lines":[0]}'
