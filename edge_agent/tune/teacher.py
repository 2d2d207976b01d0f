"""The teacher: the harness's own prompts, answered by a perfect model, recorded as training examples.

Each synthetic household is loaded into a fresh data dir and each of its questions goes through
the real Assistant — real tools, real prompts, real dispatch and answer selection — with the
Oracle as the model, on a skill menu varied per household (menus.py). Every generation the
harness asks for is recorded: the exact prompt, rendered and counted with the real model's
tokenizer and chat template, and the oracle's output written as the runtime decodes it (compact
JSON in schema order, or free text). Those pairs are the adapter's examples for every role.
"""
from __future__ import annotations

import io
import json
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from edge_agent.eval.oracle import LINE_RE, LINES_MARK, QUESTION_MARK, Oracle, as_decoded
from edge_agent.eval.questions import Question, QuestionPlan
from edge_agent.llm.doubles import CallInfo, FunctionModel
from edge_agent.tune.menus import write_menu

# Questions that need none of the user's data: the plan is "none", no line is chosen, and the
# answer is the model's own short reply.
SMALL_TALK: tuple[tuple[str, str], ...] = (
    ("hi there", "Hello! Ask me about your notes, files, calendar or memory."),
    ("thanks, that's all", "You're welcome."),
    ("what can you do?", "I can look things up in your notebook, memory log, calendar and files, and remember "
                         "facts you tell me."),
    ("good morning!", "Good morning! What would you like to look up?"),
    ("ok cheers", "Any time."),
    ("are you there", "Yes, I'm here. What do you need?"),
    ("thank you so much", "Glad to help."),
    ("how do I use you", "Ask a question about your own notes, files, calendar or memories, or tell me something "
                         "to remember."),
)


@dataclass(frozen=True)
class Example:
    """One generation the harness asked for, and what a perfect model answers."""

    role: str
    """planner | l3.<tool> | choose | reply (l2 only for an unconstrained follower)"""
    prompt: str
    """The exact prompt, as the runtime renders it."""
    target: str
    """The output, as the runtime decodes it."""
    source: str
    """household/question id, for tracing an example back."""


class TokenizerModel(FunctionModel):
    """A FunctionModel that counts, trims and renders with a real model's tokenizer and template,
    so the harness builds exactly the prompts the real runtime would."""

    def __init__(self, fn, real: Any):
        """`real`: the runtime whose tokenizer and template are used (vocab only is enough)."""
        super().__init__(fn=fn, name=f"teacher:{real.name}", n_ctx=real.n_ctx)
        self.real = real

    def count_tokens(self, text: str) -> int:
        return self.real.count_tokens(text)

    def fit_to_tokens(self, text: str, n: int) -> str:
        return self.real.fit_to_tokens(text, n)

    def render_chat(self, messages, add_generation_prompt: bool = True) -> str:
        return self.real.render_chat(messages, add_generation_prompt)


class Teacher:
    """The Oracle on a renamed menu, recording each generation as an Example."""

    def __init__(self, tokenizer: Any):
        self.oracle = Oracle(n_ctx=tokenizer.n_ctx)
        self.model = TokenizerModel(self._respond, tokenizer)
        self.names: dict[str, str] = {}
        self.examples: list[Example] = []
        self.source = ""
        self.reply: str | None = None

    def begin(self, question: Question, source: str, names: dict[str, str], reply: str | None = None) -> None:
        """The next question; `reply` answers it when it needs no data (small talk)."""
        self.oracle.begin(question, names)
        self.source, self.names, self.reply = source, names, reply

    def _respond(self, info: CallInfo) -> Any:
        out = self.oracle.respond(info)
        if info.role == "reply" and self.reply is not None:
            out = self.reply
        if info.role == "planner" and isinstance(out, dict):
            out = {**out, "skill": self.names.get(out["skill"], out["skill"])}
        target = as_decoded(info.schema, out) if info.schema is not None else str(out)
        role = info.role if not info.role.startswith("l3.") else ".".join(info.role.split(".")[:2])
        self.examples.append(Example(role, info.prompt, target, self.source))
        return out


def shuffled_choice(example: Example, rng: random.Random) -> Example:
    """A choice example with its candidate lines in another order, renumbered, and the target's
    numbers following them. The ranker puts the answer first more often than not, so a model
    taught only on its order learns to say 1; shuffled copies make it read the lines."""
    start = example.prompt.find(LINES_MARK)
    end = example.prompt.rfind(QUESTION_MARK)
    if start < 0 or end < start:
        return example
    block = example.prompt[start + len(LINES_MARK):end].split("\n")
    matches = [LINE_RE.match(line) for line in block]
    if not block or not all(matches):
        return example
    order = list(range(len(block)))
    rng.shuffle(order)
    new_number = {old + 1: new + 1 for new, old in enumerate(order)}
    lines = "\n".join(f"{new + 1}. {matches[old].group(2)}" for new, old in enumerate(order))
    picks = json.loads(example.target)["lines"]
    target = json.dumps({"lines": [new_number.get(n, 0) for n in picks]}, separators=(",", ":"))
    prompt = example.prompt[:start + len(LINES_MARK)] + lines + example.prompt[end:]
    return Example(example.role, prompt, target, example.source)


def small_talk(seed: int, n: int = 2) -> list[tuple[Question, str]]:
    """A few questions that need no data (plan "none", answered by the no-tools prompt), with replies."""
    rng = random.Random(seed)
    return [(Question(id=f"talk{i}", question=text, category="unanswerable", expected_tools=[], expected_facts=[],
                      expected_file=None, expected_exit="complete", plan=QuestionPlan(skill="none", calls=[])), reply)
            for i, (text, reply) in enumerate(rng.sample(SMALL_TALK, n))]


async def household_examples(folder: Path, questions: Sequence[Question], tokenizer: Any, seed: int,
                             label: str | None = None) -> list[Example]:
    """Every generation of every question of one household, answered by the teacher; `label`
    names the household in each example's source (default: its folder's name)."""
    label = label or folder.name
    from edge_agent.app import build_assistant
    from edge_agent.config import load_settings
    from edge_agent.eval.world_setup import ensure_world_loaded, world_clock

    teacher = Teacher(tokenizer)
    clock = world_clock(folder)
    with tempfile.TemporaryDirectory(prefix="tune-") as tmp:
        settings = load_settings(None, {"data_dir": str(Path(tmp) / "data"), "timezone": clock.timezone,
                                        "harness.log_chats": False, "harness.tracing": False}, environ={})
        await ensure_world_loaded(settings, folder, err=io.StringIO())
        menu = write_menu(Path(tmp) / "skills", seed)
        async with build_assistant(settings, model=teacher.model, now=clock.now, skills_dir=menu.directory,
                                   warm_heads=False) as assistant:
            for q, reply in [*((q, None) for q in questions), *small_talk(seed)]:
                teacher.begin(q, f"{label}/{q.id}", menu.names, reply)
                await assistant.ask(q.question, request_id=f"{label}.{q.id}")
    return teacher.examples
