"""Significance tables in the prediction-powered form (issue 38): every pair's PPI interval, its p-value from
the same estimate and standard error, the family-wise correction, resolved or not, beside the human-only
result; the same numbers from the library, `stability significance --ci ppi`, `compare --ci ppi`, the
reports and the TUI's Compare screen."""
from __future__ import annotations

import json

import numpy as np
import pytest
from _cli import cli

from engine.campaign.campaign import load_campaign
from engine.campaign.ppisig import ppi_significance


@pytest.fixture(scope="module")
def camp(tmp_path_factory):
    d = tmp_path_factory.mktemp("ppisig") / "camp"
    r = cli("simulate", "--out", d, "--runs", "4", "--topics", "60", "--depth", "30", "--pool-depth", "10",
            "--model-judge", "noisy", "--judge-error", "0.2", "--seed", "4", timeout=120, in_process=True)
    assert r.rc == 0, r.text
    from engine.formats.qrels import read_qrels, write_qrels
    q = read_qrels(d / "judgments" / "qrels.txt")
    topics = sorted(q["topic"].unique())
    keep = set(np.random.default_rng(1).choice(topics, 30, replace=False))
    write_qrels(d / "judgments" / "qrels.txt", q[q["topic"].isin(keep)])      # people judged 30 of 60 topics
    return d


@pytest.fixture(scope="module")
def sig(camp):
    return ppi_significance(load_campaign(camp), ["map"])


def test_interval_p_is_the_interval_inverted():
    """p < alpha exactly when the interval at alpha excludes 0; at alpha = p the interval touches 0."""
    from scipy import stats

    from engine.stability.significance import interval_p
    est, se = np.array([0.03, -0.05, 0.0, 0.02, 0.0]), np.array([0.01, 0.04, 0.01, 0.0, 0.0])
    p = interval_p(est, se, 29)
    np.testing.assert_allclose(p[:3], 2 * stats.t.sf(np.abs(est[:3] / se[:3]), 29), rtol=1e-12)
    assert p[3] == 0 and np.isnan(p[4])
    np.testing.assert_allclose(interval_p(est[:2], se[:2]), 2 * stats.norm.sf(np.abs(est[:2] / se[:2])), rtol=1e-12)
    for e, s, pv in zip(est[:2], se[:2], p[:2]):           # the interval at level pv has a bound at 0
        q = stats.t.ppf(1 - pv / 2, 29)
        assert min(abs(e - q * s), abs(e + q * s)) < 1e-12


def test_ppi_pairs_match_the_intervals_and_the_corrections(camp, sig):
    """The table's intervals are campaign_ppi's (the leaderboard's); the PPI p is below 0.05 exactly where
    the interval excludes 0; the adjusted p-values are statsmodels' Holm / Bonferroni; the human-only p is
    the paired t-test on the people's topics."""
    from statsmodels.stats.multitest import multipletests

    from engine.judgments.ppi import campaign_ppi, topic_values
    from engine.stability.significance import paired_p
    c = load_campaign(camp)
    p = sig.pairs
    assert (sig.model, sig.n_human, sig.n_topics, len(p)) == ("judge-model", 30, 60, 6)
    ref = campaign_ppi(c, "judge-model", "human", ["map"]).pairs
    for col in ("difference", "lower", "upper", "human_lower", "human_upper", "model_only"):
        np.testing.assert_allclose(p[col], ref[col], rtol=0, atol=1e-12)
    excl = (p["lower"] > 0) | (p["upper"] < 0)
    assert ((p["p_ppi"] < 0.05) == excl).all() and (ref["resolved"] == excl).all()
    np.testing.assert_allclose(p["p_ppi_adj"], multipletests(p["p_ppi"], method="holm")[1], rtol=1e-12)
    np.testing.assert_allclose(p["p_human_adj"], multipletests(p["p_human"], method="holm")[1], rtol=1e-12)
    assert (p["resolved_ppi"] == (p["p_ppi_adj"] < 0.05)).all()
    # this campaign has a pair whose interval excludes 0 but which Holm does not resolve
    assert (excl & ~p["resolved_ppi"]).any()
    tv = topic_values(c, "judge-model", "human", ["map"])[0]
    h = tv.human[tv.labelled]
    names = list(tv.runs)
    for r in p.itertuples(index=False):
        d = h[:, names.index(r.run_a)] - h[:, names.index(r.run_b)]
        assert r.human_difference == pytest.approx(d.mean(), abs=1e-12)
        assert r.p_human == pytest.approx(float(paired_p(d)[0]), rel=1e-9)
    b = ppi_significance(c, ["map"], correction="bonferroni").pairs
    np.testing.assert_allclose(b["p_ppi_adj"], np.minimum(p["p_ppi"] * 6, 1), rtol=1e-12)
    n = ppi_significance(c, ["map"], correction="none").pairs
    assert (n["resolved_ppi"] == excl).all()


