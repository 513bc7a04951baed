"""engine.campaign.tables: p-values equal pt.Experiment's (scipy ttest_rel per measure vs the baseline, Holm over the
compared runs), corrections, wins/losses, and the LaTeX table's marks."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from engine.campaign.tables import compare, compare_scores, correct


def _fixed_example():
    rng = np.random.default_rng(11)
    topics = [str(t) for t in range(1, 13)]
    docs = [f"d{i}" for i in range(30)]
    qrels = pd.DataFrame([(t, d, int(rng.integers(0, 3)) if rng.random() < 0.5 else 0)
                          for t in topics for d in docs], columns=["topic", "doc", "grade"])
    runs = {}
    for k, tag in enumerate(["base", "r1", "r2", "r3"]):
        rows = []
        for t in topics:
            perm = rng.permutation(docs)[:15]
            rows += [(t, d, float(15 - i) + 0.1 * k) for i, d in enumerate(perm)]
        runs[tag] = pd.DataFrame(rows, columns=["topic", "doc", "score"])
    return runs, qrels


def _holm_oracle(p):
    """Holm step-down written out: sort, multiply by (m - i), running max, cap at 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adj = [0.0] * m
    running = 0.0
    for i, idx in enumerate(order):
        running = max(running, (m - i) * p[idx])
        adj[idx] = min(running, 1.0)
    return adj


def test_pvalues_match_pt_experiment_oracle():
    runs, qrels = _fixed_example()
    res = compare(runs, qrels, ["map", "ndcg", "P.5"], baseline="base", test="t", correction="holm")
    from engine.evaluation.evaluate import evaluate
    long = evaluate(qrels, pd.concat([r.assign(run=k) for k, r in runs.items()]), ["map", "ndcg", "P.5"])
    assert set(res.measures) == {"map", "ndcg", "P_5"}
    for m in res.measures:
        mat = long[long["measure"] == m].pivot(index="topic", columns="run", values="value")
        rows = res.vs_baseline(m)
        raw = [stats.ttest_rel(mat["base"], mat[r]).pvalue for r in rows["a"]]
        np.testing.assert_allclose(rows["p"], raw, rtol=1e-10)
        np.testing.assert_allclose(rows["p_adj"], _holm_oracle(raw), rtol=1e-10)
        for r in rows.itertuples():
            d = mat[r.a] - mat["base"]
            assert (r.wins, r.losses) == (int((d > 0).sum()), int((d < 0).sum()))   # pt.Experiment's +/-
            assert r.wins + r.losses + r.ties == len(mat)
            assert r.effect == pytest.approx(d.mean() / d.std(ddof=1))
        np.testing.assert_allclose(res.means[m].to_numpy(), mat[res.runs].mean().to_numpy())


def test_list_of_runs_and_index_baseline_like_pt_experiment():
    runs, qrels = _fixed_example()
    by_tag = compare(runs, qrels, ["map"], baseline="base")
    by_index = compare(list(runs.values()), qrels, ["map"], baseline=0, names=list(runs))
    pd.testing.assert_frame_equal(by_tag.pairs, by_index.pairs)


def test_wilcoxon_and_sign_equal_scipy():
    runs, qrels = _fixed_example()
    res = compare(runs, qrels, ["map"], baseline="base", test="wilcoxon", correction=None)
    from engine.evaluation.evaluate import evaluate
    long = evaluate(qrels, pd.concat([r.assign(run=k) for k, r in runs.items()]), ["map"])
    mat = long.pivot(index="topic", columns="run", values="value")
    for r in res.vs_baseline("map").itertuples():
        assert r.p == pytest.approx(stats.wilcoxon(mat["base"], mat[r.a]).pvalue, rel=1e-10)
        assert r.p_adj == r.p
    sign = compare(runs, qrels, ["map"], baseline="base", test="sign")
    for r in sign.vs_baseline("map").itertuples():
        assert r.p == pytest.approx(stats.binomtest(r.wins, r.wins + r.losses).pvalue)


