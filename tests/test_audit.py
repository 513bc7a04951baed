"""Judge audits (issue 38 item 4) and simulated judges with known truth (item 6): canaries made, planted in
pools, seen by the model judge, never counted nor exported; false-positive rates with Wilson intervals;
run-gap flags and tau; `cranfield simulate` judge error structures, with `judgments audit` detecting them."""
from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from _cli import cli

from engine.judgments.audit import gap_flags, wilson
from engine.judgments.canaries import INSTRUCTION, KINDS, insert_canaries, make_canaries, read_canaries


def _topics():
    return pd.DataFrame({"topic": ["401", "402", "403"], "title": ["solar panel efficiency", "jazz history",
                                                                   "coral reef bleaching"]})


def test_make_canaries_is_deterministic_and_each_kind_looks_as_described():
    a = make_canaries(_topics(), 3, seed=5, texts={"402": [("Jazz in 1920", "Louis Armstrong played the cornet.")]})
    b = make_canaries(_topics(), 3, seed=5, texts={"402": [("Jazz in 1920", "Louis Armstrong played the cornet.")]})
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 9 and sorted(a["kind"].value_counts().tolist()) == [3, 3, 3]
    assert a["doc"].is_unique and not a["doc"].str.contains("canar", case=False).any()
    for r in a.to_dict("records"):
        words = set(_topics().set_index("topic").loc[r["topic"], "title"].split())
        text = r["text"].lower()
        if r["kind"] == "stuffing":
            assert all(text.count(w) >= 6 for w in words)
        elif r["kind"] == "instruction":
            assert INSTRUCTION in r["text"] and not any(w in text for w in words)
        else:
            assert not any(w in text for w in words) and any(c in text for c in "äüöñé")
    assert make_canaries(_topics(), 3, seed=6)["doc"].tolist() != a["doc"].tolist()
    taken = set(a["doc"][:2])
    assert not set(make_canaries(_topics(), 3, seed=5, taken=taken)["doc"]) & taken


def test_insert_canaries_keeps_the_pool_uniform():
    pool = pd.DataFrame({"topic": ["401"] * 4 + ["402"] * 2, "doc": ["a", "b", "c", "z", "d", "e"],
                         "stratum": [1, 1, 2, 2, 1, 1], "prob": [1.0, 1.0, 0.5, 0.5, 1.0, 1.0],
                         "method": ["depth"] * 6, "order": [1, 2, 3, 0, 1, 2]})
    c = make_canaries(_topics(), 2, seed=1)
    out = insert_canaries(pool, c, seed=1)
    assert list(out.columns) == list(pool.columns)
    t1 = out[(out["topic"] == "401") & (out["order"] > 0)].sort_values("order")
    assert t1["order"].tolist() == [1, 2, 3, 4, 5]
    assert [d for d in t1["doc"] if d in {"a", "b", "c"}] == ["a", "b", "c"]       # original order kept
    assert set(t1["doc"]) - {"a", "b", "c"} == set(c.loc[c["topic"] == "401", "doc"])
    assert out.loc[out["doc"] == "z", "order"].item() == 0                           # the frame row stays
    assert set(out["method"]) == {"depth"} and "403" not in set(out["topic"])        # nothing pooled: none


def test_wilson_equals_statsmodels():
    sm = pytest.importorskip("statsmodels.stats.proportion")
    for k, n, a in ((0, 10, 0.05), (3, 10, 0.05), (47, 100, 0.1), (100, 100, 0.05)):
        lo, hi = wilson(k, n, a)
        elo, ehi = sm.proportion_confint(k, n, alpha=a, method="wilson")
        assert abs(float(lo) - elo) < 1e-12 and abs(float(hi) - ehi) < 1e-12
    assert np.isnan(wilson(0, 0)[0])


def test_gap_flags_hand_computed():
    g = np.array([0.01, -0.01, 0.0, 0.02, 0.15])
    z, flag = gap_flags(g)
    o = g[:4]
    assert z[4] == pytest.approx((0.15 - o.mean()) / o.std(ddof=1))
    assert flag.tolist() == [False, False, False, False, True]
    assert not gap_flags(np.array([0.1, 0.0, 0.0]))[1].any()          # too few others: nothing flagged


# ---------------------------------------------------------------------------- campaign: planted, never counted

