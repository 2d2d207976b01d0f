"""A prompt's logits are the same bits whatever the context held before its head was kept: the
runtime's answers may not depend on which questions came before (issue 28, "the same answers
every run"). Real model; the evaluator the runtime itself prefills with."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.real_model
def test_logits_do_not_depend_on_what_ran_before_the_head(tiny_model_path):
    from edge_agent.llm.llamacpp import LlamaCppModel

    model = LlamaCppModel(tiny_model_path, n_ctx=4096, n_threads=2, head_cache_mb=0)
    try:
        ev, llm = model._evaluator(), model._llm
        head = model.tokenize("### Instructions\nPick the lines that answer the question.\n### User\nLines:\n",
                              add_bos=True)
        long_tail = model.tokenize(" ".join(f"{i}. The fence was painted on day {i} by Robin." for i in range(40)))
        tail = model.tokenize("1. Policy number: QW-5521\n2. Cover starts 3 June.\nQuestion: the policy reference?\n")

        def after(*parts, keep: int | None = None, then=()):
            llm.reset()
            ev.truncate(0)
            for p in parts:
                ev.eval(p)
            if keep is not None:
                ev.truncate(keep)
            for p in then:
                ev.eval(p)
            return ev.logits().copy()

        cold = after(head, tail)
        assert np.array_equal(after(head, tail), cold)
        assert len(long_tail) > llm.n_batch  # the earlier prompt ran past a batch boundary
        assert np.array_equal(after(head, long_tail, keep=len(head), then=[tail]), cold)
        assert np.array_equal(after(head, long_tail[:5], keep=len(head), then=[tail]), cold)
    finally:
        model.close()
