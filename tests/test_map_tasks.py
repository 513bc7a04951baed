"""`util.parallel.map_tasks` with `here=True` (the calling process one of the workers): every result in
task order, progress counted to the end, a task's error raised in the caller; `produced_ahead`."""
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


def test_produced_ahead_keeps_order_raises_in_place_and_stops_when_closed():
    """Items come in order from the producer thread; the producer's exception is raised at its place
    in the sequence; closing early stops the producer and closes its generator, leaving no thread."""
    import threading
    from contextlib import closing
    from engine.util.parallel import produced_ahead

    assert list(produced_ahead(iter(range(50)), depth=2)) == list(range(50))
    made, closed = [], []

    def gen(fail_at=None):
        try:
            for i in range(1000):
                if i == fail_at:
                    raise ValueError(f"bad piece {i}")
                made.append(i)
                yield i
        finally:
            closed.append(threading.current_thread().name)

    got = []
    with pytest.raises(ValueError, match="bad piece 7"):
        for x in produced_ahead(gen(fail_at=7)):
            got.append(x)
    assert got == list(range(7)) and closed == ["produced_ahead"]
    made.clear(), closed.clear()
    before = threading.active_count()
    with closing(produced_ahead(gen(), depth=1)) as it:
        assert [next(it) for _ in range(3)] == [0, 1, 2]
    assert closed == ["produced_ahead"] and len(made) <= 3 + 2          # at most one ahead, one in hand
    assert threading.active_count() == before
