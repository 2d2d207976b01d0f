"""The systemd units: required directives, and the `systemd-analyze security` exposure score."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from ops_helpers import REPO

SYSTEMD_ANALYZE = "/usr/bin/systemd-analyze"
MAX_EXPOSURE = 2.0  # the bar for edge-agent.service
UNITS = ("edge-agent.service", "edge-agent-files.service")
REQUIRED = {
    "Type": "notify", "NotifyAccess": "main", "Restart": "on-failure", "NoNewPrivileges": "yes",
    "CapabilityBoundingSet": "", "ProtectSystem": "strict", "PrivateTmp": "yes", "PrivateDevices": "yes",
    "RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6", "SystemCallArchitectures": "native",
    "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes", "ProtectKernelLogs": "yes",
    "ProtectControlGroups": "yes", "ProtectClock": "yes", "ProtectHostname": "yes", "RestrictNamespaces": "yes",
    "RestrictRealtime": "yes", "RestrictSUIDSGID": "yes", "LockPersonality": "yes", "ProtectProc": "invisible",
    "MemoryDenyWriteExecute": "yes", "StateDirectory": "edge-agent", "UMask": "0077", "IPAddressDeny": "any",
}


def directives(path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        key, _, value = line.partition("=")
        out.setdefault(key.strip(), []).append(value.strip())
    return out


def exposure(unit_path, tmp_path) -> float:
    copy = tmp_path / unit_path.name
    shutil.copyfile(unit_path, copy)
    proc = subprocess.run([SYSTEMD_ANALYZE, "security", "--offline=yes", "--no-pager", str(copy)],
                          capture_output=True, text=True, timeout=60)
    match = re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?)", proc.stdout)
    assert match, f"no score in systemd-analyze output (rc {proc.returncode}): {proc.stdout[-500:]} {proc.stderr}"
    return float(match.group(1))


@pytest.mark.parametrize("unit", UNITS)
def test_unit_has_the_required_directives(unit):
    d = directives(REPO / "systemd" / unit)
    for key, value in REQUIRED.items():
        assert value in d.get(key, []), f"{unit}: {key}={value} missing"
    assert "@system-service" in d["SystemCallFilter"]
    assert d["ExecStart"][0].startswith("/opt/edge-agent/bin/edge-agent --config /etc/edge-agent/config.toml")
    for key in ("WatchdogSec", "MemoryHigh", "MemoryMax", "User"):
        assert d.get(key), f"{unit}: {key} missing"


def test_main_unit_has_full_isolation():
    d = directives(REPO / "systemd" / "edge-agent.service")
    assert d["ProtectHome"] == ["yes"] and d["PrivateUsers"] == ["yes"]
    assert d["ExecStart"][0].endswith(" serve")


@pytest.mark.parametrize("unit", UNITS)
def test_security_exposure_is_at_most_2(unit, tmp_path):
    score = exposure(REPO / "systemd" / unit, tmp_path)
    print(f"{unit}: systemd-analyze security exposure {score}")
    assert score <= MAX_EXPOSURE


def test_score_parser_sees_an_unhardened_unit(tmp_path):
    bare = tmp_path / "bare" / "edge-agent.service"
    bare.parent.mkdir()
    bare.write_text("[Unit]\nDescription=bare\n[Service]\nType=notify\nExecStart=/bin/true\n")
    assert exposure(bare, tmp_path) > 8.0
