"""TREC AutoJudge interchange (issue 38, item 5): auto-judge-evaluate (test-only oracle) gives the same
meta-evaluate and qrel-evaluate values as Cranfield on the same inputs; where it prints 0.0 for an
undefined value (ties, one label, too few runs) Cranfield gives NaN and a reason, and both behaviours are
checked. Leaderboards, qrels and nugget banks round-trip between the two; every `cranfield autojudge`
action runs once as a process."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from _cli import cli

from engine.formats.autojudge import leaderboard_text, read_leaderboard, run_means
from engine.judgments.autojudge import correlate, meta_evaluate, qrel_evaluate
from engine.stability.correlation import tau_ap_b, tau_gap


@pytest.fixture(scope="module")
def nltk_env(tmp_path_factory):
    """autojudge_base loads NLTK's punkt and stop words when imported (and would download them): a local
    stand-in keeps the oracle offline; the oracle's meta-evaluation never uses them."""
    d = tmp_path_factory.mktemp("nltk")
    (d / "tokenizers" / "punkt").mkdir(parents=True)
    (d / "corpora" / "stopwords").mkdir(parents=True)
    (d / "corpora" / "stopwords" / "english").write_text("the\na\n")
    os.environ["NLTK_DATA"] = str(d)
    if "nltk" in sys.modules:
        sys.modules["nltk"].data.path.insert(0, str(d))
    env = dict(os.environ, NLTK_DATA=str(d))
    return env


def _board(rng, runs, topics, measures=("m1", "m2"), ties=False):
    rows = []
    for r in runs:
        for m in measures:
            vals = rng.integers(0, 3, len(topics)) / 2 if ties else rng.random(len(topics))
            rows += [(r, t, m, float(v)) for t, v in zip(topics, vals)]
            rows.append((r, "all", m, float(np.mean(vals))))
    return pd.DataFrame(rows, columns=["run", "topic", "measure", "value"])


def test_tau_ap_b_and_tau_gap_equal_the_oracles(nltk_env):
    from autojudge_evaluate.pyircore import tauap_b
    from autojudge_evaluate.tau_gap import tau_gap as oracle_gap
    rng = np.random.default_rng(0)
    for i in range(200):
        n = int(rng.integers(3, 16))
        a = rng.integers(0, 4, n).astype(float) if i % 2 else rng.random(n)
        b = rng.integers(0, 3, n).astype(float) if i % 3 == 0 else rng.random(n)
        if np.ptp(a) > 0 and np.ptp(b) > 0:
            assert tau_ap_b(a, b) == pytest.approx(tauap_b(a, b), abs=1e-12)
        want = oracle_gap(list(a), list(b))
        got = tau_gap(a, b)
        assert (np.isnan(got) and np.isnan(want)) or got == pytest.approx(want, abs=1e-12)


def test_meta_evaluate_equals_leaderboard_evaluator(nltk_env, tmp_path):
    from autojudge_evaluate.evaluation import LeaderboardEvaluator
    rng = np.random.default_rng(4)
    runs, topics = [f"run{i:02d}" for i in range(14)], [str(t) for t in range(301, 321)]
    truth = _board(rng, runs, topics)
    judge = truth.assign(value=truth["value"] + rng.normal(0, 0.1, len(truth)))
    (tmp_path / "truth.jsonl").write_text(leaderboard_text(truth))
    (tmp_path / "judge.jsonl").write_text(leaderboard_text(judge, "tot"))
    ev = LeaderboardEvaluator(tmp_path / "truth.jsonl", truth_format="jsonl", eval_format="tot")
    want = ev.evaluate(tmp_path / "judge.jsonl")
    got = meta_evaluate(read_leaderboard(tmp_path / "truth.jsonl"), {"judge": read_leaderboard(tmp_path / "judge.jsonl", "tot")})
    assert len(got) == len(want) == 4
    for r in got.to_dict("records"):
        w = want[(r["TruthMeasure"], r["EvalMeasure"])]
        for m in ("kendall", "pearson", "spearman", "tauap_b", "tau_gap", "kendall@10"):
            assert r[m] == pytest.approx(w[m], abs=1e-12), m
        assert r["reasons"] == ""


