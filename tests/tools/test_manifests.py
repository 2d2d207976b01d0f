"""The manifests are prompts: every one loads, matches its code and reads as the harness needs."""
import pytest

from edge_agent.paths import TOOLS_DIR
from edge_agent.tools.base import ToolManifest
from edge_agent.tools.registry import TOOL_CLASSES, build_tools

EXPECTED = {
    # name: (pill, channel, l2_exposed, has_effect)
    "check_notebook": ("Notebook", "notes", True, False),
    "find_file": ("Files", "files", True, False),
    "grep_memory": ("Memory", "memory", True, False),
    "current_date": ("Date", "date", True, False),
    "queryCalendar": ("Calendar", "events", True, False),
    "list_devices": ("Devices", "devices", False, False),
    "remember": ("Remember", "effects", True, True),
    "memory_on_days": ("Memory", "memory", False, False),
}
MAX_SIGNATURE_CHARS = 240  # one line L2 reads for each bound tool


def test_registry_builds_every_tool_with_its_manifest():
    tools = build_tools()
    assert set(tools) == set(EXPECTED)
    assert {p.stem for p in TOOLS_DIR.glob("*.toml")} == set(EXPECTED)
    assert all(t.enforce_guards for t in tools.values())
    assert not any(t.enforce_guards for t in build_tools(enforce_guards=False).values())


@pytest.mark.parametrize("cls", TOOL_CLASSES, ids=lambda c: c.name)
def test_manifest_matches_code(cls):
    manifest = ToolManifest.load(cls.name)
    pill, channel, exposed, effect = EXPECTED[cls.name]
    assert (manifest.name, manifest.pill, manifest.channel) == (cls.name, pill, channel)
    assert (manifest.l2_exposed, manifest.has_effect) == (exposed, effect)
    sig = manifest.signature
    assert "\n" not in sig and len(sig) <= MAX_SIGNATURE_CHARS
    assert sig.startswith(f"{cls.name}(") and " — " in sig
    assert manifest.description.strip() and manifest.crafting_rules.strip()
    fields = cls.Args.model_fields
    assert set(manifest.arguments) == set(fields), "argument docs must cover exactly the model's fields"
    assert manifest.slug and manifest.slug != manifest.name


@pytest.mark.parametrize("cls", TOOL_CLASSES, ids=lambda c: c.name)
def test_argument_schema_is_constrained_and_documented(cls):
    schema = cls.Args.model_json_schema()
    assert schema.get("additionalProperties") is False
    for name, prop in schema.get("properties", {}).items():
        assert prop.get("description"), f"{cls.name}.{name} has no description"
        if prop.get("type") == "string":
            assert "maxLength" in prop, f"{cls.name}.{name} is an unbounded string"
        if prop.get("type") == "array":
            assert "maxItems" in prop and "maxLength" in prop["items"]


def test_signature_lines_follow_the_l2_convention():
    sigs = {name: ToolManifest.load(name).signature for name in EXPECTED}
    assert sigs["queryCalendar"].startswith("queryCalendar(when) — ")
    assert sigs["find_file"].startswith("find_file(query) — ")
    assert sigs["current_date"].startswith("current_date() — ")
    assert "empty query" in sigs["check_notebook"]
    assert "last resort" in sigs["grep_memory"]


def test_crafting_rules_say_what_l3_must_do():
    assert "YYYY-MM-DD" in ToolManifest.load("queryCalendar").crafting_rules
    assert "resolve" in ToolManifest.load("queryCalendar").crafting_rules.lower()
    rules = ToolManifest.load("find_file").crafting_rules.lower()
    assert "several" in rules and "devices empty" in rules
    assert "keyword" in ToolManifest.load("grep_memory").crafting_rules.lower()
