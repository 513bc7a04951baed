"""The TUI's one way to run background work: a Textual worker (exclusive in its group) that runs the work in
a daemon thread and hands the result to the UI thread only when it finished uncancelled.

Work computes new objects and never touches what the screens show; `done(result)` commits them on the UI
thread. Cancelling (escape) ends the worker at once: quitting never waits for the thread, whose result is
dropped, and the thread stops at its next `check_cancel()` / `progress()` call.
"""
from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any, Callable

from textual.worker import NoActiveWorker, Worker, get_current_worker

from engine.errors import CranfieldError

Progress = Callable[[float, str], None]


class Cancelled(Exception):
    """Raised inside background work when the user cancelled it (escape) or newer work superseded it."""


def check_cancel() -> None:
    """Call from background work between steps: stops the work when its worker was cancelled."""
    try:
        w = get_current_worker()
    except NoActiveWorker:
        return
    if w.is_cancelled:
        raise Cancelled()


def start_work(node, name: str, fn: Callable[[Progress], Any], done: Callable[[Any], None], *,
               group: str, on_progress: Progress | None = None,
               on_end: Callable[[Worker], None] | None = None) -> Worker:
    """Run fn(progress) off the UI thread in a worker of `node` (a screen or the app), cancelling the
    group's running work. `progress(fraction, text)` stops cancelled work and calls on_progress(fraction,
    text) on the UI thread. On the UI thread afterwards: on_end(worker), then done(result) unless the
    worker was cancelled. An error (of the work or of `done`) becomes a notification (`app.report_error`):
    a CranfieldError or Cancelled leaves the worker successful (an explained outcome); any other error
    also marks the worker failed (state ERROR) and is recorded in `app.worker_failures`, which the test
    helpers (tui.testing) check."""
    app = node.app

    def progress(fraction: float, text: str = "") -> None:
        check_cancel()
        if on_progress is not None:
            app.call_from_thread(on_progress, fraction, text)

    async def work() -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        ctx = contextvars.copy_context()          # the thread sees this worker (check_cancel, progress)

        def settle(result, error) -> None:
            if not future.done():
                if error is None:
                    future.set_result(result)
                else:
                    future.set_exception(error)

        def run() -> None:
            try:
                result, error = ctx.run(fn, progress), None
            except BaseException as exc:  # delivered to the UI thread below
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(settle, result, error)
            except RuntimeError:          # the app has exited: nothing to deliver
                pass
        threading.Thread(target=run, name=f"cranfield-{name}", daemon=True).start()
        try:
            result = await future
            _end()
            if not worker.is_cancelled:
                done(result)
            return result
        except asyncio.CancelledError:
            _end()
            raise
        except (Cancelled, CranfieldError) as exc:
            _end()
            app.report_error(exc)
            return None
        except Exception as exc:
            _end()
            getattr(app, "worker_failures", []).append(exc)
            app.report_error(exc)
            raise

    ended: list[bool] = []

    def _end() -> None:
        if on_end is not None and not ended:
            ended.append(True)
            on_end(worker)

    worker = node.run_worker(work, name=name, group=group, exclusive=True, exit_on_error=False)
    return worker