def test_degenerate_leaderboards_oracle_zero_cranfield_reason(nltk_env):
    from autojudge_evaluate.evaluation import correlation as oracle_corr
    from autojudge_evaluate.evaluation import tauap_b as oracle_tauap
    truth = pd.Series([0.5, 0.4, 0.3, 0.2], index=["a", "b", "c", "d"])
    tied = pd.Series([0.1, 0.1, 0.1, 0.1], index=["a", "b", "c", "d"])
    # the judge ties every run: the oracle's tau_AP_b averages a 0.0 in; its kendall is NaN
    from autojudge_evaluate.pyircore import tauap_b_ties
    half = tauap_b_ties(-np.asarray(tied), -np.asarray(truth))          # the defined direction
    assert oracle_tauap(truth.tolist(), tied.tolist()) == pytest.approx((0.0 + half) / 2, abs=1e-12)
    assert np.isnan(oracle_corr(truth.tolist(), tied.tolist(), "kendall"))
    v, why = correlate(truth, tied, "tauap_b")
    assert np.isnan(v) and why == "the judge ties every run; tauap_b is undefined (auto-judge-evaluate gives 0.0 for tau_AP_b here)"
    v, why = correlate(truth, tied, "kendall")
    assert np.isnan(v) and why == "the judge ties every run; kendall is undefined"
    # too few runs: the oracle refuses, Cranfield says why
    with pytest.raises(ValueError, match="only 2 elements"):
        oracle_corr([1.0, 2.0], [1.0, 2.0], "kendall")
    v, why = correlate(truth, truth, "kendall@2")
    assert np.isnan(v) and why.startswith("only 2 run(s); a correlation needs at least 3")
    # a run the judge left out: 0.0 with --on-missing default (as the oracle), and said
    v, why = correlate(truth, truth.drop("d"), "kendall", "default")
    assert v == pytest.approx(oracle_corr(truth.tolist(), [0.5, 0.4, 0.3, 0.0], "kendall"))
    assert why == "1 run(s) missing from the judge's leaderboard scored 0.0"


def _qrels(seed=1):
    rng = np.random.default_rng(seed)
    t, p = [], []
    for q in range(8):
        for d in range(12):
            g = int(rng.integers(0, 4))
            t.append((f"t{q}", f"d{d}", g))
            if rng.random() < 0.9:
                p.append((f"t{q}", f"d{d}", int(np.clip(g + rng.integers(-1, 2), 0, 3))))
    t += [("z1", "a", 0), ("z1", "b", 0)]          # people found nothing relevant on z1
    p += [("z1", "a", 1), ("z1", "b", 0)]
    cols = ["topic", "doc", "grade"]
    return pd.DataFrame(t, columns=cols), pd.DataFrame(p, columns=cols)


@pytest.mark.parametrize("tmax,pmax", [(1, 1), (3, 3), (3, 1)])
def test_qrel_evaluate_equals_oracle_and_explains_its_zeros(nltk_env, tmax, pmax):
    from autojudge_base.qrels.qrels import QrelRow, Qrels
    from autojudge_evaluate.nugget_doc_eval import grade_agreement, set_overlap
    T, P = _qrels()
    got = qrel_evaluate(T, P, tmax, pmax).set_index("Topic")
    tq = Qrels([QrelRow(*r) for r in T.itertuples(index=False)])
    pq = Qrels([QrelRow(*r) for r in P.itertuples(index=False)])
    ov = {r.topic_id: r for r in set_overlap(tq, pq)}
    ag = {r.topic_id: r for r in grade_agreement(tq, pq, truth_max_grade=tmax, predict_max_grade=pmax)}
    explained = 0
    for topic, a in ag.items():
        g = got.loc[topic]
        want = {"Jaccard": a.jaccard, "Kappa_w": a.kappa_weighted, "Kripp_a": a.kripp_alpha, "ARI": a.ari}
        want.update({("Kappa@1" if tmax == pmax == 1 else f"Kappa@{x}v{y}"): v for (x, y), v in a.kappa_binary.items()})
        if topic in ov:
            want.update(Precision=ov[topic].precision, Recall=ov[topic].recall, F1=ov[topic].f1)
        for col, w in want.items():
            if np.isnan(g[col]) and not np.isnan(w):
                # the oracle's 0.0 for an undefined value: Cranfield names the reason
                assert w == 0.0, (topic, col, w)
                assert "auto-judge-evaluate gives 0.0" in g["reasons"], (topic, col)
                explained += 1
            else:
                assert (np.isnan(g[col]) and np.isnan(w)) or g[col] == pytest.approx(w, abs=1e-12), (topic, col)
    assert explained >= 2
    z = got.loc["z1"]                 # truth has no relevant document on z1
    assert np.isnan(z["Recall"]) and ov["z1"].recall == 0.0
    assert "the truth has no relevant document: recall undefined (auto-judge-evaluate gives 0.0)" in z["reasons"]
    assert "the truth uses one label only: kappa cannot measure agreement" in z["reasons"]
    # the MEAN row averages the defined values only and says how many
    col = "Kappa@1" if tmax == pmax == 1 else "Kappa@1v1"
    per = pd.to_numeric(got.drop(index="MEAN")[col])
    assert got.loc["MEAN", col] == pytest.approx(per.dropna().mean())
    assert f"{col} over {per.notna().sum()} of {len(per)} topics" in got.loc["MEAN", "reasons"]


