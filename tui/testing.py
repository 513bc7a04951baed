"""Helpers for driving the app in tests and scripts (pilot)."""
from __future__ import annotations

from .capture import screen_text

__all__ = ["settle", "press", "screen_text"]


async def _wait(app) -> None:
    import asyncio

    from textual.worker import WorkerFailed
    while getattr(app, "busy", False):     # the campaign load / evaluation runs in a thread of its own
        await asyncio.sleep(0.02)
    try:
        await app.workers.wait_for_complete()
    except WorkerFailed:  # the app reports it as a notification; tests look there
        pass


async def settle(pilot, rounds: int = 3) -> None:
    """Wait until every worker is done and the screen has redrawn."""
    app = pilot.app
    for _ in range(rounds):
        await _wait(app)
        await pilot.pause()
    await _wait(app)
    await pilot.pause()


async def press(pilot, *keys: str) -> None:
    """Press keys one by one, settling after each."""
    for k in keys:
        await pilot.press(k)
        await settle(pilot, 1)
