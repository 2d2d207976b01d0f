"""The page's colours meet WCAG AA contrast (4.5:1 for text) in its light and dark schemes."""
from __future__ import annotations

import re

import pytest

from edge_agent.net.webpage import WEB_DIR

TEXT_PAIRS = [("fg", "bg"), ("muted", "bg"), ("muted", "card"), ("fg", "card"), ("on-accent", "accent"),
              ("pill-fg", "pill"), ("ok", "card"), ("ok", "bg"), ("bad", "bg"), ("bad", "card"), ("accent", "bg")]
"""(text colour, background) pairs the page draws."""
AA_TEXT = 4.5


def _schemes() -> dict[str, dict[str, str]]:
    css = (WEB_DIR / "style.css").read_text()
    blocks = re.findall(r":root\s*\{([^}]*)\}", css)
    assert len(blocks) == 2, "expected a light and a dark :root block"
    return {name: dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})", block))
            for name, block in zip(("light", "dark"), blocks)}


def _luminance(hex_colour: str) -> float:
    def channel(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_contrast_formula():
    assert round(contrast("#000000", "#ffffff"), 1) == 21.0 and contrast("#777777", "#777777") == 1.0


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_colours_meet_aa(scheme):
    colours = _schemes()[scheme]
    low = {f"{fg} on {bg}": round(contrast(colours[fg], colours[bg]), 2) for fg, bg in TEXT_PAIRS
           if contrast(colours[fg], colours[bg]) < AA_TEXT}
    assert low == {}