def test_cli_processes_against_the_oracles_cli(nltk_env, tmp_path):
    d = tmp_path / "camp"
    r = cli("simulate", "--out", d, "--runs", "6", "--topics", "12", "--depth", "20", "--pool-depth", "8",
            "--judge", "noisy", "--judge-error", "0.3", "--seed", "2", timeout=120, in_process=True)
    assert r.rc == 0, r.text
    out = tmp_path / "aj"
    e = cli("autojudge", "export", d, "--out", out, "-m", "map", "-m", "P.10", timeout=120)
    assert e.rc == 0, e.text
    assert {p.name for p in out.iterdir()} == {"human.qrels", "human.eval.jsonl", "judge-noisy.qrels",
                                               "judge-noisy.eval.jsonl"}
    # the leaderboard's aggregate rows are the evaluator's means
    from engine.campaign.campaign import load_campaign
    from engine.judgments.agreement import mean_scores
    from engine.judgments.sources import source_judgments
    camp = load_campaign(d)
    board = read_leaderboard(out / "judge-noisy.eval.jsonl")
    ms = mean_scores(source_judgments(camp, "judge-noisy"), camp.runs(), "map", camp.eval_options(), camp.gains())
    rm = run_means(board, "map")
    assert all(rm[k] == pytest.approx(ms[k], abs=1e-12) for k in ms.index)
    # meta-evaluate: the oracle's command and ours, both as processes
    ours = cli("autojudge", "meta-evaluate", "--truth-leaderboard", out / "human.eval.jsonl",
               out / "judge-noisy.eval.jsonl", "--format", "json", timeout=120)
    assert ours.rc == 0, ours.text
    theirs = tmp_path / "corr.jsonl"
    p = subprocess.run([os.path.join(os.path.dirname(sys.executable), "auto-judge-evaluate"), "meta-evaluate",
                        "--truth-leaderboard", str(out / "human.eval.jsonl"), "--truth-format", "jsonl",
                        "--eval-format", "jsonl", str(out / "judge-noisy.eval.jsonl"), "--output", str(theirs),
                        "--silent"], capture_output=True, text=True, env=nltk_env, timeout=300)
    assert p.returncode == 0, p.stderr
    want = [json.loads(x) for x in theirs.read_text().splitlines()]
    got = json.loads(ours.out)
    assert len(got) == len(want) == 4
    for g, w in zip(sorted(got, key=lambda x: (x["TruthMeasure"], x["EvalMeasure"])),
                    sorted(want, key=lambda x: (x["TruthMeasure"], x["EvalMeasure"]))):
        assert g["Judge"] == w["Judge"] == "judge-noisy.eval.jsonl"
        for m in ("kendall", "pearson", "spearman", "tauap_b", "tau_gap", "kendall@10"):
            assert g[m] == pytest.approx(w[m], abs=1e-9), m      # its jsonl keeps 10 decimals
    # qrel-evaluate: both commands on the exported qrels (the oracle writes 4 decimals)
    q_ours = cli("autojudge", "qrel-evaluate", "--truth-qrels", out / "human.qrels", "--predict-qrels",
                 out / "judge-noisy.qrels", "--truth-max-grade", "2", "--predict-max-grade", "2", "--format", "json",
                 timeout=120)
    assert q_ours.rc == 0, q_ours.text
    qt = tmp_path / "q.jsonl"
    p = subprocess.run([os.path.join(os.path.dirname(sys.executable), "auto-judge-evaluate"), "qrel-evaluate",
                        "--truth-qrels", str(out / "human.qrels"), "--predict-qrels", str(out / "judge-noisy.qrels"),
                        "--truth-max-grade", "2", "--predict-max-grade", "2", "--output", str(qt)],
                       capture_output=True, text=True, env=nltk_env, timeout=300)
    assert p.returncode == 0, p.stderr
    theirs_q = {r["Topic"]: r for r in (json.loads(x) for x in qt.read_text().splitlines())}
    for r in json.loads(q_ours.out):
        if r["Topic"] == "MEAN":
            continue
        w = theirs_q[r["Topic"]]
        for c in ("Precision", "Recall", "F1", "Jaccard", "Kappa@1v1", "Kappa@2v2", "Kappa_w", "Kripp_a", "ARI"):
            if r[c] is None:
                assert w[c] in (0.0, None) and r["reasons"], (r["Topic"], c)
            else:
                assert r[c] == pytest.approx(w[c], abs=5e-5), (r["Topic"], c)
    text = cli("autojudge", "qrel-evaluate", "--truth-qrels", out / "human.qrels", "--predict-qrels",
               out / "judge-noisy.qrels", timeout=60)
    assert text.rc == 0 and "MEAN" in text.out
    # import: the exported qrels come back as a source with the same judgments
    i = cli("autojudge", "import", d, out / "judge-noisy.qrels", "--name", "aj-noisy", "--model", "m1", timeout=60)
    assert i.rc == 0, i.text
    back = source_judgments(load_campaign(d), "aj-noisy")
    assert back.equals(source_judgments(load_campaign(d), "judge-noisy"))


