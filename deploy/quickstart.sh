#!/usr/bin/env bash
# Set up (idempotently) and run the main job on embedded defaults, on this one machine:
#   a Mosquitto broker of its own on a free loopback port (generated, locked-down config),
#   the agent (`edge-agent serve`) on the bundled model and the sample world,
#   a file peer for the "laptop" device (`edge-agent files serve`),
# then asks a sample question through the real MQTT client, showing pills and the answer.
# The broker also serves the phone page (MQTT over WebSockets, QUICKSTART_WEB=ADDR:PORT, default
# a free loopback port): its URL and pairing QR code for the client "phone" are printed first.
# Everything it started is stopped on exit. Data dir: $EDGE_AGENT_DATA_DIR, default
# ~/.local/share/edge-agent. Use a broker you run yourself with QUICKSTART_BROKER=HOST:PORT
# (its password file and ACL must be the ones `edge-agent pair` writes in the data dir).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=deploy/setup.sh
source "$ROOT/deploy/setup.sh"
QUESTION="${1:-What email address is on my résumé?}"

export EDGE_AGENT_DATA_DIR="${EDGE_AGENT_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/edge-agent}"
DATA="$EDGE_AGENT_DATA_DIR"
RUN="$DATA/quickstart"
CREDS="$DATA/pairing/credentials"
mkdir -p "$RUN"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM

say "loading the sample world into $DATA (idempotent)"
edge-agent world load >"$RUN/world-load.log" 2>&1 || { cat "$RUN/world-load.log" >&2; exit 1; }
tail -n 1 "$RUN/world-load.log" >&2

say "pairing the agent (pi), a file peer (laptop) and clients (me, and phone for the page)"
for member in pi:agent laptop:device me:client phone:client; do
  name="${member%%:*}"; role="${member##*:}"
  [ -f "$CREDS/$name.toml" ] || edge-agent pair add "$name" --role "$role" >/dev/null
done

if [ -n "${QUICKSTART_BROKER:-}" ]; then
  export EDGE_AGENT_MQTT__HOST="${QUICKSTART_BROKER%:*}" EDGE_AGENT_MQTT__PORT="${QUICKSTART_BROKER##*:}"
  say "using the broker at $QUICKSTART_BROKER"
else
  conf="$(edge-agent pair broker-config --listen 127.0.0.1:0 --websockets "${QUICKSTART_WEB:-127.0.0.1:0}" \
    --run-as "$(id -un)" --out "$RUN/broker" | tail -n 1)"
  [ -f "$conf" ] || conf="$RUN/broker/mosquitto.conf"
  port="$(awk '$1 == "listener" {print $2; exit}' "$conf")"
  # The page's listener is the one followed by `protocol websockets`.
  web_port="$(awk '$1 == "listener" {p = $2} $1 == "protocol" && $2 == "websockets" {print p; exit}' "$conf")"
  export EDGE_AGENT_MQTT__HOST=127.0.0.1 EDGE_AGENT_MQTT__PORT="$port"
  say "starting Mosquitto on 127.0.0.1:$port ($conf)"
  MOSQUITTO="$(command -v mosquitto || echo /usr/sbin/mosquitto)"
  "$MOSQUITTO" -c "$conf" >"$RUN/mosquitto.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
fi

say "starting the agent (bundled model) and the laptop's file peer"
edge-agent --config "$CREDS/pi.toml" serve --log-format text >"$RUN/serve.log" 2>&1 &
pids+=($!)
edge-agent --config "$CREDS/laptop.toml" --data-dir "$RUN/laptop" \
  files serve --root "$ROOT/world/files/laptop" --device laptop >"$RUN/files-serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 120); do
  state="$(edge-agent --config "$CREDS/me.toml" top --device pi --once --json 2>/dev/null || true)"
  case "$state" in *'"online"'*) break ;; esac
  kill -0 "${pids[-2]}" 2>/dev/null || { echo "the agent exited; see $RUN/serve.log" >&2; tail -n 20 "$RUN/serve.log" >&2; exit 1; }
  sleep 0.5
done

if [ -n "${web_port:-}" ]; then
  web_host="${QUICKSTART_WEB:-127.0.0.1:0}"; web_host="${web_host%:*}"
  case "$web_host" in ""|127.0.0.1|0.0.0.0) web_host=127.0.0.1 ;; esac
  say "the phone page, served by Mosquitto: open this URL (or scan the code) to ask from a browser"
  edge-agent pair qr phone --web "$web_host:$web_port" 2>/dev/null
fi

say "asking the agent over MQTT: $QUESTION"
edge-agent --config "$CREDS/me.toml" ask --device pi --timeout 300 "$QUESTION"
