"""The task adapter: a LoRA GGUF trained for the harness's roles, loaded on top of its base model.

The bundled adapter lives in edge_agent/llm/adapters/ with a card (JSON) naming its own sha256
and its base model's. `model.adapter` chooses: "auto" loads the bundled adapter only on the
exact base it was trained on (any other GGUF runs without it, on the same prompts), "none" never
loads one, and a path loads that file — refused when a card beside it names another base.
"""
from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edge_agent.llm.base import ModelLoadError

if TYPE_CHECKING:  # numpy only where a head moment is read or written: the runtime's own import stays light
    import numpy as np

log = logging.getLogger(__name__)

ADAPTERS_DIR = Path(__file__).with_name("adapters")
BUNDLED_ADAPTER = "gemma3-270m-edge-agent.gguf"
CARD_SUFFIX = ".json"
MODEL_CARD = "MODEL_CARD.md"
MAX_ADAPTER_BYTES = 10 * 2**20  # what the package may carry
TRAINING_SET = "training-set.jsonl.gz"
"""The shipped adapter's training examples as text (role, kind, source, prompt, target), beside it:
what it learned from, for anyone to read and for the separation tests to check."""
TRAINING_FIELDS = ("role", "kind", "source", "prompt", "target")


class AdapterError(ModelLoadError):
    """The adapter is damaged, or made for another base model."""


@dataclass(frozen=True)
class Adapter:
    """An adapter chosen for a model."""

    path: Path
    """The LoRA GGUF."""
    sha256: str
    """Its digest (checked before loading; recorded in traces)."""
    card: dict[str, Any]
    """What its card says (data, steps, figures)."""


def card_path(adapter: Path) -> Path:
    return adapter.with_suffix(CARD_SUFFIX)


def read_card(adapter: Path) -> dict[str, Any] | None:
    path = card_path(adapter)
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise AdapterError(f"{path}: unreadable adapter card: {err}") from err


def _checked(path: Path, card: dict[str, Any] | None, model_sha: str) -> Adapter:
    from edge_agent.llm.bundled import sha256_file

    if not path.is_file():
        raise AdapterError(f"adapter not found: {path}")
    digest = sha256_file(path)
    if card is not None:
        if card.get("sha256") and card["sha256"] != digest:
            raise AdapterError(f"{path}: sha256 {digest[:16]}… does not match its card ({card['sha256'][:16]}…)")
        if card.get("base_sha256") and card["base_sha256"] != model_sha:
            raise AdapterError(f"{path} was trained on {card.get('base_file', 'another model')} "
                               f"(sha256 {card['base_sha256'][:16]}…), not this model (sha256 {model_sha[:16]}…)")
    return Adapter(path, digest, card or {})


def choose_adapter(setting: str, model_path: Path, marker_dir: Path | None) -> Adapter | None:
    """The adapter `model.adapter` asks for on this model, checked; None to run without one."""
    from edge_agent.llm.heads import model_sha256

    if setting == "none":
        return None
    model_sha = model_sha256(model_path, marker_dir)
    if setting == "auto":
        bundled = ADAPTERS_DIR / BUNDLED_ADAPTER
        card = read_card(bundled)
        if card is None or not bundled.is_file() or card.get("base_sha256") != model_sha:
            return None  # another model, or no adapter shipped: the same prompts without it
        return _checked(bundled, card, model_sha)
    path = Path(setting).expanduser()
    return _checked(path, read_card(path), model_sha)


def write_card(adapter: Path, card: dict[str, Any]) -> None:
    card_path(adapter).write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")


def write_training_set(examples: Path, target: Path) -> None:
    """The training set's text (TRAINING_FIELDS of each example, token ids left out), gzipped."""
    import gzip

    tmp = target.with_suffix(".partial")
    with examples.open(encoding="utf-8") as src, gzip.open(tmp, "wt", encoding="utf-8", compresslevel=9) as out:
        for line in src:
            if line.strip():
                row = json.loads(line)
                out.write(json.dumps({k: row.get(k) for k in TRAINING_FIELDS}, ensure_ascii=False) + "\n")
    tmp.replace(target)