def test_nugget_banks_both_ways(nltk_env, tmp_path):
    from autojudge_base.nugget_data.nuggetizer.nuggetizer_data import (NuggetizerNugget, NuggetizerNuggetBank,
        NuggetizerNuggetBanks, load_nuggetizer_banks_from_file, write_nuggetizer_banks)
    d = tmp_path / "c"
    assert cli("simulate", "--out", d, "--runs", "3", "--topics", "2", "--depth", "5", timeout=120, in_process=True).rc == 0
    banks = NuggetizerNuggetBanks.from_banks_list([
        NuggetizerNuggetBank(query="q one", qid="401", nuggets=[NuggetizerNugget(text="alpha fact", importance="vital"),
                                                               NuggetizerNugget(text="beta fact", importance="okay")]),
        NuggetizerNuggetBank(query="q two", qid="402", nuggets=[NuggetizerNugget(text="gamma", importance="okay")])])
    f = tmp_path / "bank.jsonl"
    write_nuggetizer_banks(banks, f)
    r = cli("autojudge", "import", d, f, "--what", "nuggets", timeout=60)
    assert r.rc == 0, r.text
    assert "3 nuggets imported" in r.out
    out = tmp_path / "aj"
    assert cli("autojudge", "export", d, "--out", out, "-m", "map", timeout=120, in_process=True).rc == 0
    back = load_nuggetizer_banks_from_file(out / "nuggets.jsonl")
    assert {q: [(n.text, n.importance) for n in b.nuggets] for q, b in back.banks.items()} == \
        {"401": [("alpha fact", "vital"), ("beta fact", "okay")], "402": [("gamma", "okay")]}