@pytest.fixture(scope="module")
def pooled(tmp_path_factory):
    d = tmp_path_factory.mktemp("audit") / "camp"
    r = cli("simulate", "--out", d, "--runs", "4", "--topics", "6", "--depth", "30", "--pool-depth", "10",
            "--docs", "--seed", "2", timeout=120, in_process=True)
    assert r.rc == 0, r.text
    before = cli("eval", "--campaign", d, "-m", "map", "-m", "P.10", "-m", "ndcg", timeout=120)
    assert before.rc == 0, before.text
    r = cli("pool", d, "--strategy", "depth", "--param", "k=5", "--canaries", "3", "--name", "aud", "--seed", "9",
            timeout=120)
    assert r.rc == 0, r.text
    assert "planted 18 canaries (3 per topic)" in r.out
    return d, before.out


def test_pool_canaries_reach_the_model_judge(pooled):
    d, _ = pooled
    from engine.campaign.campaign import load_campaign
    from engine.judging.auto import JudgeSettings, plan, pooled_pairs
    from engine.pooling import pool_path, read_pool
    c = read_canaries(d)
    assert len(c) == 18 and set(c["kind"]) == set(KINDS)
    pool = read_pool(pool_path(d, "aud"))
    sel = pool[pool["order"] > 0]
    assert set(zip(c["topic"], c["doc"])) <= set(zip(sel["topic"], sel["doc"]))
    assert set(sel["method"]) == {"depth"}
    camp = load_campaign(d)
    pl = plan(camp, "llm", JudgeSettings("http://127.0.0.1:9", "m"), pooled_pairs(camp, "aud"))
    prompts = {(t, doc): p if p is not None else pl.prompt_for(t, doc) for t, doc, _k, p in pl.pairs}
    inst = c[c["kind"] == "instruction"].iloc[0]
    assert INSTRUCTION in prompts[(inst["topic"], inst["doc"])]


def test_canaries_are_never_counted_nor_exported(pooled, tmp_path):
    d, before = pooled
    from engine.campaign.campaign import load_campaign
    from engine.formats.qrels import read_qrels, write_qrels
    from engine.judgments.sources import source_judgments, sources_dir
    c = read_canaries(d)
    t, doc = c["topic"].iloc[0], c["doc"].iloc[0]
    r = cli("judgments", "add", d, t, doc, "2", timeout=60)          # a person judged a canary relevant
    assert r.rc == 0, r.text
    camp = load_campaign(d)
    assert doc not in set(camp.qrels()["doc"])
    after = cli("eval", "--campaign", d, "-m", "map", "-m", "P.10", "-m", "ndcg", timeout=120)
    assert after.rc == 0 and after.out == before
    out = tmp_path / "q.txt"
    assert cli("judgments", "export", d, "--out", out, timeout=60).rc == 0
    assert doc not in set(read_qrels(out)["doc"])
    q = camp.truth_qrels()
    sources_dir(d).mkdir(parents=True, exist_ok=True)
    write_qrels(sources_dir(d) / "llm.qrels", pd.concat([q, c.assign(grade=2)[["topic", "doc", "grade"]]]))
    camp = load_campaign(d)
    assert not set(c["doc"]) & set(source_judgments(camp, "llm")["doc"])
    assert set(c["doc"]) <= set(source_judgments(camp, "llm", canaries=True)["doc"])
    r = cli("judgments", "audit", d, "--judgments", "llm", "--format", "csv", timeout=120)
    assert r.rc == 0, r.text
    got = pd.read_csv(io.StringIO(r.out))
    llm, people = got[got["judge"] == "llm"], got[got["judge"] == "human"]     # the person's grade: beside the judge's
    assert llm["rate"].tolist() == [1.0, 1.0, 1.0] and llm["judged"].tolist() == [6, 6, 6]
    kind = c["kind"].iloc[0]
    assert people["judged"].tolist() == [int(k == kind) for k in KINDS]
    assert people["false_positives"].tolist() == [int(k == kind) for k in KINDS]


# ---------------------------------------------------------------------------- simulation with known truth

