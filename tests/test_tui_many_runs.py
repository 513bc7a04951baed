"""The TUI at many runs (issue 39): 300 runs score through the run store's threaded blocks of whole runs,
also above the large-campaign threshold, and the leaderboard's values equal `cranfield eval --campaign`'s;
a re-sort reorders the cached board and writes only the table's lines (no evaluation, no board rebuild)."""
from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import engine.evaluation.seam as seam
import tui.model as model_mod
import tui.source as source
from engine.simulation.campaigns import simulate, write_campaign
from tui.app import CranfieldApp
from tui.model import CampaignModel
from tui.testing import press, settle

ROOT = Path(__file__).resolve().parents[1]
RUNS, TOPICS, DEPTH = 300, 50, 20
SPECS = ["map", "P.10", "ndcg_cut.10", "bpref"]


@pytest.fixture(scope="module")
def camp(tmp_path_factory):
    return write_campaign(simulate(n_runs=RUNS, n_topics=TOPICS, depth=DEPTH, seed=3),
                          tmp_path_factory.mktemp("many") / "c", name="many", pool_depth=10)


@pytest.fixture()
def thresholds(monkeypatch):
    """Scale the engine's thresholds to this campaign: 300,000 rows are 'large' and parallel."""
    monkeypatch.setattr(seam, "LARGE_ROWS", 100_000)
    monkeypatch.setattr(seam, "PARALLEL_ROWS", 10_000)
    monkeypatch.setattr(seam, "PROCESS_BLOCK_ROWS", 40_000)
    model_mod._OPENED.clear()
    yield
    model_mod._OPENED.clear()


