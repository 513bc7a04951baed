"""Plain-text capture of what a running app shows (for tests, docs and debugging)."""
from __future__ import annotations


def screen_text(app) -> str:
    """The current screen as text lines, styles dropped."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip).rstrip() for strip in strips)
