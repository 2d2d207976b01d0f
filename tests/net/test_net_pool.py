"""An agent pool (net/pool.py): the claim contest, the pool's broker rights, two real agents that
share one queue and survive a SIGKILL, and the asker's repeat of a request nobody took."""
from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys

import pytest

from edge_agent.eval.bench_pool import AGENTS, CLIENT, POOL, PoolRig, judge_executions, load_run
from edge_agent.net import rpc
from edge_agent.net.bridge import MqttBridge
from edge_agent.net.events import AskRequest
from edge_agent.net.mqtt_types import ConnectOptions, Message
from edge_agent.net.pairing import PairingError, PairingPaths, acl_text, add_member, load_members
from edge_agent.net.pool import Claim, ClaimBook, seq_floor
from edge_agent.net.rpc import AgentClient
from edge_agent.net.topics import Topics

NOT_AUTHORIZED = 135
T = Topics("edge/v1")


class FakeBridge:
    """Records what the claim book publishes."""

    def __init__(self):
        self.published: list[tuple[str, bytes, bool]] = []

    def publish(self, topic, payload, *, qos=1, retain=False, expiry_s=None, **_):
        self.published.append((topic, payload.encode() if isinstance(payload, str) else payload, retain))
        fut = asyncio.get_event_loop().create_future()
        fut.set_result(None)
        return fut


def _claim(board: str, epoch: int = 1, state: str = "running", rid: str = "r1", **kw) -> Claim:
    return Claim(board=board, epoch=epoch, state=state, sender="alice", request_id=rid, kind="ask",
                 payload='{"request_id": "%s", "question": "q"}' % rid, response_topic=f"edge/v1/reply/alice/{rid}",
                 **kw)


def _raw(topic: str, payload: bytes) -> Message:
    return Message(topic, payload, qos=1, retain=False, dup=False, response_topic=None, correlation=None, mid=0,
                   generation=0)


def _msg(claim: Claim | None, rid: str = "r1", topic: str | None = None) -> Message:
    return _raw(topic or T.claim(POOL, "alice", rid), claim.model_dump_json().encode() if claim else b"")


async def test_the_first_claim_of_an_epoch_wins_and_the_winner_restores_it():
    bridge = FakeBridge()
    book = ClaimBook(bridge, T, POOL, "pi")  # type: ignore[arg-type]
    contest = asyncio.create_task(book.contest(_claim("pi"), timeout_s=5))
    await asyncio.sleep(0)
    assert bridge.published and bridge.published[0][2] is True  # retained
    book.on_message(_msg(_claim("pi")))  # ours comes back first
    assert await contest is True
    book.on_message(_msg(_claim("pi2")))  # a loser's claim lands after ours: ours is published again
    assert book.owner(("alice", "r1")).board == "pi"
    assert json.loads(bridge.published[-1][1])["board"] == "pi"
    book.on_message(_msg(_claim("pi2", epoch=2)))  # a takeover one epoch up replaces it
    assert book.owner(("alice", "r1")).board == "pi2"
    book.on_message(_msg(_claim("pi", epoch=1, state="done", final_event="{}")))  # stale: ignored
    assert book.owner(("alice", "r1")).epoch == 2


async def test_a_claim_that_lands_second_loses():
    book = ClaimBook(FakeBridge(), T, POOL, "pi2")  # type: ignore[arg-type]
    contest = asyncio.create_task(book.contest(_claim("pi2"), timeout_s=5))
    await asyncio.sleep(0)
    book.on_message(_msg(_claim("pi")))  # someone else's first
    book.on_message(_msg(_claim("pi2")))
    assert await contest is False
    assert book.owner(("alice", "r1")).board == "pi"
    # Contesting an epoch somebody already holds loses at once, without publishing.
    assert await book.contest(_claim("pi2"), timeout_s=5) is False


