"""The phone page (edge_agent/web/): where it lives, its pairing URL, its Mosquitto listener.

The page is static and served by the broker itself: a Mosquitto `protocol websockets` listener
with `http_dir` pointing at the package's web folder answers plain HTTP GETs with the files and
WebSocket upgrades with MQTT, so one process (one port) serves both. The phone's credentials
travel in the URL *fragment* (after `#`), which a browser never sends to a server; the page
stores them in its localStorage and forgets them on "unpair".
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
"""The page's files, shipped as package data."""
PAGE_FILES = ("index.html", "style.css", "app.js", "mqtt.min.js")
"""What a browser downloads to show the page (the licence is shipped, never loaded)."""
VENDORED_MQTT_JS = "mqtt.min.js"
MQTT_JS_VERSION = "4.2.8"
"""npm `mqtt` version of the vendored browser bundle (dist/mqtt.min.js). 4.2.8 has the smallest
MQTT v5-capable min bundle of the versions measured (web/VENDORED.md): 3.0.0 254,759 B,
4.0.0 186,195 B, 4.2.7 and 4.2.8 166,843 B, 4.3.8 235,812 B, 5.0.0 322,675 B, 5.16.0 342,341 B."""
MQTT_JS_SHA256 = "ad8f0e1ab945a1b1cff97b61450561d106d2a146519fef6a0fe4f261c3591ca8"
"""sha256 of the vendored file, byte for byte as published in mqtt-4.2.8.tgz."""
DEFAULT_WEBSOCKETS_PORT = 9001  # Mosquitto's customary MQTT-over-WebSockets port
PAGE_BYTES_GOAL = 150 * 1024  # the page with its library, uncompressed


class WebPageError(ValueError):
    """A bad listener spec, missing TLS files, or the page's files are missing."""


@dataclass(frozen=True)
class WebListener:
    """A Mosquitto websockets listener that also serves the page."""

    bind: str
    """Address it listens on (0.0.0.0 for the LAN)."""
    port: int
    """Its port: the page's URL and the MQTT-over-WebSockets endpoint share it."""
    http_dir: Path = WEB_DIR
    """The folder whose files it serves over plain HTTP."""
    certfile: Path | None = None
    """Server certificate (PEM) for https/wss; None = plain http/ws."""
    keyfile: Path | None = None
    """Its private key (PEM)."""

    @property
    def tls(self) -> bool:
        return self.certfile is not None


def web_dir() -> Path:
    """The page's folder; WebPageError if the package was installed without its data."""
    missing = [name for name in PAGE_FILES if not (WEB_DIR / name).is_file()]
    if missing:
        raise WebPageError(f"the phone page is incomplete in {WEB_DIR}: missing {', '.join(missing)}")
    return WEB_DIR


def parse_listen(spec: str) -> tuple[str, int]:
    """'HOST:PORT' -> (host, port); port 0 means "a free one", chosen by the caller."""
    host, _, port = spec.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        raise WebPageError(f"bad listener {spec!r}: use ADDR:PORT, e.g. 0.0.0.0:{DEFAULT_WEBSOCKETS_PORT}")
    return host, int(port)


def web_listener(bind: str, port: int, *, certfile: Path | None = None, keyfile: Path | None = None) -> WebListener:
    """A checked listener: TLS needs both files, and both must exist."""
    if (certfile is None) != (keyfile is None):
        raise WebPageError("TLS for the page needs both --tls-cert and --tls-key")
    for path in (certfile, keyfile):
        if path is not None and not path.is_file():
            raise WebPageError(f"TLS file not found: {path}")
    return WebListener(bind, port, web_dir(), certfile and certfile.resolve(), keyfile and keyfile.resolve())


def listener_lines(listener: WebListener) -> list[str]:
    """The mosquitto.conf lines of one page listener (needs Mosquitto >= 2.0 for http_dir)."""
    lines = [f"listener {listener.port} {listener.bind}", "protocol websockets",
             f"http_dir {listener.http_dir}"]
    if listener.tls:
        lines += [f"certfile {listener.certfile}", f"keyfile {listener.keyfile}", "tls_version tlsv1.2"]
    return lines


def page_url(host: str, port: int, *, username: str, password: str, prefix: str, device: str | None = None,
             tls: bool = False, broker_url: str | None = None) -> str:
    """The page's address with the credentials in its fragment (never sent to the server).

    Fragment keys: u username, p password, t topic prefix, d the device to ask, b the broker's
    ws:// or wss:// URL when it is not the listener the page came from (the page accepts only
    one on the page's own host).
    """
    fragment = {"u": username, "p": password, "t": prefix}
    if device:
        fragment["d"] = device
    if broker_url:
        fragment["b"] = check_broker_url(broker_url)
    scheme = "https" if tls else "http"
    netloc = f"[{host}]" if ":" in host else host
    return f"{scheme}://{netloc}:{port}/#{urlencode(fragment, quote_via=quote, safe='/:')}"


def check_broker_url(url: str) -> str:
    """A ws:// or wss:// URL with a host and port (the page's `b`)."""
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss") or not parts.hostname or not parts.port:
        raise WebPageError(f"bad broker URL {url!r}: use wss://HOST:PORT/mqtt (or ws://)")
    return url


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def page_bytes(directory: Path = WEB_DIR) -> dict[str, int]:
    """Bytes of each file the page loads, and their total (uncompressed, as served)."""
    sizes = {name: (directory / name).stat().st_size for name in PAGE_FILES}
    return {**sizes, "total": sum(sizes.values())}
