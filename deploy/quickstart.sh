#!/usr/bin/env bash
# Set up (idempotently) and run the main job on embedded defaults: the bundled model and the
# sample world in the data dir ($EDGE_AGENT_DATA_DIR, default ~/.local/share/edge-agent).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=deploy/setup.sh
source "$ROOT/deploy/setup.sh"
QUESTION="${1:-When is my next dentist appointment?}"

say "loading the sample world into the data dir (idempotent)"
edge-agent world load
say "asking: $QUESTION"
edge-agent ask --local "$QUESTION"
