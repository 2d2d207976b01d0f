"""The task adapter: chosen only for its own base model, checked by sha256, refused for another base."""
from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from edge_agent.llm import adapter as adapters
from edge_agent.llm.adapter import AdapterError, choose_adapter


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def shipped(tmp_path, monkeypatch, tiny_model_path):
    """A package adapters folder holding a (fake) adapter trained on the bundled model."""
    folder = tmp_path / "adapters"
    folder.mkdir()
    fake = folder / adapters.BUNDLED_ADAPTER
    fake.write_bytes(b"GGUF lora adapter bytes")
    card = {"file": fake.name, "sha256": _sha(fake), "base_file": tiny_model_path.name,
            "base_sha256": _sha(tiny_model_path), "data": {"examples": 12}}
    adapters.card_path(fake).write_text(json.dumps(card))
    monkeypatch.setattr(adapters, "ADAPTERS_DIR", folder)
    return fake


def test_auto_loads_the_bundled_adapter_on_its_own_base_only(shipped, tiny_model_path, tmp_path):
    chosen = choose_adapter("auto", tiny_model_path, tmp_path / "markers")
    assert chosen is not None and chosen.path == shipped and chosen.sha256 == _sha(shipped)
    other = tmp_path / "other.gguf"
    shutil.copyfile(tiny_model_path, other)
    with other.open("ab") as fh:
        fh.write(b"\0")  # any other file: another base
    assert choose_adapter("auto", other, tmp_path / "markers") is None
    assert choose_adapter("none", tiny_model_path, tmp_path / "markers") is None


def test_a_damaged_adapter_is_refused(shipped, tiny_model_path, tmp_path):
    shipped.write_bytes(b"GGUF something else")
    with pytest.raises(AdapterError, match="does not match its card"):
        choose_adapter("auto", tiny_model_path, tmp_path / "markers")


def test_an_explicit_adapter_for_another_base_is_refused(shipped, tiny_model_path, tmp_path):
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF not the base")
    with pytest.raises(AdapterError, match="was trained on"):
        choose_adapter(str(shipped), other, tmp_path / "markers")
    with pytest.raises(AdapterError, match="not found"):
        choose_adapter(str(tmp_path / "missing.gguf"), tiny_model_path, tmp_path / "markers")


def test_doctor_reports_the_adapter(shipped, tiny_model_path, tmp_path):
    from edge_agent.config import load_settings
    from edge_agent.ops.doctor import check_adapter

    s = load_settings(None, {"data_dir": str(tmp_path / "data"), "model.path": str(tiny_model_path)}, environ={})
    ok = check_adapter(s, tiny_model_path)
    assert ok.status == "pass" and "matches its card" in ok.detail and "12 synthetic examples" in ok.detail
    s.model.adapter = "none"
    assert "model.adapter = none" in check_adapter(s, tiny_model_path).detail
    s.model.adapter = "auto"
    card = json.loads(adapters.card_path(shipped).read_text())
    card["head_input"] = {"file": "gone.head.npy", "sha256": "0" * 64}  # named, not there
    adapters.card_path(shipped).write_text(json.dumps(card))
    said = check_adapter(s, tiny_model_path)  # the default fits its own head under the moment
    assert said.status == "fail" and "gone.head.npy" in said.detail and "tune merge --recipe" in said.detail
    s.model.adapter_merge = "q8_0"
    assert check_adapter(s, tiny_model_path).status == "pass"  # a q8_0 merge keeps the base's head: no moment
    s.model.adapter_merge = "q8_0_emb_q5_1"
    said = check_adapter(s, tiny_model_path)
    assert said.status == "fail" and "gone.head.npy" in said.detail and "tune merge --recipe" in said.detail
    s.model.adapter_merge = "q8_0"
    shipped.write_bytes(b"tampered")
    assert check_adapter(s, tiny_model_path).status == "fail"


def test_no_adapter_flag_turns_it_off():
    from edge_agent.cli import build_parser, settings_from_args

    args = build_parser().parse_args(["--no-adapter", "doctor"])
    assert settings_from_args(args).model.adapter == "none"
    assert settings_from_args(build_parser().parse_args(["doctor"])).model.adapter == "auto"