async def test_bad_and_foreign_claims_are_ignored_and_done_updates_are_kept():
    book = ClaimBook(FakeBridge(), T, POOL, "pi")  # type: ignore[arg-type]
    assert book.on_message(_raw("edge/v1/pi/status", b"{}")) is False
    assert book.on_message(_msg(_claim("pi"), topic=T.claim("other-pool", "alice", "r1"))) is False
    assert book.on_message(_raw(T.claim(POOL, "alice", "r1"), b"{not json")) is True
    assert book.on_message(_msg(_claim("pi", rid="r2"), rid="r1")) is True  # payload names another request
    assert book.owner(("alice", "r1")) is None
    book.on_message(_msg(_claim("pi2")))
    book.on_message(_msg(_claim("pi2", state="done", final_event='{"type": "answer"}')))
    assert book.owner(("alice", "r1")).state == "done"
    book.on_message(_msg(None))  # cleared by hand
    assert book.owner(("alice", "r1")) is None


def test_a_takeover_numbers_its_events_above_the_earlier_runs():
    from edge_agent.net.service import MAX_RUNS
    from edge_agent.store.requests import RUN_SEQ_BLOCK

    assert seq_floor(1) == 0
    assert seq_floor(2) > (MAX_RUNS + 1) * RUN_SEQ_BLOCK


def test_judge_counts_overlap_across_boards_and_ends_a_killed_run_at_the_kill():
    e = lambda ev, rid, ts, pid: {"event": ev, "request_id": rid, "base": rid, "ts": ts, "pid": pid}  # noqa: E731
    takeover = [e("start", "a", 1, 10), e("start", "a", 3, 20), e("done", "a", 4, 20)]
    # Board 10 died at t=2 inside the run: board 20's run is a rerun, not a duplicate.
    assert judge_executions(takeover, {"a": 5}, {10: 2.0}) == {"duplicates_executed": 0, "reruns_after_kill": 1,
                                                               "executed": 1}
    # Had board 10 lived, the two runs would overlap: a duplicate.
    assert judge_executions(takeover, {"a": 5}, {})["duplicates_executed"] == 1
    # Any run after the asker had the answer is a duplicate.
    assert judge_executions(takeover, {"a": 2.5}, {10: 2.0})["duplicates_executed"] == 1


def test_pool_names_never_collide_with_member_names(tmp_path):
    paths = PairingPaths(tmp_path / "pairing")
    kw = {"prefix": "edge/v1", "host": "127.0.0.1", "port": 1883}
    add_member(paths, "pi", "agent", pool="home", **kw)
    with pytest.raises(PairingError, match="name of a pool"):
        add_member(paths, "home", "client", **kw)
    with pytest.raises(PairingError, match="name of a paired member"):
        add_member(paths, "pi2", "agent", pool="pi", **kw)
    with pytest.raises(PairingError, match="only an agent"):
        add_member(paths, "phone", "client", pool="home", **kw)
    with pytest.raises(PairingError, match="reserved"):
        add_member(paths, "claim", "client", **kw)
    add_member(paths, "pi2", "agent", pool="home", **kw)
    assert load_members(paths)["pi2"].pool == "home"
    assert 'pool = "home"' in paths.credentials("pi2").read_text()
    acl = acl_text(load_members(paths), "edge/v1")
    assert "topic read edge/v1/home/ask/+" in acl and "topic readwrite edge/v1/home/claim/#" in acl


@pytest.fixture
def pool_rig(tmp_path):
    rig = PoolRig(tmp_path)
    add_member(rig.pairing, "outsider", "agent", prefix="edge/v1", host="127.0.0.1", port=0)  # not in the pool
    rig.broker.reload()
    yield rig
    rig.close()


async def _connect(rig: PoolRig, name: str) -> MqttBridge:
    from edge_agent.net.pairing import read_password

    opts = ConnectOptions(rig.broker.host, rig.broker.port, f"test-{name}", name,
                          read_password(rig.pairing, name), clean_start=True, fail_fast=True)
    return await MqttBridge(opts).start()


async def _nothing_arrives(bridge: MqttBridge, wait_s: float = 0.3) -> None:
    with pytest.raises(asyncio.TimeoutError):
        await bridge.next_message(wait_s)


