"""The instruct path on the real runtime: a copy of the bundled GGUF with a ChatML template written
into its metadata (gguf-py) is prompted through its template, stops at the template's end-of-turn
marker, and answers a question end to end through `ask --local`."""
from __future__ import annotations

import json

import pytest
from modelkit import run_cli

from edge_agent.eval.templated import CHATML_TEMPLATE, write_templated_copy
from edge_agent.llm.base import ChatMessage as M
from edge_agent.modelfile.gguf import read_header

pytestmark = pytest.mark.real_model

QUESTION = "What's my dentist's phone number?"  # q001: its planned route is person_facts -> check_notebook
NOW = "2026-11-20T10:00:00"


@pytest.fixture(scope="session")
def templated_path(tiny_model_path):
    """The bundled GGUF with CHATML_TEMPLATE, written once beside it (the test model cache)."""
    path = tiny_model_path.with_name("gemma-3-270m-chatml.gguf")
    if not path.is_file() or read_header(path).metadata.get("tokenizer.chat_template") != CHATML_TEMPLATE:
        write_templated_copy(tiny_model_path, path)
    return path


@pytest.fixture(scope="module")
def templated_model(templated_path):
    from edge_agent.llm.llamacpp import LlamaCppModel

    model = LlamaCppModel(templated_path, n_ctx=4096, n_threads=2)
    yield model
    model.close()


def test_the_copy_differs_only_by_its_template(tiny_model_path, templated_path):
    base, copy = read_header(tiny_model_path), read_header(templated_path)
    assert "tokenizer.chat_template" not in base.metadata
    assert copy.metadata.pop("tokenizer.chat_template") == CHATML_TEMPLATE
    assert copy.metadata == base.metadata and copy.tensor_count == base.tensor_count


def test_the_runtime_renders_through_the_template_and_counts_it(templated_model):
    assert templated_model.has_chat_template
    assert templated_model.stop_sequences() == ("<|im_end|>", "<eos>")  # end of turn, then the EOS text
    prompt = templated_model.render_chat([M("system", "Be brief."), M("user", "Hi"),
                                          M("tool", "3 notes", name="check_notebook")])
    assert prompt == ("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                      "<|im_start|>user\nTool result (check_notebook):\n3 notes<|im_end|>\n<|im_start|>assistant\n")
    # Window accounting counts the markers too: the Gemma vocabulary splits them into pieces.
    assert templated_model.count_tokens(prompt) > templated_model.count_tokens(prompt.replace("<|im_start|>", ""))


async def test_free_text_stops_at_the_templates_end_of_turn(templated_model):
    prompt = templated_model.render_chat([M("user", "Say hello."), M("assistant", "Hello."),
                                          M("user", "Say goodbye.")])
    out = await templated_model.generate(prompt, max_tokens=48, role="probe")
    assert out.finish_reason == "stop" and out.usage.generated_tokens < 48
    assert "<|im_end|>" not in out.text and "<|im_start|>" not in out.text
    # Without the stop strings the same greedy decode runs on into the marker exactly there.
    raw = templated_model._llm.create_completion(prompt, max_tokens=out.usage.generated_tokens + 8,
                                                 temperature=0.0, top_k=1, repeat_penalty=1.1)
    assert raw["choices"][0]["text"].strip().startswith(out.text + "<|im_end|>")


def test_ask_local_answers_through_the_template(tmp_path, templated_path, monkeypatch):
    monkeypatch.setenv("EDGE_AGENT_HARNESS__MAX_L2_STEPS", "3")  # the template path, not the whole loop, is tested
    data = tmp_path / "data"
    assert run_cli("--data-dir", str(data), "world", "load").returncode == 0
    env_args = ("--data-dir", str(data), "--model", str(templated_path))
    proc = run_cli(*env_args, "ask", "--local", "--json", "--now", NOW, QUESTION, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    assert answer["event"] == "answer" and answer["answer"] and answer["exit_kind"] != "error"
    trace = run_cli(*env_args, "trace", answer["request_id"], "--json")
    rows = [json.loads(line) for line in trace.stdout.splitlines() if line.strip()]
    assert rows and rows[0]["role"] == "planner"
    sessions = [r for r in rows if r["prompt"]]  # an argument-free tool (current_date) runs with no session
    assert all(r["role"].startswith("l3.") and not r.get("usage") for r in rows if not r["prompt"])
    for row in sessions:  # every session was prompted through the template
        assert row["prompt"].startswith("<|im_start|>system\n"), row["role"]
        assert row["prompt"].endswith("<|im_end|>\n<|im_start|>assistant\n"), row["role"]
        assert "### " not in row["prompt"].split("\n", 1)[0]  # not the plain fallback
        assert "<|im_end|>" not in (row.get("output") or "")  # outputs end before the marker
    free_text = [r for r in rows if r["role"] == "reply"]
    for r in free_text:
        assert r["usage"]["generated_tokens"] < 200  # stopped by the marker, not the length cap


def test_doctor_reports_how_the_template_will_be_used(templated_path):
    from edge_agent.ops.doctor import check_model, template_note

    detail = check_model(templated_path).detail
    assert ("chat template: ChatML, the model's own (system role, no tool role (results as user turns), "
            "turns end with <|im_end|>)") in detail
    status, note = template_note("{{ raise_exception('no') }}")
    assert status == "warn" and "prompts will use the plain fallback" in note
    assert template_note(None) == ("pass", "no chat template in the GGUF: prompts use the plain fallback "
                                           "('### ' role headers), as for a base model")
