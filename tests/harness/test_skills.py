"""Skill files are prompts: loaded strictly, every tool real, steps numbered, and they fit the window."""
from __future__ import annotations


import pytest

from harness_kit import role_model
from edge_agent.harness.skills import MAX_STEPS, SkillError, load_skills, parse_skill
from edge_agent.harness.startup import check_prompts_fit
from edge_agent.harness.toolbox import Toolbox
from edge_agent.harness.turn import Limits
from edge_agent.paths import SKILLS_DIR
from edge_agent.tools.base import ToolContext
from edge_agent.tools.registry import build_tools

REQUIRED = {"person_facts", "find_document", "calendar_question", "recall_conversation", "date_question",
            "remember_this"}
GOOD = "---\nname: {name}\ndescription: Something useful.\ntools: check_notebook, grep_memory\n---\n1. Do a.\n2. Do b.\n"


def test_bundled_skills_are_complete_and_valid():
    tools = build_tools()
    skills = load_skills(known_tools=tools)
    assert set(skills) == REQUIRED
    for skill in skills.values():
        assert 1 <= len(skill.steps) <= MAX_STEPS
        assert all(t in tools for t in skill.tools)
        assert all(tools[t].manifest.l2_exposed for t in skill.tools), skill.name
        assert skill.steps_text().startswith("1. ")
    assert skills["remember_this"].tools == ("remember",)
    assert skills["calendar_question"].tools[0] == "queryCalendar"
    # Only remember_this may reach a tool with an effect.
    effectful = {t for t, tool in tools.items() if tool.manifest.has_effect}
    assert {s.name for s in skills.values() if effectful & set(s.tools)} == {"remember_this"}


def test_every_role_prompt_fits_the_window_with_room_for_work():
    tools = build_tools(enforce_guards=False)
    model = role_model()
    sizes = check_prompts_fit(model, load_skills(known_tools=tools), Toolbox(tools, ToolContext(None, None)),
                              Limits(6, 120, 2000, 240, 200))
    assert all(n < model.n_ctx // 3 for n in sizes.values()), sizes
    assert {k for k in sizes if k.startswith("l2.")} == {f"l2.{s}" for s in REQUIRED}


@pytest.mark.parametrize("text, problem", [
    ("name: x\n", "must start with a '---'"),
    ("---\nname: broken\ndescription: d\ntools: check_notebook\n", "not closed"),
    ("---\nname: broken\ntools: check_notebook\n---\n1. a\n", "lacks description"),
    ("---\nname: broken\ndescription: d\ntools: check_notebook\ncolour: red\n---\n1. a\n", "expected one of"),
    ("---\nname: other\ndescription: d\ntools: check_notebook\n---\n1. a\n", "does not match the file name"),
    ("---\nname: broken\ndescription: d\ntools: check_notebook\n---\n1. a\n3. b\n", "expected 2"),
    ("---\nname: broken\ndescription: d\ntools: check_notebook\n---\nJust do it.\n", "numbered step"),
    ("---\nname: broken\ndescription: d\ntools: check_notebook\n---\n", "no numbered steps"),
    ("---\nname: broken\ndescription: d\ntools: a, a\n---\n1. x\n", "listed twice"),
    ("---\nname: broken\ndescription: d\ntools: \n---\n1. x\n", "lacks tools"),
    ("---\nname: broken\ndescription: d\ntools: check_notebook\nstop_after: grep_memory\n---\n1. x\n",
     "stop_after names ['grep_memory'], not among its tools"),
])
def test_broken_skill_names_the_file_and_problem(tmp_path, text, problem):
    path = tmp_path / "broken.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SkillError) as err:
        parse_skill(path)
    assert str(path) in str(err.value) and problem in str(err.value)


def test_unknown_tool_stops_loading(tmp_path):
    (tmp_path / "ok.md").write_text(GOOD.format(name="ok"), encoding="utf-8")
    (tmp_path / "bad.md").write_text(GOOD.format(name="bad").replace("grep_memory", "grep_mem"), encoding="utf-8")
    with pytest.raises(SkillError, match=r"bad\.md: unknown tool\(s\) grep_mem"):
        load_skills(tmp_path, known_tools=build_tools())


def test_continuation_lines_join_their_step(tmp_path):
    path = tmp_path / "cont.md"
    path.write_text(GOOD.format(name="cont").replace("1. Do a.\n", "1. Do a,\n   then more.\n"), encoding="utf-8")
    assert parse_skill(path).steps == ("Do a, then more.", "Do b.")


async def test_start_up_stops_on_a_broken_skill(tmp_path):
    from edge_agent.app import build_assistant
    from edge_agent.config import load_settings

    skills = tmp_path / "skills"
    skills.mkdir()
    for p in SKILLS_DIR.glob("*.md"):
        (skills / p.name).write_text(p.read_text(encoding="utf-8"), encoding="utf-8")
    (skills / "person_facts.md").write_text("---\nname: person_facts\n", encoding="utf-8")
    settings = load_settings(None, {"data_dir": str(tmp_path / "data")}, environ={})
    with pytest.raises(SkillError, match="person_facts.md"):
        async with build_assistant(settings, model=role_model(), skills_dir=skills):
            pass


async def test_a_skill_too_big_for_the_window_stops_start_up(tmp_path):
    from edge_agent.app import build_assistant
    from edge_agent.config import load_settings

    skills = tmp_path / "skills"
    skills.mkdir()
    long_steps = "".join(f"{i}. {'Look very carefully at everything. ' * 60}\n" for i in range(1, 9))
    (skills / "huge.md").write_text(f"---\nname: huge\ndescription: d\ntools: check_notebook\n---\n{long_steps}")
    settings = load_settings(None, {"data_dir": str(tmp_path / "data")}, environ={})
    with pytest.raises(SkillError, match=r"huge\.md: L2's prompt"):
        async with build_assistant(settings, model=role_model(), skills_dir=skills):
            pass


async def test_a_skill_done_after_its_tool_ends_l2_without_another_generation(tmp_path):
    from harness_kit import answer, call, plan
    from edge_agent.app import build_assistant
    from edge_agent.config import load_settings

    assert load_skills()["date_question"].stop_after == ("current_date",)
    model = role_model(planner=[plan("date_question")], l2=[call("current_date", "today"), answer("never asked")])
    settings = load_settings(None, {"data_dir": str(tmp_path / "data")}, environ={})
    async with build_assistant(settings, model=model, now="2026-11-02T09:00:00") as assistant:
        out = await assistant.ask("What's the date today?", request_id="d1")
    assert [c.role for c in model.calls] == ["planner"]  # the step is determined, nothing after current_date
    assert out.exit_kind == "complete" and "2026-11-02" in out.answer and out.sources[0]["store"] == "date"