async def test_only_pool_agents_take_pool_questions_and_write_claims(pool_rig):
    pi, client = await _connect(pool_rig, "pi"), await _connect(pool_rig, CLIENT)
    try:
        await pi.subscribe(T.claims(POOL))
        await pi.subscribe(f"$share/{POOL}/{T.ask(POOL, '+')}")
        # A client's forged claim is refused and never reaches the members.
        forged = _claim("pi2", state="done", final_event='{"type": "answer", "answer": "forged"}')
        assert (await client.publish(T.claim(POOL, CLIENT, "r1"), forged.model_dump_json(), retain=True)).value \
            == NOT_AUTHORIZED
        await _nothing_arrives(pi)
        # A client may ask the pool, as itself only.
        assert (await client.publish(T.ask(POOL, "alice"), b"{}")).value == NOT_AUTHORIZED
        assert (await client.publish(T.ask(POOL, CLIENT), b"{}")).value == 0
        assert (await pi.next_message(5)).topic == T.ask(POOL, CLIENT)
        # A member's claim reaches the others.
        pi2 = await _connect(pool_rig, "pi2")
        try:
            await pi2.subscribe(T.claims(POOL))
            assert (await pi.publish(T.claim(POOL, CLIENT, "r2"), _claim("pi").model_dump_json(), retain=True)).value == 0
            assert (await pi2.next_message(5)).topic == T.claim(POOL, CLIENT, "r2")
        finally:
            await pi2.close()
    finally:
        await pi.close()
        await client.close()


async def test_no_client_or_outside_agent_reads_the_pools_questions_or_claims(pool_rig):
    await asyncio.sleep(0.5)  # the reload that paired the outsider
    client, pi, outsider = await _connect(pool_rig, CLIENT), await _connect(pool_rig, "pi"), \
        await _connect(pool_rig, "outsider")
    try:
        for spy in (client, outsider):
            await spy.subscribe(T.claims(POOL))
            await spy.subscribe(f"$share/{POOL}/{T.ask(POOL, '+')}")
            await spy.subscribe(T.ask(POOL, "+"))
        assert (await pi.publish(T.claim(POOL, CLIENT, "r3"), _claim("pi").model_dump_json(), retain=True)).value == 0
        assert (await client.publish(T.ask(POOL, CLIENT), b"{}")).value in (0, 16)  # 16: no matching subscribers
        await _nothing_arrives(client)
        await _nothing_arrives(outsider)
        # And the outsider may not write a claim either.
        assert (await outsider.publish(T.claim(POOL, CLIENT, "r4"), _claim("outsider").model_dump_json(),
                                       retain=True)).value == NOT_AUTHORIZED
    finally:
        for bridge in (client, pi, outsider):
            await bridge.close()


async def test_two_agents_share_the_pool_and_one_dies_mid_request(pool_rig):
    result = await load_run(pool_rig, list(AGENTS), "t-", 80, 0.025, kill=True)
    assert result["killed_mid_request"] is True
    assert result["requests_lost"] == 0 and result["client_errors"] == 0
    assert result["duplicates_executed"] == 0 and result["executions_missing"] == 0
    assert result["answers_undelivered"] == 0
    assert result["taken_over"] >= 1  # the request pi was running went to pi2
    assert result["served"]["pi"] > 0 and result["served"]["pi2"] > 0


async def test_the_pool_status_names_every_member(pool_rig):
    import time

    since = time.time()
    for name in AGENTS:
        pool_rig.start_agent(name)
    async with AgentClient(pool_rig.settings(CLIENT)) as client:
        from edge_agent.eval.bench_pool import wait_online

        await wait_online(client, list(AGENTS), since)
        for _ in range(100):  # the first statuses may predate the other member's
            members = [client.device_status[n].get("pool_members") for n in AGENTS]
            if all(m == {"pi": "online", "pi2": "online"} for m in members):
                break
            await asyncio.sleep(0.1)
        for name in AGENTS:
            assert client.device_status[name]["pool"] == POOL
            assert client.device_status[name]["pool_members"] == {"pi": "online", "pi2": "online"}
        pool_rig.stop_agent("pi", signal.SIGKILL)  # its Last Will still names the pool: shown offline
        for _ in range(100):
            if client.device_status["pi2"].get("pool_members") == {"pi": "offline", "pi2": "online"}:
                break
            await asyncio.sleep(0.1)
        assert client.device_status["pi"]["state"] == "offline" and client.device_status["pi"]["pool"] == POOL
        assert client.device_status["pi2"]["pool_members"] == {"pi": "offline", "pi2": "online"}


