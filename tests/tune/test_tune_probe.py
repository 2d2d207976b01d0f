"""`edge-agent tune probe`: the planner's first choice on generated households no training run reads."""
from __future__ import annotations

import json

import pytest

from edge_agent.cli import main
from edge_agent.config import load_settings
from edge_agent.harness.effects import asks_to_save
from edge_agent.llm import load_model
from edge_agent.llm.doubles import FunctionModel
from edge_agent.tune import probe as probes
from edge_agent.tune.dataset import HOUSEHOLDS_PER_SEED, household_seed
from edge_agent.tune.households import generate_household
from edge_agent.tune.scenarios import questions_for


def test_the_probe_households_are_never_training_households():
    # Training reads household_seed(s, 0) for s = seed * 1000 + i (build.collect): multiples of
    # HOUSEHOLDS_PER_SEED. The probe's households never are one.
    assert all(household_seed(s, 0) % HOUSEHOLDS_PER_SEED == 0 for s in (0, 1, 2, 1000, 1119, 7003))
    seeds = probes.probe_households(probes.MAX_HOUSEHOLDS)
    assert seeds[0] == probes.FIRST_HOUSEHOLD and seeds[-1] < HOUSEHOLDS_PER_SEED
    assert not any(s % HOUSEHOLDS_PER_SEED == 0 for s in seeds)


def _always(skill: str):
    """A planner that names `skill` whenever its grammar admits it (else the first admitted one)."""
    def fn(info):
        prop = info.schema.model_json_schema()["properties"]["skill"]
        admitted = prop.get("enum") or [prop["const"]]  # one admitted skill is a const
        return {"skill": skill if skill in admitted else admitted[0]}
    return fn


async def test_a_planner_that_always_names_one_skill_is_scored_against_the_ideal_plans(tmp_path):
    model = FunctionModel(fn=_always("person_facts"))
    out = await probes.probe_planner(model, 1)
    questions = questions_for(generate_household(probes.FIRST_HOUSEHOLD, tmp_path / "h"), 0)
    summary = out.summary()
    assert summary["households"] == [probes.FIRST_HOUSEHOLD] and summary["questions"] == len(questions)
    assert [c.role for c in model.calls] == ["planner"] * len(questions)
    # A request to keep a fact is planned among the saving skills only, as in the harness.
    saves = [q for q in questions if asks_to_save(q.question)]
    assert all(q.plan.skill == "remember_this" for q in saves)
    n_person = sum(q.plan.skill == "person_facts" for q in questions)
    assert summary["by_skill"]["person_facts"] == f"{n_person}/{n_person}"
    assert summary["planner_right"] == n_person + len(saves)
    wrong = [q for q in questions if q.plan.skill != "person_facts" and not asks_to_save(q.question)]
    assert wrong and len(out.misses) == len(wrong) == sum(n for (_, c), n in out.confusions.items()
                                                          if c == "person_facts")
    assert summary["planner_accuracy"] == round(summary["planner_right"] / len(questions), 4)


async def test_the_chooser_probe_scores_choices_against_the_oracles_lines():
    """A chooser that always says line 1 is right exactly where the oracle's line is the ranker's
    first, and one that always says "none" exactly where no line answers; both are asked every
    choice prompt the teacher records, under the choice grammar."""
    def split(summary: dict, where: str) -> tuple[int, int]:
        right, asked = summary["by_target"].get(where, "0/0").split("/")
        return int(right), int(asked)

    first = FunctionModel(fn=lambda info: {"lines": [1]})
    ones = (await probes.probe_chooser(first, 1)).summary()
    nothing = FunctionModel(fn=lambda info: {"lines": [0]})
    refused = await probes.probe_chooser(nothing, 1)
    nones = refused.summary()
    assert ones["households"] == [probes.FIRST_HOUSEHOLD] and ones["choices"] == nones["choices"] > 10
    assert [c.role for c in first.calls] == ["choose"] * ones["choices"]
    (first_right, first_asked), (_, none_asked), (elsewhere_right, elsewhere_asked) = (
        split(ones, w) for w in ("first", "none", "elsewhere"))
    assert first_right == first_asked > 0 and none_asked > 0 and elsewhere_right == 0
    assert ones["chooser_right"] == first_asked and ones["said_none_to_an_answer"] == 0
    assert split(nones, "none") == (none_asked, none_asked) and nones["chooser_right"] == none_asked
    assert nones["said_none_to_an_answer"] == first_asked + elsewhere_asked
    assert len(refused.misses) == first_asked + elsewhere_asked and refused.misses[0]["chosen"] == [0]


