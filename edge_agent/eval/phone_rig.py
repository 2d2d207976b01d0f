"""A phone-page rig: Mosquitto with the page's websockets listener, `serve` on the scripted model,
and headless Chromium (Debian's, driven by Playwright) opening the page from its pairing URL.

Used by `edge-agent bench phone` and tests/web. Everything lives in one directory of its own;
close() stops what it started.
"""
from __future__ import annotations

import getpass
import json
import shutil
import signal
import sqlite3
import time
from pathlib import Path

from edge_agent.eval.bench_mqtt import PREFIX, Rig
from edge_agent.net.broker import LocalBroker, free_port, write_config
from edge_agent.net.pairing import PairingPaths, add_member, read_password
from edge_agent.net.webpage import listener_lines, page_url, web_listener

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
PHONE_VIEWPORT = {"width": 360, "height": 780}  # a small phone, CSS pixels
PHONES = ("phone", "phone2")
AGENT_ONLINE_TIMEOUT_S = 60.0
LOOPBACK = "127.0.0.1"


class RigError(RuntimeError):
    """Chromium or Playwright is missing, or a part did not start."""


def find_chromium() -> str:
    for candidate in CHROMIUM_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    found = shutil.which("chromium")
    if found:
        return found
    raise RigError("chromium not found: apt-get install chromium (deploy/setup.sh does)")


class PhoneRig(Rig):
    """A broker with TCP + websockets listeners, an agent `pi`, and phones `phone` and `phone2`."""

    def __init__(self, root: Path, tls: tuple[Path, Path] | None = None, wss: bool = False, pool: str | None = None):
        """`tls` = (certfile, keyfile): the page and MQTT over https/wss on one listener, or with
        `wss` the page over plain http and MQTT on a second, TLS, listener (the Debian set-up);
        `pool`: the agent is paired into that household pool (start it with EDGE_AGENT_MQTT__POOL)."""
        self.root = root
        self.tls = tls
        self.wss_port = free_port(LOOPBACK) if wss else None
        self.pairing = PairingPaths(root / "pairing")
        add_member(self.pairing, "pi", "agent", prefix=PREFIX, host=LOOPBACK, port=0, pool=pool)
        for name in PHONES:
            add_member(self.pairing, name, "client", prefix=PREFIX, host=LOOPBACK, port=0)
        self.ws_port = free_port(LOOPBACK)
        port = free_port(LOOPBACK)
        broker_dir = root / "broker"
        broker_dir.mkdir(parents=True, exist_ok=True)
        files = {"certfile": tls[0], "keyfile": tls[1]} if tls else {}
        web = listener_lines(web_listener(LOOPBACK, self.ws_port, **({} if wss else files)))
        if self.wss_port:
            web += listener_lines(web_listener(LOOPBACK, self.wss_port, **files))
        conf = write_config(broker_dir, password_file=self.pairing.password_file,
                            acl_file=self.pairing.acl_file, listeners=[(LOOPBACK, port)],
                            run_as=getpass.getuser(), extra_listener_lines=web)
        self.broker: LocalBroker = LocalBroker(LOOPBACK, port, conf, broker_dir / "mosquitto.log").start()
        self.agent = None
        self._pw = None
        self.browser = None

    def url(self, name: str = "phone") -> str:
        """The pairing URL a QR code for `name` holds."""
        return page_url(LOOPBACK, self.ws_port, username=name, password=read_password(self.pairing, name) or "",
                        prefix=PREFIX, device="pi", tls=self.tls is not None and not self.wss_port,
                        broker_url=f"wss://{LOOPBACK}:{self.wss_port}/mqtt" if self.wss_port else None)

    def start_agent_online(self, delay_ms: float, **env: str) -> None:
        """`serve` on the scripted model (`env`: EDGE_AGENT_* overrides), waiting until it is online."""
        since = time.time()
        self.start_agent(delay_ms, **env)
        import paho.mqtt.client as paho

        got: list[dict] = []
        c = paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
        c.username_pw_set("phone", read_password(self.pairing, "phone"))
        c.on_message = lambda _c, _u, m: got.append(json.loads(m.payload))
        c.connect(LOOPBACK, self.broker.port)
        c.subscribe(f"{PREFIX}/pi/status", qos=1)
        c.loop_start()
        try:
            deadline = time.monotonic() + AGENT_ONLINE_TIMEOUT_S
            while not any(s.get("state") == "online" and s.get("ts", 0) >= since for s in got):
                if time.monotonic() > deadline or (self.agent is not None and self.agent.poll() is not None):
                    log = (self.root / "agent.log").read_text(errors="replace")[-2000:]
                    raise RigError(f"the agent did not come online:\n{log}")
                time.sleep(0.05)
        finally:
            c.loop_stop()
            c.disconnect()

    def launch_browser(self, *args: str):
        """Headless Chromium through Playwright (never Playwright's own browser downloads)."""
        try:
            from playwright.sync_api import sync_playwright
        except ImportError as err:
            raise RigError("playwright is missing: pip install playwright (no `playwright install`)") from err
        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.launch(executable_path=find_chromium(), args=["--no-sandbox", *args])
        return self.browser

    def new_phone(self, **options):
        """A fresh phone: its own storage, 360x780, touch."""
        return self.browser.new_context(viewport=PHONE_VIEWPORT, device_scale_factor=2, is_mobile=True,
                                        has_touch=True, **options)

    def notes(self) -> list[tuple[str, str]]:
        """(title, body) of every notebook row in the agent's store."""
        db = self.root / "data-pi" / "edge-agent.db"
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT title, body FROM notebook ORDER BY id").fetchall()

    def request_rows(self) -> list[dict]:
        """The agent's request log: sender, request_id, state, acked (the asker said it has the answer)."""
        db = self.root / "data-pi" / "edge-agent.db"
        with sqlite3.connect(db) as conn:
            conn.row_factory = sqlite3.Row
            return [dict(r) for r in conn.execute("SELECT * FROM requests ORDER BY created_at")]

    def close(self) -> None:
        try:
            if self.browser is not None:
                self.browser.close()
            if self._pw is not None:
                self._pw.stop()
        finally:
            self.kill_agent(signal.SIGTERM)
            self.broker.kill()