def test_corrections_hand_computed():
    p = [0.01, 0.04, 0.03, 0.005]
    np.testing.assert_allclose(correct(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(correct(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02])
    np.testing.assert_allclose(correct(p, "bh"), [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_allclose(correct(p, None), p)


def _table():
    # 4 runs x 10 topics; c clearly better than a and b; d identical to a
    rng = np.random.default_rng(3)
    base = rng.uniform(0.1, 0.5, 10)
    vals = {"a": base, "b": base + rng.normal(0, 0.05, 10), "c": base + 0.3 + rng.normal(0, 0.02, 10),
            "d": base + rng.normal(0, 0.001, 10)}
    return pd.DataFrame([(r, str(t), m, v[t] * (1 if m == "map" else 0.9))
                         for r, v in vals.items() for t in range(10) for m in ("map", "ndcg")],
                        columns=["run", "topic", "measure", "value"])


@pytest.mark.parametrize("correction", ["holm", "bonferroni", "bh"])
def test_latex_one_mark_per_significant_pair_all_pairs(correction):
    res = compare_scores(_table(), test="t", correction=correction)
    tex = res.to_latex()
    sig = res.pairs[res.pairs["significant"]]
    assert len(sig) > 0
    found = 0
    letter_of = res.letters
    for line in tex.splitlines():
        m = re.match(r"\(([a-z]+)\) (\S+) & (.*) \\\\$", line)
        if not m:
            continue
        run, cells = m.group(2), m.group(3).split(" & ")
        for meas, cell in zip(res.measures, cells):
            marks = re.findall(r"\\textsuperscript\{([a-z]*)\}", cell)
            letters = marks[0] if marks else ""
            expected = sorted(letter_of[r.b if r.a == run else r.a] for r in sig.itertuples()
                              if r.measure == meas and run in (r.a, r.b) and
                              ((r.a == run) == (r.diff > 0)))
            assert sorted(letters) == expected
            found += len(letters)
    assert found == len(sig)
    assert r"\textbf{" in tex and "Holm" in res.legend() or correction != "holm"


def test_latex_baseline_marks_and_bold():
    res = compare_scores(_table(), baseline="a", test="t", correction="holm")
    tex = res.to_latex()
    c_line = next(l for l in tex.splitlines() if l.startswith("c &"))
    assert c_line.count(r"\textsuperscript{\dag}") == 2            # better than baseline on both measures
    assert r"\textbf{" in c_line
    n_marks = len(re.findall(r"\\textsuperscript\{\\d?dag\}", tex))
    assert n_marks == int(res.pairs["significant"].sum())
    md = res.to_markdown()
    assert "**" in md and "<sup>\u2020</sup>" in md
    csv = pd.read_csv(__import__("io").StringIO(res.to_csv()))
    assert list(csv["run"]) == ["a", "b", "c", "d"]


def test_table_command_latex(tmp_path, capsys):
    from pathlib import Path
    from engine.campaign.campaign import load_campaign
    from cranfield.cli import main
    demo = Path(__file__).resolve().parents[1] / "campaigns" / "demo"
    out = tmp_path / "t.tex"
    assert main(["table", str(demo), "--baseline", "asterA1", "-m", "map", "--correction", "bonferroni",
                 "--format", "latex", "-o", str(out)]) == 0
    res = compare_scores(load_campaign(demo).evaluate(["map"]), ["map"], "asterA1", correction="bonferroni")
    tex = out.read_text()
    assert tex == res.to_latex()
    assert len(re.findall(r"\\textsuperscript\{\\d?dag\}", tex)) == int(res.pairs["significant"].sum()) > 0
    assert main(["table", str(demo), "--baseline", "nope"]) == 3


@pytest.mark.parametrize("chunk", [3, 8192])
def test_all_pairs_of_many_runs_equal_scipy_pair_by_pair(monkeypatch, chunk):
    """All pairs of 30 runs (two-letter marks past 26), some runs missing topics: every pair's p is scipy's
    ttest_rel over the topics both runs have, its means and counts those of the pair alone, whichever chunk
    of pairs it was computed in; a mark lists the letters of the runs beaten in run order, comma-separated."""
    import engine.campaign.tables as tables
    monkeypatch.setattr(tables, "PAIR_CHUNK", chunk)
    rng = np.random.default_rng(4)
    rows = [(f"r{r:02d}", f"t{t}", "map", float(np.round(rng.random() * (1 + r / 10), 3)))
            for r in range(30) for t in range(25) if not (r in (3, 17) and t in (2, 5))]
    table = pd.DataFrame(rows, columns=["run", "topic", "measure", "value"])
    c = compare_scores(table)
    assert len(c.pairs) == 30 * 29 // 2
    wide = table.pivot(index="topic", columns="run", values="value")
    for row in c.pairs.itertuples(index=False):
        both = wide[[row.a, row.b]].dropna()
        d = both[row.a].to_numpy() - both[row.b].to_numpy()
        assert row.n == len(both) == (23 if {row.a, row.b} & {"r03", "r17"} else 25)
        assert row.p == pytest.approx(stats.ttest_rel(both[row.a], both[row.b]).pvalue, rel=1e-12)
        assert row.mean_a == pytest.approx(both[row.a].mean(), rel=1e-14) and row.wins == int((d > 0).sum())
    assert list(c.pairs["p_adj"]) == list(correct(c.pairs["p"].to_numpy(), "holm"))
    marks = c.marks()
    best = c.means["map"].idxmax()
    beaten = sorted({(r.b if r.diff > 0 else r.a) for r in c.pairs.itertuples()
                     if r.significant and (r.a if r.diff > 0 else r.b) == best}, key=c.runs.index)
    assert beaten and marks[(best, "map")] == ",".join(c.letters[r] for r in beaten)
    assert "," in marks[(best, "map")] and c.letters[c.runs[26]] == "aa"
