#!/usr/bin/env bash
# Train the bundled model's task adapter from scratch, reproducibly, then install it in the package.
#
#   deploy/train-adapter.sh [--examples N] [--epochs E] [--extra KIND=P,...] [--seed S] [--resume] [--max-steps K] [--no-install]
#
# 1. the runtime's .venv (deploy/setup.sh) and a separate .venv-train (torch CPU, transformers, peft:
#    kept out of the runtime's dependencies);
# 2. the training set from synthetic households (`edge-agent tune data`; nothing from world/);
# 3. LoRA training on the dequantized bundled GGUF, with a progress bar, checkpoints and --resume:
#    every role for --epochs, with --extra more passes over the one-decision roles mixed in (a
#    plan and a yes or no are a token or two each);
# 4. conversion to GGUF with llama.cpp's convert_lora_to_gguf.py from llama-cpp-python's sdist;
# 5. `edge-agent tune probe`, with and without it: the planner's first choice on held-out generated
#    households (about 3 minutes for both), and `tune probe --choices` with it: the reply's choice of
#    lines on the same households' choice prompts (about 4 minutes);
# 6. `edge-agent tune install`: the adapter, its card (sha256, base sha256, figures), its training
#    set's text and MODEL_CARD.md into edge_agent/llm/adapters/;
# 7. `edge-agent tune merge`: the adapter merged into the weights (what the runtime loads), checked
#    against base + runtime LoRA on held-out questions, both recorded in the card.
# Train on an idle machine: on 2 cores anything else computing slows it about 6x.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=deploy/setup.sh
source "$ROOT/deploy/setup.sh"
cd "$ROOT"

EXAMPLES=2000 EPOCHS=1.0 EXTRA="planner=2.0,choose=2.0" SEED=1 RESUME="" MAX_STEPS="" INSTALL=1
while [ $# -gt 0 ]; do
  case "$1" in
    --examples) EXAMPLES="$2"; shift 2 ;;
    --epochs) EPOCHS="$2"; shift 2 ;;
    --extra) EXTRA="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --resume) RESUME="--resume"; shift ;;
    --max-steps) MAX_STEPS="--max-steps $2"; shift 2 ;;
    --no-install) INSTALL=""; shift ;;
    *) echo "train-adapter.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

WORK="${TUNE_WORK:-$ROOT/tune-work}"
TRAIN_VENV="$ROOT/.venv-train"
LLAMA_CPP_PYTHON=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("llama_cpp_python"))')
# Versions the run was made with (torch's CPU wheel; transformers reads Gemma 3 GGUFs).
TRAIN_PACKAGES=(torch==2.13.0 transformers==5.24.0 peft==0.21.2 safetensors gguf sentencepiece protobuf numpy)
mkdir -p "$WORK"

if [ ! -x "$TRAIN_VENV/bin/python" ]; then
  say "creating $TRAIN_VENV (torch CPU, transformers, peft)"
  "$PYTHON" -m venv "$TRAIN_VENV"
  "$TRAIN_VENV/bin/pip" install -q --upgrade pip >"$WORK/pip-train.log" 2>&1
fi
if ! "$TRAIN_VENV/bin/python" -c 'import torch, transformers, peft' 2>/dev/null; then
  "$TRAIN_VENV/bin/pip" install -q "${TRAIN_PACKAGES[@]}" >>"$WORK/pip-train.log" 2>&1 \
    || { tail -n 30 "$WORK/pip-train.log" >&2; exit 1; }
fi

MODEL=$("$VENV/bin/python" -c 'from edge_agent.config import load_settings; from edge_agent.llm import resolve_model_path; print(resolve_model_path(load_settings()))')
DATA="$WORK/examples.jsonl"
if [ -z "$RESUME" ] || [ ! -f "$DATA" ]; then
  say "generating $EXAMPLES training examples (seed $SEED)"
  "$VENV/bin/edge-agent" tune data --examples "$EXAMPLES" --seed "$SEED" --out "$DATA" >/dev/null
fi

say "training: every role, and more passes over $EXTRA (checkpoints in $WORK/run/checkpoint; --resume continues)"
# A plan and a choice are a few tokens a question: one pass over every role leaves the planner
# reading the question but not the menu. Their extra passes are mixed into the same run; a
# planner-only second stage (tried) eroded the other roles.
# shellcheck disable=SC2086
PYTHONPATH="$ROOT" "$TRAIN_VENV/bin/python" -m edge_agent.tune.train --data "$DATA" --gguf "$MODEL" \
  --out "$WORK/run" --epochs "$EPOCHS" --extra "$EXTRA" --seed "$SEED" $RESUME $MAX_STEPS \
  | tee "$WORK/train-report.json"

CONVERTER="$WORK/llama.cpp"
if [ ! -f "$CONVERTER/convert_lora_to_gguf.py" ]; then
  say "fetching llama.cpp's converter from the llama-cpp-python $LLAMA_CPP_PYTHON sdist"
  "$TRAIN_VENV/bin/pip" download -q --no-deps --no-binary :all: "llama-cpp-python==$LLAMA_CPP_PYTHON" \
    -d "$WORK/sdist" >>"$WORK/pip-train.log" 2>&1
  tar -xzf "$WORK/sdist/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz" -C "$WORK/sdist" \
    "llama_cpp_python-$LLAMA_CPP_PYTHON/vendor/llama.cpp/convert_lora_to_gguf.py" \
    "llama_cpp_python-$LLAMA_CPP_PYTHON/vendor/llama.cpp/conversion" \
    "llama_cpp_python-$LLAMA_CPP_PYTHON/vendor/llama.cpp/gguf-py"
  rm -rf "$CONVERTER"
  mv "$WORK/sdist/llama_cpp_python-$LLAMA_CPP_PYTHON/vendor/llama.cpp" "$CONVERTER"
fi
say "converting the adapter to GGUF"
"$TRAIN_VENV/bin/python" "$CONVERTER/convert_lora_to_gguf.py" --base "$WORK/run/base" --outtype f16 \
  --outfile "$WORK/adapter.gguf" "$WORK/run/adapter" >"$WORK/convert.log" 2>&1 \
  || { tail -n 30 "$WORK/convert.log" >&2; exit 1; }

say "held-out check: the planner's first choice on generated households no training run reads, with and without it"
"$VENV/bin/edge-agent" tune probe --adapter "$WORK/adapter.gguf" >"$WORK/probe.json"
"$VENV/bin/edge-agent" --no-adapter tune probe >"$WORK/probe-base.json"
"$VENV/bin/edge-agent" tune probe --choices --adapter "$WORK/adapter.gguf" >"$WORK/probe-choices.json"
cat "$WORK/probe.json" "$WORK/probe-choices.json"

if [ -n "$INSTALL" ]; then
  "$VENV/bin/edge-agent" tune install "$WORK/adapter.gguf" --train-report "$WORK/train-report.json" \
    --data-summary "${DATA%.jsonl}.summary.json" --probe "$WORK/probe.json" --probe-base "$WORK/probe-base.json" \
    --probe-choices "$WORK/probe-choices.json" --examples "$DATA"
  say "merging it into the weights, and checking the merged file decides as base + runtime LoRA does"
  "$VENV/bin/edge-agent" tune merge --households 4 >"$WORK/merge.json"
  say "installed: edge_agent/llm/adapters/ (see MODEL_CARD.md there)"
else
  say "converted: $WORK/adapter.gguf (not installed)"
fi