def cli_means(camp: Path) -> pd.DataFrame:
    """Per run mean of every measure from `cranfield eval --campaign` (a separate process, real thresholds)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "cranfield.cli", "eval", "--campaign", str(camp), "--format", "csv",
                          *sum((["-m", s] for s in SPECS), [])], env=env, check=True, capture_output=True,
                         text=True).stdout
    return pd.read_csv(io.StringIO(out), dtype={"run": str}).set_index("run").astype(float)


def test_large_board_equals_cli_and_in_memory(camp, thresholds, monkeypatch):
    import engine.evaluation.blocks as blocks
    seen = []
    real = blocks.evaluate_store

    def spy(*a, **k):
        seen.append((k.get("by_runs"), k.get("executor")))
        return real(*a, **k)
    monkeypatch.setattr(blocks, "evaluate_store", spy)
    model = CampaignModel(source.open_campaign(camp))
    assert model.large and model.store.rows == RUNS * TOPICS * DEPTH
    model.evaluate(SPECS)
    s = model.scores
    assert s.ranked is None and len(s.runs) == RUNS           # scored from the store, no ranked lists held
    # one evaluation, by blocks of whole runs in the engine's own worker processes (not topic blocks)
    assert seen == [(True, None)]
    board = model.leaderboard().set_index("run")
    want = cli_means(camp)
    assert sorted(want.index) == sorted(board.index) and len(want) == RUNS
    for n in ("map", "P_10", "ndcg_cut_10", "bpref"):
        np.testing.assert_allclose(board.loc[want.index, n].to_numpy(), want[n].to_numpy(), rtol=1e-12, atol=0)
    # the exact values: the engine's own evaluation by its default path (processes over topic blocks)
    from engine.evaluation.evaluate import summarize
    ev = seam.evaluate_campaign(model.o.engine_campaign, SPECS, options=model.options)
    means = summarize(ev.table)
    for n in s.measures:
        np.testing.assert_array_equal(board[n].to_numpy(), means.loc[board.index, n].to_numpy())


def test_resort_reorders_without_rebuilding(camp, thresholds, tmp_path):
    async def go():
        app = CranfieldApp(camp, export_dir=tmp_path)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await press(pilot, "l")
            scr = app.screen
            t = scr.query_one("#lb")
            assert t.row_count == RUNS
            m = app.model
            base = m._board_cache
            calls = {"evaluate": 0}
            real = m.evaluate

            def counting(*a, **k):
                calls["evaluate"] += 1
                return real(*a, **k)
            m.evaluate = counting
            first = list(scr._row_runs)
            await press(pilot, "1")                   # by run name
            by_run = list(scr._row_runs)
            assert by_run == sorted(first, key=lambda r: r) and by_run != first
            await press(pilot, "4")                   # the second measure, descending
            assert m._board_cache is base and calls["evaluate"] == 0   # the board is reordered, not rebuilt
            assert scr._formatted[0] is base[1]       # the cells were formatted once, only reordered since
            col = m.scores.measures[1]
            assert scr.sort_key == col and scr.descending
            vals = m.leaderboard().set_index("run").loc[scr._row_runs, col].to_numpy()
            assert (np.diff(vals) <= 0).all()
            await pilot.press("q")
    asyncio.run(go())


def test_a_second_open_reads_the_evaluation_cache(tmp_path, thresholds, monkeypatch):
    """A streamed evaluation is kept in the campaign's evaluation cache: the next open (a new process's
    model) reads it, with exactly the same scores, and a changed judgment file is evaluated again."""
    camp = write_campaign(simulate(n_runs=40, n_topics=10, depth=30, seed=5), tmp_path / "c", name="cached",
                          pool_depth=5)
    calls = []
    real = seam.evaluate_campaign

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(seam, "evaluate_campaign", spy)

    def open_and_score():
        model_mod._OPENED.clear()                     # as a new process: nothing kept in memory
        m = CampaignModel.load(camp)
        m.evaluate(SPECS)
        return m
    first = open_and_score()
    assert first.scores.ranked is None and len(calls) == 1          # streamed from the store, then cached
    assert len(list((camp / ".cranfield-cache").glob("tui-*.parquet"))) == 2
    second = open_and_score()
    assert len(calls) == 1                                          # read, not evaluated
    a, b = first.scores, second.scores
    assert a.runs == b.runs and a.topics == b.topics and a.measures == b.measures
    for n in a.measures:
        np.testing.assert_array_equal(a.matrix[n], b.matrix[n])
    for f in ("judged10", "group_of", "t_num_rel", "depth_t", "holes", "n_top"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    pd.testing.assert_frame_equal(first.leaderboard(), second.leaderboard(), check_exact=True)
    # one more judgment: a new entry, evaluated again, and the scores follow it
    qrels = next((camp / "judgments").glob("*"))
    q = pd.read_csv(qrels, sep=r"\s+", header=None, names=["topic", "it", "doc", "grade"], dtype=str)
    t, d = q.loc[q["grade"] == "0"].iloc[0][["topic", "doc"]]
    qrels.write_text("".join(f"{r.topic} 0 {r.doc} {1 if (r.topic, r.doc) == (t, d) else r.grade}\n"
                             for r in q.itertuples()))
    third = open_and_score()
    assert len(calls) == 2
    assert not np.array_equal(a.matrix["map"], third.scores.matrix["map"], equal_nan=True)


def test_the_evaluation_reports_its_blocks(camp, thresholds):
    """A streamed evaluation reports its blocks of runs as they finish (the load's progress line shows each
    whole percent once)."""
    import shutil
    from tui.app import _blocks_done
    shutil.rmtree(camp / ".cranfield-cache", ignore_errors=True)   # evaluated, not read from the cache
    calls = []
    m = CampaignModel(source.open_campaign(camp))
    m.evaluate(SPECS, progress=lambda d, n: calls.append((d, n)))
    n = calls[-1][1]
    assert n > 1 and [d for d, _ in calls] == list(range(1, n + 1))
    seen = []
    step = _blocks_done(lambda f, t: seen.append((f, t)), "evaluating map")
    for d in range(501):
        step(d, 500)
    assert len(seen) == 101 and seen[0] == (1 / 3, "evaluating map: 0% of the runs")
    assert seen[-1] == (2 / 3, "evaluating map: 100% of the runs")


@pytest.fixture(scope="module")
def gappy(tmp_path_factory):
    """40 runs x 8 topics x 30 documents; two runs lack a topic (-c fills it), one judged topic is dropped."""
    camp = write_campaign(simulate(n_runs=40, n_topics=8, depth=30, seed=11), tmp_path_factory.mktemp("gap") / "c",
                          name="gappy", pool_depth=10)
    files = sorted((camp / "runs").iterdir())
    for f, topic_at in ((files[0], 0), (files[5], 3)):
        lines = f.read_text().splitlines(keepends=True)
        topics = sorted({ln.split()[0] for ln in lines})
        f.write_text("".join(ln for ln in lines if ln.split()[0] != topics[topic_at]))
    return camp


@pytest.mark.parametrize("complete", [False, True])
def test_blocks_of_runs_in_processes_equal_threads(gappy, complete):
    """Blocks of whole runs evaluated in worker processes that received the judgments once (at their start,
    not with each task) give the threads' table, facts and text-valued measures exactly, also with -c's
    stand-in rows for topics a run lacks; the tasks sent to the workers carry no judgments."""
    from concurrent.futures import ThreadPoolExecutor

    import engine.evaluation.blocks as blocks
    from engine.ranking.ranked import EvalOptions
    c = source.open_campaign(gappy).engine_campaign
    st, q = c.store(), c.qrels()
    runs = list(st.runs)
    q = q[q["topic"].astype(str) != sorted(set(q["topic"].astype(str)))[-1]]   # runs' topic without judgments
    opt = EvalOptions(complete=complete)
    sent = []
    real = blocks.map_tasks

    def spy(fn, tasks, *a, **k):
        tasks = list(tasks)
        sent.extend(tasks)
        return real(fn, tasks, *a, **k)
    kw = dict(options=opt, runs=runs, block_rows=700, strings=True, extras=True, by_runs=True)
    with ThreadPoolExecutor(2) as ex:
        want = blocks.evaluate_store(st, q, SPECS + ["relstring"], executor=ex, **kw)
    blocks.map_tasks = spy
    try:
        got = blocks.evaluate_store(st, q, SPECS + ["relstring"], **kw)
    finally:
        blocks.map_tasks = real
    assert len(sent) > 2 and all(t.qrels is None and t.judged is None and t.shared for t in sent)
    pd.testing.assert_frame_equal(got, want)
    for k in ("strings", "extras"):
        pd.testing.assert_frame_equal(got.attrs[k], want.attrs[k])
    assert got.attrs.get("notes") == want.attrs.get("notes")
    assert got.attrs["notes"]["topics_without_judgments"] == [sorted(set(c.qrels()["topic"].astype(str)))[-1]]
    assert got.attrs["notes"].get("topics_filled_by_c", 0) == (2 if complete else 0)


def _shared_size(_):
    import engine.evaluation.blocks as blocks
    return os.getpid(), {k: len(v[0]) for k, v in blocks._SHARED.items()}


def test_a_pool_setup_reaches_every_spawned_worker_once():
    """SafeProcessPool's setup runs once in each spawned worker, before its first task, with arguments the
    parent sends once (not with each task), whatever sys.stderr is (a TUI replaces it)."""
    import engine.evaluation.blocks as blocks
    from engine.util.parallel import SafeProcessPool
    q = pd.DataFrame({"topic": ["1", "2", "2"], "doc": ["a", "b", "c"], "grade": [1, 0, 2]})
    saved = sys.stderr
    sys.stderr = io.StringIO()                        # no file descriptor, as under Textual
    try:
        with SafeProcessPool(2, setup=(blocks.share_judgments, ("tok", q))) as ex:
            got = list(ex.map(_shared_size, range(16)))
    finally:
        sys.stderr = saved
    assert all(s == {"tok": 3} for _, s in got) and os.getpid() not in {p for p, _ in got}


def test_a_cancel_stops_the_blocks_in_worker_processes(gappy):
    """`progress` raising (the TUI's cancel) ends an evaluation by blocks of runs in worker processes: the
    exception reaches the caller and no worker is left behind (that the queued blocks never start is
    map_tasks' part, tests/test_tui_scale_costs.py)."""
    import multiprocessing as mp
    import time

    import engine.evaluation.blocks as blocks
    c = source.open_campaign(gappy).engine_campaign
    calls = []

    def progress(done, total):
        calls.append((done, total))
        raise KeyboardInterrupt("cancelled")
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        blocks.evaluate_store(c.store(), c.qrels(), SPECS, block_rows=100, by_runs=True, extras=True,
                              progress=progress)
    assert len(calls) == 1 and calls[0][1] >= 20
    assert not mp.active_children()
    assert time.perf_counter() - t0 < 60
