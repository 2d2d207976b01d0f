"""Board readings: SoC temperature, cgroup headroom, and the memory guard, incl. a narrowed /proc."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from edge_agent.ops import memguard, probes
from ops_helpers import REPO

MIB = 1024 * 1024


def make_zone(root, n, kind, millideg):
    zone = root / f"thermal_zone{n}"
    zone.mkdir(parents=True)
    (zone / "type").write_text(kind + "\n")
    (zone / "temp").write_text(f"{millideg}\n")


def test_soc_temp_prefers_the_cpu_zone(tmp_path):
    make_zone(tmp_path, 0, "acpitz", 30000)
    make_zone(tmp_path, 1, "cpu-thermal", 51234)
    assert probes.soc_temp_c(tmp_path) == 51.2


def test_soc_temp_falls_back_to_first_readable_zone_and_none_without_zones(tmp_path):
    assert probes.soc_temp_c(tmp_path / "missing") is None
    make_zone(tmp_path, 0, "battery", 41000)
    (tmp_path / "thermal_zone1").mkdir()
    (tmp_path / "thermal_zone1" / "temp").write_text("garbage")
    assert probes.soc_temp_c(tmp_path) == 41.0


def write_cgroup(root, rel, **files):
    node = root / rel
    node.mkdir(parents=True, exist_ok=True)
    for name, value in files.items():
        (node / name.replace("_", ".")).write_text(f"{value}\n")
    return node


def test_cgroup_headroom_is_the_tightest_limit_up_the_tree(tmp_path):
    root = tmp_path / "cg"
    write_cgroup(root, "system.slice", memory_current=900 * MIB, memory_high=1000 * MIB, memory_max="max")
    write_cgroup(root, "system.slice/edge-agent.service", memory_current=600 * MIB,
                 memory_high=1152 * MIB, memory_max=1472 * MIB)
    self_cg = tmp_path / "self_cgroup"
    self_cg.write_text("0::/system.slice/edge-agent.service\n")
    # own: 1152 - 600 = 552; parent: 1000 - 900 = 100
    assert probes.cgroup_headroom_mb(root, self_cg) == pytest.approx(100.0)


def test_cgroup_without_limits_or_v2_line_gives_none(tmp_path):
    root = tmp_path / "cg"
    write_cgroup(root, "user.slice", memory_current=10 * MIB, memory_high="max", memory_max="max")
    self_cg = tmp_path / "self_cgroup"
    self_cg.write_text("0::/user.slice\n")
    assert probes.cgroup_headroom_mb(root, self_cg) is None
    self_cg.write_text("4:memory:/user.slice\n")  # cgroup v1 only
    assert probes.cgroup_headroom_mb(root, self_cg) is None


def test_memory_guard_against_real_readings(monkeypatch):
    available = probes.mem_available_mb()
    assert available is not None and available > 0
    assert not memguard.low_memory(0)
    assert not memguard.low_memory(1)
    assert memguard.low_memory(10**9)  # no board has a petabyte free
    assert memguard.low_memory(300, available_mb=120.0)
    assert not memguard.low_memory(300, available_mb=301.0)
    with pytest.raises(memguard.LowMemoryError, match=r"^busy: low memory \(\d+ MB available, floor 1000000000 MB\)"):
        memguard.check_memory(10**9)
    memguard.check_memory(1)


def test_unreadable_memory_never_refuses(monkeypatch):
    monkeypatch.setattr(probes, "mem_available_mb", lambda: None)
    assert not memguard.low_memory(10**9)
    memguard.check_memory(10**9)


def test_readings_survive_a_proc_without_meminfo():
    """systemd's ProcSubset=pid hides /proc/meminfo: psutil fails there, the probes fall back."""
    unshare = shutil.which("unshare")
    assert unshare, "util-linux unshare is needed for this test"
    code = ("import json; from edge_agent.ops.metrics import Metrics; from edge_agent.ops import memguard; "
            "import os; s = Metrics().snapshot(queue_depth=0); "
            "print(json.dumps({'meminfo': os.path.exists('/proc/meminfo'), 'snap': s, "
            "'low': memguard.low_memory(10**9)}))")
    script = f"mount -t proc -o subset=pid proc /proc && exec {sys.executable} -c \"{code}\""
    proc = subprocess.run([unshare, "--mount", "--pid", "--fork", "--mount-proc", "sh", "-c", script],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["meminfo"] is False  # the narrowing really happened
    assert out["snap"]["mem_available_mb"] > 0 and out["snap"]["rss_mb"] > 0
    assert out["snap"]["cpu_load_1m"] is not None
    assert out["low"] is True
