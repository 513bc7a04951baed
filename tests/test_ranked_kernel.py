"""The one ranked-list kernel (engine.ranking.ranked_rows / run_grades / judged_share_at) agrees with
build_ranked's trec_eval order and judgment join, on data with score ties and non-ASCII document ids."""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.ranking import (RELVALUE_NONPOOL, RELVALUE_UNJUDGED, build_ranked, judged_share_at, ranked_rows,
                            run_grades)


def _tied_campaign(seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    docs = ["Z1", "a1", "a10", "a9", "b", "é", "ß2", "d-3", "D3", "x"]
    rows = []
    for run in ("r2", "r1", "r3"):
        for topic in ("7", "10", "301"):
            for d in rng.choice(docs, size=8, replace=False):
                rows.append((run, topic, str(d), float(rng.integers(0, 3))))   # many ties
    runs = pd.DataFrame(rows, columns=["run", "topic", "doc", "score"]).sample(frac=1.0, random_state=seed)
    q = [(t, d, int(g)) for t in ("7", "10", "301") for d, g in zip(docs[::2], rng.integers(-1, 3, 5))]
    return pd.DataFrame(q, columns=["topic", "doc", "grade"]), runs.reset_index(drop=True)


def test_hand_computed_order_and_ranks():
    runs = pd.DataFrame({"run": ["r"] * 5, "topic": ["1"] * 5, "doc": ["a", "Z", "é", "b", "c"],
                         "score": [1.0, 2.0, 2.0, 2.0, 0.5]})
    rows, rank = ranked_rows(runs)
    # score 2 tied: doc ids descending in byte order (é > b > Z), then a (1.0), then c (0.5)
    assert runs["doc"].to_numpy()[rows].tolist() == ["é", "b", "Z", "a", "c"]
    assert rank.tolist() == [1, 2, 3, 4, 5]
    rows3, rank3 = ranked_rows(runs, depth=3)
    assert runs["doc"].to_numpy()[rows3].tolist() == ["é", "b", "Z"] and rank3.tolist() == [1, 2, 3]
    q = pd.DataFrame({"topic": ["1", "1", "1"], "doc": ["a", "é", "c"], "grade": [2, -1, 0]})
    assert run_grades(runs, q).tolist() == [2, RELVALUE_NONPOOL, RELVALUE_UNJUDGED, RELVALUE_NONPOOL, 0]
    names, share = judged_share_at(runs, q, (1, 4, 10))
    assert list(names) == ["r"]
    assert share[1].tolist() == [0.0] and share[4].tolist() == [0.25] and share[10].tolist() == [0.4]


def test_kernel_agrees_with_build_ranked_on_ties():
    qrels, runs = _tied_campaign()
    r, _ = build_ranked(qrels, runs)
    docs = np.asarray(r.doc, dtype=object)
    expect = {}
    for g in range(r.n_groups):
        a, b = r.offsets[g], r.offsets[g + 1]
        key = (r.run_names[r.g_run[g]], r.topic_names[r.g_topic[g]])
        expect[key] = (docs[a:b].tolist(), r.rel[a:b].tolist())
    for by_name in (False, True):
        rows, rank = ranked_rows(runs, by_name=by_name)
        assert sorted(rows.tolist()) == list(range(len(runs)))
        got: dict = {}
        sub = runs.iloc[rows]
        grades = run_grades(sub, qrels)
        for (run, topic, doc), k, g in zip(sub[["run", "topic", "doc"]].itertuples(index=False), rank, grades):
            d, gr = got.setdefault((run, topic), ([], []))
            assert k == len(d) + 1           # ranks count 1.. within each group, groups contiguous
            d.append(doc)
            gr.append(int(g))
        assert got == expect
        keys = list(dict.fromkeys(zip(sub["run"], sub["topic"])))
        if by_name:
            assert keys == sorted(keys, key=lambda k: (k[0].encode(), k[1].encode()))
        else:
            first_run = list(dict.fromkeys(runs["run"]))
            first_topic = list(dict.fromkeys(runs["topic"]))
            assert keys == sorted(keys, key=lambda k: (first_run.index(k[0]), first_topic.index(k[1])))


def test_judged_share_matches_build_ranked():
    qrels, runs = _tied_campaign(5)
    r, _ = build_ranked(qrels, runs)
    names, share = judged_share_at(runs, qrels, (3, 10))
    for k in (3, 10):
        top = r.rank <= k
        run_of = r.g_run[r.row_group]
        for i, name in enumerate(r.run_names):
            sel = top & (run_of == i)
            assert share[k][list(names).index(name)] == (r.rel[sel] >= 0).mean()
