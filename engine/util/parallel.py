"""Local process pools that also work under a full-screen terminal UI.

Textual replaces `sys.stderr` with an object whose `fileno()` is not a real descriptor, and spawning
a process passes stderr's descriptor to the child: the spawn fails ("bad value(s) in fds_to_keep").
`process_pool` spawns its workers with the real stderr in place and, when the parent's stderr is not a
terminal stream of its own (a TUI owns the screen), points the workers' descriptor 2 at /dev/null so
nothing they print can garble the display (their errors still reach the parent as exceptions).
A pool may fork its workers instead (`fork=True`) when the process runs a single Python thread.
`produced_ahead` runs a generator one item ahead in a thread (reading and hashing beside the parse).
"""
from __future__ import annotations

import multiprocessing as mp
import os
import sys
import threading
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from contextlib import contextmanager, nullcontext
from typing import Callable, Iterable, Iterator, TypeVar

from .memory import worker_environment

T = TypeVar("T")

_SWAP = threading.Lock()


def _stderr_usable() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        return False


def _quiet_child(quiet: bool, setup: str | None = None, payload: bytes = b"") -> None:
    if quiet:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 2)
        os.close(fd)
    if setup is not None:
        import importlib
        import pickle
        module, name = setup.split(":")
        getattr(importlib.import_module(module), name)(*pickle.loads(payload))


def _setup_args(setup: tuple[Callable, tuple] | None) -> tuple:
    """A worker setup (function, args) as the initializer's arguments: the function by name and its
    arguments as pickled bytes, so a spawned worker reads them at once and imports what they need only
    after (the parent's write of a large argument would otherwise wait for the worker's imports)."""
    if setup is None:
        return ()
    import pickle
    fn, args = setup
    return f"{fn.__module__}:{fn.__qualname__}", pickle.dumps(tuple(args), protocol=pickle.HIGHEST_PROTOCOL)


def _one_thread() -> bool:
    """Whether this process runs no Python thread but the main one, so a fork copies no lock another
    Python thread holds (the native threads numpy's BLAS and Arrow's allocator start handle fork)."""
    return threading.active_count() == 1


class SafeProcessPool(ProcessPoolExecutor):
    """A spawn-context process pool whose submissions work with or without a real sys.stderr. `fork`:
    fork the workers instead when this process runs a single Python thread (they start with its imports
    and data: no interpreter start, no imports, no resource tracker process). `setup`: (function, args)
    each worker runs once as it starts (e.g. receiving data every task needs, sent once per worker)."""

    def __init__(self, max_workers: int, fork: bool = False, setup: tuple[Callable, tuple] | None = None):
        self._quiet = not _stderr_usable()
        method = "fork" if fork and "fork" in mp.get_all_start_methods() and _one_thread() else "spawn"
        # spawn: the resource tracker is spawned when the pool makes its first lock, the workers inside
        # submit; fork: every worker at the first submit, before the pool starts its threads
        with self._real_stderr():
            super().__init__(max_workers=max_workers, mp_context=mp.get_context(method),
                             initializer=_quiet_child, initargs=(self._quiet, *_setup_args(setup)))

    @contextmanager
    def _real_stderr(self):
        if not self._quiet:
            yield
            return
        with _SWAP:
            saved = sys.stderr
            sys.stderr = sys.__stderr__
            try:
                yield
            finally:
                sys.stderr = saved

    def submit(self, fn, /, *args, **kwargs):
        # the environment only while a worker may start: once all run, later submissions (e.g. beside
        # `map_tasks`' `meanwhile` thread) leave it alone (setenv races with native code reading it)
        starting = len(getattr(self, "_processes", None) or ()) < self._max_workers
        with self._real_stderr(), (worker_environment() if starting else nullcontext()):
            return super().submit(fn, *args, **kwargs)


