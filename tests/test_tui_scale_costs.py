"""Fixed costs of opening a large campaign (issue 39): the run listing is kept while its folders are unchanged
(and relisted after any change, also within the clock tick of the listing), the run store finds a run's
entry without a scan, and a cancelled evaluation leaves its queued blocks unstarted."""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import engine.campaign.campaign as campaign_mod
from engine.campaign.campaign import load_campaign
from engine.errors import FormatError, Warnings
from engine.util.parallel import map_tasks

from test_campaign import make_campaign


def settled(monkeypatch) -> None:
    """Every folder counts as changed long before its listing (no wait for the clock in the tests)."""
    monkeypatch.setattr(campaign_mod, "_SETTLED_NS", -10**18)


def test_listing_is_kept_and_follows_every_change(tmp_path, monkeypatch):
    settled(monkeypatch)
    root = make_campaign(tmp_path / "c")
    c = load_campaign(root, warnings=Warnings())
    first = c.run_files()
    assert sorted(p.name for p in first) == ["alpha.txt", "beta.txt"]
    calls = []
    real = c._list_run_files
    monkeypatch.setattr(c, "_list_run_files", lambda: calls.append(1) or real())
    assert c.run_files() == first and calls == []          # kept: runs/ unchanged
    (root / "runs" / "gamma.txt").write_text("1 Q0 d1 1 1 gamma\n")
    assert sorted(p.name for p in c.run_files()) == ["alpha.txt", "beta.txt", "gamma.txt"] and calls == [1]
    (root / "runs" / "gamma.txt").unlink()
    assert sorted(p.name for p in c.run_files()) == ["alpha.txt", "beta.txt"] and calls == [1, 1]
    (root / "runs" / "sub").mkdir()                        # a folder is not a run file
    assert sorted(p.name for p in c.run_files()) == ["alpha.txt", "beta.txt"]
    c.skip_runs = {(root / "runs" / "beta.txt").resolve()}  # a file set aside by the UI
    assert [p.name for p in c.run_files()] == ["alpha.txt"]


def test_a_named_file_outside_runs_is_followed(tmp_path, monkeypatch):
    settled(monkeypatch)
    root = make_campaign(tmp_path / "c")
    (root / "extra").mkdir()
    (root / "extra" / "x.txt").write_text("1 Q0 d1 1 1 xrun\n")
    text = (root / "campaign.yaml").read_text().replace("runs:\n", "runs:\n  xrun:\n    file: extra/x.txt\n")
    (root / "campaign.yaml").write_text(text)
    c = load_campaign(root, warnings=Warnings())
    assert "x.txt" in [p.name for p in c.run_files()]
    (root / "extra" / "x.txt").unlink()                    # runs/ is unchanged, extra/ is not
    with pytest.raises(FormatError, match="does not exist"):
        c.run_files()


def test_a_change_within_the_clock_tick_is_never_missed(tmp_path):
    """Without the settled rule a listing made in the same coarse tick as a change could be kept past the
    next change: a just-changed folder is listed again on every call."""
    root = make_campaign(tmp_path / "c")
    c = load_campaign(root, warnings=Warnings())
    c.run_files()
    assert "_run_files" not in c.__dict__                  # runs/ changed just now: not kept
    st = os.stat(root / "runs")
    (root / "runs" / "gamma.txt").write_text("1 Q0 d1 1 1 gamma\n")
    os.utime(root / "runs", ns=(st.st_atime_ns, st.st_mtime_ns))   # the folder's mtime as before the change
    assert "gamma.txt" in [p.name for p in c.run_files()]


def test_store_entry_by_tag(tmp_path):
    root = make_campaign(tmp_path / "c")
    c = load_campaign(root, warnings=Warnings())
    st = c.store()
    for tag in ("alpha", "beta"):
        key, e = st._entry(tag)
        assert e["tag"] == tag and key.endswith(f"{tag}.txt")
        assert st.part(tag).is_file()
    with pytest.raises(Exception, match="not in the store"):
        st._entry("nosuch")


def test_cancel_leaves_queued_blocks_unstarted():
    """`progress` raising (the TUI's cancel) stops the work: the executor's queued tasks never run, also on
    an executor the caller owns (the seam's thread pool)."""
    started = []

    def task(i):
        started.append(i)
        time.sleep(0.1)
        return i

    def progress(done, total):
        raise KeyboardInterrupt("cancelled")

    ex = ThreadPoolExecutor(2)
    try:
        with pytest.raises(KeyboardInterrupt):
            map_tasks(task, list(range(50)), executor=ex, progress=progress)
    finally:
        ex.shutdown(wait=True)
    time.sleep(0.05)
    assert 1 <= len(started) <= 4, started                 # the two running (and at most two more), not 50


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    from engine.simulation.campaigns import simulate, write_campaign
    return write_campaign(simulate(n_runs=40, n_topics=10, depth=50, seed=5), tmp_path_factory.mktemp("plan") / "c",
                          name="plan", pool_depth=10)


