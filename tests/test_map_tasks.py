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