def test_pair_turned_round(sig):
    r = sig.pairs.iloc[0]
    t = sig.pair("map", r["run_b"], r["run_a"])
    assert (t["difference"], t["lower"], t["upper"]) == (-r["difference"], -r["upper"], -r["lower"])
    assert t["p_ppi_adj"] == r["p_ppi_adj"] and t["resolved_ppi"] == r["resolved_ppi"]


def test_small_sample_caution(camp, tmp_path):
    """With 12 human-judged topics the table and every pair's lines carry the caution."""
    import shutil

    from engine.formats.qrels import read_qrels, write_qrels
    d = tmp_path / "few"
    shutil.copytree(camp, d)
    q = read_qrels(d / "judgments" / "qrels.txt")
    keep = sorted(q["topic"].unique())[:12]
    write_qrels(d / "judgments" / "qrels.txt", q[q["topic"].isin(keep)])
    s = ppi_significance(load_campaign(d), ["map"])
    assert s.n_human == 12 and s.small and "only 12 human-judged topics" in s.caution()
    r = s.pairs.iloc[0]
    assert s.caution() in s.pair_lines("map", r["run_a"], r["run_b"])


def test_cli_significance_and_compare_give_the_library_numbers(camp, sig):
    r = cli("stability", "significance", "--campaign", camp, "-m", "map", "--ci", "ppi", "--json", timeout=120)
    assert r.rc == 0, r.text
    got = json.loads(r.out)
    assert got["heading"] == sig.heading() and len(got["pairs"]) == len(sig.pairs)
    for g, row in zip(got["pairs"], sig.pairs.to_dict("records")):
        for k in ("difference", "lower", "upper", "p_ppi", "p_ppi_adj", "human_lower", "p_human_adj"):
            assert g[k] == pytest.approx(row[k], rel=1e-12, abs=1e-15)
        assert (g["run_a"], g["resolved_ppi"], g["resolved_human"]) == (row["run_a"], row["resolved_ppi"],
                                                                       row["resolved_human"])
    r = cli("stability", "significance", "--campaign", camp, "-m", "map", "--ci", "ppi", "--quiet", timeout=120, in_process=True)
    assert r.rc == 0 and "holm-adjusted over all pairs" in r.out and "resolved_ppi" in r.out
    row = sig.pairs.iloc[1]
    r = cli("compare", camp, row["run_b"], row["run_a"], "-m", "map", "--ci", "ppi", timeout=120)
    assert r.rc == 0, r.text
    lines = sig.pair_lines("map", row["run_b"], row["run_a"])
    for ln in lines:
        assert ln in r.out
    assert f"{-row['difference']:+.4f} [{-row['upper']:+.4f}, {-row['lower']:+.4f}]" in lines[0]
    r = cli("compare", camp, row["run_b"], row["run_a"], "-m", "map", "--ci", "ppi", "--judgments", "nosuch", in_process=True)
    assert r.rc != 0 and r.out == "" and "unknown judgment source 'nosuch'" in r.err and "Traceback" not in r.text
    r = cli("stability", "significance", "--csv", camp / "x.csv", "--ci", "ppi", in_process=True)
    assert r.rc != 0 and "--ci ppi needs --campaign" in r.err and "Traceback" not in r.text