def test_leaderboard_reader_errors_and_oracle_files(nltk_env, tmp_path):
    from autojudge_evaluate.eval_results import load as oracle_load
    f = tmp_path / "b.tot"
    f.write_text("r1\tmap\t1\t0.5\nr1\tmap\tall\t0.5\n")
    with pytest.raises(Exception, match="could be tot or ir_measures"):
        read_leaderboard(f)
    assert list(read_leaderboard(f, "tot")["topic"]) == ["1", "all"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"run_id": "r1", "topic_id": "1", "measure": "map", "value": 0.5}\n{"run_id": "r1", "topic_id": "2"}\n'
                   '{"run_id": "r1", "topic_id": "3", "measure": "map", "value": "x"}\n')
    with pytest.raises(Exception) as ei:
        read_leaderboard(bad)
    msg = str(ei.value)
    assert f"{bad}:2: missing key 'measure'" in msg and f"{bad}:3: value 'x' is not a number" in msg
    r = cli("autojudge", "meta-evaluate", "--truth-leaderboard", bad, bad, timeout=60, in_process=True)
    assert r.rc != 0 and "missing key 'measure'" in r.err and "Traceback" not in r.err
    # what we write, the oracle reads back to the same values
    rng = np.random.default_rng(1)
    b = _board(rng, ["a", "b", "c"], ["1", "2"])
    for fmt in ("jsonl", "tot", "ir_measures"):
        p = tmp_path / f"x.{fmt}"
        p.write_text(leaderboard_text(b, fmt))
        er = oracle_load(p, format=fmt, recompute_aggregates=False, verify=True, on_missing="error")
        assert er.get_aggregate_ranking("m1") == pytest.approx(run_means(b, "m1").to_dict(), abs=1e-15)
        assert read_leaderboard(p, fmt).equals(b)


def test_qrel_evaluate_degenerate_topics_both_ways(nltk_env):
    from autojudge_base.qrels.qrels import QrelRow, Qrels
    from autojudge_evaluate.nugget_doc_eval import grade_agreement, set_overlap
    # o: one document; n: the judge calls nothing relevant; ok: an ordinary topic
    T = pd.DataFrame([("o", "a", 1), ("n", "a", 1), ("n", "b", 0), ("ok", "a", 1), ("ok", "b", 0), ("ok", "c", 1)],
                     columns=["topic", "doc", "grade"])
    P = pd.DataFrame([("o", "a", 1), ("n", "a", 0), ("n", "b", 0), ("ok", "a", 1), ("ok", "b", 1), ("ok", "c", 0)],
                     columns=["topic", "doc", "grade"])
    tq, pq = (Qrels([QrelRow(*r) for r in x.itertuples(index=False)]) for x in (T, P))
    ov = {r.topic_id: r for r in set_overlap(tq, pq)}
    ag = {r.topic_id: r for r in grade_agreement(tq, pq)}
    got = qrel_evaluate(T, P).set_index("Topic")
    assert ag["o"].ari == 1.0 and np.isnan(got.loc["o", "ARI"])
    assert "one document: no pair to compare (auto-judge-evaluate gives 1.0)" in got.loc["o", "reasons"]
    assert ov["n"].precision == 0.0 and np.isnan(got.loc["n", "Precision"])
    assert "the judge calls no document relevant: precision undefined" in got.loc["n", "reasons"]
    assert ag["n"].kappa_binary[(1, 1)] == 0.0 and np.isnan(got.loc["n", "Kappa@1"])
    assert got.loc["n", "Recall"] == ov["n"].recall == 0.0 and got.loc["n", "F1"] == ov["n"].f1 == 0.0
    assert got.loc["ok", "Kappa@1"] == pytest.approx(ag["ok"].kappa_binary[(1, 1)], abs=1e-12)
    assert got.loc["ok", "ARI"] == pytest.approx(ag["ok"].ari, abs=1e-12) and got.loc["ok", "reasons"] == ""
    # the means: the oracle's include its 0.0 and 1.0; Cranfield's only the defined values
    assert got.loc["MEAN", "Precision"] == pytest.approx(np.mean([ov["o"].precision, ov["ok"].precision]))


