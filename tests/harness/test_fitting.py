"""Fitting a tool result or facts to a token budget by relevance to the question."""
from __future__ import annotations

from harness_kit import role_model
from edge_agent.harness.fitting import fit_relevant

EVENTS = "\n".join(["25 events, 2026-12-01 to 2026-12-31:"]
                   + [f"- Drawing class — Tue {d} Dec 18:30-20:30 @ Inkwell Studio" for d in range(1, 23)]
                   + ["- Oakbrook Christmas party — Fri 11 Dec 19:00-23:30 @ The Tannery Rooms"])


def test_a_text_within_budget_is_kept_whole():
    model = role_model()
    assert fit_relevant(model, "short\ntext", 100, "anything") == "short\ntext"


def test_the_lines_sharing_the_questions_words_survive_in_their_order():
    model = role_model()
    out = fit_relevant(model, EVENTS, 60, "Where is the Oakbrook Christmas party?")
    lines = out.splitlines()
    assert lines[0] == "25 events, 2026-12-01 to 2026-12-31:"  # the tool's summary line stays first
    assert "Oakbrook Christmas party" in out and model.count_tokens(out) <= 60
    assert lines[-1].endswith("more lines not shown)")
    kept = [ln for ln in lines[1:-1]]
    assert kept == [ln for ln in EVENTS.splitlines() if ln in kept]  # original order


def test_no_shared_words_keeps_the_first_lines():
    model = role_model()
    out = fit_relevant(model, EVENTS, 60, "what's on next week?")
    assert "Oakbrook" not in out and "Tue 1 Dec" in out


def test_a_single_long_line_is_cut_rather_than_dropped():
    model = role_model()
    text = "Best match: lease.pdf\nIt says: " + "clause " * 200
    out = fit_relevant(model, text, 40, "notice period")
    assert out.startswith("Best match: lease.pdf\nIt says: clause") and model.count_tokens(out) <= 40
