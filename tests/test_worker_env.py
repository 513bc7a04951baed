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