@pytest.mark.parametrize("large", [False, True])
def test_planner_works_on_a_bounded_sample_of_runs(sim, monkeypatch, large):
    """The cost screen's planner evaluates at most about `sample_rows` run rows per design: a seeded sample of
    whole runs (the same each time), in memory or read from the run store of a large campaign; with rows
    to spare, every run."""
    import engine.evaluation.seam as seam
    import engine.planning.planner as planner
    import tui.model as model_mod
    from tui.model import CampaignModel
    if large:
        monkeypatch.setattr(seam, "LARGE_ROWS", 1_000)
    model_mod._OPENED.clear()
    seen = []
    monkeypatch.setattr(planner, "plan", lambda q, runs, **kw: seen.append(runs) or "planned")
    m = CampaignModel.load(sim)
    assert m.large == large
    notes = []
    assert m.plan("P_10", trials=2, target_tau=0.9, target_phi=0.8, sample_topics=1000, sample_rows=5_000,
                  notify=notes.append) == "planned"
    runs = seen[-1]
    per_run = 10 * 50
    assert runs["run"].nunique() == 5_000 // per_run == len(runs) // per_run     # 10 whole runs of 40
    assert notes and "10 of the 40 runs" in notes[-1]
    m.plan("P_10", trials=2, target_tau=0.9, target_phi=0.8, sample_topics=1000, sample_rows=5_000)
    assert sorted(set(seen[-1]["run"].astype(str))) == sorted(set(runs["run"].astype(str)))   # seeded
    m.plan("P_10", trials=2, target_tau=0.9, target_phi=0.8, sample_topics=1000, sample_rows=10**9)
    assert seen[-1]["run"].nunique() == 40 and len(seen[-1]) == 40 * per_run
    model_mod._OPENED.clear()


def test_heat_row_cells_and_widths_are_heat_part():
    """The matrix's lazy row gives heat_part's cells, cell for cell (edges, NaN, infinities, values off the
    ramp, a flat ramp, random values), and their widths without making them."""
    import numpy as np
    from tui.widgets.cells import HeatRow, heat_part
    v = np.concatenate([[0.0, 0.12345, 0.9996, 0.99949, 1.0, 2.5, -0.25, np.nan, np.inf, 12.345, 0.5, -0.5, 1.7,
                         0.999999, -np.inf, 0.25, 1 / 3], np.random.default_rng(0).random(2000)])
    for lo, hi in ((0.0, 1.0), (0.2, 0.8), (0.5, 0.5), (0.1, 0.9), (0.0, 1.7)):
        lead = [("t1", None), ("12", None)]
        row = HeatRow(lead, v, lo, hi)
        want = lead + [heat_part(x, lo, hi) for x in v]
        assert len(row) == len(want) and list(row) == want
        assert [row[j] for j in range(len(want))] == want and row[-1] == want[-1]
        assert HeatRow(lead, v, lo, hi).widths() == [len(t) for t, _ in want]
        with pytest.raises(IndexError):
            row[len(want)]


def _summarize_by_groupby(df):
    """The summary as a pandas groupby over (run, measure) makes it (the oracle)."""
    import numpy as np
    import pandas as pd
    from engine.evaluation.evaluate import aggregate_kind
    from engine.measures.registry import aggregate_values
    runs = list(df["run"].cat.categories) if hasattr(df["run"], "cat") else []
    order = list(df["measure"].cat.categories) if hasattr(df["measure"], "cat") else []
    out = {}
    for (run, meas), grp in df.groupby(["run", "measure"], observed=True, sort=False):
        kind = aggregate_kind(str(meas), df)
        v = grp["value"].to_numpy(np.float64)
        out.setdefault(meas, {})[run] = np.nan if kind == "validmean" and np.isnan(v).all() else aggregate_values(kind, v)
    table = pd.DataFrame(out)
    order = order or list(out)
    runs = runs or list(table.index)
    return table.reindex(index=runs, columns=[m for m in order if m in table.columns])


@pytest.mark.parametrize("seed", range(6))
def test_summarize_equals_the_groupby_summary(seed):
    """`summarize` by codes gives the groupby's table bit for bit: means, sums, geometric means and valid
    means in topic order, ragged groups, missing values, rows in any order, categorical or text columns."""
    import numpy as np
    import pandas as pd
    from engine.evaluation.evaluate import summarize
    rng = np.random.default_rng(seed)
    measures = ["map", "P_10", "num_rel_ret", "gm_map", "accuracy"]
    rows = []
    for r in range(int(rng.integers(1, 30))):
        for m in measures:
            for t in range(int(rng.integers(1, 12))):
                v = rng.random() * (10 if m == "num_rel_ret" else 1)
                if m == "accuracy" and rng.random() < 0.4:
                    v = np.nan
                rows.append((f"r{r}", f"t{t}", m, [v, 0.0, -0.0][int(rng.integers(0, 3)) if rng.random() < 0.2 else 0]))
    df = pd.DataFrame(rows, columns=["run", "topic", "measure", "value"]).sample(frac=1.0, random_state=seed)
    if seed % 2:
        df["run"] = pd.Categorical(df["run"], categories=sorted(set(df["run"]))[::-1])
        df["measure"] = pd.Categorical(df["measure"], categories=measures)
    got, want = summarize(df), _summarize_by_groupby(df)
    assert list(got.index) == list(want.index) and list(got.columns) == list(want.columns)
    a, b = got.to_numpy(np.float64), want.to_numpy(np.float64)
    assert ((a == b) | (np.isnan(a) & np.isnan(b))).all()
    assert (np.signbit(a) == np.signbit(b)).all()
