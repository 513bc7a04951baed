"""Reproduce trec_eval 10.0's own test outputs line for line, and agree with pytrec_eval per topic."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

from cranfield.cli import main
from engine.evaluation.evaluate import compute
from engine.formats.qrels import read_qrels
from engine.formats.runs import read_runs
from engine.ranking.ranked import EvalOptions

CASES = [
    ([], "out.test"),
    (["-m", "all_trec"], "out.test.a"),
    (["-m", "all_trec", "-q"], "out.test.aq"),
]

@pytest.mark.parametrize("flags,expected", CASES, ids=[c[1] for c in CASES])
def test_reproduces_reference_output(trec_eval_dir, capsys, flags, expected):
    rc = main(["eval", *flags, str(trec_eval_dir / "qrels.test"), str(trec_eval_dir / "results.test")])
    assert rc == 0
    got = capsys.readouterr().out.splitlines()
    want = (trec_eval_dir / expected).read_text().splitlines()
    missing = [ln for ln in want if ln not in got]
    assert got == want, f"{len(missing)} reference lines differ, first: {missing[:5]}"
    assert len(want) >= 30


# ---------------------------------------------------------------- per-topic agreement with pytrec_eval

MINE = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
        "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
        "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
        "num_nonrel_judged_ret"]
GM = {"gm_map", "gm_bpref"}   # pytrec_eval reports log(max(v, 1e-5)) per topic


def _compare_with_pytrec(qrels: pd.DataFrame, runs: pd.DataFrame, rel_level: int = 1,
                         judged_only: bool = False) -> int:
    """Assert every per-topic value of MINE equals pytrec_eval's (trec_eval 9.x), return #values."""
    opt = EvalOptions(rel_level=rel_level, judged_only=judged_only, trec_eval_version="9")
    c = compute(qrels, runs, MINE, opt)
    r = c.ranked
    qd: dict = {}
    for t, d, g in zip(qrels["topic"], qrels["doc"], qrels["grade"]):
        qd.setdefault(str(t), {})[str(d)] = int(g)
    n = 0
    for run in r.run_names:
        sub = runs[runs["run"] == run]
        rd: dict = {}
        for t, d, s in zip(sub["topic"], sub["doc"], sub["score"]):
            rd.setdefault(str(t), {})[str(d)] = float(s)
        ev = pytrec_eval.RelevanceEvaluator(qd, set(MINE), relevance_level=rel_level,
                                            judged_docs_only_flag=judged_only).evaluate(rd)
        gsel = np.flatnonzero(np.asarray(r.run_names)[r.g_run] == run)
        assert sorted(ev) == sorted(r.topic_names[t] for t in r.g_topic[gsel])
        for g in gsel:
            topic = r.topic_names[r.g_topic[g]]
            for name, vals in c.values.items():
                want = ev[topic][name]
                got = float(vals[g])
                if name in GM:
                    got = math.log(max(got, 1e-5))
                if math.isnan(want):
                    # trec_eval computes 0/0 for an empty ranking (-J removed everything); so do we
                    assert name.startswith(("iprec_at_recall", "11pt_avg")) and r.num_ret[g] == 0
                    assert math.isnan(got), (run, topic, name, got)
                    n += 1
                    continue
                assert got == pytest.approx(want, abs=1e-12), (run, topic, name, got, want)
                n += 1
    return n


def test_matches_pytrec_eval_on_reference_files(trec_eval_dir):
    qrels = read_qrels(trec_eval_dir / "qrels.test")
    runs = read_runs([trec_eval_dir / "results.test"])
    n = _compare_with_pytrec(qrels, runs)
    assert n == 3 * 78  # 3 topics x 78 per-topic values of MINE (with default cut-offs)


def _graded_example(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Graded judgments (0-3, and -1 = pooled unjudged), two runs with heavy score ties."""
    rng = np.random.default_rng(seed)
    q_rows, r_rows = [], []
    for t in range(6):
        topic = f"T{t}"
        docs = [f"d{t}-{i:03d}" for i in range(80)]
        judged = rng.choice(80, size=45, replace=False)
        for i in judged:
            q_rows.append((topic, docs[i], int(rng.choice([-1, 0, 0, 0, 1, 1, 2, 3]))))
        for run in ("A", "B"):
            if run == "B" and t == 5:
                continue                      # run B has no results for T5
            ret = rng.choice(80, size=int(rng.integers(1, 60)), replace=False)
            scores = rng.integers(0, 6, size=len(ret)).astype(float)   # many ties
            for i, s in zip(ret, scores):
                r_rows.append((run, topic, docs[i], s))
    qrels = pd.DataFrame(q_rows, columns=["topic", "doc", "grade"])
    runs = pd.DataFrame(r_rows, columns=["run", "topic", "doc", "score"])
    return qrels, runs


@pytest.mark.parametrize("rel_level,judged_only", [(1, False), (2, False), (3, False), (1, True), (2, True)])
def test_matches_pytrec_eval_graded_ties(rel_level, judged_only):
    qrels, runs = _graded_example(seed=11 + rel_level)
    n = _compare_with_pytrec(qrels, runs, rel_level=rel_level, judged_only=judged_only)
    assert n == 11 * 78  # (6 topics of run A + 5 of run B) x 78 values


def test_matches_pytrec_eval_on_hand_example():
    from test_eval_flags import QRELS, RUN   # tests/ is on sys.path (pytest rootdir-less import)
    assert _compare_with_pytrec(QRELS, RUN) == 5 * 78
    assert _compare_with_pytrec(QRELS, RUN, judged_only=True) == 5 * 78   # T5 is empty after -J
