"""The one ranked-list kernel (engine.ranking.ranked_rows / run_grades / judged_share_at / trec_order /
judgment_keys) agrees with build_ranked's trec_eval order and judgment join, on data with score ties and
non-ASCII document ids, and so does every caller routed through it (run store, pool bias, planning,
run comparison, fusion, the Evaluator's small-call path)."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd

from engine.ranking.ranked import RELVALUE_NONPOOL, RELVALUE_UNJUDGED
from engine.ranking.build import build_ranked
from engine.ranking.join import judged_share_at, ranked_rows, run_grades


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


# --------------------------------------------------------------------------- converted callers

def _expected_lists(qrels: pd.DataFrame, runs: pd.DataFrame) -> dict:
    """(run, topic) -> (documents in build_ranked's order, their grades)."""
    r, _ = build_ranked(qrels, runs)
    docs = np.asarray(r.doc, dtype=object)
    return {(r.run_names[r.g_run[g]], r.topic_names[r.g_topic[g]]):
            (docs[r.offsets[g]:r.offsets[g + 1]].tolist(), r.rel[r.offsets[g]:r.offsets[g + 1]].tolist())
            for g in range(r.n_groups)}


def test_trec_order_tie_breakers_agree():
    """The three tie-breakers (vocabulary codes, Arrow strings, Python strings) give the same order."""
    import pyarrow as pa

    from engine.ranking.order import arrow_tie_order, list_tie_order, order_rows, trec_order, vocab_tie_order
    rng = np.random.default_rng(11)
    docs = np.asarray(["Z1", "a1", "a10", "a9", "b", "é", "ß2", "d-3", "D3", "x", "日本", "ab"], dtype=object)
    for n in (6, 40, 5000):                      # small (two-key sort) and large (composite key) paths
        t = np.sort(rng.integers(0, 3, n)) if n < 40 else rng.integers(0, 3, n)
        s = rng.integers(0, 3, n).astype(float)
        d = rng.integers(0, len(docs), n)
        ds = docs[d]
        orders = [order_rows(trec_order(np.zeros(n, np.int64), t, s, 3, tb), n)
                  for tb in (vocab_tie_order(docs, d), arrow_tie_order(pa.chunked_array([pa.array(ds.tolist())])),
                             list_tie_order(ds.tolist()))]
        assert orders[0].tolist() == orders[1].tolist() == orders[2].tolist()
        # and it is trec_eval's: topic, score descending, doc id descending by UTF-8 bytes, file order
        key = sorted(range(n), key=lambda i: (t[i], -s[i], [-b for b in ds[i].encode()] + [1], i))
        assert orders[0].tolist() == key


def test_store_part_order_is_the_kernels(tmp_path):
    from engine.evaluation.store import ingest_file
    import pyarrow.parquet as pq
    qrels, runs = _tied_campaign(7)
    expect = _expected_lists(qrels, runs)
    for run in ("r1", "r2", "r3"):
        sub = runs[runs["run"] == run]
        f = tmp_path / f"{run}.txt"
        f.write_text("".join(f"{t} Q0 {d} {i + 1} {s} {run}\n" for i, (t, d, s) in
                             enumerate(zip(sub["topic"], sub["doc"], sub["score"]))), encoding="utf-8")
        e = ingest_file(str(f), str(tmp_path / f"{run}.parquet"))
        assert e["rows"] == len(sub)
        part = pq.read_table(tmp_path / f"{run}.parquet").to_pandas()
        assert e["topics"] == sorted(set(sub["topic"]), key=str.encode)       # topics in byte order
        for topic, g in part.groupby("topic", sort=False):
            assert g["doc"].tolist() == expect[(run, topic)][0]
            assert g["pos"].tolist() == list(range(1, len(g) + 1))


def test_runcompare_and_fusion_use_trec_order():
    from engine.pooling.rank_fusion import fuse
    from engine.campaign.runcompare import ranked_list
    qrels, runs = _tied_campaign(9)
    expect = _expected_lists(qrels, runs)
    for (run, topic), (docs, _) in expect.items():
        assert ranked_list(runs, run, topic) == docs
        assert ranked_list(runs, run, topic, 3) == docs[:3]
    one = runs[runs["run"] == "r2"]
    fused = fuse(one, "combsum", normalize="none", depth=5)      # one run: the fused run is that run
    for topic, g in fused.groupby("topic", sort=False):
        assert g["doc"].tolist() == expect[("r2", topic)][0][:5]
    assert list(dict.fromkeys(fused["topic"])) == sorted(set(one["topic"]), key=str.encode)


def test_evaluator_small_call_order_matches_build_ranked():
    from engine.evaluation.api import Evaluator
    from engine.evaluation.evaluate import evaluate
    qrels, runs = _tied_campaign(13)
    one = runs[runs["run"] == "r3"]
    qd: dict = {}
    for t, d, g in qrels.itertuples(index=False):
        qd.setdefault(t, {})[d] = int(g)
    rd: dict = {}
    for t, d, s in zip(one["topic"], one["doc"], one["score"]):
        rd.setdefault(t, {})[d] = s
    got = Evaluator(qd, ["map", "P.3", "recip_rank"]).evaluate(rd)
    ref = evaluate(qrels, one, ["map", "P.3", "recip_rank"])
    for m, t, v in zip(ref["measure"].astype(str), ref["topic"].astype(str), ref["value"]):
        assert got[t][{"P_3": "P.3"}.get(m, m)] == v


def test_joins_agree_with_build_ranked():
    """judgment_keys / ranked_judgment_rows join like build_ranked's grades (last judgment wins)."""
    from engine.ranking.join import judgment_keys, ranked_judgment_rows
    qrels, runs = _tied_campaign(17)
    r, _ = build_ranked(qrels, runs)
    q_topic = qrels["topic"].map({t: i for i, t in enumerate(r.topic_names)}).to_numpy(np.int64)
    ri = ranked_judgment_rows(r, q_topic, qrels["doc"].to_numpy(object))
    grade = np.where(qrels["grade"].to_numpy() < 0, RELVALUE_UNJUDGED, qrels["grade"].to_numpy())
    assert np.where(ri >= 0, grade[np.maximum(ri, 0)], RELVALUE_NONPOOL).tolist() == r.rel.tolist()
    rk, qk, n = judgment_keys(runs, qrels)
    lut = np.full(n, RELVALUE_NONPOOL)
    lut[qk] = grade
    assert lut[rk].tolist() == run_grades(runs, qrels).tolist()


def test_pool_bias_and_planning_joins_by_hand():
    from engine.planning.planner import reduce_judgments
    from engine.stability.poolbias import unique_contribution_mask
    runs = pd.DataFrame({"run": ["A", "A", "B", "B", "A"], "topic": ["1", "1", "1", "1", "2"],
                         "doc": ["é", "b", "b", "c", "é"], "score": [2.0, 2.0, 2.0, 1.0, 1.0],
                         "rank": [1, 2, 1, 2, 1]})
    q = pd.DataFrame({"topic": ["1", "1", "1", "2", "2"], "doc": ["é", "b", "c", "é", "x"],
                      "grade": [1, 0, 2, 1, 1]})
    # top 2 of A and B: topic 1 {é: A, b: A+B, c: B}, topic 2 {é: A}
    assert unique_contribution_mask(q, runs, ["A", "B"], ["A"], 2).tolist() == [True, False, False, True, False]
    assert unique_contribution_mask(q, runs, ["A", "B"], ["B"], 2).tolist() == [False, False, True, False, False]
    # depth selection: best trec_eval rank, then more runs, then doc id. A ranks é before b (tied 2.0:
    # é > b in bytes), B ranks b 1st, c 2nd: b (best 1, 2 runs), é (best 1), c (best 2); with the tie
    # broken the other way é would be 2nd in A and c would come before it
    red = reduce_judgments(q, runs.drop(columns="rank"), 2)
    assert list(zip(red["topic"], red["doc"])) == [("1", "b"), ("1", "é"), ("2", "é"), ("2", "x")]
    red1 = reduce_judgments(q, runs.drop(columns="rank"), 1)
    assert list(zip(red1["topic"], red1["doc"])) == [("1", "b"), ("2", "é")]


# --------------------------------------------------------------------------- no private trec_eval order

_SCORE, _DOC = {"score", "sim"}, {"doc", "docno", "docid"}


def _string_keys(node) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def test_no_private_trec_eval_sort_outside_ranking():
    """A sort keyed on both a score and a document id (sort_values / sort_indices / sort_by with both
    column names, or np.lexsort over expressions naming both) is trec_eval's order written again: use
    engine.ranking (ranked_rows, trec_order). The scan caught the store's, runcompare's and fusion's own
    sorts before they were routed through the kernel."""
    allowed = {"engine/ranking/order.py"}
    root = Path(__file__).resolve().parents[1]
    bad = []
    for f in sorted((root / "engine").rglob("*.py")):
        rel = f.relative_to(root).as_posix()
        if rel in allowed:
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if fn in ("sort_values", "sort_indices", "sort_by", "lexsort", "argsort"):
                keys = _string_keys(node) | {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                if keys & _SCORE and keys & _DOC:
                    bad.append(f"{rel}:{node.lineno}")
    assert not bad, f"private trec_eval-order sorts (use engine.ranking): {bad}"
