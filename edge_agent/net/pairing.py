"""Pairing: broker users (one a device or client), the Mosquitto password file and ACL.

Usernames are the names. The registry, password file, ACL and each name's credentials live in
<data_dir>/pairing/. The ACL is rebuilt from the registry on every change, so it never drifts.
Rights (P = the topic prefix), each party writing only where its role needs:
  client C: write P/+/ask/C, P/+/confirm/C and P/+/ack/C; read P/reply/C/#, P/+/status and the
            agents' Home Assistant discovery configs H/sensor/+/+/config (H = homeassistant: a
            Home Assistant paired as a client sees every board).
  agent A (runs serve): read P/A/ask/+, P/A/confirm/+, P/A/ack/+, P/A/files/search/+, P/reply/A/#
            and P/+/status; write P/A/status, P/reply/C/# for each paired client C,
            P/+/files/search/A, P/reply/B/files/+/A for each other agent B, and its own discovery
            configs H/sensor/edge_agent_A/+/config. An agent in pool O (--pool) also reads P/O/ask/+
            (as a shared subscription) and P/O/ack/+, and reads and writes the claims P/O/claim/#.
  device D (a file peer): read P/D/files/search/+ and P/+/status; write P/D/status and
            P/reply/A/files/+/D for each agent A.
The last topic level of a request is the sender's own name, which the broker enforces; that is
how the agent knows whose reply namespace a response topic must lie in, and the last level of a
file-search reply names the device that sent it. Nobody else writes a client's replies.
"""
from __future__ import annotations

import json
import logging
import os
import re
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from edge_agent.net.hass import config_filter
from edge_agent.net.topics import RESERVED_NAMES, Topics

log = logging.getLogger(__name__)

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
PASSWORD_BYTES = 18  # random bytes in a generated password (24 url-safe characters)
Role = Literal["agent", "device", "client"]
ROLES: tuple[str, ...] = ("agent", "device", "client")


class PairingError(ValueError):
    """A bad name or role, an unknown name, or mosquitto_passwd failed."""


@dataclass(frozen=True)
class Member:
    """One paired name."""

    name: str
    """Broker username and topic name."""
    role: Role
    """agent (runs serve), device (a file peer: files serve) or client (asks)."""
    created_at: float
    """When it was paired, epoch seconds."""
    pool: str | None = None
    """The household pool an agent serves besides its own topics (net/pool.py), or None."""


@dataclass(frozen=True)
class PairingPaths:
    """Files of one pairing directory."""

    root: Path
    """<data_dir>/pairing"""

    @property
    def registry(self) -> Path:
        return self.root / "registry.json"

    @property
    def password_file(self) -> Path:
        return self.root / "passwd"

    @property
    def acl_file(self) -> Path:
        return self.root / "acl"

    def credentials(self, name: str) -> Path:
        return self.root / "credentials" / f"{name}.toml"


def check_name(name: str) -> str:
    if not NAME_PATTERN.match(name or ""):
        raise PairingError(f"bad name {name!r}: use 1-32 of a-z 0-9 _ - starting with a letter or digit")
    if name in RESERVED_NAMES:
        raise PairingError(f"{name!r} is reserved (it is a topic level)")
    return name


def load_members(paths: PairingPaths) -> dict[str, Member]:
    if not paths.registry.exists():
        return {}
    try:
        data = json.loads(paths.registry.read_text(encoding="utf-8"))
        return {n: Member(n, m["role"], float(m["created_at"]), m.get("pool")) for n, m in data.items()}
    except (ValueError, KeyError, TypeError) as err:
        raise PairingError(f"pairing registry {paths.registry} is damaged: {err}") from err


def _save_members(paths: PairingPaths, members: dict[str, Member]) -> None:
    data = {m.name: {"role": m.role, "created_at": m.created_at, **({"pool": m.pool} if m.pool else {})}
            for m in members.values()}
    tmp = paths.registry.with_suffix(".tmp")
    _write_private(tmp, json.dumps(data, indent=2, sort_keys=True) + "\n")
    tmp.replace(paths.registry)


def member_rules(member: Member, members: dict[str, Member], prefix: str) -> list[tuple[str, str]]:
    """(read|write, topic) rights of one member (see the module docstring)."""
    t = Topics(prefix)
    name = member.name
    agents = acting_agents(members)
    if member.role == "client":
        return [("write", t.ask("+", name)), ("write", t.confirm("+", name)), ("write", t.ack("+", name)),
                ("read", t.reply_namespace(name) + "/#"), ("read", t.status("+")),
                ("read", config_filter())]
    if member.name in agents:
        clients = sorted(m.name for m in members.values() if m.role == "client")
        return [("read", t.ask(name, "+")), ("read", t.confirm(name, "+")), ("read", t.ack(name, "+")),
                ("read", t.files_search(name, "+")), ("read", t.reply_namespace(name) + "/#"),
                ("read", t.status("+")), ("write", t.status(name)),
                *(("write", t.reply_namespace(c) + "/#") for c in clients),
                ("write", t.files_search("+", name)),
                *(("write", file_reply_topic(t, a, name)) for a in agents if a != name),
                ("write", config_filter(name)),
                *((("read", t.ask(member.pool, "+")), ("read", t.ack(member.pool, "+")),
                   ("readwrite", t.claims(member.pool))) if member.pool else ())]
    return [("read", t.files_search(name, "+")), ("read", t.status("+")), ("write", t.status(name)),
            *(("write", file_reply_topic(t, a, name)) for a in agents)]


