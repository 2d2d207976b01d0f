"""Phone-page fixtures: a PhoneRig (Mosquitto with the page's websockets listener, `serve` on the
scripted model, headless Debian chromium through Playwright), one per test, closed after it.
"""
from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/web/" in str(item.fspath) and "rig" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.broker)


@pytest.fixture
def rig(tmp_path):
    """A rig with the agent not yet started (each test picks the scripted latency) and a browser."""
    from edge_agent.eval.phone_rig import PhoneRig

    r = PhoneRig(tmp_path / "rig")
    try:
        r.launch_browser()
        yield r
    finally:
        r.close()
