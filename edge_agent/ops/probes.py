"""Readings of this process and this board: RSS, available memory, CPU load, SoC temperature.

psutil is the first source. When /proc is narrowed (systemd's ProcSubset=pid hides /proc/meminfo)
the readings fall back to sysinfo(2), so monitoring degrades instead of crashing. Available
memory is also capped by the headroom left under this process's cgroup v2 limits (MemoryHigh /
MemoryMax), because under systemd that limit, not the board's RAM, is where the OOM killer waits.
"""
from __future__ import annotations

import ctypes
import logging
import os
from pathlib import Path

import psutil

log = logging.getLogger(__name__)

MIB = 1024 * 1024  # bytes in a MiB; every *_mb figure here is in MiB
THERMAL_DIR = Path("/sys/class/thermal")
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")
# Thermal zone types that are the SoC on common boards (Pi: cpu-thermal; Rockchip: soc-thermal).
SOC_ZONE_HINTS = ("cpu", "soc", "x86_pkg")
LOAD_SHIFT = 65536.0  # sysinfo(2) reports load averages as fixed point with 16 fraction bits


class _SysInfo(ctypes.Structure):
    """struct sysinfo from <sys/sysinfo.h> (Linux, LP64 and ILP32 alike: longs and padding)."""

    _fields_ = [
        ("uptime", ctypes.c_long), ("loads", ctypes.c_ulong * 3), ("totalram", ctypes.c_ulong),
        ("freeram", ctypes.c_ulong), ("sharedram", ctypes.c_ulong), ("bufferram", ctypes.c_ulong),
        ("totalswap", ctypes.c_ulong), ("freeswap", ctypes.c_ulong), ("procs", ctypes.c_ushort),
        ("pad", ctypes.c_ushort), ("totalhigh", ctypes.c_ulong), ("freehigh", ctypes.c_ulong),
        ("mem_unit", ctypes.c_uint), ("_f", ctypes.c_char * 8),
    ]


def _sysinfo() -> _SysInfo | None:
    info = _SysInfo()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.sysinfo(ctypes.byref(info)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return info


def rss_mb() -> float:
    """Resident set size of this process, MiB."""
    return psutil.Process().memory_info().rss / MIB


def system_available_mb() -> float | None:
    """The kernel's MemAvailable, MiB; free + buffers from sysinfo(2) when /proc/meminfo is hidden."""
    try:
        return psutil.virtual_memory().available / MIB
    except OSError as err:
        log.debug("psutil.virtual_memory failed (%s); using sysinfo(2)", err)
    info = _sysinfo()
    if info is None:
        return None
    # Without MemAvailable the page cache cannot be counted, so this errs on the low side.
    return (info.freeram + info.bufferram) * info.mem_unit / MIB


def total_mb() -> float | None:
    """Physical memory of the board, MiB."""
    try:
        return psutil.virtual_memory().total / MIB
    except OSError:
        info = _sysinfo()
        return None if info is None else info.totalram * info.mem_unit / MIB


def _read_limit(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return None if text == "max" or not text.isdigit() else int(text)


def cgroup_headroom_mb(cgroup_root: Path = CGROUP_ROOT, self_cgroup: Path = PROC_SELF_CGROUP) -> float | None:
    """Smallest (limit - usage) over this process's cgroup v2 and its ancestors, MiB; None if unlimited."""
    try:
        lines = self_cgroup.read_text().splitlines()
    except OSError:
        return None
    rel = next((line[3:] for line in lines if line.startswith("0::")), None)
    if rel is None:
        return None
    best: float | None = None
    node = cgroup_root / rel.lstrip("/")
    while True:
        usage = _read_limit(node / "memory.current")
        limits = [v for v in (_read_limit(node / "memory.high"), _read_limit(node / "memory.max")) if v]
        if usage is not None and limits:
            room = (min(limits) - usage) / MIB
            best = room if best is None else min(best, room)
        if node == cgroup_root or cgroup_root not in node.parents:
            break
        node = node.parent
    return best


def mem_available_mb() -> float | None:
    """Memory this process can still take, MiB: the board's available memory capped by its cgroup."""
    values = [v for v in (system_available_mb(), cgroup_headroom_mb()) if v is not None]
    return max(0.0, min(values)) if values else None


def cpu_load_1m() -> float | None:
    """The 1-minute load average."""
    try:
        return os.getloadavg()[0]
    except OSError:
        info = _sysinfo()
        return None if info is None else info.loads[0] / LOAD_SHIFT


def soc_temp_c(thermal_dir: Path = THERMAL_DIR) -> float | None:
    """SoC temperature in °C from the kernel's thermal zones; None where the board has none."""
    zones = sorted(thermal_dir.glob("thermal_zone*")) if thermal_dir.is_dir() else []
    readings: list[tuple[bool, float]] = []
    for zone in zones:
        try:
            millideg = int((zone / "temp").read_text().strip())
            kind = (zone / "type").read_text().strip().lower() if (zone / "type").exists() else ""
        except (OSError, ValueError):
            continue
        readings.append((any(h in kind for h in SOC_ZONE_HINTS), millideg / 1000.0))
    if not readings:
        return None
    preferred = [t for is_soc, t in readings if is_soc]
    return round((preferred or [readings[0][1]])[0], 1)
