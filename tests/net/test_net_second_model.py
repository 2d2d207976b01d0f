"""The L1-L2-L3 route over a real Mosquitto on the second real model (SmolLM2-135M-Instruct, its
own ChatML template): a remember question is previewed, confirmed from the phone, and the note is
in the store afterwards; every prompt the service made went through the model's template."""
from __future__ import annotations

import pytest
from netkit import collect

from edge_agent.app import build_assistant
from edge_agent.config import HarnessSettings
from edge_agent.net.rpc import AgentClient
from edge_agent.store.api import Store
from edge_agent.store.traces import load_traces

pytestmark = pytest.mark.real_model


async def test_remember_is_previewed_confirmed_and_saved_over_mqtt(settings_for, start_agent, second_model):
    settings = settings_for("pi", harness=HarnessSettings(deadline_s=120))
    async with build_assistant(settings, model=second_model) as assistant:
        await start_agent(assistant, settings)
        async with AgentClient(settings_for("phone")) as phone:
            events = await collect(phone, "pi", "Remember that my bike lock code is 4417", request_id="smol-1",
                                   timeout_s=180)
            prompt = events[-1]
            assert prompt.type == "needs_confirmation", events
            assert "bike lock code is 4417" in prompt.preview
            done = await collect(phone, "pi", prompt.action_id, kind="confirm", request_id="smol-2", timeout_s=60)
        rows = await load_traces(assistant.harness.db, "phone.smol-1")  # request ids are the sender's
    assert done[-1].type == "answer" and done[-1].exit_kind == "complete", done
    assert rows[0].role == "planner" and rows[0].prompt.startswith("<|im_start|>system\n")
    async with Store.open(settings.db_path) as store:
        saved = [f"{n.title} {n.body}" for n in await store.notebook.recent(10)]
    assert any("bike lock code is 4417" in text for text in saved), saved
