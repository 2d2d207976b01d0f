"""The device clock: its time zone and an injectable `now()` that tools receive in ToolContext."""
from __future__ import annotations

import logging
import os
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
"""Returns an aware datetime in the device's zone."""

LOCALTIME = Path("/etc/localtime")
ZONEINFO_MARK = "zoneinfo/"


class ClockError(ValueError):
    """A zone name or fixed time could not be understood."""


def _system_zone_name() -> str | None:
    tz_env = os.environ.get("TZ", "").lstrip(":")
    if tz_env and "/" in tz_env and not tz_env.startswith("/"):
        return tz_env
    try:  # /etc/localtime -> /usr/share/zoneinfo/Europe/London on most Linux systems
        target = str(LOCALTIME.resolve())
    except OSError:
        return None
    if ZONEINFO_MARK in target:
        return target.split(ZONEINFO_MARK, 1)[1]
    return None


def device_zone(name: str | None = None) -> tzinfo:
    """The IANA zone `name`, else the system's zone (a fixed offset if it has no IANA name)."""
    candidate = name or _system_zone_name()
    if candidate:
        try:
            return ZoneInfo(candidate)
        except (ZoneInfoNotFoundError, ValueError) as err:
            if name:
                raise ClockError(f"unknown time zone {name!r}") from err
            log.warning("system time zone %r not found; using the current UTC offset", candidate)
    return datetime.now().astimezone().tzinfo


def system_clock(zone: tzinfo) -> Clock:
    """Real time in `zone`."""
    return lambda: datetime.now(zone)


def fixed_clock(at: datetime | str, zone: tzinfo) -> Clock:
    """Always `at` (ISO text allowed); a naive time is taken as wall-clock time in `zone`."""
    if isinstance(at, str):
        try:
            at = datetime.fromisoformat(at)
        except ValueError as err:
            raise ClockError(f"not an ISO 8601 date-time: {at!r}") from err
    moment = at.replace(tzinfo=zone) if at.tzinfo is None else at.astimezone(zone)
    return lambda: moment
