"""A local Mosquitto: render the config from deploy/mosquitto's template and run it.

Quickstart and the tests start their own broker on a free loopback port with the pairing's
password and ACL files, persistence on, in a directory of their own.
"""
from __future__ import annotations

import getpass
import logging
import shutil
import signal
import socket
import string
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from edge_agent.paths import PROJECT_ROOT

log = logging.getLogger(__name__)

TEMPLATE_PATH = PROJECT_ROOT / "deploy" / "mosquitto" / "mosquitto.conf.template"
MOSQUITTO_CANDIDATES = ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto")
READY_TIMEOUT_S = 10.0  # how long a starting broker may take to accept connections
STOP_TIMEOUT_S = 10.0  # how long a SIGTERMed broker may take to save and exit
AUTOSAVE_INTERVAL_S = 60  # seconds between persistence saves while running
CLIENT_EXPIRATION = "14d"  # sessions of clients away longer than this are dropped
MAX_QUEUED_MESSAGES = 10000  # per offline session
MAX_PACKET_SIZE = 1024 * 1024  # bytes; the agent's own, smaller, limit gives the clear error


class BrokerError(RuntimeError):
    """Mosquitto is missing, its config is bad, or it did not start."""


def find_mosquitto() -> str:
    """Path of the mosquitto binary."""
    found = shutil.which("mosquitto")
    if found:
        return found
    for candidate in MOSQUITTO_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    raise BrokerError("mosquitto not found: install it (apt-get install mosquitto mosquitto-clients)")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class TlsFiles:
    """PEM files for TLS listeners."""

    cafile: Path
    """The CA that signed the server certificate (clients set mqtt.tls_ca to the same file)."""
    certfile: Path
    """The server certificate; its name must match the host clients connect to."""
    keyfile: Path
    """The server's private key."""


def render_config(*, password_file: Path, acl_file: Path, persistence_dir: Path,
                  listeners: list[tuple[str, int]], log_dest: str = "stderr",
                  run_as: str | None = None, tls: TlsFiles | None = None,
                  template: Path = TEMPLATE_PATH, extra_listener_lines: Sequence[str] = ()) -> str:
    """The broker config text: listeners are (bind address, port) pairs, all TLS when `tls` is set.

    `extra_listener_lines` are listener blocks of their own, appended as given (the phone
    page's websockets listener: edge_agent.net.webpage.listener_lines).

    `run_as` is the user a root-started broker switches to (None keeps Mosquitto's default,
    "mosquitto", which then needs read access to the password and ACL files).
    """
    lines = []
    for bind, port in listeners:
        lines.append(f"listener {port} {bind}")
        if tls is not None:
            lines += [f"cafile {tls.cafile}", f"certfile {tls.certfile}", f"keyfile {tls.keyfile}",
                      "tls_version tlsv1.2"]
    try:
        text = template.read_text(encoding="utf-8")
    except OSError as err:
        raise BrokerError(f"broker config template unreadable: {template}: {err}") from err
    return string.Template(text).substitute(
        password_file=password_file, acl_file=acl_file, persistence_dir=persistence_dir,
        autosave_interval_s=AUTOSAVE_INTERVAL_S, client_expiration=CLIENT_EXPIRATION,
        max_queued_messages=MAX_QUEUED_MESSAGES, max_packet_size=MAX_PACKET_SIZE,
        log_dest=log_dest, listeners="\n".join([*lines, *extra_listener_lines]),
        user_line=f"user {run_as}" if run_as else "# user mosquitto (the default)")


def write_config(directory: Path, *, password_file: Path, acl_file: Path,
                 listeners: list[tuple[str, int]], log_dest: str = "stderr",
                 run_as: str | None = None, tls: TlsFiles | None = None,
                 extra_listener_lines: Sequence[str] = ()) -> Path:
    """Write <directory>/mosquitto.conf (persistence in <directory>/persistence); returns its path."""
    persistence = directory / "persistence"
    persistence.mkdir(parents=True, exist_ok=True)
    conf = directory / "mosquitto.conf"
    conf.write_text(render_config(password_file=password_file.resolve(), acl_file=acl_file.resolve(),
                                  persistence_dir=persistence.resolve(), listeners=listeners,
                                  log_dest=log_dest, run_as=run_as, tls=tls,
                                  extra_listener_lines=extra_listener_lines), encoding="utf-8")
    return conf


def _wait_listening(host: str, port: int, proc: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BrokerError(f"mosquitto exited with code {proc.returncode} at start-up")
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise BrokerError(f"mosquitto did not listen on {host}:{port} within {timeout_s:.0f} s")


@dataclass
class LocalBroker:
    """A Mosquitto process this program started; stop() ends it."""

    host: str
    """Loopback address it listens on."""
    port: int
    """Its port."""
    conf: Path
    """The generated config file."""
    log_path: Path
    """Where its stderr goes."""
    process: subprocess.Popen | None = field(default=None, repr=False)
    """The running process (None once stopped)."""

    def start(self) -> "LocalBroker":
        """Start (again) with the same config, port and persistence."""
        if self.process is not None and self.process.poll() is None:
            return self
        log_file = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child
        try:
            self.process = subprocess.Popen([find_mosquitto(), "-c", str(self.conf)],
                                            stdout=log_file, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL)
        finally:
            log_file.close()
        try:
            _wait_listening(self.host, self.port, self.process, READY_TIMEOUT_S)
        except BrokerError as err:
            tail = self.log_path.read_text(errors="replace")[-2000:]
            self.kill()
            raise BrokerError(f"{err}\n{tail}") from err
        log.info("mosquitto pid %s listening on %s:%s", self.process.pid, self.host, self.port)
        return self

    def stop(self) -> None:
        """SIGTERM (Mosquitto saves its persistence file) and wait."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def kill(self) -> None:
        """SIGKILL: nothing saved since the last autosave."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def restart(self) -> None:
        """A clean stop and a start on the same port with the same persistence."""
        self.stop()
        self.start()

    def reload(self) -> None:
        """SIGHUP: re-read the password and ACL files (after `pair add` / `pair rm`)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGHUP)

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def start_local_broker(directory: Path, *, password_file: Path, acl_file: Path,
                       port: int | None = None, host: str = "127.0.0.1", tls: TlsFiles | None = None) -> LocalBroker:
    """Write a config in `directory` and start Mosquitto on `port` (a free one if None)."""
    directory.mkdir(parents=True, exist_ok=True)
    port = port or free_port(host)
    # Our own broker runs as us, so it can read the private pairing files.
    conf = write_config(directory, password_file=password_file, acl_file=acl_file,
                        listeners=[(host, port)], run_as=getpass.getuser(), tls=tls)
    return LocalBroker(host, port, conf, directory / "mosquitto.log").start()
