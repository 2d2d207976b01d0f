"""FairQueue: round robin between askers, first in first out within one, pending counts per asker."""
from __future__ import annotations

from edge_agent.net.fairqueue import FairQueue


async def test_askers_are_served_in_turn_and_each_in_order():
    q: FairQueue[str] = FairQueue()
    for i in range(4):
        q.put_nowait("eve", f"e{i}")
    assert q.position("me") == 1  # one of eve's, then me
    q.put_nowait("me", "m0")
    q.put_nowait("me", "m1")
    q.put_nowait("bob", "b0")
    served = []
    while q.qsize():
        sender, item = await q.get()
        served.append(item)
        assert q.pending(sender) >= 1  # running counts until done()
        q.done(sender)
    assert served == ["e0", "m0", "b0", "e1", "m1", "e2", "e3"]
    assert q.pending("eve") == 0 and q.pending("me") == 0
