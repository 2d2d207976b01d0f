"""The Mosquitto drop-in for a Debian/Raspberry Pi OS broker: /etc/mosquitto/conf.d/edge-agent.conf.

It is rendered from deploy/mosquitto's template (edge_agent.net.broker.render_config) with the
pairing's password and ACL files. Debian's /etc/mosquitto/mosquitto.conf already sets
persistence_location and log_dest, and Mosquitto refuses a second persistence_location
("Duplicate persistence_location value"), so those lines are left to the main file.
Run `python -m edge_agent.ops.mosquitto_dropin --data-dir DIR [--lan]` to print it.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from edge_agent.net.webpage import DEFAULT_WEBSOCKETS_PORT  # the phone page's listener with --lan

MQTT_PORT = 1883  # the standard MQTT port
LOOPBACK = "127.0.0.1"
ALL_INTERFACES = "0.0.0.0"  # the LAN listener; IPAddressAllow/ACLs and passwords guard it
OWNED_BY_MAIN_CONF = ("persistence_location", "log_dest", "pid_file")
"""Settings Debian's main mosquitto.conf makes, which a drop-in must not repeat."""


def render_dropin(data_dir: Path, *, lan: bool = False, port: int = MQTT_PORT,
                  websockets_port: int | None = None) -> str:
    """The drop-in text for the pairing files under `data_dir`.

    `websockets_port` adds the phone page's listener (MQTT over WebSockets + the page itself,
    edge_agent.net.webpage) on the same interfaces as the MQTT one.
    """
    from edge_agent.net.broker import render_config
    from edge_agent.net.webpage import listener_lines, web_listener

    pairing = data_dir / "pairing"
    bind = ALL_INTERFACES if lan else LOOPBACK
    listeners = [(bind, port)]
    web = listener_lines(web_listener(bind, websockets_port)) if websockets_port else []
    text = render_config(password_file=pairing / "passwd", acl_file=pairing / "acl",
                         persistence_dir=Path("/var/lib/mosquitto"), listeners=listeners,
                         extra_listener_lines=web)
    kept = [line for line in text.splitlines() if line.split(" ", 1)[0] not in OWNED_BY_MAIN_CONF]
    header = [f"# {', '.join(OWNED_BY_MAIN_CONF)}: set by the main mosquitto.conf (Debian's), not here."]
    return "\n".join(header + kept) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m edge_agent.ops.mosquitto_dropin", description=__doc__)
    parser.add_argument("--data-dir", type=Path, required=True, help="the service's data dir")
    parser.add_argument("--lan", action="store_true", help="listen on all interfaces, not only loopback")
    parser.add_argument("--port", type=int, default=MQTT_PORT)
    parser.add_argument("--websockets-port", type=int, default=None,
                        help="the phone page's websockets listener (default 9001 with --lan, else none; 0 = none)")
    args = parser.parse_args(argv)
    ws_port = args.websockets_port if args.websockets_port is not None else (DEFAULT_WEBSOCKETS_PORT if args.lan else 0)
    try:
        sys.stdout.write(render_dropin(args.data_dir, lan=args.lan, port=args.port, websockets_port=ws_port or None))
    except (OSError, ValueError, KeyError) as err:
        print(f"mosquitto drop-in: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
