"""Window accounting: count before generating, refuse overflow loudly, trim tool results to fit."""
from __future__ import annotations

from typing import Callable, Sequence

from edge_agent.llm.base import ContextOverflow


def check_window(prompt_tokens: int, max_new_tokens: int, n_ctx: int, role: str = "") -> None:
    """Raise ContextOverflow when prompt + reserved output does not fit the window."""
    if prompt_tokens + max_new_tokens > n_ctx:
        raise ContextOverflow(prompt_tokens, max_new_tokens, n_ctx, role)


def fit_tokens(
    tokens: Sequence[int], n: int, detokenize: Callable[[Sequence[int]], str],
    count: Callable[[str], int], ellipsis: str = " …",
) -> str:
    """The longest prefix of `tokens` whose text, with `ellipsis` appended, re-tokenizes to <= n.

    Detokenizing a cut can split a multi-byte character, and the re-tokenized text can differ
    from the cut, so the result is checked by counting again and shortened until it fits.
    """
    if n <= 0:
        return ""
    keep = min(len(tokens), n)
    while keep > 0:
        text = detokenize(tokens[:keep])
        text = text.encode("utf-8", "ignore").decode("utf-8", "ignore").rstrip("\ufffd")
        candidate = text + (ellipsis if keep < len(tokens) else "")
        if count(candidate) <= n:
            return candidate
        if count(text) <= n and keep < len(tokens):
            return text
        keep -= max(1, (count(candidate) - n))
    return ""