def acting_agents(members: dict[str, Member]) -> list[str]:
    """The members with an agent's rights: the agents, or, in a registry written before the agent
    role existed (no agent in it), every device, as then; `pair add <agent> --role agent` ends that."""
    agents = sorted(m.name for m in members.values() if m.role == "agent")
    return agents or sorted(m.name for m in members.values() if m.role == "device")


def file_reply_topic(topics: Topics, agent: str, device: str) -> str:
    """Where `device` may answer `agent`'s file searches: P/reply/<agent>/files/+/<device>."""
    return topics.reply(agent, "files", "+", device)


def acl_text(members: dict[str, Member], prefix: str) -> str:
    """The Mosquitto ACL for these members (see the module docstring)."""
    out = ["# edge-agent ACL, generated by `edge-agent pair`; edits are overwritten.", ""]
    if not any(m.role == "agent" for m in members.values()) and any(m.role == "device" for m in members.values()):
        log.warning("no agent is paired: every device may answer clients; pair the agent with --role agent")
        out[1:1] = ["# No agent paired: every device has an agent's rights (pair the agent with --role agent).", ""]
    for m in sorted(members.values(), key=lambda m: m.name):
        out.append(f"# {m.role} {m.name}")
        out.append(f"user {m.name}")
        out.extend(f"topic {access} {topic}" for access, topic in member_rules(m, members, prefix))
        out.append("")
    return "\n".join(out)


def _passwd(args: list[str]) -> None:
    tool = shutil.which("mosquitto_passwd")
    if tool is None:
        raise PairingError("mosquitto_passwd not found: install mosquitto (it ships the tool)")
    proc = subprocess.run([tool, *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise PairingError(f"mosquitto_passwd failed: {(proc.stderr or proc.stdout).strip()}")


def credentials_toml(name: str, password: str, host: str, port: int, prefix: str, role: Role,
                     pool: str | None = None) -> str:
    """A config snippet that lets `name` connect (use it with --config)."""
    lines = [f"# edge-agent credentials for {role} {name!r}; keep this file private."]
    if role in ("agent", "device"):
        lines.append(f'device_id = "{name}"')
    lines += ["", "[mqtt]", f'host = "{host}"', f"port = {port}", f'username = "{name}"',
              f'password = "{password}"', f'prefix = "{prefix}"']
    if pool:
        lines.append(f'pool = "{pool}"')
    lines.append("")
    return "\n".join(lines)


def _write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read, also when it existed before with wider rights."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    # O_CREAT's mode applies only to a new file: narrow an old one before anything is written.
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def write_acl(paths: PairingPaths, prefix: str) -> None:
    paths.root.mkdir(parents=True, exist_ok=True)
    _write_private(paths.acl_file, acl_text(load_members(paths), prefix))


def pools(members: dict[str, Member]) -> set[str]:
    """The pool names in use."""
    return {m.pool for m in members.values() if m.pool}


def add_member(paths: PairingPaths, name: str, role: str, *, prefix: str, host: str, port: int,
               password: str | None = None, pool: str | None = None) -> tuple[Member, str]:
    """Create (or re-key) `name`, an agent optionally in `pool`; returns the member and its new password.
    A pool is addressed like a board (P/<pool>/ask/...), so pool and member names never coincide."""
    check_name(name)
    if role not in ROLES:
        raise PairingError(f"bad role {role!r}: use one of {', '.join(ROLES)}")
    known = load_members(paths)
    if name in pools(known):
        raise PairingError(f"{name!r} is the name of a pool: pick another name")
    if pool is not None:
        check_name(pool)
        if role != "agent":
            raise PairingError("only an agent (--role agent) can be in a pool")
        if pool in known or pool == name:
            raise PairingError(f"pool {pool!r} has the name of a paired member: pick another pool name")
    paths.root.mkdir(parents=True, exist_ok=True)
    os.chmod(paths.root, 0o700)
    paths.credentials(name).parent.mkdir(parents=True, exist_ok=True)
    os.chmod(paths.credentials(name).parent, 0o700)
    members = load_members(paths)
    password = password or secrets.token_urlsafe(PASSWORD_BYTES)
    create = [] if paths.password_file.exists() else ["-c"]
    _passwd([*create, "-b", str(paths.password_file), name, password])
    os.chmod(paths.password_file, 0o600)
    member = Member(name, role, time.time(), pool)  # type: ignore[arg-type]
    members[name] = member
    _save_members(paths, members)
    write_acl(paths, prefix)
    _write_private(paths.credentials(name), credentials_toml(name, password, host, port, prefix, member.role, pool))
    log.info("paired %s %s", role, name)
    return member, password


def remove_member(paths: PairingPaths, name: str, *, prefix: str) -> Member:
    """Delete `name` from the password file, ACL and registry."""
    members = load_members(paths)
    if name not in members:
        raise PairingError(f"{name!r} is not paired")
    _passwd(["-D", str(paths.password_file), name])
    member = members.pop(name)
    _save_members(paths, members)
    write_acl(paths, prefix)
    paths.credentials(name).unlink(missing_ok=True)
    log.info("unpaired %s", name)
    return member


def read_password(paths: PairingPaths, name: str) -> str | None:
    """The stored password of `name`, if this machine paired it."""
    import tomllib

    path = paths.credentials(name)
    if not path.exists():
        return None
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))["mqtt"]["password"]
    except (ValueError, KeyError) as err:
        raise PairingError(f"credentials file {path} is damaged: {err}") from err


def ensure_files(paths: PairingPaths, prefix: str) -> None:
    """Create an empty password file and the ACL if missing, so a broker can start before pairing."""
    paths.root.mkdir(parents=True, exist_ok=True)
    if not paths.password_file.exists():
        _write_private(paths.password_file, "")
    write_acl(paths, prefix)
