"""Chat templates: the GGUF's own Jinja template when it has one, a plain fallback otherwise."""
from __future__ import annotations

import logging
from typing import Sequence

from edge_agent.llm.base import ChatMessage

log = logging.getLogger(__name__)

# For base models without a chat template (the bundled Gemma 3 270M). Role headers on their own
# lines; the prompt ends with the assistant header so generation continues as the assistant.
PLAIN_HEADERS = {"system": "### Instructions", "user": "### User", "assistant": "### Assistant",
                 "tool": "### Tool result"}
PLAIN_STOPS = ("\n### ",)


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


class JinjaChatTemplate:
    """Renders a GGUF's `tokenizer.chat_template` with jinja2 (as llama-cpp-python does)."""

    def __init__(self, source: str, bos_token: str = "", eos_token: str = ""):
        import jinja2
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                            undefined=jinja2.StrictUndefined)

        def raise_exception(message: str) -> None:
            raise jinja2.exceptions.TemplateError(message)

        env.globals["raise_exception"] = raise_exception
        self._template = env.from_string(source)
        self.bos_token = bos_token
        self.eos_token = eos_token

    def render(self, messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
        msgs = []
        for m in messages:
            if m.role == "tool":
                # Many templates know no tool role; present results as a user turn, labelled.
                msgs.append({"role": "user", "content": f"[tool result: {m.name or 'tool'}]\n{m.content}"})
            else:
                msgs.append({"role": m.role, "content": m.content})
        return self._template.render(messages=msgs, add_generation_prompt=add_generation_prompt,
                                     bos_token=self.bos_token, eos_token=self.eos_token)
