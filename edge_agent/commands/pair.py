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
    add.add_argument("--pool", metavar="POOL",
                     help="(agents) also answer questions sent to POOL, a household pool of boards: the broker "
                          "hands each to one member, and a member that dies leaves its questions to another")
    add.add_argument("--host", help="broker address written into its credentials (default mqtt.host)")
    add.add_argument("--port", type=int, help="broker port written into its credentials (default mqtt.port)")
    add.set_defaults(func=run_add)
    _register_qr_options(add)
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
    _register_websockets_options(conf)
    _register_qr_command(group, parents)


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
                                      host=args.host or settings.mqtt.host, port=args.port or settings.mqtt.port,
                                      pool=getattr(args, "pool", None))
    except PairingError as err:
        print(f"edge-agent pair: {err}", file=sys.stderr)
        return 2
    print(f"paired {member.role} {member.name}")
    print(f"  username: {member.name}")
    print(f"  password: {password}    (shown once; also in {paths.credentials(member.name)})")
    print(f"  use it:   edge-agent --config {paths.credentials(member.name)} ...")
    print(_reload_hint(), file=sys.stderr)
    return _print_pairing_qr(args, settings, member.name, password)


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
        pool = f"  pool {m.pool}" if m.pool else ""
        print(f"{m.name:<20} {m.role:<7} {time.strftime('%Y-%m-%d %H:%M', time.localtime(m.created_at))}{pool}")
    return 0


def run_rm(args, settings) -> int:
    from edge_agent.net.pairing import PairingError, acting_agents, load_members, read_password, remove_member

    paths = _paths(settings)
    try:
        if args.name in acting_agents(load_members(paths)):  # out of Home Assistant while it may still log in
            _clear_discovery(settings, args.name, read_password(paths, args.name))
        member = remove_member(paths, args.name, prefix=settings.mqtt.prefix)
    except PairingError as err:
        print(f"edge-agent pair: {err}", file=sys.stderr)
        return 2
    print(f"removed {member.role} {member.name}")
    print(_reload_hint(), file=sys.stderr)
    return 0


def _clear_discovery(settings, name: str, password: str | None) -> None:
    """Take the board out of Home Assistant: empty retained discovery configs, sent as the board
    (before its login is deleted: only it may write them)."""
    from edge_agent.net.hass import clear_discovery, config_filter

    m = settings.mqtt
    why = ("its credentials were not made on this machine" if password is None else
           clear_discovery(m.host, m.port, name, password, tls_ca=str(m.tls_ca) if m.tls_ca else None))
    if why is None:
        print(f"removed {name}'s Home Assistant discovery configs")
    else:
        print(f"edge-agent pair: Home Assistant may still list {name}: {why}; publish empty retained "
              f"messages on {config_filter(name)} to remove it", file=sys.stderr)


def run_broker_config(args, settings) -> int:
    from edge_agent.net.broker import BrokerError, TlsFiles, free_port, write_config
    from edge_agent.net.pairing import ensure_files

    paths = _paths(settings)
    try:
        web_lines, web_url = _websockets_listener(args)
    except ValueError as err:
        print(f"edge-agent pair: {err}", file=sys.stderr)
        return 2
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
                            acl_file=paths.acl_file, listeners=listeners, run_as=args.run_as, tls=tls,
                            extra_listener_lines=web_lines)
    except BrokerError as err:
        print(f"edge-agent pair: {err}", file=sys.stderr)
        return 2
    print(conf)
    print(f"listeners: {', '.join(f'{h}:{p}' for h, p in listeners)}; run it: mosquitto -c {conf}",
          file=sys.stderr)
    if web_url:
        print(f"phone page: {web_url} (pair a phone: edge-agent pair add phone --role client --qr)",
              file=sys.stderr)
    return 0


# --- The phone page (edge_agent/web): its websockets listener and QR pairing. -------------------

def _register_qr_options(add) -> None:
    add.add_argument("--qr", action="store_true",
                     help="print a QR code of the phone page's URL with these credentials in its fragment")
    add.add_argument("--qr-png", type=Path, metavar="FILE", help="also write that QR code as a PNG")
    add.add_argument("--web", metavar="HOST:PORT",
                     help="where phones reach the page's websockets listener "
                          "(default --host or mqtt.host, port 9001)")
    add.add_argument("--https", action="store_true", help="the page's listener uses TLS (https/wss)")
    add.add_argument("--broker-url", metavar="URL",
                     help="MQTT over WebSockets URL for the page when not its own listener, "
                          "e.g. wss://pi.local:9443/mqtt (see broker-config --wss)")