def test_autoargue_nugget_banks_both_ways(nltk_env, tmp_path):
    from autojudge_base.nugget_data import NuggetBank, NuggetClaim, NuggetQuestion
    from autojudge_base.nugget_data.nugget_banks import NuggetBanks, load_nugget_banks_from_file, write_nugget_banks
    d = tmp_path / "c"
    assert cli("simulate", "--out", d, "--runs", "3", "--topics", "2", "--depth", "5", timeout=120, in_process=True).rc == 0
    b1 = NuggetBank(query_id="401", title_query="q one")
    b1.add_nuggets([NuggetQuestion.from_lazy("401", "What is alpha?", gold_answers=["a1"], importance="vital"),
                    NuggetClaim(claim="beta holds", query_id="401", importance="okay")])
    b2 = NuggetBank(query_id="402", title_query="q two")
    b2.add_nuggets([NuggetQuestion.from_lazy("402", "Who is gamma?")])          # no importance: okay, noted
    f = tmp_path / "argue.jsonl"
    write_nugget_banks(NuggetBanks.from_banks_list([b1, b2]), f)
    r = cli("autojudge", "import", d, f, "--what", "nuggets", timeout=60, in_process=True)
    assert r.rc == 0, r.text
    assert "(autoargue-nuggets): 3 nuggets imported" in r.out
    assert "1 nugget(s) without an importance read as okay" in r.err and "answers" in r.err
    from engine.nuggets.store import current_nuggets
    cur = current_nuggets(d)
    assert sorted(zip(cur["topic"], cur["text"], cur["importance"])) == [
        ("401", "What is alpha?", "vital"), ("401", "beta holds", "okay"), ("402", "Who is gamma?", "okay")]
    again = cli("autojudge", "import", d, f, "--what", "nuggets", timeout=60, in_process=True)
    assert again.rc == 0 and "nothing new" in again.out
    out = tmp_path / "aj"
    assert cli("autojudge", "export", d, "--out", out, "-m", "map", timeout=120, in_process=True).rc == 0
    back = load_nugget_banks_from_file(out / "nuggets.argue.jsonl")
    got = {q: sorted((type(n).__name__, getattr(n, "question", None) or n.claim, n.importance)
                     for n in b.nuggets_as_list()) for q, b in back.banks.items()}
    assert got == {"401": [("NuggetClaim", "beta holds", "okay"), ("NuggetQuestion", "What is alpha?", "vital")],
                   "402": [("NuggetQuestion", "Who is gamma?", "okay")]}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "401", "nugget_bank": [{"question": "q?", "importance": 3}]}\n')
    r = cli("autojudge", "import", d, bad, "--what", "nuggets", timeout=60, in_process=True)
    assert r.rc != 0 and f'{bad}:1: nugget_bank[0]: "importance" must be vital or okay, found 3' in r.err


@pytest.mark.parametrize("methods", [["kendall", "tauap_b", "kendall@10"], ["kendall", "pearson"]])
def test_missing_runs_as_the_oracle_handles_them(nltk_env, tmp_path, methods):
    """--on-missing default: a run the judge left out scores 0.0, unless a METHOD@K is asked, when the
    oracle keeps the runs both scored for every method; Cranfield does the same and says so."""
    from autojudge_evaluate.evaluation import LeaderboardEvaluator
    rng = np.random.default_rng(9)
    runs = [f"r{i}" for i in range(12)]
    truth = _board(rng, runs, ["1", "2", "3"], ("m",))
    judge = truth[truth["run"] != "r3"].assign(value=lambda x: x["value"] + rng.normal(0, 0.2, len(x)))
    (tmp_path / "t.jsonl").write_text(leaderboard_text(truth))
    (tmp_path / "j.jsonl").write_text(leaderboard_text(judge))
    ev = LeaderboardEvaluator(tmp_path / "t.jsonl", truth_format="jsonl", eval_format="jsonl", on_missing="default",
                              correlation_methods=methods)
    want = ev.evaluate(tmp_path / "j.jsonl")[("m", "m")]
    got = meta_evaluate(truth, {"j": judge}, methods=methods, on_missing="default").iloc[0]
    for m in methods:
        assert got[m] == pytest.approx(want[m], abs=1e-12), m
    if any("@" in m for m in methods):
        assert "1 run(s) scored on one side only left out of every method" in got["reasons"]
    else:
        assert "kendall: 1 run(s) missing from the judge's leaderboard scored 0.0" in got["reasons"]
