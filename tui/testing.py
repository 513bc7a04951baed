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


def run_async(fn):
    """Run an async test body with asyncio (no async pytest plugin is needed)."""
    import asyncio
    import functools
    import inspect

    @functools.wraps(fn)
    def wrapper(*args, **kw):
        return asyncio.run(fn(*args, **kw))
    wrapper.__signature__ = inspect.signature(fn)
    return wrapper


def private_copy(campaign, dst=None, skip: tuple = ()):
    """A copy of `campaign` (without its caches and the names in `skip`) in `dst`, else in a temporary folder removed at exit:
    tests open the copy, so the campaign itself (e.g. campaigns/demo) is never written."""
    import atexit
    import shutil
    import tempfile
    from pathlib import Path
    if dst is None:
        tmp = Path(tempfile.mkdtemp(prefix="cranfield-copy-"))
        atexit.register(shutil.rmtree, tmp, True)
        dst = tmp / Path(campaign).name
    shutil.copytree(campaign, dst, ignore=shutil.ignore_patterns(".cranfield-cache", "exports", *skip))
    return Path(dst)
