"""The leaderboard's PPI intervals (issue 38): a campaign with a model source on every topic and people on a
sample shows each run's interval and resolved-pair marks, and both follow human judgments as they arrive."""
from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest
from _cli import cli

from tui.app import CranfieldApp
from tui.testing import press, run_async, screen_text, settle


@pytest.fixture(scope="module")
def camp(tmp_path_factory):
    d = tmp_path_factory.mktemp("tuippi") / "camp"
    r = cli("simulate", "--out", d, "--runs", "4", "--topics", "60", "--depth", "30", "--pool-depth", "10",
            "--model-judge", "noisy", "--judge-error", "0.2", "--seed", "4", timeout=120, in_process=True)
    assert r.rc == 0, r.text
    from engine.formats.qrels import read_qrels, write_qrels
    q = read_qrels(d / "judgments" / "qrels.txt")
    topics = sorted(q["topic"].unique())
    keep = set(np.random.default_rng(1).choice(topics, 30, replace=False))
    write_qrels(d / "judgments" / "qrels.txt", q[q["topic"].isin(keep)])      # people judged 30 of 60 topics
    q[~q["topic"].isin(keep)].to_csv(d.parent / "later.tsv", sep="\t", index=False)
    return d


def _widths(board):
    return np.array([hi - lo for _e, lo, hi in board.intervals.values()])


def test_participant_report_has_the_ppi_interval(camp, tmp_path):
    """`cranfield report`: each run's page gives its PPI interval per measure, the library's numbers; a
    campaign without a model source gets no such section."""
    from engine.campaign.campaign import load_campaign
    from engine.judgments.ppi import campaign_ppi
    out = tmp_path / "rep"
    r = cli("report", camp, "-m", "map", "-m", "P.10", "--out", out, timeout=180)
    assert r.rc == 0, r.text
    rep = campaign_ppi(load_campaign(camp), "judge-model", "human", ["map", "P.10"])
    for row in rep.runs.itertuples(index=False):
        md = (out / f"{row.run}.md").read_text()
        assert "## Intervals from model and human judgments" in md
        assert "the model source judge-model judged all 60 topics, people 30 of them" in md
        section = md.split("## Intervals from model and human judgments")[1].split("\n## ")[0]
        line = next(x for x in section.splitlines() if x.startswith(f"| {row.measure} "))
        assert f"{row.lower:.4f}" in line and f"{row.upper:.4f}" in line and f"{row.human_lower:.4f}" in line
        page = (out / f"{row.run}.html").read_text()
        assert f"<td>{row.lower:.4f}</td><td>{row.upper:.4f}</td>" in page
    plain = tmp_path / "plain"
    import shutil
    shutil.copytree(camp, plain)
    shutil.rmtree(plain / "judgments" / "sources")
    r = cli("report", plain, "-m", "map", "--out", tmp_path / "rep2", timeout=180, in_process=True)
    assert r.rc == 0, r.text
    assert "Intervals from model" not in next((tmp_path / "rep2").glob("*A1.md")).read_text()


@run_async
async def test_leaderboard_ppi_intervals_follow_human_judgments(camp, tmp_path):
    import pandas as pd

    from engine.campaign.campaign import load_campaign
    from engine.judging.workflow import record_judgment
    from engine.judgments.ppi import campaign_ppi
    app = CranfieldApp(camp, export_dir=tmp_path / "exports", assessor="ann")
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        await settle(pilot)
        scr = app.screen
        b0 = scr.ppi
        assert b0 is not None and b0.model == "judge-model" and (b0.n_human, b0.n_topics) == (30, 60)
        measure = b0.measure
        rep = campaign_ppi(load_campaign(camp), "judge-model", "human", [measure])
        for run, lo, hi in zip(rep.runs["run"], rep.runs["lower"], rep.runs["upper"]):   # the CLI's numbers
            assert b0.intervals[run][1:] == pytest.approx((lo, hi), abs=1e-12)
            assert f"{lo:.3f}–{hi:.3f}" in screen_text(app)
        assert f"PPI {measure} n=30/60" in screen_text(app)
        shown = [str(r) for r in scr.frame["run"]]
        marks = [b0.cell(r, shown[i - 1] if i else None).endswith("≠") for i, r in enumerate(shown)]
        res = rep.pairs.set_index(["run_a", "run_b"])["resolved"]
        expect = [False] + [bool(res.get((a, b), res.get((b, a)))) for a, b in zip(shown[1:], shown[:-1])]
        assert marks == expect
        # people judge 15 more topics (the engine's judging API, as the judging desk would)
        later = pd.read_csv(camp.parent / "later.tsv", sep="\t", dtype={"topic": str, "doc": str})
        more = sorted(later["topic"].unique())[:15]
        for t, d, g in later[later["topic"].isin(more)][["topic", "doc", "grade"]].itertuples(index=False):
            record_judgment(camp, t, d, int(g), "bob")
        end = time.monotonic() + 20
        while time.monotonic() < end and (scr.ppi is None or scr.ppi.n_human != 45):
            await asyncio.sleep(0.2)
            await pilot.pause()
        await settle(pilot)
        b1 = scr.ppi
        assert b1 is not None and b1.n_human == 45
        assert _widths(b1).mean() < _widths(b0).mean()
        assert f"PPI {measure} n=45/60" in screen_text(app)
        cells0 = [b0.cell(r, None) for r in shown]
        assert [b1.cell(r, None) for r in shown] != cells0
