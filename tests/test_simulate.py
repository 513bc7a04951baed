"""The campaign simulator: determinism, complete truth, ties, manual-run bias, campaign round trip."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from cranfield.cli import main as cli_main
from engine.formats.qrels import read_qrels
from engine.formats.runs import read_run, read_runs
from engine.simulation.campaigns import depth_pool, simulate, write_campaign


@pytest.fixture(scope="module")
def sim():
    return simulate(n_runs=16, n_topics=12, depth=100, seed=11, n_groups=5, manual_fraction=0.25)


def test_deterministic_by_seed(sim):
    again = simulate(n_runs=16, n_topics=12, depth=100, seed=11, n_groups=5, manual_fraction=0.25)
    pd.testing.assert_frame_equal(sim.runs, again.runs)
    pd.testing.assert_frame_equal(sim.truth, again.truth)
    pd.testing.assert_frame_equal(sim.run_meta, again.run_meta)
    other = simulate(n_runs=16, n_topics=12, depth=100, seed=12, n_groups=5, manual_fraction=0.25)
    assert not sim.runs["doc"].equals(other.runs["doc"])


def test_shape_and_metadata(sim):
    r = sim.runs
    assert list(r.columns) == ["run", "topic", "doc", "rank", "score"]
    assert len(r) == 16 * 12 * 100
    assert r.groupby(["run", "topic"]).size().eq(100).all()
    assert not r.duplicated(["run", "topic", "doc"]).any()
    assert sim.topics["topic"].tolist() == [str(401 + i) for i in range(12)]
    assert set(sim.topics["category"]) <= {"short", "long"}
    m = sim.run_meta
    assert m["run"].tolist() == list(dict.fromkeys(r["run"]))
    assert m["group"].nunique() == 5
    assert int((m["type"] == "manual").sum()) == 4          # round(0.25 * 16)
    assert m.loc[m["type"] == "manual", "pooled"].all()      # manual runs contribute to the pool
    assert (~m["pooled"]).any()                              # some runs did not contribute
    assert r["doc"].str.match(r"^D\d+-\d+$").all()
    assert (r["doc"].str.split("-").str[0].str[1:] == r["topic"]).all()


def test_ranks_follow_trec_eval_order(sim):
    """rank 1..depth in score-descending order, ties broken by doc id descending (trec_eval)."""
    r = sim.runs
    srt = r.sort_values(["run", "topic", "score", "doc"], ascending=[True, True, False, False], kind="mergesort")
    assert (srt.groupby(["run", "topic"]).cumcount().to_numpy() + 1 == srt["rank"].to_numpy()).all()


def test_truth_is_complete(sim):
    t = sim.truth
    assert not t.duplicated(["topic", "doc"]).any()
    retrieved = sim.runs[["topic", "doc"]].drop_duplicates()
    m = retrieved.merge(t, on=["topic", "doc"], how="left")
    assert m["grade"].notna().all()                          # every retrieved doc is judged
    assert set(t["grade"]) == {0, 1, 2}
    # relevant documents that no run retrieved are in the truth too
    key_t = t["topic"] + " " + t["doc"]
    key_r = set(retrieved["topic"] + " " + retrieved["doc"])
    unretrieved = t[~key_t.isin(key_r)]
    assert len(unretrieved) > 0 and (unretrieved["grade"] > 0).all()
    assert len(unretrieved) == int(sim.topic_meta["n_rel_unretrieved"].sum())
    # recall bases vary widely between topics
    nrel = t[t["grade"] > 0].groupby("topic").size()
    assert nrel.min() < 20 and nrel.max() > 3 * nrel.min()
    assert (nrel.sort_index().to_numpy() == sim.topic_meta.set_index("topic")["num_rel"].sort_index().to_numpy()).all()


def test_ties_present(sim):
    r = sim.runs
    same = r.duplicated(["run", "topic", "score"], keep=False)
    share = same.mean()
    assert 0.01 < share < 0.4
    none = simulate(n_runs=4, n_topics=3, depth=50, seed=1, ties=0.0)
    assert not none.runs.duplicated(["run", "topic", "score"]).any()


def test_manual_runs_find_unique_relevant_docs(sim):
    t = sim.truth
    m = sim.run_meta
    rel = sim.runs.merge(t, on=["topic", "doc"])
    rel = rel[(rel["grade"] > 0) & (rel["rank"] <= 100)]
    manual = set(m.loc[m["type"] == "manual", "run"])
    by_manual = set(rel.loc[rel["run"].isin(manual), "topic"] + " " + rel.loc[rel["run"].isin(manual), "doc"])
    by_auto = set(rel.loc[~rel["run"].isin(manual), "topic"] + " " + rel.loc[~rel["run"].isin(manual), "doc"])
    unique = by_manual - by_auto
    assert len(unique) > 0.1 * len(by_manual)
    # without the bias manual runs find far fewer relevant documents automatic runs all miss
    flat = simulate(n_runs=16, n_topics=12, depth=100, seed=11, n_groups=5, manual_fraction=0.25,
                    manual_bias=False)
    rel2 = flat.runs.merge(flat.truth, on=["topic", "doc"])
    rel2 = rel2[rel2["grade"] > 0]
    man2 = set(flat.run_meta.loc[flat.run_meta["type"] == "manual", "run"])
    a = set(rel2.loc[rel2["run"].isin(man2), "topic"] + " " + rel2.loc[rel2["run"].isin(man2), "doc"])
    b = set(rel2.loc[~rel2["run"].isin(man2), "topic"] + " " + rel2.loc[~rel2["run"].isin(man2), "doc"])
    assert len(a - b) < 0.5 * len(unique)


def test_quality_orders_systems(sim):
    """Simulated skill shows in the true scores: mean true P@10 correlates with quality."""
    top = sim.runs[sim.runs["rank"] <= 10].merge(sim.truth, on=["topic", "doc"])
    p10 = (top["grade"] > 0).groupby(top["run"]).sum() / (10 * 12)
    q = sim.run_meta.set_index("run")["quality"]
    assert np.corrcoef(p10[q.index], q)[0, 1] > 0.6


def test_depth_pool(sim):
    pool = depth_pool(sim, 10)
    pooled = sim.run_meta.loc[sim.run_meta["pooled"], "run"]
    top = sim.runs[sim.runs["run"].isin(pooled) & (sim.runs["rank"] <= 10)][["topic", "doc"]].drop_duplicates()
    assert len(pool) == len(top)
    assert list(pool.columns) == ["topic", "doc", "grade"]
    assert len(depth_pool(sim, None)) >= len(depth_pool(sim, 100)) >= len(pool)


def test_write_campaign_round_trip(sim, tmp_path):
    out = write_campaign(sim, tmp_path / "camp", name="Test", pool_depth=20, docs=True)
    files = sorted((out / "runs").glob("*.txt"))
    assert len(files) == 16
    runs = read_runs(files).drop(columns="line")
    runs = runs.astype({c: str for c in ("run", "topic", "doc")})   # the fast path returns Categoricals
    a = runs.sort_values(["run", "topic", "rank"]).reset_index(drop=True)
    b = sim.runs.sort_values(["run", "topic", "rank"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b, check_dtype=False)   # scores exact through the text
    one = read_run(files[0])
    assert one["run"].iat[0] == files[0].stem
    truth = read_qrels(out / "truth" / "qrels.txt").drop(columns="line")
    pd.testing.assert_frame_equal(truth.sort_values(["topic", "doc"]).reset_index(drop=True),
                                  sim.truth.sort_values(["topic", "doc"]).reset_index(drop=True),
                                  check_dtype=False)
    judged = read_qrels(out / "judgments" / "qrels.txt").drop(columns="line")
    expect = depth_pool(sim, 20)
    pd.testing.assert_frame_equal(judged.reset_index(drop=True), expect, check_dtype=False)
    cfg = yaml.safe_load((out / "campaign.yaml").read_text())
    assert cfg["name"] == "Test"
    assert cfg["evaluation"]["depth"] == 100
    assert cfg["pool"] == {"strategy": "depth", "depth": 20}
    assert set(cfg["runs"]) == set(sim.run_meta["run"])
    r0 = sim.run_meta.iloc[0]
    assert cfg["runs"][r0["run"]] == {"group": r0["group"], "type": r0["type"], "pooled": bool(r0["pooled"]),
                                      "file": f"runs/{r0['run']}.txt"}
    assert cfg["relevance"]["scale"][2] == {"label": "highly relevant", "gain": 3}
    assert len(cfg["topics"]["categories"]) == 12
    tr = yaml.safe_load((out / "truth" / "truth.yaml").read_text())
    assert tr["params"]["seed"] == 11
    assert tr["runs"][r0["run"]]["quality"] == pytest.approx(r0["quality"], abs=1e-6)
    topics = (out / "topics" / "topics.tsv").read_text().splitlines()
    assert topics[0].split("\t")[0] == "401" and len(topics) == 12
    docs = (out / "docs" / "docs.jsonl").read_text().splitlines()
    assert len(docs) == len(expect)


def test_cli_refuses_non_empty_dir(tmp_path, capsys):
    out = tmp_path / "c"
    args = ["simulate", "--runs", "3", "--topics", "2", "--depth", "20", "--out", str(out), "--seed", "2"]
    assert cli_main(args) == 0
    assert (out / "campaign.yaml").exists() and len(list((out / "runs").glob("*.txt"))) == 3
    assert cli_main(args) == 3
    assert "not empty" in capsys.readouterr().err
    assert cli_main(args + ["--force", "--runs", "4"]) == 0
    assert len(list((out / "runs").glob("*.txt"))) == 4
    other = tmp_path / "o"
    other.mkdir()
    (other / "keep.txt").write_text("x")
    assert cli_main(["simulate", "--out", str(other), "--force", "--runs", "2", "--topics", "1"]) == 3
    assert (other / "keep.txt").exists()