def install_adapter(src: Path, base_model: Path, train: dict[str, Any], data: dict[str, Any],
                    probe: dict[str, Any] | None = None, examples: Path | None = None) -> dict[str, Any]:
    """Copy a converted adapter into the package with its card and model card; returns the card.
    `probe`: {"adapter": ..., "base": ..., "choices": ...}, `edge-agent tune probe` with and without
    it, and its chooser (`tune probe --choices`, optional);
    `examples`: the training set it was trained on (its text is shipped beside it, TRAINING_SET)."""
    from edge_agent.llm.bundled import sha256_file

    size = src.stat().st_size
    if size > MAX_ADAPTER_BYTES:
        raise AdapterError(f"{src}: {size / 2**20:.1f} MiB, more than the {MAX_ADAPTER_BYTES // 2**20} MiB the package carries")
    ADAPTERS_DIR.mkdir(exist_ok=True)
    target = ADAPTERS_DIR / BUNDLED_ADAPTER
    shutil.copyfile(src, target)
    head_of(target).unlink(missing_ok=True)  # measured on the adapter this one replaces
    card = {"file": target.name, "sha256": sha256_file(target), "bytes": size, "base_file": base_model.name,
            "base_sha256": sha256_file(base_model), "trained": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "training": train, "data": data}
    if probe:
        card["probe"] = probe
    if examples is not None:
        write_training_set(examples, ADAPTERS_DIR / TRAINING_SET)
        card["training_set"] = {"file": TRAINING_SET, "sha256": sha256_file(ADAPTERS_DIR / TRAINING_SET)}
    write_card(target, card)
    (ADAPTERS_DIR / MODEL_CARD).write_text(model_card(card), encoding="utf-8")
    return card


def record_merge(adapter: Path, recipe: str, merged: dict[str, Any], agreement: dict[str, Any] | None) -> None:
    """Write a merge of this adapter into its card (the merged file's sha256, and how often it decided
    as base + runtime LoRA did), and the model card again."""
    card = read_card(adapter) or {}
    entry = {"sha256": merged.get("sha256"), "bytes": merged.get("bytes"), "base_sha256": merged.get("base_sha256")}
    if agreement is not None:
        entry["agreement"] = {k: agreement.get(k) for k in ("questions", "same", "agreement", "by_part", "end_to_end")}
    card.setdefault("merged", {})[recipe] = entry
    write_card(adapter, card)
    if adapter.parent == ADAPTERS_DIR:
        (ADAPTERS_DIR / MODEL_CARD).write_text(model_card(card), encoding="utf-8")


HEAD_TEXTS = 64
"""Training examples the head input's second moment is measured on (about 21,000 tokens, 2 min here:
llama.cpp computes every token's logits in embedding mode, so all 2,008 would take an hour)."""


def training_texts(adapter: Path, n: int = HEAD_TEXTS, seed: int = 0) -> list[str]:
    """`n` of the adapter's training examples (prompt and target), drawn by `seed`; none when its
    card names no training set beside it."""
    import gzip
    import random

    name = ((read_card(adapter) or {}).get("training_set") or {}).get("file")
    path = adapter.parent / name if name else None
    if path is None or not path.is_file():
        return []
    with gzip.open(path, "rt", encoding="utf-8") as rows:
        texts = [row["prompt"] + row["target"] for row in map(json.loads, rows) if row.get("prompt")]
    random.Random(seed).shuffle(texts)
    return texts[:n]


HEAD_SUFFIX = ".head.npy"
"""Beside an adapter: the second moment of its head's input (head_quant.input_moment), float32."""


def head_of(adapter: Path) -> Path:
    """Where the head input's second moment of `adapter` is kept."""
    return adapter.with_name(adapter.stem + HEAD_SUFFIX)


def record_head_input(adapter: Path, moment: np.ndarray, texts: int, tokens: int, model: str) -> Path:
    """Keep the head input's second moment beside the adapter and name it (and its sha256) in the card."""
    import numpy as np

    from edge_agent.llm.bundled import sha256_file

    path = head_of(adapter)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as out:
        np.save(out, np.asarray(moment, np.float32), allow_pickle=False)
    partial.replace(path)
    card = read_card(adapter) or {}
    card.pop("head_importance", None)  # the diagonal alone, as cards before the moment held it
    card["head_input"] = {"file": path.name, "sha256": sha256_file(path), "dimensions": int(len(moment)),
                          "model": model, "texts": texts, "tokens": tokens}
    write_card(adapter, card)
    return path


def head_moment_of(adapter: Adapter) -> np.ndarray | None:
    """The head input's second moment the adapter's card names (record_head_input), if any; a file
    that does not match the card's sha256 is refused."""
    import numpy as np

    from edge_agent.llm.bundled import sha256_file

    head = (adapter.card or {}).get("head_input") or {}
    if not head.get("file"):
        return None
    path = adapter.path.with_name(head["file"])
    if not path.is_file() or sha256_file(path) != head.get("sha256"):
        raise AdapterError(f"{path}: missing or not the head moment {adapter.path.name}'s card names")
    return np.load(path, allow_pickle=False)


