"""Pairing: names, the password file through mosquitto_passwd, the ACL, and the CLI."""
from __future__ import annotations

import stat
import subprocess
import sys

import pytest
from netkit import PREFIX

from edge_agent.net.pairing import (
    Member,
    PairingError,
    PairingPaths,
    acl_text,
    add_member,
    load_members,
    read_password,
    remove_member,
)


def test_acl_rules_by_role():
    members = {"phone": Member("phone", "client", 0.0), "pi": Member("pi", "agent", 0.0),
               "laptop": Member("laptop", "device", 0.0)}
    blocks = {b.splitlines()[1]: b.splitlines()[2:] for b in acl_text(members, PREFIX).split("\n\n")[1:] if b}
    assert blocks["user phone"] == ["topic write edge/v1/+/ask/phone", "topic write edge/v1/+/confirm/phone",
                                    "topic write edge/v1/+/ack/phone",
                                    "topic read edge/v1/reply/phone/#", "topic read edge/v1/+/status",
                                    "topic read homeassistant/sensor/+/+/config"]
    assert blocks["user pi"] == ["topic read edge/v1/pi/ask/+", "topic read edge/v1/pi/confirm/+",
                                 "topic read edge/v1/pi/ack/+",
                                 "topic read edge/v1/pi/files/search/+", "topic read edge/v1/reply/pi/#",
                                 "topic read edge/v1/+/status", "topic write edge/v1/pi/status",
                                 "topic write edge/v1/reply/phone/#", "topic write edge/v1/+/files/search/pi",
                                 "topic write homeassistant/sensor/edge_agent_pi/+/config"]
    # A file peer answers only an agent's searches, on a topic that names itself.
    assert blocks["user laptop"] == ["topic read edge/v1/laptop/files/search/+", "topic read edge/v1/+/status",
                                     "topic write edge/v1/laptop/status",
                                     "topic write edge/v1/reply/pi/files/+/laptop"]


def test_a_registry_without_an_agent_keeps_its_devices_answering_until_the_agent_is_paired():
    legacy = {"phone": Member("phone", "client", 0.0), "pi": Member("pi", "device", 0.0)}
    text = acl_text(legacy, PREFIX)
    assert "No agent paired" in text and "topic write edge/v1/reply/phone/#" in text
    paired = dict(legacy, laptop=Member("laptop", "device", 0.0), pi=Member("pi", "agent", 0.0))
    laptop = acl_text(paired, PREFIX).split("user laptop\n")[1].split("\n\n")[0]
    assert "No agent paired" not in acl_text(paired, PREFIX) and "reply/phone" not in laptop


def test_credential_files_are_private_even_when_they_existed(tmp_path):
    paths = PairingPaths(tmp_path / "pairing")
    for path, text in ((paths.credentials("phone"), "old\n"), (paths.acl_file, "old\n"), (paths.registry, "{}\n")):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o644)
    add_member(paths, "phone", "client", prefix=PREFIX, host="h", port=1)
    for path in (paths.credentials("phone"), paths.acl_file, paths.registry, paths.password_file):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert "old" not in paths.credentials("phone").read_text()


def test_add_and_remove_keep_password_file_acl_and_registry_in_step(tmp_path):
    paths = PairingPaths(tmp_path / "pairing")
    _, pw = add_member(paths, "kitchen", "device", prefix=PREFIX, host="10.0.0.2", port=1883)
    add_member(paths, "phone", "client", prefix=PREFIX, host="10.0.0.2", port=1883)
    assert len(pw) >= 24 and read_password(paths, "kitchen") == pw
    assert set(load_members(paths)) == {"kitchen", "phone"}
    users = [line.split(":")[0] for line in paths.password_file.read_text().splitlines()]
    assert users == ["kitchen", "phone"] and pw not in paths.password_file.read_text()  # hashed
    for private in (paths.password_file, paths.acl_file, paths.credentials("kitchen")):
        assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert 'device_id = "kitchen"' in paths.credentials("kitchen").read_text()
    remove_member(paths, "phone", prefix=PREFIX)
    assert "phone" not in paths.password_file.read_text() and "user phone" not in paths.acl_file.read_text()
    assert not paths.credentials("phone").exists()
    with pytest.raises(PairingError, match="not paired"):
        remove_member(paths, "phone", prefix=PREFIX)


@pytest.mark.parametrize("name", ["", "Phone", "-x", "a/b", "x" * 33, "a+b", "reply", "ask", "confirm", "ack",
                                  "files", "search", "status", "pill", "event", "events"])
def test_bad_names_are_refused(tmp_path, name):
    with pytest.raises(PairingError):
        add_member(PairingPaths(tmp_path), name, "client", prefix=PREFIX, host="h", port=1)


def test_pair_cli(tmp_path):
    env_args = [sys.executable, "-m", "edge_agent.cli", "--data-dir", str(tmp_path)]

    def run(*args):
        return subprocess.run([*env_args, *args], capture_output=True, text=True, timeout=60)

    added = run("pair", "add", "phone", "--role", "client", "--host", "192.168.1.5")
    assert added.returncode == 0, added.stderr
    password = added.stdout.split("password: ")[1].split()[0]
    assert read_password(PairingPaths(tmp_path / "pairing"), "phone") == password
    assert 'host = "192.168.1.5"' in (tmp_path / "pairing" / "credentials" / "phone.toml").read_text()
    listed = run("pair", "list")
    assert listed.returncode == 0 and listed.stdout.split()[:2] == ["phone", "client"]
    assert run("pair", "add", "Bad Name", "--role", "client").returncode == 2
    # This machine's own device (device_id, default "pi") is its agent; other devices are file peers.
    assert run("pair", "add", "pi", "--role", "device").stdout.startswith("paired agent pi")
    assert run("pair", "add", "laptop", "--role", "device").stdout.startswith("paired device laptop")
    conf = run("pair", "broker-config", "--listen", "127.0.0.1:18830", "--listen", "0.0.0.0:1883")
    text = (tmp_path / "broker" / "mosquitto.conf").read_text()
    assert conf.returncode == 0 and "listener 18830 127.0.0.1" in text and "listener 1883 0.0.0.0" in text
    assert "allow_anonymous false" in text and "persistence true" in text
    assert f"acl_file {tmp_path / 'pairing' / 'acl'}" in text
    removed = run("pair", "rm", "phone")
    assert removed.returncode == 0 and run("pair", "rm", "phone").returncode == 2
