"""edge-agent: an on-device assistant with an L1-L2-L3 tool harness over MQTT."""

__version__ = "0.1.0"
