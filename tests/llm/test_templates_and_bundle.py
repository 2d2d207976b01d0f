"""Chat templates (GGUF Jinja and plain fallback) and the bundled model's assembly/checksum."""
import pytest

from edge_agent.llm.base import ChatMessage
from edge_agent.llm.templates import JinjaChatTemplate

CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def test_jinja_template_renders_roles_and_tool_results():
    t = JinjaChatTemplate(CHATML, "<s>", "</s>")
    out = t.render([ChatMessage("system", "be brief"), ChatMessage("user", "hi"),
                    ChatMessage("tool", "3 notes", name="check_notebook")])
    assert out.startswith("<|im_start|>system\nbe brief<|im_end|>")
    # This ChatML template names no tool role: the result goes back as a user turn.
    assert "<|im_start|>user\nTool result (check_notebook):\n3 notes<|im_end|>" in out
    assert out.endswith("<|im_start|>assistant\n") and t.stops == ("<|im_end|>", "</s>")


def test_jinja_template_that_always_raises_is_refused_at_load():
    # llamacpp.py catches this and falls back to the plain template with a warning.
    with pytest.raises(ValueError, match="cannot render"):
        JinjaChatTemplate("{{ raise_exception('only user/assistant') }}")


def test_bundled_model_assembles_once_and_is_verified(tmp_path, tiny_model_path):
    from edge_agent.llm.bundled import ensure_bundled_model, expected_sha256, sha256_file

    target = ensure_bundled_model(tmp_path)
    assert sha256_file(target) == expected_sha256()
    mtime = target.stat().st_mtime_ns
    assert ensure_bundled_model(tmp_path) == target and target.stat().st_mtime_ns == mtime  # no rebuild
    with target.open("r+b") as fh:  # corrupt it: the next call must notice and rebuild
        fh.seek(1000)
        fh.write(b"\0" * 64)
    ensure_bundled_model(tmp_path)
    assert sha256_file(target) == expected_sha256()
