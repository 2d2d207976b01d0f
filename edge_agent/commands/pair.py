"""`edge-agent pair add|list|rm|broker-config`: broker users, the password file and the ACL."""
from __future__ import annotations

import sys
import time
from pathlib import Path


def register(sub, parents) -> None:
    p = sub.add_parser("pair", parents=parents, help="pair devices and clients with the broker")
    group = p.add_subparsers(dest="pair_command", metavar="ACTION", required=True)
    add = group.add_parser("add", parents=parents, help="create a device or client (prints its password once)")
    add.add_argument("name", help="its name: the broker username and its topic name")
    add.add_argument("--role", choices=("agent", "device", "client"), required=True,
                     help="agent: runs serve (answers clients); device: a file peer (files serve); "
                          "client: asks (a phone, a laptop CLI). A device named like this machine's "
                          "device_id is paired as its agent")
    add.add_argument("--host", help="broker address written into its credentials (default mqtt.host)")
    add.add_argument("--port", type=int, help="broker port written into its credentials (default mqtt.port)")
    add.set_defaults(func=run_add)
    ls = group.add_parser("list", parents=parents, help="list paired names")
    ls.set_defaults(func=run_list)
    rm = group.add_parser("rm", parents=parents, help="remove a name from the password file and ACL")
    rm.add_argument("name")
    rm.set_defaults(func=run_rm)
    conf = group.add_parser("broker-config", parents=parents,
                            help="write a mosquitto.conf that uses the pairing's password and ACL files")
    conf.add_argument("--out", type=Path, help="directory for mosquitto.conf (default <data_dir>/broker)")
    conf.add_argument("--listen", action="append", default=[], metavar="ADDR:PORT",
                      help="listener (repeatable; default 127.0.0.1:<mqtt.port>; 0.0.0.0:1883 for the LAN; "
                           "port 0 = a free port, chosen now)")
    conf.add_argument("--run-as", metavar="USER",
                      help="user a root-started Mosquitto switches to (default: mosquitto's own)")
    conf.add_argument("--tls", nargs=3, type=Path, metavar=("CAFILE", "CERTFILE", "KEYFILE"),
                      help="make every listener TLS with these PEM files (see deploy/mosquitto/README.md)")
    conf.set_defaults(func=run_broker_config)


def _paths(settings):
    from edge_agent.net.runtime import pairing_paths

    return pairing_paths(settings)


def _reload_hint() -> str:
    return "A running Mosquitto reads the change on SIGHUP: systemctl reload mosquitto (or kill -HUP <pid>)."


def pairing_role(name: str, role: str, settings) -> str:
    """The role to pair `name` with: pairing runs on the agent's machine, so a "device" that is
    this machine's own device_id is the agent (the one device that may write clients' replies)."""
    return "agent" if role == "device" and name == settings.device_id else role


def run_add(args, settings) -> int:
    from edge_agent.net.pairing import PairingError, add_member

    paths = _paths(settings)
    try:
        member, password = add_member(paths, args.name, pairing_role(args.name, args.role, settings),
                                      prefix=settings.mqtt.prefix,
                                      host=args.host or settings.mqtt.host, port=args.port or settings.mqtt.port)
    except PairingError as err:
        print(f"edge-agent pair: {err}", file=sys.stderr)
        return 2
    print(f"paired {member.role} {member.name}")
    print(f"  username: {member.name}")
    print(f"  password: {password}    (shown once; also in {paths.credentials(member.name)})")
    print(f"  use it:   edge-agent --config {paths.credentials(member.name)} ...")
    print(_reload_hint(), file=sys.stderr)
    return 0


def run_list(args, settings) -> int:
    from edge_agent.net.pairing import PairingError, load_members

    try:
        members = load_members(_paths(settings))
    except PairingError as err:
        print(f"edge-agent pair: {err}", file=sys.stderr)
        return 2
    if not members:
        print("nothing paired yet: edge-agent pair add NAME --role agent|device|client", file=sys.stderr)
        return 0
    for m in sorted(members.values(), key=lambda m: m.name):
        print(f"{m.name:<20} {m.role:<7} {time.strftime('%Y-%m-%d %H:%M', time.localtime(m.created_at))}")
    return 0


def run_rm(args, settings) -> int:
    from edge_agent.net.pairing import PairingError, remove_member

    try:
        member = remove_member(_paths(settings), args.name, prefix=settings.mqtt.prefix)
    except PairingError as err:
        print(f"edge-agent pair: {err}", file=sys.stderr)
        return 2
    print(f"removed {member.role} {member.name}")
    print(_reload_hint(), file=sys.stderr)
    return 0


def run_broker_config(args, settings) -> int:
    from edge_agent.net.broker import BrokerError, TlsFiles, free_port, write_config
    from edge_agent.net.pairing import ensure_files

    paths = _paths(settings)
    listeners = []
    for spec in args.listen or [f"127.0.0.1:{settings.mqtt.port}"]:
        host, _, port = spec.rpartition(":")
        if not host or not port.isdigit():
            print(f"edge-agent pair: bad --listen {spec!r}: use ADDR:PORT", file=sys.stderr)
            return 2
        listeners.append((host, int(port) or free_port(host)))  # port 0: a free one now
    try:
        ensure_files(paths, settings.mqtt.prefix)
        tls = TlsFiles(*(p.resolve() for p in args.tls)) if args.tls else None
        conf = write_config(args.out or settings.data_dir / "broker", password_file=paths.password_file,
                            acl_file=paths.acl_file, listeners=listeners, run_as=args.run_as, tls=tls)
    except BrokerError as err:
        print(f"edge-agent pair: {err}", file=sys.stderr)
        return 2
    print(conf)
    print(f"listeners: {', '.join(f'{h}:{p}' for h, p in listeners)}; run it: mosquitto -c {conf}",
          file=sys.stderr)
    return 0
