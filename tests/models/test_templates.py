"""The instruct path without a model: chat templates of each kind the catalog's models use, written
here in their shape (not copied): what probing finds, how tool results and system text are placed
where a template has no role for them, the stops, BOS handling, and prefix stability for KV reuse."""
from __future__ import annotations

import pytest

from edge_agent.llm.base import ChatMessage as M
from edge_agent.llm.templates import TOOL_AS_USER, JinjaChatTemplate

# Plain ChatML (SmolLM2's shape): every role printed as is, no tool role named.
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
# ChatML with a tool role (Qwen2.5's shape): results wrapped in <tool_response> inside a user turn.
CHATML_TOOLS = ("{% for m in messages %}{% if m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}"
                "\n</tool_response><|im_end|>\n{% else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
                "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
# Gemma's shape: BOS in the template, no system role, strict user/model alternation.
GEMMA = ("{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
         "{% endif %}{% for m in messages %}{% if (m['role'] == 'user') != (loop.index0 % 2 == 0) %}"
         "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
         "{% set role = 'model' if m['role'] == 'assistant' else m['role'] %}"
         "{{ '<start_of_turn>' + role + '\n' + m['content'] | trim + '<end_of_turn>\n' }}{% endfor %}"
         "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")
# Phi-3.5's shape: unknown roles are silently dropped; EOS after the last turn when not prompting.
PHI = ("{% for m in messages %}{% if m['role'] == 'system' and m['content'] %}<|system|>\n{{ m['content'] }}<|end|>\n"
       "{% elif m['role'] == 'user' %}<|user|>\n{{ m['content'] }}<|end|>\n{% elif m['role'] == 'assistant' %}"
       "<|assistant|>\n{{ m['content'] }}<|end|>\n{% endif %}{% endfor %}"
       "{% if add_generation_prompt %}<|assistant|>\n{% else %}{{ eos_token }}{% endif %}")
# Llama 3's shape: BOS and header tokens, a tool role spelled "ipython".
LLAMA3 = ("{{ bos_token }}{% for m in messages %}{% set role = 'ipython' if m['role'] in ['tool', 'ipython'] "
          "else m['role'] %}<|start_header_id|>{{ role }}<|end_header_id|>\n\n{{ m['content'] | trim }}<|eot_id|>"
          "{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}")

L2_TURN = [M("system", "Follow the skill."), M("user", "When is Callum's birthday?"),
           M("assistant", '{"call_tool": {"tool": "check_notebook", "instruction": "Callum"}}'),
           M("tool", "Callum: birthday 14 March", name="check_notebook"),
           M("tool", "no events", name="query_calendar")]


@pytest.mark.parametrize("source,eos,system,tool,end", [
    (CHATML, "<|im_end|>", True, False, "<|im_end|>"),
    (CHATML_TOOLS, "<|im_end|>", True, True, "<|im_end|>"),
    (GEMMA, "<eos>", False, False, "<end_of_turn>"),
    (PHI, "<|endoftext|>", True, False, "<|end|>"),
    (LLAMA3, "<|eot_id|>", True, True, "<|eot_id|>"),
])
def test_probing_finds_roles_and_the_end_of_turn(source, eos, system, tool, end):
    t = JinjaChatTemplate(source, "<bos>", eos)
    assert (t.traits.system_role, t.traits.tool_role, t.traits.end_of_turn) == (system, tool, end)
    assert t.stops[0] == end and eos in t.stops  # the template's marker, then the model's EOS


@pytest.mark.parametrize("source", [CHATML, GEMMA, PHI])
def test_without_a_tool_role_results_go_back_as_user_turns(source):
    out = JinjaChatTemplate(source, "<bos>", "<eos>").render(L2_TURN)
    for m in L2_TURN[3:]:
        assert TOOL_AS_USER.format(name=m.name, content=m.content) in out  # nothing dropped (Phi drops unknown roles)
    assert "tool\n" not in out.replace("check_notebook", "")  # no invented "tool" turn header


def test_a_template_with_a_tool_role_gets_the_tool_role():
    out = JinjaChatTemplate(CHATML_TOOLS, "", "<|im_end|>").render(L2_TURN)
    assert "<tool_response>\nCallum: birthday 14 March\n</tool_response>" in out
    assert "Tool result (" not in out
    out3 = JinjaChatTemplate(LLAMA3, "<|begin_of_text|>", "<|eot_id|>").render(L2_TURN)
    assert "<|start_header_id|>ipython<|end_header_id|>\n\nCallum: birthday 14 March<|eot_id|>" in out3


def test_gemma_shape_gets_system_folded_and_turns_alternating():
    t = JinjaChatTemplate(GEMMA, "<bos>", "<eos>")
    out = t.render(L2_TURN)  # would raise twice (system, two user turns in a row) if passed through
    assert out.startswith("<start_of_turn>user\nFollow the skill.\n\nWhen is Callum's birthday?<end_of_turn>")
    assert ("<start_of_turn>user\nTool result (check_notebook):\nCallum: birthday 14 March\n\n"
            "Tool result (query_calendar):\nno events<end_of_turn>") in out
    assert out.endswith("<start_of_turn>model\n")


def test_chatml_keeps_consecutive_user_turns_apart():
    out = JinjaChatTemplate(CHATML, "", "<|im_end|>").render(L2_TURN)
    assert out.count("<|im_start|>user\nTool result") == 2


def test_a_bos_the_template_writes_is_left_to_the_tokenizer():
    # The runtime tokenizes with add_bos (the model's own flag decides): a BOS in the text too
    # would be a second one.
    for source in (GEMMA, LLAMA3):
        out = JinjaChatTemplate(source, "<|bos|>", "<eos>").render([M("user", "hi")])
        assert not out.startswith("<|bos|>") and "hi" in out


@pytest.mark.parametrize("source", [CHATML, CHATML_TOOLS, GEMMA, LLAMA3])
def test_a_turns_prompt_plus_its_output_is_a_prefix_of_the_next_prompt(source):
    """KV reuse across L2 steps needs the earlier prompt and what was generated to be an exact
    prefix of the next step's prompt."""
    t = JinjaChatTemplate(source, "<bos>", "<eos>")
    head = L2_TURN[:2]
    step = L2_TURN[2].content
    first = t.render(head, add_generation_prompt=True)
    second = t.render(head + [L2_TURN[2], L2_TURN[3]], add_generation_prompt=True)
    assert second.startswith(first + step)


def test_a_template_that_cannot_render_a_turn_is_refused():
    with pytest.raises(ValueError, match="cannot render"):
        JinjaChatTemplate("{{ raise_exception('nope') }}")