async def test_a_request_nobody_took_is_sent_again(pool_rig, monkeypatch):
    """The asker repeats a request that got no event at all: the member that had it may have died."""
    monkeypatch.setattr(rpc, "RESEND_SILENT_S", 0.3)
    agent = await _connect(pool_rig, "pi")
    try:
        await agent.subscribe(T.ask(POOL, "+"))
        async with AgentClient(pool_rig.settings(CLIENT)) as client:
            request = AskRequest(request_id="again1", question="anyone?")
            await client.send(POOL, "ask", request, expiry_s=30)
            events = client.events("again1", 10)
            waiter = asyncio.create_task(events.__anext__())
            first = await agent.next_message(5)
            second = await agent.next_message(5)  # nobody answered the first: sent again, same id
            assert json.loads(first.payload)["request_id"] == json.loads(second.payload)["request_id"] == "again1"
            answer = {"type": "answer", "request_id": "again1", "seq": 1, "text": "here", "exit_kind": "complete"}
            await agent.publish(second.response_topic, json.dumps(answer), correlation=second.correlation)
            event = await asyncio.wait_for(waiter, 5)
            assert event.type == "answer" and event.text == "here"
    finally:
        await agent.close()


def test_a_remember_asked_of_the_pool_is_confirmed_with_the_board_that_previewed_it(pool_rig):
    """`ask --device home` prints the confirm command for the member that answered, and that works."""
    import time

    from netkit import settings_env

    since = time.time()
    for name in AGENTS:
        pool_rig.start_agent(name)

    async def online() -> None:
        async with AgentClient(pool_rig.settings(CLIENT)) as client:
            from edge_agent.eval.bench_pool import wait_online

            await wait_online(client, list(AGENTS), since)

    asyncio.run(online())
    env = dict(settings_env(pool_rig.settings(CLIENT)), EDGE_AGENT_DEVICE_ID=POOL)  # the client asks the pool
    asked = subprocess.run([sys.executable, "-m", "edge_agent.cli", "ask", "--device", POOL,
                            "Remember that my bike lock code is 4417"], env=env, capture_output=True, text=True,
                           timeout=120)
    assert asked.returncode == 0, asked.stderr
    line = next(x for x in asked.stdout.splitlines() if x.startswith("To confirm:"))
    board = line.split("--device ")[1].strip()
    assert board in AGENTS  # the member that previewed it, never the pool
    confirmed = subprocess.run([sys.executable, "-m", "edge_agent.cli", *line.split("edge-agent ")[1].split()],
                               env=env, capture_output=True, text=True, timeout=120)
    assert confirmed.returncode == 0, confirmed.stderr
    notes = subprocess.run([sys.executable, "-m", "edge_agent.cli", "--data-dir",
                            str(pool_rig.settings(board).data_dir), "notebook", "list"],
                           capture_output=True, text=True, timeout=60)
    assert "4417" in notes.stdout


async def _reply_events(bridge: MqttBridge, n: int, timeout_s: float = 10) -> list[dict]:
    return [json.loads((await bridge.next_message(timeout_s)).payload) for _ in range(n)]


async def test_a_claim_left_by_a_board_that_never_returns_is_taken_over(pool_rig, start_agent):
    """pi2 claimed a question and vanished (no status at all): pi runs it from the claim, and its
    events number above anything pi2 may have sent."""
    from netkit import FakeAsker

    pi2, client = await _connect(pool_rig, "pi2"), await _connect(pool_rig, CLIENT)
    try:
        await client.subscribe(T.reply_namespace(CLIENT) + "/#")
        held = _claim("pi2", rid="left1").model_copy(update={
            "sender": CLIENT, "payload": AskRequest(request_id="left1", question="still there?").model_dump_json(),
            "response_topic": T.reply(CLIENT, "left1")})
        assert (await pi2.publish(T.claim(POOL, CLIENT, "left1"), held.model_dump_json(), retain=True)).value in (0, 16)
        asker = FakeAsker()
        await start_agent(asker, pool_rig.settings("pi"))
        accepted, *rest = await _reply_events(client, 3)  # accepted, a pill, the answer
        assert accepted["type"] == "accepted" and accepted["device"] == "pi" and accepted["seq"] == seq_floor(2)
        assert rest[-1]["type"] == "answer" and rest[-1]["text"] == "answer to: still there?"
        assert all(e["seq"] > seq_floor(2) for e in rest)
        assert len(asker.calls) == 1
        await pi2.subscribe(T.claim(POOL, CLIENT, "left1"))
        for _ in range(10):  # the retained claim now holds pi's answer
            done = json.loads((await pi2.next_message(5)).payload)
            if done["state"] == "done":
                break
        assert done["board"] == "pi" and done["epoch"] == 2 and json.loads(done["final_event"])["type"] == "answer"
    finally:
        await pi2.close()
        await client.close()


