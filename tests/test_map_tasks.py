"""`util.parallel.map_tasks` with `here=True` (the calling process one of the workers): every result in
task order, progress counted to the end, a task's error raised in the caller."""
from __future__ import annotations

import pytest

from engine.util.parallel import map_tasks


def test_here_results_in_order_with_progress():
    seen = []
    tasks = [-i for i in range(40)]
    out = map_tasks(abs, tasks, workers=2, here=True, progress=lambda d, n: seen.append((d, n)))
    assert out == list(range(40))
    assert [d for d, _ in seen] == list(range(1, 41)) and {n for _, n in seen} == {40}


def test_here_raises_a_tasks_error():
    with pytest.raises(ValueError):
        map_tasks(int, ["1", "2", "x", "4", "5", "6"], workers=2, here=True)


@pytest.mark.parametrize("workers", [1, 2])
def test_meanwhile_runs_once_in_this_process_and_its_error_comes_after_the_tasks(workers):
    import os
    import threading
    ran = []
    out = map_tasks(abs, [-i for i in range(12)], workers=workers, here=True,
                    meanwhile=lambda: ran.append((os.getpid(), threading.current_thread() is threading.main_thread())))
    assert out == list(range(12))
    assert ran == [(os.getpid(), workers == 1)]          # beside the tasks (a thread) once workers are forked
    done = []

    def fails():
        raise LookupError("checked")
    with pytest.raises(LookupError, match="checked"):
        map_tasks(done.append, list(range(6)), workers=workers, here=True, meanwhile=fails)
    assert (done == []) == (workers == 1)                 # run first when there is no worker; else beside
