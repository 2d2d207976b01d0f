"""Home Assistant discovery over a real Mosquitto: a subscriber that reads the agent's retained
configs as Home Assistant does (its MQTT sensor schema, its Jinja value templates over the status
JSON) finds every sensor of one device, sees it go unavailable when the agent is killed (the Last
Will), and sees it removed by `pair rm`; a client may read the configs but not forge them."""
from __future__ import annotations

import json
import queue
import signal
import time

import jinja2
import paho.mqtt.client as mqtt

from netkit import collect

from edge_agent.eval.bench_mqtt import PREFIX, Rig
from edge_agent.net.hass import SENSORS, clear_discovery, config_topic, node_id
from edge_agent.net.pairing import read_password
from edge_agent.net.rpc import AgentClient

# Home Assistant's MQTT sensor discovery schema (integrations/sensor.mqtt, full key names): the keys
# it accepts, the sensor device classes used here with the units HA allows for them, state classes.
HA_SENSOR_KEYS = {"name", "unique_id", "object_id", "state_topic", "value_template", "availability_topic",
                  "availability_template", "payload_available", "payload_not_available", "device", "origin",
                  "unit_of_measurement", "device_class", "state_class", "icon", "expire_after", "force_update",
                  "json_attributes_topic", "json_attributes_template", "entity_category", "enabled_by_default",
                  "qos", "suggested_display_precision", "availability", "availability_mode", "encoding",
                  "last_reset_value_template", "options", "platform", "default_entity_id"}
HA_DEVICE_KEYS = {"identifiers", "connections", "name", "manufacturer", "model", "model_id", "sw_version",
                  "hw_version", "serial_number", "suggested_area", "configuration_url", "via_device"}
