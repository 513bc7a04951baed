"""Two-run comparison: wins + losses + ties = topics, the t-test p equals scipy's ttest_rel, tau_ap on a
hand-computed case, side-by-side grades with unjudged markers."""
from __future__ import annotations

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


def test_compare_ranks_both_runs_once(monkeypatch):
    """The ranked lists of both runs come from one pass of the ranking kernel (it ranked each run and
    topic separately, turning the whole run table's categories to text each time: 14 s on 31 x 40)."""
    import engine.ranking.join as join
    calls = []
    real = join.ranked_rows

    def counting(runs, *a, **k):
        calls.append(len(runs))
        return real(runs, *a, **k)

    monkeypatch.setattr(join, "ranked_rows", counting)
    rows = [("A", t, f"d{i}", s) for t in (1, 2) for i, s in enumerate([3.0, 2.0, 2.0, 1.0])]
    rows += [("B", t, f"d{i}", s) for t in (1, 2) for i, s in enumerate([1.0, 2.0, 3.0, 4.0])]
    rows += [("C", 1, "d9", 1.0)]
    runs = pd.DataFrame(rows, columns=["run", "topic", "doc", "score"]).astype(
        {"run": "category", "topic": "category", "doc": "category"})
    table = pd.DataFrame([(r, str(t), "map", v) for r, v in (("A", 0.5), ("B", 0.25)) for t in (1, 2)],
                         columns=["run", "topic", "measure", "value"])
    res = compare_two(table, "A", "B", "map", runs=runs)
    assert calls == [16]                       # one call, the two runs' rows only
    # A: d0 d2 d1 d3 (tie 2.0 broken by doc id descending); B: d3 d2 d1 d0
    tau, tap, n = list_correlation(["d0", "d2", "d1", "d3"], ["d3", "d2", "d1", "d0"])
    assert tau == pytest.approx(-2 / 3) and n == 4     # only d2 > d1 agree: (1 - 5) / 6
    assert res.correlation.values.tolist() == [["1", tau, tap, 4], ["2", tau, tap, 4]]
    s = side_by_side(runs, pd.DataFrame({"topic": ["1"], "doc": ["d2"], "grade": [1]}), "A", "B", 1, depth=2)
    assert s.values.tolist() == [[1, "d0", "?", "d3", "?"], [2, "d2", "1", "d2", "1"]]