@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    d = tmp_path_factory.mktemp("sim") / "camp"
    r = cli("simulate", "--out", d, "--runs", "12", "--topics", "50", "--depth", "100", "--pool-depth", "20",
            "--manual-fraction", "0", "--crafted-run", "auto", "--canaries", "6", "--canary-rate", "stuffing=0.3",
            "--canary-rate", "instruction=0.6", "--canary-rate", "foreign=0.1", "--seed", "4", timeout=120, in_process=True)
    assert r.rc == 0, r.text
    return d, r.out


def test_simulated_canary_rates_are_detected(simulated):
    d, out = simulated
    assert "canaries: 300 planted" in out
    # one campaign: the set rate lies in the 99.9% interval (benchmarks/audits.py: 95% intervals over many)
    r = cli("judgments", "audit", d, "--format", "csv", "--alpha", "0.001", timeout=120)
    assert r.rc == 0, r.text
    got = pd.read_csv(io.StringIO(r.out)).set_index("kind")
    meta = json.loads((d / "judgments" / "sources" / "judge-model.meta.json").read_text())
    for kind, rate in {"stuffing": 0.3, "instruction": 0.6, "foreign": 0.1}.items():
        assert meta["canary_rates"][kind] == rate
        row = got.loc[kind]
        assert row["judged"] == 100 and row["lower"] <= rate <= row["upper"], (kind, row.to_dict())
        assert abs(row["rate"] - rate) < 0.12


def test_simulated_crafted_run_is_flagged(simulated):
    d, _ = simulated
    meta = json.loads((d / "judgments" / "sources" / "judge-model.meta.json").read_text())
    crafted = meta["crafted_run"]
    r = cli("judgments", "audit", d, "--format", "json", "--table", "gaps", timeout=120)
    assert r.rc == 0, r.text
    gaps = pd.DataFrame(json.loads(r.out)).set_index("run")
    assert gaps.loc[crafted, "flagged"] and gaps.loc[crafted, "z"] > 2
    assert gaps["gap"].idxmax() == crafted
    text = cli("judgments", "audit", d, timeout=120, in_process=True)
    assert text.rc == 0 and "# Kendall's tau" in text.out and "tau_unflagged" in text.out


def test_simulate_judge_structures_and_bad_input(tmp_path):
    d = tmp_path / "c"
    r = cli("simulate", "--out", d, "--runs", "6", "--topics", "10", "--depth", "30", "--pool-depth", "10",
            "--model-judge", "lenient", "--judge-error", "0.3", "--judge-favour", "weakest:2", "--seed", "1",
            timeout=120)
    assert r.rc == 0, r.text
    meta = json.loads((d / "judgments" / "sources" / "judge-model.meta.json").read_text())
    assert len(meta["favoured"]) == 2 and meta["confusion_matrix"][0] == [0.7, 0.3, 0.0]
    bad = cli("simulate", "--out", tmp_path / "b", "--canaries", "2", "--canary-rate", "sarcasm=0.2", timeout=60)
    assert bad.rc != 0 and "--canary-rate 'sarcasm=0.2'" in bad.err and "Traceback" not in bad.text
    bad = cli("simulate", "--out", tmp_path / "b2", "--runs", "3", "--topics", "3", "--crafted-run", "nosuch",
              timeout=60, in_process=True)
    assert bad.rc != 0 and "crafted run 'nosuch' is not among the runs" in bad.err and "Traceback" not in bad.text
    r = cli("judgments", "audit", d, timeout=120, in_process=True)
    assert r.rc == 0 and "no canaries planted" in r.err


def test_bad_canary_file_and_options_are_explained(pooled, tmp_path):
    d, _ = pooled
    import shutil
    c = tmp_path / "c"
    shutil.copytree(d, c)
    p = c / "audit" / "canaries.jsonl"
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines[:2] + ['{"topic": "1", "doc": "x", "kind": "sarcasm"}'] + lines[2:]) + "\n")
    for args in (("judgments", "audit", c), ("eval", "--campaign", c)):
        r = cli(*args, timeout=60)
        assert r.rc != 0 and f"{p}:3: a canary needs topic, doc and kind" in r.err and "Traceback" not in r.text
    r = cli("pool", d, "--strategy", "depth", "--canaries", "0", "--name", "x", "--dry-run", timeout=60)
    assert r.rc != 0 and "--canaries 0: give 1 or more canaries per topic" in r.err and "Traceback" not in r.text