HA_UNITS = {"duration": {"d", "h", "min", "s", "ms", "µs"},
            "data_size": {"bit", "kbit", "Mbit", "Gbit", "B", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"}}
HA_STATE_CLASSES = {"measurement", "total", "total_increasing"}


class HassSubscriber:
    """Reads discovery configs and the status topic the way Home Assistant's MQTT integration does."""

    def __init__(self, settings):
        self.messages: queue.Queue = queue.Queue()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="ha-like", protocol=mqtt.MQTTv5)
        self.client.username_pw_set(settings.mqtt.username, settings.mqtt.password)
        self.client.on_message = lambda c, u, msg: self.messages.put((msg.topic, msg.payload, msg.retain))
        self.client.connect(settings.mqtt.host, settings.mqtt.port)
        self.client.subscribe([("homeassistant/#", 1), (f"{PREFIX}/+/status", 1)])
        self.client.loop_start()
        self.configs: dict[str, bytes] = {}
        self.status: dict | None = None

    def wait(self, done, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            left = deadline - time.monotonic()
            assert left > 0, (sorted(self.configs), self.status)
            try:
                topic, payload, _ = self.messages.get(timeout=min(left, 0.1))
            except queue.Empty:
                continue
            if topic.startswith("homeassistant/"):
                self.configs[topic] = payload
            else:
                self.status = json.loads(payload)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def render(template: str, status: dict) -> str:
    return jinja2.Environment().from_string(template).render(value_json=status).strip()


def check_schema(config: dict) -> None:
    assert set(config) <= HA_SENSOR_KEYS, set(config) - HA_SENSOR_KEYS
    assert set(config["device"]) <= HA_DEVICE_KEYS and config["device"]["identifiers"]
    assert isinstance(config["state_topic"], str) and isinstance(config["unique_id"], str)
    if "device_class" in config:
        assert config["unit_of_measurement"] in HA_UNITS[config["device_class"]]
    if "state_class" in config:
        assert config["state_class"] in HA_STATE_CLASSES


async def test_home_assistant_finds_the_board_sees_it_die_and_sees_it_removed(tmp_path):
    rig = Rig(tmp_path)
    ha = HassSubscriber(rig.settings("bench"))  # a Home Assistant paired as a client
    try:
        rig.start_agent(0.0)
        wanted = {config_topic("pi", s) for s in SENSORS}
        ha.wait(lambda: wanted <= set(ha.configs) and (ha.status or {}).get("state") == "online", 60)
        async with AgentClient(rig.settings("bench")) as client:  # one answer, so latency has a value
            assert (await collect(client, "pi", "What is the date today?", timeout_s=60))[-1].type == "answer"
        ha.wait(lambda: (ha.status or {}).get("requests", 0) >= 1, 30)
        devices = set()
        for sensor in SENSORS:
            config = json.loads(ha.configs[config_topic("pi", sensor)])
            check_schema(config)
            assert config["state_topic"] == config["availability_topic"] == f"{PREFIX}/pi/status"
            assert render(config["availability_template"], ha.status) == config["payload_available"]
            value = render(config["value_template"], ha.status)
            assert value and value != "None", (sensor.key, value)
            if "state_class" in config:
                float(value)  # a number HA can keep statistics of
            devices.add(json.dumps(config["device"], sort_keys=True))
        assert len(devices) == 1 and json.loads(devices.pop())["identifiers"] == [node_id("pi")]
        assert len({json.loads(ha.configs[t])["unique_id"] for t in wanted}) == len(SENSORS)

        # A paired client may read the configs but not forge one (the broker drops the publish).
        forged = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="forger", protocol=mqtt.MQTTv5)
        forged.username_pw_set("bench", rig.settings("bench").mqtt.password)
        forged.connect(rig.broker.host, rig.broker.port)
        forged.loop_start()
        forged.publish(config_topic("pi", "status"), b'{"name": "hijacked"}', qos=1, retain=True).wait_for_publish(5)
        forged.disconnect()
        forged.loop_stop()

        rig.kill_agent(signal.SIGKILL)  # no clean stop: only the Last Will can tell HA
        ha.wait(lambda: (ha.status or {}).get("state") == "offline", 30)
        config = json.loads(ha.configs[config_topic("pi", "status")])
        assert config["name"] == "Status"  # the forgery never arrived
        assert render(config["availability_template"], ha.status) == config["payload_not_available"]

        # `pair rm pi` sends the empty retained configs as pi: HA deletes the entities.
        assert clear_discovery(rig.broker.host, rig.broker.port, "pi", read_password(rig.pairing, "pi")) is None
        ha.wait(lambda: all(ha.configs.get(t) == b"" for t in wanted), 30)
        later = HassSubscriber(rig.settings("bench"))  # a Home Assistant started afterwards finds nothing
        try:
            later.wait(lambda: later.status is not None, 10)  # the retained status arrives, no config
            stop = time.monotonic() + 1.0  # and nothing else retained within a second
            later.wait(lambda: time.monotonic() > stop, 5)
            assert not [t for t, p in later.configs.items() if p], later.configs
        finally:
            later.close()
    finally:
        ha.close()
        rig.close()


def test_the_acl_grants_exactly_the_discovery_topics(tmp_path):
    from edge_agent.net.pairing import Member, member_rules

    members = {"pi": Member("pi", "agent", 0.0), "den": Member("den", "agent", 0.0),
               "phone": Member("phone", "client", 0.0), "laptop": Member("laptop", "device", 0.0)}
    rules = {name: member_rules(m, members, PREFIX) for name, m in members.items()}
    hass = {name: [r for r in rs if r[1].startswith("homeassistant/")] for name, rs in rules.items()}
    assert hass["pi"] == [("write", "homeassistant/sensor/edge_agent_pi/+/config")]
    assert hass["den"] == [("write", "homeassistant/sensor/edge_agent_den/+/config")]
    assert hass["phone"] == [("read", "homeassistant/sensor/+/+/config")]
    assert hass["laptop"] == []  # a file peer publishes no sensors
