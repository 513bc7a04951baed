"""The small-call path of `Evaluator` (benchmarks/api_speed.py's shapes): a reused Evaluator gives, call after
call, exactly the values a fresh one and the plain library give; a frame of Arrow-backed text gives the dict's
values; the shortcuts in `Ranked.at_rank`, recip_rank and the per-topic ideal DCG agree with the general code."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cranfield
from engine.evaluation.adapters import _codes
from engine.ranking.build import _assemble, topic_judgments
from engine.ranking.ranked import EvalOptions, LazyDocs

MEASURES = ["map", "P.10", "ndcg_cut.10", "recip_rank", "recall.100", "ndcg_cut.5,20"]


def _data(seed: int, n_topics: int = 6):
    rng = np.random.default_rng(seed)
    qrels = {f"q{t}": {f"d{d}": int(rng.integers(0, 4)) for d in rng.choice(80, 30, replace=False)}
             for t in range(n_topics)}
    run = {}
    for t in range(n_topics - 1):                  # the last topic is left out of the run
        docs = rng.choice(80, int(rng.integers(1, 60)), replace=False)
        run[f"q{t}"] = {f"d{d}": float(rng.integers(0, 5)) for d in docs}     # many tied scores
    return qrels, run


def _frame(run: dict, dtype) -> pd.DataFrame:
    rows = [(t, d, s) for t, docs in run.items() for d, s in docs.items()]
    return pd.DataFrame({"qid": pd.Series([r[0] for r in rows], dtype=dtype),
                         "docno": pd.Series([r[1] for r in rows], dtype=dtype),
                         "score": [r[2] for r in rows]})


@pytest.mark.parametrize("complete", [False, True])
def test_reused_evaluator_equals_fresh_and_frames(complete):
    qrels, _ = _data(0)
    ev = cranfield.Evaluator(qrels, MEASURES, complete=complete)
    for seed in range(1, 6):                       # one Evaluator, several runs: nothing carried wrongly
        _, run = _data(seed)
        got = ev.evaluate(run)
        fresh = cranfield.Evaluator(qrels, MEASURES, complete=complete).evaluate(run)
        assert got == fresh
        assert list(got) == list(fresh)
        assert all(list(got[t]) == list(fresh[t]) for t in got)
        for dtype in (object, "str", "string[pyarrow]"):
            assert ev.evaluate(_frame(run, dtype)) == got, dtype
        long = cranfield.evaluate(qrels, run, MEASURES, complete=complete, trec_labels=False)
        for row in long.itertuples():
            assert got[row.topic][row.measure] == row.value


def test_arrow_text_codes_equal_factorize():
    ids = ["d3", "d1", "d3", "é", "d10", "d1"]
    for dtype in ("str", "string[pyarrow]"):
        codes, names = _codes(pd.Series(ids, dtype=dtype))
        ref_codes, ref_names = _codes(pd.Series(ids, dtype=object))
        assert codes.tolist() == ref_codes.tolist() and names.tolist() == ref_names.tolist()
        assert codes.dtype == np.int64 and names.dtype == object
    with pytest.raises(cranfield.CranfieldError, match="missing value"):
        _codes(pd.Series(["a", None], dtype="str"))


def _ranked(lengths: list[int], seed: int = 0):
    rng = np.random.default_rng(seed)
    n = sum(lengths)
    t_code = np.repeat(np.arange(len(lengths)), lengths)
    rel = rng.integers(-1, 3, n)
    q_tcode = np.repeat(np.arange(len(lengths)), 5)
    q_grade = rng.integers(0, 3, len(q_tcode))
    return _assemble(EvalOptions(), ["run"], [f"t{i}" for i in range(len(lengths))], np.zeros(n, np.int64), t_code,
                     -np.arange(n, dtype=np.float64), rel, LazyDocs(np.asarray(["d"], dtype=object), np.zeros(n, np.int64)),
                     q_tcode, q_grade, np.zeros(0, np.int64), topic_arrays=topic_judgments(len(lengths), q_tcode, q_grade))


@pytest.mark.parametrize("lengths", [[3, 1, 7], [5, 5], [4, 0, 2], [1]])
def test_at_rank_and_recip_rank_shortcuts(lengths):
    from engine.measures.m_recip_rank import recip_rank
    r = _ranked(lengths)
    cum = r.cum_rel
    for k in (1, 2, 3, 6, 100):
        want = np.zeros(r.n_groups)
        for g in range(r.n_groups):                # by hand: the row at rank min(k, length), 0 for an empty list
            a, b = r.offsets[g], r.offsets[g + 1]
            if b > a:
                want[g] = cum[a + min(k, b - a) - 1]
        got = r.at_rank(cum, k)
        assert got.dtype == np.float64 and got.tolist() == want.tolist()
    assert recip_rank(r).tolist() == r.seg_max(np.where(r.is_rel, 1.0 / r.rank, 0.0), fill=0.0).tolist()