def test_tune_install_writes_the_card_with_the_held_out_probe(shipped, tiny_model_path, tmp_path, capsys):
    from edge_agent.cli import main

    new = tmp_path / "adapter.gguf"
    new.write_bytes(b"GGUF a newly trained adapter")
    report = tmp_path / "train-report.json"
    report.write_text('{"progress": 1}\n' + json.dumps({"steps": 505, "batch": 8, "epochs": 1.0, "rank": 16,
                                                         "resumed_at": [125]}) + "\n")
    summary = tmp_path / "examples.summary.json"
    summary.write_text(json.dumps({"examples": 1800, "households": 120, "by_kind": {"planner": 720}}))
    probe, base = tmp_path / "probe.json", tmp_path / "probe-base.json"
    probe.write_text(json.dumps({"households": [5000, 5007], "questions": 312, "planner_right": 277,
                                 "planner_accuracy": 0.8878}) + "\n")
    base.write_text(json.dumps({"households": [5000, 5007], "questions": 312, "planner_right": 77,
                                "planner_accuracy": 0.2468}) + "\n")
    choices = tmp_path / "probe-choices.json"
    choices.write_text(json.dumps({"households": [5000, 5007], "choices": 250, "chooser_right": 221,
                                   "chooser_accuracy": 0.884, "by_target": {"first": "170/185", "none": "51/65"},
                                   "said_none_to_an_answer": 6}) + "\n")
    assert main(["--model", str(tiny_model_path), "tune", "install", str(new), "--train-report", str(report),
                 "--data-summary", str(summary), "--probe", str(probe), "--probe-base", str(base),
                 "--probe-choices", str(choices)]) == 0
    card = json.loads(adapters.card_path(shipped).read_text())
    assert card["sha256"] == _sha(new) and card["base_sha256"] == _sha(tiny_model_path)
    assert card["training"]["steps"] == 505 and card["probe"]["base"]["planner_accuracy"] == 0.2468
    text = (shipped.parent / adapters.MODEL_CARD).read_text()
    assert "277/312 (0.8878) on generated households 5000-5007" in text and "without the adapter 0.2468" in text
    assert "tokens/s after a resume at step 125 |" in text  # a resumed run says so, from the report
    assert "the oracle's lines chosen on 221/250 choice prompts (0.884) of households 5000-5007" in text
    assert '"none" said to an answer 6 times' in text and card["probe"]["choices"]["chooser_right"] == 221
    assert json.loads(capsys.readouterr().out)["probe"]["adapter"]["planner_right"] == 277


def test_the_card_row_of_a_merge_says_how_often_it_decides_and_answers_as_the_runtime_lora():
    row = adapters._merged_rows({"q8_0": {"sha256": "ab" * 32, "agreement": {
        "questions": 160, "same": 138, "agreement": 0.8625, "by_part": {"skill": 0.95, "calls": 0.89, "answer": 0.97}}}})
    assert "on 138/160 held-out questions (0.8625: skill, calls and answer), the same answer on 97 % of them |" in row
    assert "the same answer" not in adapters._merged_rows({"q8_0": {"sha256": "ab" * 32, "agreement": {
        "questions": 160, "same": 138, "agreement": 0.8625}}})  # a card written before by_part


def test_a_merge_recorded_in_the_card_keeps_its_agreement_by_part(tmp_path):
    adapter = tmp_path / "adapter.gguf"
    adapter.write_bytes(b"GGUF an adapter")
    adapters.card_path(adapter).write_text(json.dumps({"sha256": _sha(adapter)}))
    agreement = {"questions": 160, "same": 138, "agreement": 0.8625, "by_part": {"answer": 0.95},
                 "end_to_end": [0.84, 0.83], "differ": [{"question": "q"}]}
    adapters.record_merge(adapter, "q8_0", {"sha256": "ab" * 32, "bytes": 1}, agreement)
    kept = json.loads(adapters.card_path(adapter).read_text())["merged"]["q8_0"]["agreement"]
    assert kept == {k: v for k, v in agreement.items() if k != "differ"}


def test_the_head_is_measured_on_the_adapters_own_training_examples_drawn_the_same_each_time(tmp_path):
    import gzip

    adapter = tmp_path / "adapter.gguf"
    adapter.write_bytes(b"GGUF an adapter")
    assert adapters.training_texts(adapter) == []  # no card, no training set: nothing to measure on
    rows = [{"role": "planner", "prompt": f"question {i}\n", "target": f"skill {i}"} for i in range(100)]
    rows.append({"role": "planner", "prompt": "", "target": "a target alone"})
    with gzip.open(tmp_path / "set.jsonl.gz", "wt", encoding="utf-8") as out:
        out.writelines(json.dumps(row) + "\n" for row in rows)
    adapters.card_path(adapter).write_text(json.dumps({"training_set": {"file": "set.jsonl.gz"}}))
    texts = adapters.training_texts(adapter, n=10)
    assert len(texts) == 10 and len(set(texts)) == 10 and texts == adapters.training_texts(adapter, n=10)
    assert set(texts) < {f"question {i}\nskill {i}" for i in range(100)}
    assert texts != [f"question {i}\nskill {i}" for i in range(10)]  # drawn, not the first ten
    assert len(adapters.training_texts(adapter, n=500)) == 100


