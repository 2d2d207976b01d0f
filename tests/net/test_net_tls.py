"""The optional TLS listener (deploy/mosquitto/README.md): a round trip over TLS with a private CA."""
from __future__ import annotations

import subprocess

import pytest
from netkit import FakeAsker, collect

from edge_agent.config import MqttSettings, Settings
from edge_agent.net.broker import TlsFiles, start_local_broker
from edge_agent.net.mqtt_types import MqttError
from edge_agent.net.rpc import AgentClient


def _openssl(*args: str, cwd) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def tls_files(tmp_path) -> TlsFiles:
    d = tmp_path / "tls"
    d.mkdir()
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
             "-subj", "/CN=edge-agent test CA", cwd=d)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
             "-subj", "/CN=localhost", cwd=d)
    (d / "ext.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "server.crt", "-days", "2", "-extfile", "ext.cnf", cwd=d)
    return TlsFiles(d / "ca.crt", d / "server.crt", d / "server.key")


async def test_round_trip_over_tls(tmp_path, pairing, tls_files, start_agent):
    broker = start_local_broker(tmp_path / "tls-broker", password_file=pairing.password_file,
                                acl_file=pairing.acl_file, tls=tls_files)
    try:
        def settings(name: str, ca) -> Settings:
            mqtt = MqttSettings(host="127.0.0.1", port=broker.port, username=name, password=f"{name}-secret",
                                tls_ca=ca)
            (tmp_path / name).mkdir(exist_ok=True)
            return Settings(data_dir=tmp_path / name, device_id="pi", mqtt=mqtt)

        await start_agent(FakeAsker(), settings("pi", tls_files.cafile))
        async with AgentClient(settings("phone", tls_files.cafile)) as phone:
            events = await collect(phone, "pi", "over TLS?")
        assert events[-1].type == "answer" and events[-1].text == "answer to: over TLS?"
        with pytest.raises(MqttError):  # plain MQTT to a TLS listener goes nowhere
            await AgentClient(settings("alice", None)).start()
    finally:
        broker.kill()