def map_tasks(fn, tasks: Iterable, workers: int | None = None, executor: Executor | None = None,
              progress: Callable[[int, int], None] | None = None, here: bool = False,
              meanwhile: Callable[[], None] | None = None, total: int | None = None) -> list:
    """fn over tasks, results in task order: on `executor`, else a local `SafeProcessPool` of
    min(workers or cores, tasks) processes, or in this process when that is one. `here`: this process
    is one of the workers and the others are forked from it when it runs one Python thread (for a caller that
    would only wait and has imported and prepared what `fn` needs); `meanwhile`: work of this process the
    tasks do not depend on (e.g. checks that only warn or raise), run in a thread of it once the workers
    are forked (else first), its exception raised after the tasks. `progress(done, total)` is called
    as tasks finish. `tasks` may be an iterator of `total` tasks: each is submitted as it is made (the
    workers start on the first while the rest are prepared)."""
    n = len(tasks) if total is None else total
    k = min(workers or os.cpu_count() or 1, n)
    if executor is None and here and k >= 2:
        return _map_here(fn, tasks, k - 1, progress, meanwhile)
    if meanwhile is not None:
        meanwhile()
    if executor is None and k < 2:
        out = []
        for i, t in enumerate(tasks):
            out.append(fn(t))
            if progress:
                progress(i + 1, n)
        return out
    own = executor is None
    ex = executor or SafeProcessPool(k)
    futs: dict = {}
    try:
        for i, t in enumerate(tasks):
            futs[ex.submit(fn, t)] = i
        out: list = [None] * n
        for j, f in enumerate(as_completed(futs)):
            out[futs[f]] = f.result()
            if progress:
                progress(j + 1, n)
        return out
    except BaseException:
        for f in futs:              # a task failed or `progress` stopped the work (a cancel): the queued
            f.cancel()              # tasks never start, also on an executor the caller owns
        raise
    finally:
        if own:
            ex.shutdown(cancel_futures=True)


def _map_here(fn, tasks: list, k: int, progress: Callable[[int, int], None] | None,
              meanwhile: Callable[[], None] | None = None) -> list:
    """`map_tasks` with this process taking tasks in turn with `k` worker processes: tasks go out in
    order, each worker kept two ahead (so it never waits for this process), the rest run here. The
    workers are forked when this process runs one Python thread; `meanwhile` then runs in a thread."""
    from concurrent.futures import ThreadPoolExecutor

    n = len(tasks)
    out: list = [None] * n
    done = 0
    ahead: dict = {}
    nxt = 0
    ex = SafeProcessPool(k, fork=True)
    side = None

    def finished(f) -> None:
        nonlocal done
        out[ahead.pop(f)] = f.result()
        done += 1
        if progress:
            progress(done, n)

    try:
        while nxt < n:
            for f in [f for f in ahead if f.done()]:
                finished(f)
            while len(ahead) < 2 * k and nxt < n:
                ahead[ex.submit(fn, tasks[nxt])] = nxt
                nxt += 1
            if meanwhile is not None and side is None:      # the workers are forked (at the first submit)
                side = ThreadPoolExecutor(1)
                side_job = side.submit(meanwhile)
            if nxt < n:
                out[nxt] = fn(tasks[nxt])
                nxt += 1
                done += 1
                if progress:
                    progress(done, n)
        for f in as_completed(list(ahead)):
            finished(f)
        if side is not None:
            side_job.result()
        return out
    finally:
        ex.shutdown(cancel_futures=True)
        if side is not None:
            side.shutdown()


def produced_ahead(items: Iterable[T], depth: int = 1) -> Iterator[T]:
    """The items of `items`, made by a background thread that keeps up to `depth` of them ready while
    the caller works on the current one (for steps that release the GIL: reading, hashing, parsing).
    An exception of the producer is raised here in its place. Close the iterator (`contextlib.closing`)
    to stop the producer early: closing returns once the producer has stopped and `items` is closed."""
    import queue
    q: queue.Queue = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()
    end = object()

    def put(x) -> bool:
        while not stop.is_set():
            try:
                q.put(x, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        it = iter(items)
        try:
            for x in it:
                if not put((True, x)):
                    return
            put((True, end))
        except BaseException as exc:            # handed to the consumer, raised there
            put((False, exc))
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()

    th = threading.Thread(target=produce, name="produced_ahead", daemon=True)
    th.start()
    try:
        while True:
            ok, x = q.get()
            if not ok:
                raise x
            if x is end:
                return
            yield x
    finally:
        stop.set()
        th.join()


def in_parallel(fn: Callable[[T], object], items: Iterable[T], workers: int,
                on_done: Callable[[int], object] | None = None) -> None:
    """`fn(item)` for every item on `workers` threads, each taking the next item when it is free (a long,
    lazy `items` is never held whole); `on_done(count)` after each item; after an exception no new item
    is taken, and the first is raised once the items in flight have finished."""
    it, lock = iter(items), threading.Lock()
    state = {"done": 0, "error": None}

    def work() -> None:
        while True:
            with lock:
                if state["error"] is not None:
                    return
                try:
                    item = next(it)
                except StopIteration:
                    return
                except BaseException as exc:      # noqa: BLE001 - the items' own error, raised below
                    state["error"] = exc
                    return
            try:
                fn(item)
            except BaseException as exc:          # noqa: BLE001 - raised in the caller below
                with lock:
                    if state["error"] is None:
                        state["error"] = exc
                return
            if on_done:
                with lock:
                    state["done"] += 1
                    on_done(state["done"])

    threads = [threading.Thread(target=work, name=f"in-parallel-{k}", daemon=True) for k in range(max(1, workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if state["error"] is not None:
        raise state["error"]
