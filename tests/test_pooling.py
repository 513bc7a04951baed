"""Pool builders: hand-checked small pools, budgets and targets, exact inclusion probabilities."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from engine.errors import CranfieldError
from engine.pooling import (ap_prior, assign_targets, build_pool, pool_log, read_pool, resolve_budgets,
                            write_pool)
from engine.pooling import static
from engine.pooling.candidates import pool_candidates, ranked_runs
from engine.pooling.online import MTC, Hedge

# Two runs on topic 1. Run A's file ranks are wrong on purpose: ranks come from the scores
# (descending, ties by doc id descending: 'b' before 'a' at score 3).
RUNS = pd.DataFrame({
    "run": ["A", "A", "A", "A", "B", "B", "B", "B"],
    "topic": ["1"] * 8,
    "doc": ["a", "b", "c", "d", "c", "e", "f", "a"],
    "rank": [9, 9, 9, 9, 1, 2, 3, 4],
    "score": [3.0, 3.0, 2.0, 1.0, 4.0, 3.0, 2.0, 1.0],
})


def test_ranks_follow_trec_eval_order():
    rr = ranked_runs(RUNS)
    a = rr[rr["run"] == "A"].sort_values("rank")
    assert a["doc"].tolist() == ["b", "a", "c", "d"]


def test_ranked_runs_same_rows_from_categorical_and_text_columns():
    """Names are compared per category (no per-row text): the same rows, ranks and order as plain text
    columns, with unused categories, integer topic ids, a pooled-run and a topic selection."""
    two = pd.concat([RUNS, RUNS.assign(topic="2", run=RUNS["run"].map({"A": "C", "B": "A"}))], ignore_index=True)
    cat = two.astype({"run": pd.CategoricalDtype(["Z", "C", "B", "A"]), "doc": "category"})
    cat["topic"] = pd.Categorical(two["topic"].astype(int), categories=[2, 1, 3])

    def rows(rr):      # (run, topic) groups come in category order from a categorical column
        return rr.sort_values(["run", "topic", "rank"]).reset_index(drop=True)
    for args in [(None, None, None), (3, None, None), (3, ["A", "C"], None), (2, ["A"], [1]), (None, None, ["2"])]:
        pd.testing.assert_frame_equal(rows(ranked_runs(cat, *args)), rows(ranked_runs(two, *args)))
    assert ranked_runs(two, 2, ["A"], [1])[["topic", "doc", "rank"]].values.tolist() == [["1", "b", 1], ["1", "a", 2]]
    with pytest.raises(CranfieldError, match="pooled runs not found among the runs: Z"):
        ranked_runs(cat, None, ["A", "Z"])                 # a category no row has is not a run
    with pytest.raises(CranfieldError, match="no run results to pool"):
        ranked_runs(cat, None, None, ["3"])


def test_depth_and_take_n_hand_checked():
    # best ranks: b 1 (A), c 1 (B), a 2 (A), e 2 (B), f 3, d 4
    p = build_pool(RUNS, "depth", depth=4, k=2).selected()
    assert p["doc"].tolist() == ["b", "c", "a", "e"] and (p["prob"] == 1).all()
    p = build_pool(RUNS, "take_n", 3, depth=4).selected()
    assert p["doc"].tolist() == ["b", "c", "a"] and p["order"].tolist() == [1, 2, 3]
    p = build_pool(RUNS, "depth", 5, depth=4).selected()
    assert p["doc"].tolist() == ["b", "c", "a", "e", "f"]
    with pytest.raises(CranfieldError):
        build_pool(RUNS, "take_n", None, depth=4)
    with pytest.raises(CranfieldError):
        build_pool(RUNS, "nope", 3)
    with pytest.raises(CranfieldError, match="unknown parameter"):
        build_pool(RUNS, "depth", depth=4, kk=2)


def test_ap_prior_values():
    # depth 2: p(1) = (1 + 1 + 1/2) / 4 = 0.625, p(2) = (1 + 1/2) / 4 = 0.375
    assert np.allclose(ap_prior(np.array([1, 2]), 2), [0.625, 0.375])
    assert np.isclose(ap_prior(np.arange(1, 101), 100).sum(), 1.0)
    c = pool_candidates(ranked_runs(RUNS, 4), 4).set_index("doc")
    # doc c: rank 3 in A, rank 1 in B -> mean of the two priors
    assert np.isclose(c.loc["c", "prior"], ap_prior(np.array([3, 1]), 4).mean())
    # doc d only in A at rank 4: half of its prior (B did not retrieve it)
    assert np.isclose(c.loc["d", "prior"], ap_prior(np.array([4]), 4)[0] / 2)


def test_budgets_and_targets():
    sizes = pd.Series([400, 10], index=["1", "2"])
    assert resolve_budgets(0.05, sizes).tolist() == [20, 1]        # round(0.05 * 10) = 0 -> at least 1
    assert resolve_budgets(7, sizes).tolist() == [7, 7]
    assert resolve_budgets({"1": 8, "2": 16}, sizes).tolist() == [8, 16]
    with pytest.raises(CranfieldError):
        resolve_budgets({"1": 8}, sizes)
    t = assign_targets([str(i) for i in range(62)], seed=1)
    # equal effort per level: 16:8:4:2:1 of 62 topics
    assert t.value_counts().sort_index().tolist() == [32, 16, 8, 4, 2]
    assert (t.value_counts() * t.value_counts().index).tolist() == [256] * 5


def _sim_runs(n_runs=8, n_topics=3, n_docs=60, depth=30, seed=5):
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_topics):
        for s in range(n_runs):
            docs = rng.choice(n_docs, depth, replace=False)
            rows.append(pd.DataFrame({"run": f"r{s}", "topic": str(t), "doc": [f"d{d}" for d in docs],
                                      "rank": np.arange(1, depth + 1), "score": -np.arange(1, depth + 1.0)}))
    return pd.concat(rows, ignore_index=True)


def _replicate(cand: pd.DataFrame, reps: int) -> pd.DataFrame:
    """The candidate table of one topic repeated as `reps` independent topics."""
    one = cand[cand["topic"] == cand["topic"].iat[0]]
    big = one.iloc[np.tile(np.arange(len(one)), reps)].reset_index(drop=True)
    big["topic"] = np.repeat(np.arange(reps), len(one)).astype(str).astype(object)
    return big, one


@pytest.mark.parametrize("strategy", ["statap", "stratified"])
def test_empirical_inclusion_probabilities(strategy):
    """Over 4000 seeded draws, each document's selection frequency is within 4.5 standard errors
    of its recorded inclusion probability, and every draw has exactly the budget."""
    rr = ranked_runs(_sim_runs(), 30)
    cand = pool_candidates(rr, 30)
    reps, budget = 4000, 20
    big, one = _replicate(cand, reps)
    fn = static.STATIC[strategy]
    sel, stratum, prob = fn(big, np.full(len(big), budget), rng=np.random.default_rng(11))
    sel = sel.reshape(reps, len(one))
    prob = prob.reshape(reps, len(one))
    assert (sel.sum(axis=1) == budget).all()
    assert np.allclose(prob, prob[0]) and np.isclose(prob[0].sum(), budget)
    freq = sel.mean(axis=0)
    p = prob[0]
    se = np.sqrt(p * (1 - p) / reps)
    assert (np.abs(freq - p) <= 4.5 * se + 1e-12).all(), np.max(np.abs(freq - p) / np.maximum(se, 1e-9))
    assert p.min() > 0 and len(np.unique(p.round(9))) > 1   # unequal probabilities, all positive
    if strategy == "stratified":
        st = stratum.reshape(reps, len(one))[0]
        assert sorted(set(st)) == [1, 2, 3, 4]
        assert (p[st == 1] == 1.0).all() and (st == 1).sum() <= budget // 2
        # the 3:1.5:1 split of the remaining budget over the three lower strata
        n_s = [int(round((p[st == s]).sum())) for s in (2, 3, 4)]
        assert sum(n_s) == budget - (st == 1).sum() and n_s[0] >= n_s[1] >= n_s[2]
    if strategy == "statap":
        # probability proportional to the prior where not capped at 1
        free = p < 1
        ratio = p[free] / one["prior"].to_numpy()[free]
        assert np.allclose(ratio, ratio[0])


def test_stratified_explicit_bounds_and_rates():
    pool = build_pool(_sim_runs(), "stratified", None, depth=30, seed=2, bounds=[5, 15, 30], rates=[1, 0.5, 0.2])
    t = pool.table
    for s, r in ((1, 1.0), (2, 0.5), (3, 0.2)):
        part = t[(t["topic"] == "0") & (t["stratum"] == s)]
        n = int(np.ceil(r * len(part) - 1e-9))
        assert int((part["order"] > 0).sum()) == n and np.allclose(part["prob"], n / len(part))


def test_online_selectors():
    # MTC: a document both runs rank equally is uninformative (weight 0); discriminating ones are not
    rows = pd.DataFrame({"run": ["A", "A", "B", "B"], "doc": ["x", "y", "x", "z"], "rank": [1, 2, 1, 2]})
    m = MTC(rows, 2)
    w = dict(zip(m.docs, m.scores()))
    assert w["x"] == 0.0 and w["y"] == pytest.approx(0.5) and w["z"] == pytest.approx(0.5)
    # y relevant: A's coefficient for x rises to 1 + 1/2, B's stays 1 -> x becomes informative
    m.update(m.doc_index["y"], True)
    w = dict(zip(m.docs, m.scores()))
    assert w["x"] == pytest.approx(0.5)
    # Hedge: a relevant document retrieved only by A shifts weight to A
    h = Hedge(rows, 2, beta=0.5)
    h.update(h.doc_index["y"], True)
    assert h.w[0] > h.w[1]
    assert h.docs[h.next()] == "x"


def test_online_pool_with_oracle_and_reproducible_storage(tmp_path):
    runs = _sim_runs()
    truth = runs[["topic", "doc"]].drop_duplicates().assign(grade=lambda d: (d["doc"].str[1:].astype(int) % 4 == 0).astype(int))
    for s in ("mtc", "hedge", "mtf"):
        p = build_pool(runs, s, 10, depth=30, oracle=truth)
        assert p.sizes().tolist() == [10, 10, 10] and (p.table["method"] == s).all()
    with pytest.raises(CranfieldError):
        build_pool(runs, "mtc", 10, depth=30)
    p = build_pool(runs, "statap", 0.2, depth=30, seed=9)
    path = write_pool(tmp_path, "s", p)
    back = read_pool(path)
    pd.testing.assert_frame_equal(back[["topic", "doc", "order"]], p.table[["topic", "doc", "order"]].reset_index(drop=True),
                                  check_dtype=False)
    rec = pool_log(tmp_path)[-1]
    assert rec["strategy"] == "statap" and rec["seed"] == 9 and rec["budget"] == 0.2 and rec["depth"] == 30
    again = build_pool(runs, rec["strategy"], rec["budget"], depth=rec["depth"], seed=rec["seed"], **rec["params"])
    assert again.table["order"].tolist() == p.table["order"].tolist()
    assert json.loads((tmp_path / "pools" / "pools.log.jsonl").read_text().splitlines()[-1])["name"] == "s"


def test_cli_pool_next_batch_export_on_simulated_campaign(tmp_path, capsys):
    from cranfield.cli import main
    from engine.simulation.campaigns import simulate, write_campaign
    camp = tmp_path / "c"
    write_campaign(simulate(n_runs=6, n_topics=3, depth=40, seed=2), camp, pool_depth=5)
    assert main(["pool", str(camp), "--strategy", "statap", "--budget", "8", "--depth", "40",
                 "--seed", "4", "--name", "st"]) == 0
    t = read_pool(camp / "pools" / "pool-st.tsv")
    assert (t[t["order"] > 0].groupby("topic").size() == 8).all()
    rec = pool_log(camp)[-1]
    assert (rec["name"], rec["strategy"], rec["budget"], rec["seed"]) == ("st", "statap", 8, 4)
    assert main(["pool", str(camp), "--strategy", "mtc", "--budget", "4", "--depth", "40"]) == 3  # online, no oracle
    assert main(["pool", str(camp), "--strategy", "mtc", "--budget", "4", "--depth", "40", "--oracle", "truth"]) == 0
    topic = t["topic"].iat[0]
    capsys.readouterr()
    assert main(["judgments", "next", str(camp), "--topic", topic, "--pool", "st", "-k", "2", "--assessor", "ann"]) == 0
    first = capsys.readouterr().out.split()[1]
    assert main(["judgments", "add", str(camp), topic, first, "2", "--assessor", "ann"]) == 0
    capsys.readouterr()
    assert main(["judgments", "next", str(camp), "--topic", topic, "--pool", "st", "--assessor", "ann"]) == 0
    assert capsys.readouterr().out.split()[1] != first          # judged documents are skipped
    assert main(["judgments", "batch", str(camp), "--pool", "st", "--out", str(tmp_path / "b.jsonl")]) == 0
    assert first not in (tmp_path / "b.jsonl").read_text()
    assert main(["judgments", "export", str(camp), "--format", "sample", "--pool", "st",
                 "--out", str(tmp_path / "s.sample")]) == 0
    lines = [ln.split() for ln in (tmp_path / "s.sample").read_text().splitlines()]
    assert [x for x in lines if x[2] == first][0][4] == "2" and any(x[4] == "-1" for x in lines)


def test_cli_stratified_bounds_beyond_depth_extend_or_refuse(tmp_path, capsys):
    # issue 15 item 10: bounds deeper than the pool depth never silently stop at the depth
    from cranfield.cli import main
    from engine.simulation.campaigns import simulate, write_campaign
    camp = tmp_path / "c"
    write_campaign(simulate(n_runs=4, n_topics=2, depth=150, seed=5), camp, pool_depth=5)
    args = ["pool", str(camp), "--strategy", "stratified", "--param", "bounds=10,50,120",
            "--param", "rates=1,0.5,0.2", "--seed", "1"]
    assert main(args + ["--depth", "100"]) == 3                 # explicit shallower depth: refused
    assert "beyond the pool depth 100" in capsys.readouterr().err
    assert main(args + ["--name", "deep"]) == 0                   # default depth: extended to 120
    assert "depth extended from 100 to 120" in capsys.readouterr().err
    t = read_pool(camp / "pools" / "pool-deep.tsv")
    assert t["stratum"].max() == 3 and (t["stratum"] == 3).sum() > 0
    assert pool_log(camp)[-1]["depth"] == 120


def test_pool_file_and_log_entry_commit_together(tmp_path, monkeypatch):
    """Killed between the pool table and its log entry: no pool without entry, old pool kept;
    killed after the entry: recover_pools finishes the rename."""
    import engine.pooling.files as pooling
    old = build_pool(RUNS, "depth", depth=2)
    write_pool(tmp_path, "p", old)
    before = (tmp_path / "pools" / "pool-p.tsv").read_bytes()
    new = build_pool(RUNS, "depth", depth=4)

    def die(path, rec):
        raise KeyboardInterrupt("killed before the log entry")
    monkeypatch.setattr(pooling, "_append_pool_record", die)
    with pytest.raises(KeyboardInterrupt):
        write_pool(tmp_path, "p", new)
    monkeypatch.undo()
    assert len(pool_log(tmp_path)) == 1 and pool_log(tmp_path)[0]["depth"] == 2
    assert (tmp_path / "pools" / "pool-p.tsv").read_bytes() == before
    assert not list((tmp_path / "pools").glob("*.pending"))        # orphan table removed

    real = pooling._append_pool_record

    def entry_then_die(path, rec):
        real(path, rec)
        raise KeyboardInterrupt("killed after the log entry, before the rename")
    monkeypatch.setattr(pooling, "_append_pool_record", entry_then_die)
    with pytest.raises(KeyboardInterrupt):
        write_pool(tmp_path, "p", new)                              # entry written, rename not done
    monkeypatch.undo()
    assert (tmp_path / "pools" / "pool-p.tsv").read_bytes() == before
    log = pool_log(tmp_path)                                        # recovers: finishes the rename
    assert [r["depth"] for r in log] == [2, 4]
    back = read_pool(tmp_path / "pools" / "pool-p.tsv")
    assert back["doc"].tolist() == new.table["doc"].tolist()
    assert not list((tmp_path / "pools").glob("*.pending"))