def _register_qr_command(group, parents) -> None:
    qr = group.add_parser("qr", parents=parents,
                          help="print the phone page's pairing QR code of a client paired on this machine")
    qr.add_argument("name", help="a client paired here (its stored credentials are used; nothing changes)")
    qr.add_argument("--png", type=Path, metavar="FILE", help="also write the QR code as a PNG")
    qr.add_argument("--web", metavar="HOST:PORT", help="where phones reach the page (default mqtt.host:9001)")
    qr.add_argument("--https", action="store_true", help="the page's listener uses TLS (https/wss)")
    qr.add_argument("--broker-url", metavar="URL", help="as for pair add --broker-url")
    qr.set_defaults(func=run_qr)


def run_qr(args, settings) -> int:
    from edge_agent.net.pairing import PairingError, load_members, read_password

    paths = _paths(settings)
    try:
        member = load_members(paths).get(args.name)
        password = read_password(paths, args.name) if member else None
    except PairingError as err:
        print(f"edge-agent pair: {err}", file=sys.stderr)
        return 2
    if member is None or password is None:
        print(f"edge-agent pair: {args.name!r} is not paired on this machine", file=sys.stderr)
        return 2
    args.role, args.qr, args.qr_png, args.host = member.role, True, args.png, None
    return _print_pairing_qr(args, settings, member.name, password)


def _register_websockets_options(conf) -> None:
    conf.add_argument("--websockets", metavar="ADDR:PORT",
                      help="add an MQTT-over-WebSockets listener that also serves the phone page "
                           "(http_dir; Mosquitto >= 2.0); port 0 = a free port, chosen now")
    conf.add_argument("--wss", metavar="ADDR:PORT",
                      help="with --tls-cert/--tls-key: a separate TLS websockets listener (wss) beside a "
                           "plain --websockets page listener (Debian's Mosquitto cannot serve the page "
                           "itself over TLS to Chrome: deploy/mosquitto/README.md)")
    conf.add_argument("--tls-cert", type=Path, metavar="CERTFILE",
                      help="TLS for the --wss listener, or for the --websockets listener without --wss (PEM)")
    conf.add_argument("--tls-key", type=Path, metavar="KEYFILE", help="the certificate's private key (PEM)")


def _websockets_listener(args) -> tuple[list[str], str | None]:
    """(config lines, page URL) of --websockets (and --wss); ([], None) without it."""
    from edge_agent.net.broker import free_port
    from edge_agent.net.webpage import listener_lines, parse_listen, web_listener

    if not args.websockets:
        if args.tls_cert or args.tls_key or args.wss:
            raise ValueError("--wss and --tls-cert/--tls-key need a --websockets listener")
        return [], None
    if args.wss and not args.tls_cert:
        raise ValueError("--wss needs --tls-cert and --tls-key")
    bind, port = parse_listen(args.websockets)
    tls = {} if args.wss else {"certfile": args.tls_cert, "keyfile": args.tls_key}
    listener = web_listener(bind, port or free_port(bind), **tls)
    lines = listener_lines(listener)
    if args.wss:
        wss_bind, wss_port = parse_listen(args.wss)
        lines += listener_lines(web_listener(wss_bind, wss_port or free_port(wss_bind),
                                             certfile=args.tls_cert, keyfile=args.tls_key))
    shown = "127.0.0.1" if bind == "0.0.0.0" else bind
    return lines, f"{'https' if listener.tls else 'http'}://{shown}:{listener.port}/"


def _print_pairing_qr(args, settings, name: str, password: str) -> int:
    """After `pair add --qr/--qr-png`: the page URL with the credentials, as a QR code."""
    if not (args.qr or args.qr_png):
        return 0
    from edge_agent.net.webpage import DEFAULT_WEBSOCKETS_PORT, WebPageError, page_url, parse_listen
    from edge_agent.ops.qr import QrError, qr_text, write_qr_png

    if args.role != "client":
        print("edge-agent pair: --qr is for phones (--role client)", file=sys.stderr)
        return 2
    try:
        host, port = (parse_listen(args.web) if args.web
                      else (args.host or settings.mqtt.host, DEFAULT_WEBSOCKETS_PORT))
        url = page_url(host, port, username=name, password=password, prefix=settings.mqtt.prefix,
                       device=settings.device_id, tls=args.https, broker_url=args.broker_url)
        if args.qr:
            print(qr_text(url))
        print(f"  phone page: {url}")
        if args.qr_png:
            print(f"  QR code:    {write_qr_png(url, args.qr_png)}")
    except (WebPageError, QrError) as err:
        print(f"edge-agent pair: {err}", file=sys.stderr)
        return 2
    print("Scan it with the phone's camera; the page keeps the name and password on the phone only.",
          file=sys.stderr)
    return 0
