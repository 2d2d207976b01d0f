"""The Mosquitto drop-in install.sh writes loads beside a Debian-style main mosquitto.conf."""
from __future__ import annotations

import socket
import subprocess
import time

import pytest

from edge_agent.net.broker import render_config
from edge_agent.ops.mosquitto_dropin import render_dropin
from ops_helpers import MOSQUITTO, free_port

START_S = 3.0  # a config error makes Mosquitto exit within this


def debian_main_conf(directory, dropin_dir):
    """Like bookworm's /etc/mosquitto/mosquitto.conf: persistence and logging set, conf.d included."""
    (directory / "persist").mkdir()
    main = directory / "mosquitto.conf"
    main.write_text(f"user root\npersistence true\npersistence_location {directory}/persist/\n"
                    f"log_dest stderr\ninclude_dir {dropin_dir}\n")
    return main


def start(main):
    proc = subprocess.Popen([MOSQUITTO, "-c", str(main)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return proc


def wait_listening(proc, port):
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def pairing_files(data_dir):
    pairing = data_dir / "pairing"
    pairing.mkdir(parents=True)
    subprocess.run(["mosquitto_passwd", "-c", "-b", str(pairing / "passwd"), "phone", "pw"], check=True,
                   capture_output=True)
    (pairing / "acl").write_text("user phone\ntopic readwrite edge/v1/#\n")


@pytest.mark.broker
def test_dropin_loads_and_authenticates(tmp_path):
    data_dir = tmp_path / "state"
    pairing_files(data_dir)
    port = free_port()
    conf_d = tmp_path / "conf.d"
    conf_d.mkdir()
    text = render_dropin(data_dir, port=port)
    assert "\npersistence_location" not in text and "listener " + str(port) + " 127.0.0.1" in text
    assert f"password_file {data_dir}/pairing/passwd" in text and "allow_anonymous false" in text
    (conf_d / "edge-agent.conf").write_text(text)
    proc = start(debian_main_conf(tmp_path, conf_d))
    try:
        assert wait_listening(proc, port), proc.stdout.read().decode() if proc.poll() is not None else "no listen"
        ok = subprocess.run(["mosquitto_pub", "-p", str(port), "-u", "phone", "-P", "pw", "-t", "edge/v1/x",
                             "-m", "hi"], capture_output=True, text=True, timeout=10)
        anon = subprocess.run(["mosquitto_pub", "-p", str(port), "-t", "edge/v1/x", "-m", "hi"],
                              capture_output=True, text=True, timeout=10)
    finally:
        proc.terminate()
        proc.wait(10)
    assert ok.returncode == 0, ok.stderr
    assert anon.returncode != 0  # anonymous clients are refused


def test_the_plain_template_would_clash_with_debians_main_file(tmp_path):
    """Why the drop-in drops persistence_location: Mosquitto refuses it twice."""
    data_dir = tmp_path / "state"
    pairing_files(data_dir)
    conf_d = tmp_path / "conf.d"
    conf_d.mkdir()
    port = free_port()
    (conf_d / "edge-agent.conf").write_text(render_config(
        password_file=data_dir / "pairing" / "passwd", acl_file=data_dir / "pairing" / "acl",
        persistence_dir=tmp_path / "persist2", listeners=[("127.0.0.1", port)]))
    proc = start(debian_main_conf(tmp_path, conf_d))
    try:
        out, _ = proc.communicate(timeout=START_S * 3)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    assert proc.returncode != 0 and b"Duplicate persistence_location" in out
