"""Worker processes start with Arrow's allocator told to keep freed pages (util.memory.WORKER_ENV);
the parent's environment is left as it was, and a value the user set is kept."""
from __future__ import annotations

import os

from engine.util.memory import WORKER_ENV
from engine.util.parallel import map_tasks


def _env(_):
    return {k: os.environ.get(k) for k in WORKER_ENV}


def test_spawned_workers_get_the_allocator_settings_and_the_parent_keeps_its_environment(monkeypatch):
    for k in WORKER_ENV:
        monkeypatch.delenv(k, raising=False)
    got = map_tasks(_env, [0, 1], workers=2)
    assert got == [WORKER_ENV, WORKER_ENV]
    assert all(k not in os.environ for k in WORKER_ENV)
    monkeypatch.setenv("MIMALLOC_PURGE_DELAY", "250")
    assert map_tasks(_env, [0, 1], workers=2)[0]["MIMALLOC_PURGE_DELAY"] == "250"


def test_the_environment_is_changed_only_while_a_worker_may_start(monkeypatch):
    """`worker_environment` changes the process environment (setenv, unsafe while another thread's native
    code reads it): only for a submission that may start a worker. `map_tasks(here=True)` forks every
    worker at its first submission and then runs `meanwhile` in a thread beside its later submissions:
    those must leave the environment alone."""
    from contextlib import contextmanager

    import engine.util.parallel as par

    calls = []

    @contextmanager
    def counted():
        calls.append(1)
        yield
    monkeypatch.setattr(par, "worker_environment", counted)
    pool = par.SafeProcessPool(1)
    try:
        assert [pool.submit(abs, -i).result() for i in range(4)] == [0, 1, 2, 3]
    finally:
        pool.shutdown()
    assert len(calls) == 1                                    # the one submission that started the worker
    calls.clear()
    assert map_tasks(abs, [-i for i in range(12)], workers=2, here=True, meanwhile=lambda: None) == list(range(12))
    assert len(calls) == 1                                    # the first submission forks the worker
