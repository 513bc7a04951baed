"""Every registered measure (default parameters) gives the same values on every evaluation path: engine.evaluation.evaluate,
the campaign API in memory, the streamed run store (several topic blocks), the TUI model's leaderboard and
`cranfield eval --campaign`, on the demo and on a simulated campaign whose campaign.yaml has non-default gains."""
from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import engine.evaluation.seam as evaluation
from engine.evaluation.blocks import evaluate_store
from engine.campaign.campaign import load_campaign
from cranfield.cli import main
from engine.evaluation.evaluate import evaluate, summarize
from engine.measures import REGISTRY, load_all
from engine.ranking.join import rename_runs

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"
TOL = 1e-12


def all_measures() -> list[str]:
    load_all()
    return [m.name for m in sorted(REGISTRY.values(), key=lambda m: m.order)]


def _gained(root: Path) -> Path:
    from engine.simulation.campaigns import simulate, write_campaign
    sim = simulate(n_runs=5, n_topics=6, depth=40, seed=3)
    write_campaign(sim, root, pool_depth=15)
    cfg = yaml.safe_load((root / "campaign.yaml").read_text())
    scale = cfg["relevance"]["scale"]
    for grade, gain in zip(sorted(scale), (0, 2.5, 7)):
        scale[grade]["gain"] = gain
    (root / "campaign.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return root


@pytest.fixture(scope="module", params=["demo", "gains"])
def campaign(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(request.param) / "c"
    if request.param == "demo":
        shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".cranfield-*"))   # never write into the demo
    else:
        _gained(root)
    return root


def _series(df: pd.DataFrame) -> pd.Series:
    s = df.assign(run=df["run"].astype(str), topic=df["topic"].astype(str), measure=df["measure"].astype(str))
    return s.set_index(["run", "topic", "measure"])["value"].astype(float).sort_index()


def _same(a: pd.Series, b: pd.Series, what: str) -> None:
    assert len(a) and list(a.index) == list(b.index), what
    x, y = a.to_numpy(), b.to_numpy()
    assert np.array_equal(np.isnan(x), np.isnan(y)), what
    ok = ~np.isnan(x)
    assert np.abs(x[ok] - y[ok]).max() <= TOL, what


def test_every_measure_equal_on_every_path(campaign, monkeypatch):
    names = all_measures()
    camp = load_campaign(campaign)
    gains = camp.gains()
    if campaign.parent.name.startswith("gains"):
        assert sorted(gains.values()) == [0, 2.5, 7]
    opt = camp.eval_options()
    ref = evaluate(camp.qrels(), camp.runs(), names, options=opt, gains=gains)
    base = _series(ref)
    assert base.index.get_level_values("measure").nunique() > 100     # every numeric output of the 63 measures

    mem = evaluation.evaluate_campaign(camp, names)
    assert not mem.streamed
    _same(base, _series(mem.table), "campaign API in memory")

    st = camp.store()
    blocks = evaluate_store(st, camp.qrels(), names, options=opt, gains=gains, block_rows=max(st.rows // 3, 1))
    _same(base, _series(rename_runs(blocks, camp.run_renames())), "streamed store, 3 topic blocks")
    monkeypatch.setattr(evaluation, "LARGE_ROWS", 0)
    streamed = evaluation.evaluate_campaign(camp, names)
    assert streamed.streamed
    _same(base, _series(streamed.table), "campaign API streamed")
    monkeypatch.undo()

    import tui.model as model_mod
    from tui.source import open_campaign
    model_mod._OPENED.clear()
    model = model_mod.CampaignModel(open_campaign(campaign))
    s = model.evaluate(names)
    board = model.leaderboard().set_index("run")
    means = summarize(ref)
    numeric = [n for n in means.columns if n in board.columns]
    assert len(numeric) == means.shape[1]
    for n in numeric:
        got = board[n].reindex(means.index).to_numpy(float)
        want = means[n].to_numpy(float)
        assert np.array_equal(np.isnan(got), np.isnan(want)) and np.nanmax(np.abs(got - want), initial=0) <= TOL, n
        per = base.xs(n, level="measure")
        m = s.matrix[n]
        tui_vals = [m[s.runs.index(r), s.topics.index(t)] for r, t in per.index]
        assert np.allclose(tui_vals, per.to_numpy(), rtol=0, atol=TOL, equal_nan=True), n

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["eval", "--campaign", str(campaign), "-q", "--format", "csv",
                     *[a for n in names for a in ("-m", n)]]) == 0
    wide = pd.read_csv(io.StringIO(out.getvalue()), dtype={"run": str, "topic": str})
    cli = wide.melt(id_vars=["run", "topic"], var_name="measure", value_name="value")
    cli = _series(cli.dropna(subset=["value"]))
    _same(base.dropna(), cli.reindex(base.dropna().index), "cranfield eval --campaign")


def test_campaign_trec_output_names_every_run(campaign, capsys):
    assert main(["eval", "--campaign", str(campaign), "-m", "map"]) == 0
    lines = capsys.readouterr().out.splitlines()
    ids = [ln.split("\t")[2] for ln in lines if ln.startswith("runid")]
    camp = load_campaign(campaign)
    assert ids == list(dict.fromkeys(camp.runs()["run"].astype(str))) and len(ids) > 1
    assert sum(ln.startswith("map ") for ln in lines) == len(ids)