def test_cli_without_a_model_source_says_what_to_do(tmp_path):
    from _cli import DEMO
    import shutil
    d = tmp_path / "demo"
    shutil.copytree(DEMO, d)
    r = cli("compare", d, "--ci", "ppi", *_two_runs(d), in_process=True)
    assert r.rc != 0 and "needs a model judgment source" in r.err and "Traceback" not in r.text


def _two_runs(d):
    runs = list(load_campaign(d).run_meta()["run"].astype(str))
    return runs[0], runs[1]


def test_reports_carry_the_pairs_table(camp, sig, tmp_path):
    out = tmp_path / "rep"
    r = cli("report", camp, "-m", "map", "--out", out, timeout=180)
    assert r.rc == 0, r.text
    index = (out / "index.md").read_text()
    assert "## Pairs of runs with model and human judgments" in index
    for row in sig.pairs.itertuples(index=False):
        line = next(x for x in index.splitlines() if x.startswith(f"| map | {row.run_a} | {row.run_b} |"))
        assert f"| {row.lower:.4g} | {row.upper:.4g} | {row.p_ppi:.4g} | {row.p_ppi_adj:.4g} | {row.resolved_ppi} |" in line
        for run in (row.run_a, row.run_b):
            assert line in (out / f"{run}.md").read_text()
        page = (out / f"{row.run_a}.html").read_text()
        assert f"<td>{row.lower:.4g}</td><td>{row.upper:.4g}</td><td>{row.p_ppi:.4g}</td>" in page
    assert "Pairs of runs with model" in (out / "index.html").read_text()


def test_compare_screen_shows_the_ppi_form_at_80x24(camp, sig, tmp_path):
    """The Compare screen: i shows the pair's PPI and human-only lines (the library's text), in words, not
    colour; i again hides them; a campaign without a model source says why."""
    from tui.app import CranfieldApp
    from tui.testing import press, run_async, screen_text, settle

    @run_async
    async def body():
        app = CranfieldApp(camp, export_dir=tmp_path / "exports")
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await press(pilot, "l", "x")
            scr = app.screen
            assert type(scr).__name__ == "CompareScreen" and scr.measure == "map"
            assert not any(ln.startswith("PPI") for ln in scr.title_lines())
            await press(pilot, "i")
            await settle(pilot)
            lines = sig.pair_lines("map", scr.a, scr.b)
            assert scr.title_lines()[-len(lines):] == lines
            title = str(scr.query_one("#cmp-title").render())
            assert lines[0] in title.replace("\n", "")
            text = screen_text(app)
            assert "PPI (judge-model" in text and ("not resolved" in text or "resolved" in text)
            await press(pilot, "w")
            assert scr.title_lines()[-len(lines):] == sig.pair_lines("map", scr.a, scr.b)
            await press(pilot, "i")
            assert not any(ln.startswith("PPI") for ln in scr.title_lines())
    body()


def test_table_command_writes_the_ppi_form(camp):
    """`cranfield table --ci ppi`: the library's table (here Bonferroni) as CSV, the heading in Markdown."""
    import io

    import pandas as pd
    s = ppi_significance(load_campaign(camp), ["map"], correction="bonferroni")
    r = cli("table", camp, "-m", "map", "--ci", "ppi", "--correction", "bonferroni", "--format", "csv", timeout=120)
    assert r.rc == 0, r.text
    got = pd.read_csv(io.StringIO(r.out))
    for col in ("difference", "lower", "upper", "p_ppi", "p_ppi_adj", "p_human_adj"):
        np.testing.assert_allclose(got[col], s.pairs[col], rtol=1e-12)
    assert got["resolved_ppi"].tolist() == s.pairs["resolved_ppi"].tolist()
    base = s.pairs["run_a"].iat[0]
    r = cli("table", camp, "-m", "map", "--ci", "ppi", "--baseline", base, timeout=120, in_process=True)
    assert r.rc == 0 and r.out.startswith(ppi_significance(load_campaign(camp), ["map"]).heading())
    rows = [x for x in r.out.splitlines() if x.startswith("| map |")]
    assert len(rows) == 3 and all(f"| {base} |" in x for x in rows)
