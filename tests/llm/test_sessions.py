"""SessionKeeper: snapshot policy and token trails, with a fake llama context."""
import pytest

from edge_agent.llm import sessions
from edge_agent.llm.sessions import SessionKeeper, Snapshot
from edge_agent.modelfile.sizing import MAX_KEPT_SESSIONS


class FakeLlm:
    def __init__(self):
        self.n_tokens = 0
        self.saved, self.loaded = [], []


@pytest.fixture(autouse=True)
def fake_state(monkeypatch):
    def take(llm):
        llm.saved.append(llm.n_tokens)
        return Snapshot(f"state@{llm.n_tokens}".encode(), [0] * llm.n_tokens)

    def restore(llm, snap):
        llm.loaded.append(snap.data.decode())

    monkeypatch.setattr(sessions, "take_snapshot", take)
    monkeypatch.setattr(sessions, "restore_snapshot", restore)


def test_switching_snapshots_and_restores():
    llm, keeper = FakeLlm(), SessionKeeper()
    keeper.switch(llm, "l2:a")
    llm.n_tokens = 500
    keeper.switch(llm, None)  # an L3 session takes the context: L2 is saved
    assert llm.saved == [500]
    keeper.switch(llm, "l2:a")  # and restored on resume
    assert llm.loaded == ["state@500"] and keeper.stats.saves == keeper.stats.loads == 1


def test_snapshots_never_depend_on_measured_rates():
    # A policy that follows the clock computes the same prompt's KV cells in different batches
    # from one run to the next; an enabled keeper always snapshots a paused session.
    llm, keeper = FakeLlm(), SessionKeeper()
    keeper.observe_prefill(1000, 1.0)  # prefill measured as nearly free
    keeper.switch(llm, "l2:a")
    llm.n_tokens = 500
    keeper.switch(llm, None)
    assert llm.saved == [500]
    keeper.observe_prefill(1000, 40_000.0)  # and as slow as on a Pi: the same
    keeper.switch(llm, "l2:a")
    keeper.switch(llm, None)
    assert llm.saved == [500, 500]


def test_at_most_max_kept_sessions_are_kept():
    llm, keeper = FakeLlm(), SessionKeeper()
    for i in range(MAX_KEPT_SESSIONS + 2):
        keeper.switch(llm, f"s{i}")
        llm.n_tokens = 100 + i
    keeper.switch(llm, None)
    assert len(keeper._snapshots) == MAX_KEPT_SESSIONS


def test_disabled_keeper_never_snapshots_and_forget_drops_trails():
    llm, keeper = FakeLlm(), SessionKeeper(enabled=False)
    keeper.switch(llm, "a")
    keeper.switch(llm, None)
    keeper.record("a", "hello", [1, 2])
    assert llm.saved == [] and keeper.trail("a").tokens == [1, 2]
    keeper.forget("a")
    assert keeper.trail("a") is None and keeper.trail(None) is None
