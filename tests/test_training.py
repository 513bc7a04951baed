"""Training collections: LETOR feature files, selection methods, rankers, training-measure sensitivity."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.errors import CranfieldError, FormatError
from engine.training.features import make_table, read_features, read_letor, write_features, simulate_features
from engine.training import rankers as R
from engine.training.select import characterize, discrepancy, precision_recall, select
from engine.training.sensitivity import reduce_judgments, sensitivity, simulate_family


def _table():
    X = np.array([[1.0, 0.0, 0.25], [0.5, 2.0, -1e-9], [0.0, 0.0, 3.5]])
    return make_table(["q1", "q1", "q2"], ["d1", "d2", "d3"], [2, 0, 1], X)


@pytest.mark.parametrize("name", ["f.txt", "f.txt.gz", "f.parquet"])
def test_feature_round_trip(tmp_path, name):
    df = _table()
    write_features(tmp_path / name, df)
    back = read_features(tmp_path / name)
    pd.testing.assert_frame_equal(back.reset_index(drop=True), df, check_dtype=False)


def test_letor_sparse_and_docid_forms(tmp_path):
    p = tmp_path / "mq.txt"
    p.write_text("# a comment line\n"
                 "2 qid:10 1:0.5 3:1 #docid = GX01 inc = 1 prob = 0.02\n"
                 "0 qid:10 2:4\n")
    df = read_letor(p)
    assert df["doc"].tolist() == ["GX01", "10:3"]
    assert df[["f1", "f2", "f3"]].to_numpy().tolist() == [[0.5, 0, 1], [0, 4, 0]]
    assert df["grade"].tolist() == [2, 0]


def test_letor_malformed_lines_named(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_text("1 qid:1 1:0.5 # a\n"
                 "x qid:1 1:0.5 # b\n"
                 "0 1:0.5 # c\n"
                 "0 qid:1 2:1 1:3 # d\n"
                 "0 qid:1 1:abc # e\n"
                 "0 qid:1 1:1 # a\n")
    with pytest.raises(FormatError) as ei:
        read_letor(p)
    msg = str(ei.value)
    for line, text in ((2, "grade 'x' is not an integer"), (3, "qid:"), (4, "indices must increase"),
                       (5, "not a number"), (6, "already given on line 1")):
        assert f"bad.txt:{line}:" in msg and text in msg
    assert "bad.txt:1:" not in msg


def test_simulated_features_informativeness():
    from engine.simulation.campaigns import simulate
    s = simulate(n_runs=8, n_topics=4, depth=60, seed=3)
    F, truth = simulate_features(s.runs, s.truth, 60, n_strong=1, n_weak=1, n_noise=1, seed=1)
    assert list(truth["roles"].values()) == ["bm25", "strong", "weak", "noise"]
    rel = (F["grade"] > 0).astype(float)
    corr = {c: abs(np.corrcoef(F[c], rel)[0, 1]) for c in ["f1", "f2", "f3", "f4"]}
    assert corr["f2"] > corr["f3"] > corr["f4"]
    assert corr["f4"] < 0.1
    # the BM25-like feature follows the runs' ranks: best rank over runs is anti-correlated with it
    best = s.runs[s.runs["rank"] <= 60].groupby(["topic", "doc"])["rank"].min()
    j = F.join(best, on=["topic", "doc"])
    assert np.corrcoef(j["f1"], np.log(j["rank"]))[0, 1] < -0.5


# ----------------------------------------------------------------------------- rankers

def _tiny(n_q=4, seed=0):
    """Queries of 6 documents; grade = 2, 1, 0 by a strong feature f1; f2 is noise, f3 helps weakly."""
    rng = np.random.default_rng(seed)
    X, y, q = [], [], []
    for k in range(n_q):
        for g, base in ((2, 3.0), (2, 2.6), (1, 1.5), (1, 1.2), (0, 0.1), (0, -0.3)):
            X.append([base + 0.1 * rng.standard_normal(), rng.standard_normal(), 0.3 * g + rng.standard_normal() * 0.5])
            y.append(g)
            q.append(f"q{k}")
    return np.array(X), np.array(y), np.array(q)


@pytest.mark.parametrize("name", ["ranksvm", "ranknet", "ranknet_hidden", "regression"])
def test_ranker_orders_hand_made_set(name):
    X, y, q = _tiny()
    model = R.make_ranker(name, seed=1).fit(X, y, q)
    test = np.array([[3.1, 1.5, 0.0], [1.4, -1.5, 0.0], [0.0, 0.0, 0.0], [-0.5, 2.0, 0.0]])
    s = model.predict(test)
    assert list(np.argsort(-s)) == [0, 1, 2, 3]


def test_pairs_only_within_queries():
    y = np.array([1, 0, 1, 0])
    i, j = R.preference_pairs(y, np.array(["a", "a", "b", "b"]))
    assert sorted(zip(i.tolist(), j.tolist())) == [(0, 1), (2, 3)]


def test_lambdamart_orders_hand_made_set():
    pytest.importorskip("lightgbm", reason="LightGBM is optional: pip install 'cranfield[ltr]'")
    X, y, q = _tiny(n_q=8)
    model = R.LambdaMART(n_estimators=30, min_child_samples=2, num_leaves=4).fit(X, y, q)
    test = np.array([[3.1, 0.0, 0.0], [1.4, 0.0, 0.0], [-0.2, 0.0, 0.0]])
    s = model.predict(test)
    assert s[0] > s[1] > s[2]


def test_lambdamart_missing_says_how_to_install(monkeypatch):
    monkeypatch.setattr(R, "lightgbm_available", lambda: False)
    with pytest.raises(CranfieldError, match=r"pip install 'cranfield\[ltr\]'"):
        R.make_ranker("lambdamart")
    assert "lambdamart" not in R.available_rankers()


# ----------------------------------------------------------------------------- selection

def _letor_set():
    # one topic, 8 docs by decreasing BM25 (f1); relevant: d1, d2, d6, d8
    docs = [f"d{i}" for i in range(1, 9)]
    grades = [1, 1, 0, 0, 0, 1, 0, 1]
    X = np.column_stack((np.arange(8, 0, -1.0), np.zeros(8)))
    F = make_table(["t"] * 8, docs, grades, X)
    return F, F[["topic", "doc", "grade"]]


def test_letor_selection_top_plus_relevant_beyond():
    F, qrels = _letor_set()
    # budget 50% of 8 = 4: top-2 (d1, d2) + relevant beyond (d6, d8) = 4
    sel = select("letor", None, qrels, 50, features=F)
    assert sorted(sel["doc"]) == ["d1", "d2", "d6", "d8"]
    # budget 6: top-5 + d6? 5 + 2 relevant beyond 5 = 7 > 6; top-4 + (d6, d8) = 6
    sel = select("letor", None, qrels, 75, features=F)
    assert sorted(sel["doc"]) == ["d1", "d2", "d3", "d4", "d6", "d8"]
    # budget 2 < 4 relevant: the two best-scored relevant documents
    sel = select("letor", None, qrels, 25, features=F)
    assert sorted(sel["doc"]) == ["d1", "d2"]


def test_precision_recall_and_discrepancy_hand_computed():
    F, qrels = _letor_set()
    sel = pd.DataFrame({"topic": ["t"] * 3, "doc": ["d1", "d3", "d6"]})
    p, r = precision_recall(sel, qrels)
    assert (p, r) == (2 / 3, 2 / 4)
    # identical feature vectors: zero discrepancy
    same = make_table(["t"] * 3, ["a", "b", "c"], [1, 1, 0], np.ones((3, 2)))
    d_rr, d_rn = discrepancy(same[["topic", "doc"]], same, same[["topic", "doc", "grade"]])
    assert d_rr == pytest.approx(0.0) and d_rn == pytest.approx(0.0)
    # relevant documents alike, non-relevant different: rel-rel < rel-nonrel
    X = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0]])
    diff = make_table(["t"] * 3, ["a", "b", "c"], [1, 1, 0], X)
    d_rr, d_rn = discrepancy(diff[["topic", "doc"]], diff, diff[["topic", "doc", "grade"]])
    assert 0 < d_rr < d_rn


def test_pool_based_selection_sizes_and_seed():
    from engine.simulation.campaigns import simulate
    s = simulate(n_runs=6, n_topics=3, depth=40, seed=2)
    qrels = s.pool(40, runs=s.run_meta["run"].tolist())      # every run's depth-40 pool
    sizes = qrels.groupby("topic").size()
    for m in ("depth", "infap", "statap", "mtc", "hedge"):
        sel = select(m, s.runs, s.truth, 10, depth=40, seed=5)
        got = sel.groupby("topic").size().reindex(sizes.index)
        assert (got == np.maximum(1, np.round(0.1 * sizes))).all(), m
    a = select("infap", s.runs, s.truth, 10, depth=40, seed=5)
    b = select("infap", s.runs, s.truth, 10, depth=40, seed=5)
    pd.testing.assert_frame_equal(a, b)
    F, _ = simulate_features(s.runs, s.truth, 40, seed=0)
    ch = characterize(select("hedge", s.runs, s.truth, 10, depth=40), F, s.truth)
    ch_inf = characterize(a, F, s.truth)
    assert ch["precision"] > ch_inf["precision"]      # hedge looks for relevant documents


# ----------------------------------------------------------------------------- sensitivity

def test_reduce_judgments_keeps_share_per_topic():
    q = pd.DataFrame({"topic": ["a"] * 10 + ["b"] * 4, "doc": [str(i) for i in range(14)], "grade": 1})
    red = reduce_judgments(q, 30, np.random.default_rng(0))
    kept = red[red["grade"] >= 0].groupby("topic").size()
    assert kept.to_dict() == {"a": 3, "b": 1}
    assert (red["grade"] == -1).sum() == 10


def test_sensitivity_recovers_known_best_and_degrades():
    runs, qrels, meta = simulate_family(n_topics=24, settings=(0.2, 0.4, 0.6, 0.8), best=0.4, n_docs=150,
                                        depth=50, seed=3)
    out = sensitivity(runs, qrels, meta, ["b"], levels=(2, 100), repeats=3, folds=2, seed=0)
    assert out["best"] == "b=0.4"
    s = out["summary"].set_index(["level", "measure"])
    ch = out["choices"]
    full = ch[ch["level"] == 100]
    assert (full["b"] == 0.4).all()                    # every fold, every measure, complete judgments
    assert s.loc[(100, "map"), "hit_best"] == 1.0
    assert s.loc[(2, "map"), "test_map"] <= s.loc[(100, "map"), "test_map"]
    assert set(s.index.get_level_values("measure")) == {"map", "bpref", "infAP", "ndcg"}


def test_sensitivity_needs_parameter_metadata():
    runs, qrels, meta = simulate_family(n_topics=4, settings=(0.2, 0.4), best=0.4, n_docs=40, depth=10)
    with pytest.raises(CranfieldError, match="parameter column"):
        sensitivity(runs, qrels, meta, ["k1"])


# ----------------------------------------------------------------------------- command line

def test_cli_training_commands(tmp_path, capsys):
    from cranfield.cli import main
    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 1:0.5 # a\n1 qid:1 1:zz # b\n")
    assert main(["training", "features", "--check", str(bad)]) == 3
    assert "bad.txt:2: feature 1 value 'zz' is not a number" in capsys.readouterr().err
    f = tmp_path / "f.txt.gz"
    assert main(["training", "features", "--simulate", "--topics", "3", "--runs", "4", "--depth", "30",
                 "--write", str(f)]) == 0
    assert read_features(f)["topic"].nunique() == 3
    out = tmp_path / "res"
    assert main(["training", "select", "--simulate", "--topics", "3", "--runs", "4", "--depth", "30",
                 "--methods", "depth,letor", "--percents", "10,50", "--out", str(out), "--format", "tsv"]) == 0
    sel = pd.read_csv(out / "select.tsv", sep="\t")
    assert sel[["method", "percent"]].values.tolist() == [["depth", 10.0], ["depth", 50.0], ["letor", 10.0], ["letor", 50.0]]
    assert main(["training", "learn", "--simulate", "--topics", "4", "--runs", "4", "--depth", "30",
                 "--methods", "infap", "--percents", "50", "--rankers", "regression", "--folds", "2",
                 "--out", str(out)]) == 0
    learn = pd.read_csv(out / "learn.tsv", sep="\t")
    assert set(learn["method"]) == {"full", "infap"} and learn["map"].between(0, 1).all()
    assert "best selection method per budget" in capsys.readouterr().out
    assert main(["training", "sensitivity", "--simulate", "--topics", "6", "--levels", "10,100", "--repeats", "1",
                 "--out", str(out), "--plot"]) == 0
    text = capsys.readouterr().out
    assert "best setting with complete judgments on all topics: b=0.6" in text and "test MAP" in text
    assert main(["training", "learn", "--simulate", "--rankers", "nope"]) == 3


def test_cli_sensitivity_on_a_campaign_with_run_params(tmp_path, capsys):
    import re
    from pathlib import Path

    from cranfield.cli import main
    from tui.testing import private_copy
    camp = private_copy(Path(__file__).resolve().parents[1] / "campaigns" / "demo", tmp_path / "demo",
                        skip=("pools", "log.jsonl*"))
    cfg = (camp / "campaign.yaml").read_text()
    n = iter(range(1000))
    cfg = re.sub(r"    file: runs/\S+", lambda m: m.group(0) + f"\n    params: {{k: {next(n) % 3}}}", cfg)
    (camp / "campaign.yaml").write_text(cfg)
    assert main(["training", "sensitivity", "--campaign", str(camp), "--levels", "100", "--repeats", "1",
                 "--measures", "map,bpref"]) == 0
    saved = pd.read_csv(camp / "training" / "sensitivity.tsv", sep="\t")
    assert sorted(saved["measure"]) == ["bpref", "map"] and (saved["level"] == 100).all()
    assert saved["k_mean"].between(0, 2).all()
    assert "best setting with complete judgments on all topics" in capsys.readouterr().out