async def test_a_question_that_keeps_killing_its_boards_gets_an_error_not_another_run(pool_rig, start_agent):
    from netkit import FakeAsker

    from edge_agent.net.service import POOL_MAX_EPOCHS

    pi2, client = await _connect(pool_rig, "pi2"), await _connect(pool_rig, CLIENT)
    try:
        await client.subscribe(T.reply_namespace(CLIENT) + "/#")
        held = _claim("pi2", epoch=POOL_MAX_EPOCHS, rid="poison1").model_copy(update={
            "sender": CLIENT, "payload": AskRequest(request_id="poison1", question="boom").model_dump_json(),
            "response_topic": T.reply(CLIENT, "poison1")})
        assert (await pi2.publish(T.claim(POOL, CLIENT, "poison1"), held.model_dump_json(), retain=True)).value in (0, 16)
        asker = FakeAsker()
        await start_agent(asker, pool_rig.settings("pi"))
        (error,) = await _reply_events(client, 1)
        assert error["type"] == "error" and error["code"] == "interrupted"
        assert asker.calls == []
    finally:
        await pi2.close()
        await client.close()


async def test_a_member_whose_request_was_taken_over_while_it_ran_does_not_answer_it(pool_rig, start_agent):
    """pi runs a pool question; meanwhile pi2 claims it one epoch up (as it would after pi's Last
    Will during a network cut). pi finishes but sends no answer of its own and hands the row over."""
    import sqlite3

    from netkit import FakeAsker

    asker = FakeAsker(delay_s=1.5)
    service = await start_agent(asker, pool_rig.settings("pi"))
    await asyncio.sleep(0.5)  # the pool subscription
    pi2, client = await _connect(pool_rig, "pi2"), await _connect(pool_rig, CLIENT)
    try:
        await client.subscribe(T.reply_namespace(CLIENT) + "/#")
        online = {"state": "online", "device": "pi2", "role": "agent", "pool": POOL}  # a live member
        assert (await pi2.publish(T.status("pi2"), json.dumps(online), retain=True)).value in (0, 16)
        request = AskRequest(request_id="fence1", question="slow one")
        await client.publish(T.ask(POOL, CLIENT), request.model_dump_json(), response_topic=T.reply(CLIENT, "fence1"),
                             correlation=b"fence1")
        await asyncio.wait_for(asker.started.wait(), 10)
        held = service.claims.owner((CLIENT, "fence1"))
        assert held is not None and held.board == "pi" and held.epoch == 1
        taken = held.model_copy(update={"board": "pi2", "epoch": 2})
        assert (await pi2.publish(T.claim(POOL, CLIENT, "fence1"), taken.model_dump_json(), retain=True)).value == 0
        events = []
        with pytest.raises(asyncio.TimeoutError):
            while True:
                events.append(json.loads((await client.next_message(3)).payload))
        assert [e["type"] for e in events if e["type"] in ("answer", "error")] == []  # pi's answer is not sent
        assert asker.calls  # it did run: the fence is on the answer, not the execution
        db = sqlite3.connect(pool_rig.settings("pi").db_path)
        (state, final), = db.execute("SELECT state, final_event FROM requests WHERE request_id = 'fence1'").fetchall()
        assert state == "done" and final is None  # handed over
        assert service.claims.owner((CLIENT, "fence1")).board == "pi2"
    finally:
        await pi2.close()
        await client.close()