def model_card(card: dict[str, Any]) -> str:
    t, d = card["training"], card["data"]
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(d.get("by_kind", {}).items()))
    return f"""# {card['file']}

A LoRA adapter for {card['base_file']} (sha256 `{card['base_sha256']}`), trained for edge-agent's
harness roles: the planner's skill choice, L3's tool arguments from the asker's question, the
reply's choice among exact candidate lines, and a short reply to small talk. `model.adapter =
"auto"` loads it on that exact file only; every other model runs the same prompts without it.
Its training examples, as text, are beside it ({TRAINING_SET}).

| | |
|---|---|
| file | {card['file']}, {card['bytes'] / 2**20:.1f} MiB, sha256 `{card['sha256']}` |
| data | {d.get('examples')} examples from {d.get('households')} synthetic households ({kinds}); {d.get('tokens')} tokens, {d.get('target_tokens')} of them targets |
| source | `edge-agent tune data` (edge_agent/tune): generated households and questions, replayed through the real harness with a perfect teacher; nothing from world/ |
| LoRA | rank {t.get('rank')}, on the attention and MLP projections; {t.get('trainable_parameters')} parameters |
| training | {t.get('steps')} steps of {t.get('batch')}, {t.get('epochs')} epoch(s){_extra(t)}, loss on targets only; {t.get('train_s', 0) / 60:.1f} min on CPU at {t.get('tokens_per_s')} tokens/s{_resumed(t)} |
| loss | first step {t.get('first_loss')}, last ten steps {t.get('last_loss_mean10')} |
| trained | {card['trained']} by deploy/train-adapter.sh |
{_probe_row(card.get("probe"))}{_merged_rows(card.get("merged"))}{_head_row(card.get("head_input"))}"""


def _head_row(head: dict | None) -> str:
    """Where the moment the Q5_1 output head is fitted under came from, as a card row."""
    if not head or not head.get("file"):
        return ""
    return (f"| output head | a Q5_1 merge fits it to the logits under the second moment of its {head.get('dimensions')} "
            f"inputs ({head['file']}, sha256 `{head.get('sha256')}`), measured on {head.get('texts')} training "
            f"examples ({head.get('tokens')} tokens) through {head.get('model')} (llm/head_quant.py) |\n")


def _resumed(t: dict) -> str:
    """Where a training run stopped and was resumed (tune/train.py --resume), as the card says it."""
    steps = t.get("resumed_at") or []
    return f" after a resume at step {', '.join(map(str, steps))}" if steps else ""


def _extra(t: dict) -> str:
    """The extra passes over some kinds of example, as the card says them (" + 2.5 more over planner")."""
    extra = t.get("extra_passes") or {}
    return "".join(f" + {passes} more over {kind}" for kind, passes in extra.items())


def _merged_rows(merged: dict | None) -> str:
    """One card row a merge recipe: the merged file's sha256 and its agreement with the runtime LoRA."""
    rows = []
    for recipe, m in sorted((merged or {}).items()):
        a = m.get("agreement") or {}
        same = (f"; decides as base + runtime LoRA on {a.get('same')}/{a.get('questions')} held-out questions "
                f"({a.get('agreement')}: skill, calls and answer)") if a else ""
        answer = (a.get("by_part") or {}).get("answer")
        same += f", the same answer on {round(answer * 100)} % of them" if answer is not None else ""
        rows.append(f"| merged ({recipe}) | sha256 `{m.get('sha256')}`, made by `edge-agent tune merge` or on "
                    f"first load{same} |\n")
    return "".join(rows)


def _probe_row(probe: dict | None) -> str:
    """The held-out planner figures as a card row, or nothing when the card has none."""
    if not probe or not probe.get("adapter"):
        return ""
    tuned, base = probe["adapter"], probe.get("base") or {}
    seeds = tuned.get("households") or [0]
    without = f"; without the adapter {base['planner_accuracy']}" if base.get("planner_accuracy") is not None else ""
    row = (f"| held out | the planner's first choice right {tuned.get('planner_right')}/{tuned.get('questions')} "
           f"({tuned.get('planner_accuracy')}) on generated households {seeds[0]}-{seeds[-1]}, which no training "
           f"run reads{without} (`edge-agent tune probe`) |\n")
    chooser = probe.get("choices") or {}
    if chooser.get("chooser_right") is not None:
        seeds = chooser.get("households") or [0]
        row += (f"| held out, the reply's choice | the oracle's lines chosen on {chooser['chooser_right']}/"
                f"{chooser.get('choices')} choice prompts ({chooser.get('chooser_accuracy')}) of households "
                f"{seeds[0]}-{seeds[-1]}; by where the right line stands {json.dumps(chooser.get('by_target'))}, "
                f"\"none\" said to an answer {chooser.get('said_none_to_an_answer')} times "
                f"(`edge-agent tune probe --choices`) |\n")
    return row
