"""The page's files, its pairing URL, its Mosquitto listener and QR codes (no browser)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from edge_agent.net.webpage import (
    MQTT_JS_SHA256,
    MQTT_JS_VERSION,
    PAGE_FILES,
    WEB_DIR,
    WebPageError,
    listener_lines,
    page_bytes,
    page_url,
    parse_listen,
    sha256_file,
    web_listener,
)
from edge_agent.ops.qr import qr_text, write_qr_png
from edge_agent.paths import PROJECT_ROOT


def test_vendored_mqtt_js_is_the_published_file():
    assert sha256_file(WEB_DIR / "mqtt.min.js") == MQTT_JS_SHA256
    vendored = (WEB_DIR / "VENDORED.md").read_text()
    assert MQTT_JS_VERSION in vendored and MQTT_JS_SHA256 in vendored
    assert "MIT License" in (WEB_DIR / "mqtt.LICENSE.md").read_text()


def test_page_loads_only_its_own_files():
    html = (WEB_DIR / "index.html").read_text()
    refs = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sorted(r for r in refs if r != "data:,") == sorted(n for n in PAGE_FILES if n != "index.html")
    for name in ("index.html", "app.js", "style.css"):
        text = (WEB_DIR / name).read_text()
        assert not re.search(r"https?://(?!\S*\$\{)", text), f"{name} reaches outside the broker"
    # Nothing from the network is parsed as HTML.
    assert "innerHTML" not in (WEB_DIR / "app.js").read_text()


def test_page_bytes_counts_every_file_the_browser_loads():
    sizes = page_bytes()
    assert set(sizes) == {*PAGE_FILES, "total"}
    assert sizes["total"] == sum((WEB_DIR / n).stat().st_size for n in PAGE_FILES)
    assert sizes["mqtt.min.js"] == 166843


def test_pyproject_ships_the_page_as_package_data():
    data = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
    globs = data["tool"]["setuptools"]["package-data"]["edge_agent"]
    shipped = {p.name for g in globs for p in (PROJECT_ROOT / "edge_agent").glob(g)}
    assert set(PAGE_FILES) | {"mqtt.LICENSE.md"} <= shipped


def test_page_url_keeps_credentials_in_the_fragment():
    url = page_url("pi.local", 9001, username="phone", password="a&b=c#d/e", prefix="edge/v1", device="pi")
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path, parts.query) == ("http", "pi.local:9001", "/", "")
    frag = parse_qs(parts.fragment)
    assert frag == {"u": ["phone"], "p": ["a&b=c#d/e"], "t": ["edge/v1"], "d": ["pi"]}
    assert page_url("::1", 9443, username="x", password="y", prefix="p", tls=True).startswith("https://[::1]:9443/#")


def test_listener_lines_serve_the_page_with_optional_tls(tmp_path):
    plain = listener_lines(web_listener("0.0.0.0", 9001))
    assert plain == ["listener 9001 0.0.0.0", "protocol websockets", f"http_dir {WEB_DIR}"]
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_text("x")
    key.write_text("y")
    tls = listener_lines(web_listener("0.0.0.0", 9443, certfile=cert, keyfile=key))
    assert f"certfile {cert}" in tls and f"keyfile {key}" in tls and "tls_version tlsv1.2" in tls
    with pytest.raises(WebPageError, match="both"):
        web_listener("0.0.0.0", 9443, certfile=cert)
    with pytest.raises(WebPageError, match="not found"):
        web_listener("0.0.0.0", 9443, certfile=cert, keyfile=tmp_path / "missing.pem")
    for bad in ("9001", "host:", "host:99999", ":9001"):
        with pytest.raises(WebPageError):
            parse_listen(bad)


def _zbar(path: Path) -> str:
    zbarimg = shutil.which("zbarimg")
    assert zbarimg, "zbarimg missing: apt-get install zbar-tools (deploy/setup.sh does)"
    out = subprocess.run([zbarimg, "-q", "--raw", str(path)], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_qr_png_and_terminal_code_hold_the_url(tmp_path):
    url = page_url("192.168.1.20", 9001, username="phone", password="Zx9-_abcDEF123456789abcd", prefix="edge/v1",
                   device="pi")
    assert _zbar(write_qr_png(url, tmp_path / "qr.png")) == url
    # The terminal code, redrawn as a picture cell by cell, scans to the same URL.
    assert _zbar(_terminal_to_png(qr_text(url), tmp_path / "terminal.png")) == url


HALF_BLOCKS = {"█": (1, 1), "▀": (1, 0), "▄": (0, 1), "\xa0": (0, 0), " ": (0, 0)}
"""Character -> (top, bottom) module drawn light (1)."""


def _terminal_to_png(text: str, path: Path, scale: int = 6) -> Path:
    import png

    rows = []
    for line in text.splitlines():
        top, bottom = zip(*(HALF_BLOCKS[c] for c in line))
        rows += [top, bottom]
    pixels = [[255 * v for v in row for _ in range(scale)] for row in rows for _ in range(scale)]
    with open(path, "wb") as fh:
        png.Writer(len(pixels[0]), len(pixels), greyscale=True).write(fh, pixels)
    return path


def _cli(args, data_dir):
    return subprocess.run([sys.executable, "-m", "edge_agent.cli", "--data-dir", str(data_dir), *args],
                          capture_output=True, text=True, timeout=60)


def test_cli_pair_add_qr_and_broker_config_websockets(tmp_path):
    data = tmp_path / "data"
    out = _cli(["pair", "add", "phone", "--role", "client", "--qr", "--qr-png", str(tmp_path / "qr.png"),
                "--web", "pi.local:9001"], data)
    assert out.returncode == 0, out.stderr
    url = re.search(r"phone page: (\S+)", out.stdout).group(1)
    password = re.search(r"password: (\S+)", out.stdout).group(1)
    assert url == page_url("pi.local", 9001, username="phone", password=password, prefix="edge/v1", device="pi")
    assert "█" in out.stdout and _zbar(tmp_path / "qr.png") == url
    refused = _cli(["pair", "add", "laptop", "--role", "device", "--qr"], data)
    assert refused.returncode == 2 and "--role client" in refused.stderr

    conf = _cli(["pair", "broker-config", "--out", str(tmp_path / "b"), "--listen", "127.0.0.1:1883",
                 "--websockets", "0.0.0.0:9001"], data)
    assert conf.returncode == 0, conf.stderr
    text = (tmp_path / "b" / "mosquitto.conf").read_text()
    assert "listener 1883 127.0.0.1\n" in text
    assert f"listener 9001 0.0.0.0\nprotocol websockets\nhttp_dir {WEB_DIR}" in text
    assert "phone page: http://127.0.0.1:9001/" in conf.stderr
    bad = _cli(["pair", "broker-config", "--out", str(tmp_path / "c"), "--tls-cert", "x.pem"], data)
    assert bad.returncode == 2 and "--websockets" in bad.stderr


@pytest.mark.broker
def test_debian_dropin_with_websockets_serves_the_page(tmp_path):
    """The drop-in install.sh --lan writes, loaded by a Debian-style main config, serves index.html."""
    import time
    import urllib.request

    from edge_agent.net.broker import find_mosquitto, free_port
    from edge_agent.ops.mosquitto_dropin import render_dropin

    pairing = tmp_path / "state" / "pairing"
    pairing.mkdir(parents=True)
    subprocess.run(["mosquitto_passwd", "-c", "-b", str(pairing / "passwd"), "phone", "pw"], check=True)
    (pairing / "acl").write_text("user phone\ntopic read edge/v1/reply/phone/#\n")
    port, ws_port = free_port(), free_port()
    conf_d = tmp_path / "conf.d"
    conf_d.mkdir()
    (conf_d / "edge-agent.conf").write_text(render_dropin(tmp_path / "state", port=port, websockets_port=ws_port))
    (tmp_path / "persist").mkdir()
    main = tmp_path / "mosquitto.conf"
    main.write_text(f"user root\npersistence true\npersistence_location {tmp_path}/persist/\n"
                    f"log_dest stderr\ninclude_dir {conf_d}\n")
    proc = subprocess.Popen([find_mosquitto(), "-c", str(main)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 5
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ws_port}/", timeout=1) as resp:
                    body = resp.read()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read().decode()
                time.sleep(0.05)
        assert body == (WEB_DIR / "index.html").read_bytes()
        with urllib.request.urlopen(f"http://127.0.0.1:{ws_port}/mqtt.min.js", timeout=2) as resp:
            assert sha256_file(WEB_DIR / "mqtt.min.js") == __import__("hashlib").sha256(resp.read()).hexdigest()
    finally:
        proc.terminate()
        proc.wait(10)


def test_cli_broker_config_wss_beside_a_plain_page_listener(tmp_path):
    data = tmp_path / "data"
    cert, key = tmp_path / "page.crt", tmp_path / "page.key"
    cert.write_text("x")
    key.write_text("y")
    out = _cli(["pair", "broker-config", "--out", str(tmp_path / "b"), "--websockets", "0.0.0.0:9001",
                "--wss", "0.0.0.0:9443", "--tls-cert", str(cert), "--tls-key", str(key)], data)
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "b" / "mosquitto.conf").read_text()
    plain, tls = text.split("listener 9001 0.0.0.0\n")[1].split("listener 9443 0.0.0.0\n")
    assert "certfile" not in plain and f"certfile {cert}" in tls and f"keyfile {key}" in tls
    assert "protocol websockets" in tls
    refused = _cli(["pair", "broker-config", "--out", str(tmp_path / "c"), "--websockets", "0.0.0.0:9001",
                    "--wss", "0.0.0.0:9443"], data)
    assert refused.returncode == 2 and "--tls-cert" in refused.stderr
    qr = _cli(["pair", "add", "phone", "--role", "client", "--qr", "--web", "pi.local:9001",
               "--broker-url", "wss://pi.local:9443/mqtt"], data)
    assert qr.returncode == 0 and "&b=wss://pi.local:9443/mqtt" in qr.stdout
    bad = _cli(["pair", "qr", "phone", "--broker-url", "http://pi.local/"], data)
    assert bad.returncode == 2 and "bad broker URL" in bad.stderr
