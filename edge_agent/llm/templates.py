"""Chat templates: the GGUF's own Jinja template when it has one, a plain fallback otherwise.

A GGUF's `tokenizer.chat_template` is rendered by llama-cpp-python's Jinja2ChatFormatter (the
same sandbox, filters and globals as its chat handlers and as transformers). What the harness
needs beyond rendering is found by probing the template once, not by knowing model names:
- whether it has a system role (Gemma's templates raise on one),
- whether it knows a tool role (Qwen2.5 and Llama 3.2 do; Phi-3.5, Gemma and plain ChatML do not),
- the marker it writes after an assistant turn (<|im_end|>, <|eot_id|>, <|end|>, <end_of_turn>),
  which ends generation alongside the model's EOS.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Sequence

from edge_agent.llm.base import ChatMessage

log = logging.getLogger(__name__)

# For base models without a chat template (the bundled Gemma 3 270M). Role headers on their own
# lines; the prompt ends with the assistant header so generation continues as the assistant.
PLAIN_HEADERS = {"system": "### Instructions", "user": "### User", "assistant": "### Assistant",
                 "tool": "### Tool result"}
PLAIN_STOPS = ("\n### ",)

# A tool-aware template compares the role with one of these names (Llama 3.x also says "ipython").
_TOOL_ROLE_LITERAL = re.compile(r"""(['"])(tool|ipython)\1""")
_PROBE_SYSTEM = "SYSTEM-PROBE-7f3a"
_PROBE_USER = "USER-PROBE-7f3a"
_PROBE_ANSWER = "ANSWER-PROBE-7f3a"
_PROBE_RESULT = "RESULT-PROBE-7f3a"
# How a tool result reads when the template has no tool role. It goes back as a user turn: the
# convention of Gemma's function-calling guide (Gemma knows only user and model turns), and the
# only turn Phi-3.5's and generic ChatML templates render faithfully.
TOOL_AS_USER = "Tool result ({name}):\n{content}"
# The family a template belongs to, named by the marker it ends an assistant turn with (found by
# the probe, not by the model's name): what doctor says out loud.
TEMPLATE_FAMILIES = {"<|im_end|>": "ChatML", "<|eot_id|>": "Llama 3", "<end_of_turn>": "Gemma",
                     "<|end|>": "Phi-3", "</s>": "Llama 2 / Mistral [INST]"}
PLAIN_FALLBACK = "the plain fallback ('### ' role headers), as for a base model"


def render_plain(messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
    parts = []
    for m in messages:
        header = PLAIN_HEADERS.get(m.role, f"### {m.role.title()}")
        if m.role == "tool" and m.name:
            header = f"{header} ({m.name})"
        parts.append(f"{header}\n{m.content.strip()}\n")
    if add_generation_prompt:
        parts.append(PLAIN_HEADERS["assistant"] + "\n")
    return "\n".join(parts)


@dataclass(frozen=True)
class TemplateTraits:
    """What probing a chat template found."""

    system_role: bool
    """A system message renders as its own turn; otherwise it is folded into the first user turn."""
    tool_role: bool
    """The template names a tool role and renders its content; otherwise results go as user turns."""
    end_of_turn: str
    """The marker the template writes after an assistant turn ("" if none)."""
    user_after_user: bool = True
    """Two user turns may follow each other; otherwise (strict alternation) they are merged."""

    @property
    def family(self) -> str:
        """ChatML, Llama 3, Gemma, Phi-3 … by the end-of-turn marker; "custom" for another."""
        return TEMPLATE_FAMILIES.get(self.end_of_turn, "custom")


class JinjaChatTemplate:
    """A GGUF's `tokenizer.chat_template`, rendered through llama-cpp-python's formatter."""

    def __init__(self, source: str, bos_token: str = "", eos_token: str = "", adds_bos: bool = True):
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.source = source
        self.bos_token = bos_token
        self.adds_bos = adds_bos
        """The tokenizer puts a BOS token first by itself (GGUF tokenizer.ggml.add_bos_token)."""
        self.eos_token = eos_token
        # The formatter fixes add_generation_prompt at construction; the harness needs both.
        self._formatters = {flag: Jinja2ChatFormatter(source, eos_token, bos_token, add_generation_prompt=flag)
                            for flag in (True, False)}
        self.traits = self._probe()

    # -- rendering -----------------------------------------------------------------------------
    def _render_raw(self, messages: list[dict[str, Any]], add_generation_prompt: bool) -> str:
        return self._formatters[add_generation_prompt](messages=messages).prompt

    def render(self, messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
        text = self._render_raw(self.adapt(messages), add_generation_prompt)
        # Templates that write bos_token themselves (Llama 3, Gemma) would get a second BOS from the
        # tokenizer, which adds one whenever the model asks for it; the tokenizer's is the one kept.
        # A tokenizer that adds none (SmolLM2, whose BOS is ChatML's <|im_start|>) keeps the text's.
        if self.adds_bos and self.bos_token and text.startswith(self.bos_token):
            text = text[len(self.bos_token):]
        return text

    def adapt(self, messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        """The messages as the template can take them: tool results and system text moved to
        user turns where the template has no role for them, adjacent user turns merged."""
        traits = self.traits
        out: list[dict[str, Any]] = []
        pending_system: list[str] = []
        for m in messages:
            if m.role == "system" and not traits.system_role:
                pending_system.append(m.content)
                continue
            if m.role == "tool":
                if traits.tool_role:
                    out.append({"role": "tool", "content": m.content, "name": m.name or "tool"})
                    continue
                msg = {"role": "user", "content": TOOL_AS_USER.format(name=m.name or "tool", content=m.content)}
            else:
                msg = {"role": m.role, "content": m.content}
            if msg["role"] == "user" and pending_system:
                msg["content"] = "\n\n".join(pending_system + [msg["content"]])
                pending_system = []
            if msg["role"] == "user" and out and out[-1]["role"] == "user" and not traits.user_after_user:
                # Strictly alternating templates (Gemma) refuse two user turns in a row.
                out[-1] = {"role": "user", "content": out[-1]["content"] + "\n\n" + msg["content"]}
            else:
                out.append(msg)
        if pending_system:  # only system text: it becomes the user turn
            out.append({"role": "user", "content": "\n\n".join(pending_system)})
        return out

    @property
    def stops(self) -> tuple[str, ...]:
        """Strings that end an assistant turn: the template's end-of-turn marker and the EOS text."""
        found = [s for s in (self.traits.end_of_turn, self.eos_token) if s]
        return tuple(dict.fromkeys(found))

    # -- probing -------------------------------------------------------------------------------
    def _try(self, messages: list[dict[str, Any]], add_generation_prompt: bool = False) -> str | None:
        try:
            return self._render_raw(messages, add_generation_prompt)
        except Exception:  # raise_exception() in the template, or a template bug: the probe says no
            return None

    def _probe(self) -> TemplateTraits:
        with_system = self._try([{"role": "system", "content": _PROBE_SYSTEM},
                                 {"role": "user", "content": _PROBE_USER}])
        system_role = with_system is not None and _PROBE_SYSTEM in with_system
        tool_role = False
        if _TOOL_ROLE_LITERAL.search(self.source):
            rendered = self._try([{"role": "user", "content": _PROBE_USER},
                                  {"role": "assistant", "content": _PROBE_ANSWER},
                                  {"role": "tool", "content": _PROBE_RESULT, "name": "probe"}], True)
            tool_role = rendered is not None and _PROBE_RESULT in rendered
        turn = self._try([{"role": "user", "content": _PROBE_USER},
                          {"role": "assistant", "content": _PROBE_ANSWER}])
        end_of_turn = ""
        if turn is None:
            raise ValueError("the chat template cannot render a user turn and an assistant turn")
        if _PROBE_ANSWER in turn:
            after = turn.split(_PROBE_ANSWER, 1)[1].strip()
            end_of_turn = after.split()[0] if after else ""
        two_users = self._try([{"role": "user", "content": _PROBE_USER}, {"role": "user", "content": _PROBE_USER}])
        return TemplateTraits(system_role, tool_role, end_of_turn, two_users is not None)


def template_for_llama(llm: Any, source: str) -> JinjaChatTemplate:
    """The chat template of a loaded llama_cpp.Llama, with its BOS/EOS texts (as llama-cpp-python
    reads them: the token's text, which detokenize() hides for control tokens)."""
    def text_of(token: int) -> str:
        return llm._model.token_get_text(token) if token >= 0 else ""

    return JinjaChatTemplate(source, text_of(llm.token_bos()), text_of(llm.token_eos()),
                             adds_bos=bool(llm._model.add_bos_token()))
