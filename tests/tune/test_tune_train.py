"""The training plan (pure Python: torch lives in the training environment only)."""
from __future__ import annotations

from edge_agent.tune.train import MIN_SHARED_PREFIX, batches, common_prefix, parse_extra


def _rows():
    head_a = [1, 2, 3] * 30  # 90 tokens: a prompt head
    head_b = [9] * 100
    return ([{"prompt_ids": head_a + [100 + i], "target_ids": [5]} for i in range(20)]
            + [{"prompt_ids": head_b + [200 + i], "target_ids": [5]} for i in range(3)]
            + [{"prompt_ids": [7, 300 + i], "target_ids": [5]} for i in range(3)])


def test_rows_sharing_a_head_are_batched_together_and_others_alone():
    rows = _rows()
    steps = batches(rows, 8, 1.0, seed=0)
    assert sorted(i for s in steps for i in s) == list(range(len(rows)))  # one epoch: every row once
    for step in steps:
        assert len(step) <= 8
        if len(step) > 1:
            assert common_prefix([rows[i] for i in step]) >= MIN_SHARED_PREFIX
    assert sorted(len(s) for s in steps) == [1, 1, 1, 3, 4, 8, 8]


def test_a_fractional_epoch_takes_part_of_the_groups_and_the_seed_fixes_the_order():
    rows = _rows()
    one, half = batches(rows, 8, 1.0, 0), batches(rows, 8, 1.5, 0)
    assert len(half) == len(one) + len(one) // 2
    assert batches(rows, 8, 1.5, 0) == half and batches(rows, 8, 1.5, 1) != half


def test_extra_passes_over_a_kind_are_spread_through_the_run():
    rows = [{**r, "kind": "planner" if i < 20 else "l2.call"} for i, r in enumerate(_rows())]
    plain = batches(rows, 8, 1.0, 0)
    mixed = batches(rows, 8, 1.0, 0, {"planner": 2.0})
    seen = [i for s in mixed for i in s]
    assert all(seen.count(i) == 3 for i in range(20))  # the planner's rows: once, then twice more
    assert all(seen.count(i) == 1 for i in range(20, len(rows)))
    it = iter(mixed)
    assert all(any(s == t for t in it) for s in plain)  # the main pass is there, in its order
    extra_at = [n for n, s in enumerate(mixed) if all(i < 20 for i in s)]
    assert extra_at[-1] > len(mixed) // 2 and extra_at[0] < len(mixed) // 2  # not all at the end
    assert parse_extra("planner=2.5, l3=1") == {"planner": 2.5, "l3": 1.0}