@pytest.mark.parametrize("households, first", [(0, probes.FIRST_HOUSEHOLD), (1, 0), (1, HOUSEHOLDS_PER_SEED)])
def test_households_a_training_run_could_read_are_refused(households, first):
    with pytest.raises(ValueError, match="training reads those"):
        probes.probe_households(households, first)


def test_the_command_refuses_them_before_loading_a_model(capsys, data_dir):
    assert main(["tune", "probe", "--households", "0"]) == 2
    assert "training reads those" in capsys.readouterr().err


@pytest.mark.real_model
async def test_the_shipped_adapter_plans_held_out_questions_the_base_model_does_not(tmp_path, tiny_model_path):
    """One household through the real bundled model. Measured over 8 (`edge-agent tune probe`):
    0.89 of first choices right with the adapter, 0.25 without (the base names the menu's first skill)."""
    async def accuracy(adapter: str) -> float:
        settings = load_settings(None, {"data_dir": str(tmp_path / "data"), "model.path": str(tiny_model_path),
                                        "model.adapter": adapter}, environ={})
        model = load_model(settings)
        try:
            return (await probes.probe_planner(model, 1)).summary()["planner_accuracy"]
        finally:
            model.close()

    tuned, base = await accuracy("auto"), await accuracy("none")
    assert tuned >= 0.6 and tuned - base >= 0.3, (tuned, base)


async def test_the_whole_harness_probe_scores_every_question_like_eval(tmp_path):
    # A model that plans "none" wherever it may and says it does not know: the run is scored as
    # eval scores, on the household's own data dir, and hardly anything is right.
    def fn(info):
        if info.role == "planner":
            return _always("none")(info)
        if info.role == "choose":
            return {"lines": [0]}
        return "I don't know." if info.schema is None else {"answer": "I don't know."}

    settings = load_settings(None, {"data_dir": str(tmp_path / "mine")}, environ={})
    summary = await probes.probe_harness(FunctionModel(fn=fn), settings, 1)
    questions = questions_for(generate_household(probes.FIRST_HOUSEHOLD, tmp_path / "h"), 0)
    assert summary["households"] == [probes.FIRST_HOUSEHOLD] and summary["questions"] == len(questions)
    assert 0 <= summary["end_to_end"] < 0.3 and summary["tool_selection_by_plan"] <= summary["tool_selection"]
    assert not (tmp_path / "mine").exists()  # the asker's own data dir is never touched


def test_decisions_mask_a_previews_random_action_id_and_nothing_else():
    from types import SimpleNamespace

    def result(answer, plan="remember_this"):
        return SimpleNamespace(plan=plan, calls=[], answer=answer, pending_preview=answer.split("\n")[0])

    preview = 'Add to notebook: "Leo cycles."\nNothing is saved until you confirm it (action {}).'
    first, second = result(preview.format("a" * 32)), result(preview.format("0b" * 16))
    assert probes.decisions(first) == probes.decisions(second)
    assert probes.decisions(first) != probes.decisions(result(preview.replace("Leo", "Joel").format("a" * 32)))
    assert probes.decisions(first) != probes.decisions(result(preview.format("a" * 32), plan="person_facts"))


def test_two_runs_compared_count_each_decision_apart():
    from types import SimpleNamespace

    def result(question, plan, query, answer, right=True):
        return SimpleNamespace(question=question, plan=plan, answer=answer, pending_preview=None, end_to_end=right,
                               calls=[{"tool": "check_notebook", "args": {"query": query}}])

    first = [result("q1", "person_facts", "dentist", "Dentist: Tue 3 Mar."),
             result("q2", "person_facts", "leo partner", "Leo Marsh (partner): Sam."),
             result("q3", "find_document", "boiler", "boiler.pdf on nas: Service due June.")]
    second = [result("q1", "person_facts", "dentist", "Dentist: Tue 3 Mar."),
              result("q2", "person_facts", "leo girlfriend", "Leo Marsh (partner): Sam."),  # other query words
              result("q3", "recall_conversation", "boiler", "I could not find anything.", right=False)]
    out = probes.compared(first, second)
    assert (out["questions"], out["same"], out["agreement"]) == (3, 1, 0.3333)
    assert out["by_part"] == {"skill": 0.6667, "calls": 0.6667, "answer": 0.6667}
    assert out["end_to_end"] == [1.0, 0.6667]
    assert [d["question"] for d in out["differ"]] == ["q2", "q3"]
