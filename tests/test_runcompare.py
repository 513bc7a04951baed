"""Two-run comparison: wins + losses + ties = topics, the t-test p equals scipy's ttest_rel, tau_ap on a
hand-computed case, side-by-side grades with unjudged markers."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from engine.campaign.campaign import load_campaign
from cranfield.cli import main
from engine.campaign.runcompare import compare_two, list_correlation, side_by_side, tau_ap

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"


def test_tau_ap_hand_computed():
    # swap at the top: C(2)=0, C(3)=2, C(4)=3 -> 2/3 * (0 + 1 + 1) - 1 = 1/3
    assert tau_ap([2, 1, 3, 4], [1, 2, 3, 4]) == pytest.approx(1 / 3)
    # swap at the bottom: 2/3 * (1 + 1 + 2/3) - 1 = 7/9 ; Kendall tau is 2/3 for both
    assert tau_ap([1, 2, 4, 3], [1, 2, 3, 4]) == pytest.approx(7 / 9)
    assert tau_ap([1, 2, 3], [1, 2, 3]) == 1.0 and tau_ap([3, 2, 1], [1, 2, 3]) == -1.0
    tau, tap, n = list_correlation(["a", "b", "x", "d", "c"], ["a", "b", "c", "d", "y"])
    assert n == 4 and tau == pytest.approx(2 / 3) and tap == pytest.approx(7 / 9)


def test_compare_demo_runs_matches_scipy():
    camp = load_campaign(DEMO)
    table = camp.evaluate(["map"])
    res = compare_two(table, "asterA1", "birchA1", "map", test="t", threshold=0.05)
    n_topics = table[table["run"] == "asterA1"]["topic"].nunique()
    assert res.wins + res.losses + res.ties == n_topics == len(res.topics)
    m = table.pivot_table(index="topic", columns="run", values="value", observed=True)
    assert res.p == pytest.approx(stats.ttest_rel(m["asterA1"], m["birchA1"]).pvalue, rel=1e-10)
    d = m["asterA1"] - m["birchA1"]
    assert res.effect == pytest.approx(d.mean() / d.std(ddof=1))
    assert res.wins == int((d > 0.05).sum()) and res.losses == int((d < -0.05).sum())
    assert res.ties == int((d.abs() <= 0.05).sum()) > 0
    for t in ("wilcoxon", "sign", "randomization"):
        r2 = compare_two(table, "asterA1", "birchA1", "map", test=t)
        assert 0 < r2.p <= 1
    sign = compare_two(table, "asterA1", "birchA1", "map", test="sign")
    assert sign.p == pytest.approx(stats.binomtest(sign.wins, sign.wins + sign.losses).pvalue)


def test_side_by_side_grades_and_unjudged():
    runs = pd.DataFrame([("A", "1", "d1", 3.0), ("A", "1", "d2", 2.0), ("B", "1", "d3", 5.0)],
                        columns=["run", "topic", "doc", "score"])
    qrels = pd.DataFrame([("1", "d1", 2), ("1", "d3", 0)], columns=["topic", "doc", "grade"])
    s = side_by_side(runs, qrels, "A", "B", "1", depth=5)
    assert s.values.tolist() == [[1, "d1", "2", "d3", "0"], [2, "d2", "?", "", ""]]


def test_compare_cli(capsys):
    assert main(["compare", str(DEMO), "asterA1", "cedarA1", "--top", "3", "--depth", "5"]) == 0
    out = capsys.readouterr().out
    assert "wins 2, losses 18, ties 0" in out and "tau_ap" in out and "grade_cedarA1" in out
    assert main(["compare", str(DEMO), "asterA1", "nope"]) == 3