def test_the_head_moment_is_kept_beside_the_adapter_named_in_its_card_and_refused_when_changed(tmp_path):
    import numpy as np

    adapter = tmp_path / "adapter.gguf"
    adapter.write_bytes(b"GGUF an adapter")
    adapters.card_path(adapter).write_text(json.dumps({"sha256": _sha(adapter), "merged": {"q8_0": {}},
                                                       "head_importance": {"values": [1.0, 2.0]}}))
    moment = np.array([[1.5, 0.25], [0.25, 1500.0]])
    path = adapters.record_head_input(adapter, moment, texts=64, tokens=20000, model="m.gguf")
    card = json.loads(adapters.card_path(adapter).read_text())
    assert path == tmp_path / "adapter.head.npy" and "head_importance" not in card  # the older diagonal goes
    assert card["head_input"] == {"file": "adapter.head.npy", "sha256": _sha(path), "dimensions": 2,
                                  "model": "m.gguf", "texts": 64, "tokens": 20000}
    assert card["sha256"] == _sha(adapter) and card["merged"] == {"q8_0": {}}
    chosen = adapters.Adapter(adapter, _sha(adapter), card)
    np.testing.assert_array_equal(adapters.head_moment_of(chosen), moment.astype(np.float32))
    row = adapters._head_row(card["head_input"])
    assert "second moment of its 2 inputs (adapter.head.npy" in row and "64 training examples (20000 tokens)" in row
    assert adapters._head_row(None) == "" and adapters.head_moment_of(adapters.Adapter(adapter, "", {})) is None
    np.save(path, moment.astype(np.float32) * 2)  # changed after the card named it
    with pytest.raises(adapters.AdapterError, match="not the head moment"):
        adapters.head_moment_of(chosen)


def test_tune_merge_measures_the_head_once_into_the_card_and_says_so_when_it_cannot(tmp_path, monkeypatch,
                                                                                   capsys):
    import gzip

    import numpy as np

    from edge_agent.commands import tune
    from edge_agent.llm import head_quant, merge
    from edge_agent.llm.adapter import Adapter

    path = tmp_path / "adapter.gguf"
    path.write_bytes(b"GGUF an adapter")
    adapters.card_path(path).write_text(json.dumps({"sha256": _sha(path)}))
    adapter = Adapter(path, _sha(path), {})
    assert tune.measure_head(tmp_path / "base.gguf", adapter, tmp_path) is None
    assert "names no training set" in capsys.readouterr().err
    with gzip.open(tmp_path / "set.jsonl.gz", "wt", encoding="utf-8") as out:
        out.writelines(json.dumps({"prompt": f"q{i} ", "target": "t"}) + "\n" for i in range(3))
    adapters.card_path(path).write_text(json.dumps({"sha256": _sha(path), "training_set": {"file": "set.jsonl.gz"}}))
    reference = tmp_path / "merged-q8_0.gguf"
    monkeypatch.setattr(merge, "ensure_merged", lambda base, a, models, recipe: merge.Merged(reference, {}))
    seen = []

    def fake_moment(model_path, texts, progress=None):
        seen.append((model_path, sorted(texts)))
        return np.array([[2.0, 1.0], [1.0, 400.0]]), 9

    monkeypatch.setattr(head_quant, "input_moment", fake_moment)
    assert tune.measure_head(tmp_path / "base.gguf", adapter, tmp_path) == {"texts": 3, "tokens": 9}
    assert seen == [(reference, ["q0 t", "q1 t", "q2 t"])]
    head = json.loads(adapters.card_path(path).read_text())["head_input"]
    assert head["file"] == "adapter.head.npy" and (head["model"], head["texts"], head["tokens"]) == (reference.name, 3, 9)
    np.testing.assert_array_equal(np.load(tmp_path / head["file"]), [[2.0, 1.0], [1.0, 400.0]])


def test_installing_a_new_adapter_drops_the_head_moment_measured_on_the_old_one(shipped, tiny_model_path, tmp_path):
    stale = adapters.head_of(shipped)
    stale.write_bytes(b"a moment of the adapter being replaced")
    src = tmp_path / "new.gguf"
    src.write_bytes(b"GGUF the new adapter")
    card = adapters.install_adapter(src, tiny_model_path, train={"steps": 1}, data={"examples": 3})
    assert not stale.exists() and "head_input" not in card and shipped.read_bytes() == src.read_bytes()


def test_tune_merge_measures_again_when_the_cards_moment_file_is_gone(tmp_path, capsys):
    from edge_agent.commands import tune

    path = tmp_path / "adapter.gguf"
    path.write_bytes(b"GGUF an adapter")
    gone = adapters.Adapter(path, _sha(path), {"head_input": {"file": "adapter.head.npy", "sha256": "0" * 64}})
    assert tune._has_head_moment(gone) is False
    assert "measuring it again" in capsys.readouterr().err
    assert tune._has_head_moment(adapters.Adapter(path, _sha(path), {})) is False
