"""The training plan (pure Python: torch lives in the training environment only)."""
from __future__ import annotations

from edge_agent.tune.train import MIN_SHARED_PREFIX, batches, common_prefix


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


def test_the_stages_reports_merge_into_one_card_line():
    from edge_agent.tune.stages import merge

    one = {"examples": 1600, "roles": "all", "steps": 294, "batch": 8, "epochs": 1.0, "rank": 16,
           "trainable_parameters": 3796992, "load_s": 51.4, "train_s": 3483.3, "tokens": 304095,
           "target_tokens": 24207, "first_loss": 3.93, "last_loss_mean10": 0.62}
    two = {**one, "examples": 384, "roles": "planner", "steps": 144, "epochs": 3.0, "load_s": 50.0,
           "train_s": 1500.0, "tokens": 150000, "target_tokens": 2300, "first_loss": 0.33, "last_loss_mean10": 0.05}
    card = merge([one, two])
    assert card["steps"] == 438 and card["train_s"] == 4983.3 and card["tokens"] == 454095
    assert card["epochs"] == "1.0 (all) + 3.0 (planner)" and card["examples"] == 1600
    assert card["first_loss"] == 3.93 and card["last_loss_mean10"] == 0.05  # the run's start, the last stage's end
    assert card["tokens_per_s"] == round(454095 / 4983.3, 1) and card["stages"] == [one, two]
