"""Hand-computed values of the gain-based trec_eval measures (binG, G, dcg, ideal_dcg, ndcg, ndcg_rel,
Rndcg, ndcg_cut, rbp, rbp_resid, unj), with the working in comments.

The worked example (topic t1):
    qrels  a=3  b=2  c=1  e=1  d=0  f=-1 (pooled, not judged)
    run A  x 5.0, b 4.0, d 3.0, a 2.0, f 1.5, c 1.0      (x is not in the qrels)
    ranks  1:x(unjudged)  2:b(2)  3:d(0)  4:a(3)  5:f(unjudged)  6:c(1)
Judged levels: grade 0: 1 doc, 1: 2, 2: 1, 3: 1 -> num_rel (-l 1) = 4; default gain = grade,
ideal gains 3, 2, 1, 1.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import engine
from engine.measures import load_all, resolve
from engine.ranking.gains import sorted_entries, valid_level
from engine.ranking.ranked import EvalOptions

L3, L5, L6, L7 = math.log2(3), math.log2(5), math.log2(6), math.log2(7)

QRELS = pd.DataFrame([("t1", "a", 3), ("t1", "b", 2), ("t1", "c", 1), ("t1", "e", 1), ("t1", "d", 0),
                      ("t1", "f", -1), ("t2", "g", 1), ("t2", "h", 0)], columns=["topic", "doc", "grade"])
RUN = pd.DataFrame([("A", "t1", "x", 5.0), ("A", "t1", "b", 4.0), ("A", "t1", "d", 3.0),
                    ("A", "t1", "a", 2.0), ("A", "t1", "f", 1.5), ("A", "t1", "c", 1.0)],
                   columns=["run", "topic", "doc", "score"])

DCG = 2 / L3 + 3 / L5 + 1 / L7                  # b at 2, a at 4, c at 6 = 2.910096
IDCG = 3 + 2 / L3 + 1 / 2 + 1 / L5              # 3, 2, 1, 1 at ranks 1..4 = 5.192535


def values(measures, qrels=QRELS, runs=RUN, topic="t1", run="A", **opts) -> dict[str, float]:
    df = engine.evaluate(qrels, runs, measures, options=EvalOptions(**opts))
    sub = df[(df["topic"] == topic) & (df["run"] == run)]
    return dict(zip(sub["measure"].astype(str), sub["value"]))


def test_registered_like_trec_eval():
    load_all()
    reqs = {q.measure.name: q for q in resolve(["all_trec"])}
    for name in ("binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "rbp", "rbp_resid", "unj"):
        assert name in reqs
    assert "dcg" not in reqs and "ideal_dcg" not in reqs    # registered, not in all_trec
    order = [q.measure.name for q in resolve(["unj", "ndcg_cut", "G", "binG", "dcg", "ideal_dcg", "ndcg",
                                              "rbp", "Rndcg", "ndcg_rel", "rbp_resid"])]
    # trec_eval's te_trec_measures order
    assert order == ["binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "rbp",
                     "rbp_resid", "unj"]
    assert resolve(["ndcg.1=3,2=9"])[0].names == ["ndcg_1=3,2=9"]
    assert resolve(["rbp.p=0.8"])[0].names == ["rbp_p=0.8"]
    assert resolve(["unj"])[0].names == ["unj_5", "unj_10", "unj_20"]
    assert resolve(["ndcg_cut"])[0].names[0] == "ndcg_cut_5"


def test_ndcg_dcg_ideal_dcg_default_gains():
    v = values(["ndcg", "dcg", "ideal_dcg"])
    # dcg = 2/log2(3) + 3/log2(5) + 1/log2(7) = 1.261860 + 1.292030 + 0.356207 = 2.910096
    assert v["dcg"] == pytest.approx(DCG, abs=1e-12)
    # ideal = 3/1 + 2/log2(3) + 1/2 + 1/log2(5) = 3 + 1.261860 + 0.5 + 0.430677 = 5.192536
    assert v["ideal_dcg"] == pytest.approx(IDCG, abs=1e-12)
    assert v["ndcg"] == pytest.approx(DCG / IDCG, abs=1e-12)
    assert v["ndcg"] == pytest.approx(0.560438, abs=1e-6)


def test_ndcg_gain_pairs():
    # 1=3,2=9: entries (1,3) (2,9) then defaults (0,0) (3,3); sorted by gain: 0, 3(level 1), 3(level 3), 9.
    # Ideal from the top: 9 (b), 3 (a), 3, 3 (c, e), then gain 0 stops.
    v = values(["ndcg.1=3,2=9"])
    dcg = 9 / L3 + 3 / L5 + 3 / L7                          # b, a, c = 5.678399 + 1.292030 + 1.068622
    idcg = 9 + 3 / L3 + 3 / 2 + 3 / L5                      # 9 + 1.892789 + 1.5 + 1.292030
    assert v["ndcg_1=3,2=9"] == pytest.approx(dcg / idcg, abs=1e-12)   # 8.039019 / 13.684819 = 0.587441


def test_ndcg_gain_for_absent_and_negative_levels():
    # a gain for level 4 (no document has it) changes nothing
    assert values(["ndcg.4=10"])["ndcg_4=10"] == pytest.approx(DCG / IDCG, abs=1e-12)
    # level 0 given gain 1: d (rank 3) earns 1/log2(4); the ideal gains 3, 2, 1, 1, 1 (level 0 last)
    v = values(["ndcg.0=1", "ideal_dcg.0=1"])
    assert v["ideal_dcg_0=1"] == pytest.approx(IDCG + 1 / L6, abs=1e-12)
    assert v["ndcg_0=1"] == pytest.approx((DCG + 1 / 2) / (IDCG + 1 / L6), abs=1e-12)
    # level -1 (not in the judgments) is a valid level name: x at rank 1 earns gain 2; f (pooled but
    # unjudged, level -2) still earns nothing; the ideal ranking only holds judged documents
    v = values(["dcg.-1=2"])
    assert v["dcg_-1=2"] == pytest.approx(DCG + 2, abs=1e-12)
    # non-integer names (rbp's p) are not gain levels
    assert values(["dcg.p=5"])["dcg_p=5"] == pytest.approx(DCG, abs=1e-12)


def test_gain_sort_truncates_differences():
    # trec_eval sorts gains with (int)(g1 - g2): 0.5 vs 0 compare equal, and the stable merge keeps
    # the parameter entry (level 1, 0.5) first; from the top the ideal walk then meets level 0 (gain 0)
    # and stops before the level-1 documents.
    assert sorted_entries((("1", 0.5),), 3) == ((1, 0.5, 1), (0, 0.0, 0), (2, 2.0, 2))
    # integer gains sort normally: defaults after the pairs, then by gain
    assert sorted_entries((("1", 3.0), ("2", 9.0)), 4) == ((0, 0.0, 0), (1, 3.0, 1), (3, 3.0, 3), (2, 9.0, 2))
    # a repeated level: only its first entry carries the documents
    assert sorted_entries((("1", 5.0), ("1", 7.0)), 2) == ((0, 0.0, 0), (1, 5.0, 1), (1, 7.0, -1))
    assert valid_level("-1") and valid_level("+2") and not valid_level("p") and not valid_level("1.5")
    # with 1=0.5 on the worked example: ideal = 3 (a), 2 (b), then level 0 stops it
    v = values(["ideal_dcg.1=0.5"])
    assert v["ideal_dcg_1=0.5"] == pytest.approx(3 + 2 / L3, abs=1e-12)


def test_binG():
    # relevant retrieved at ranks 2 (1 non-relevant above: x), 4 (x, d), 6 (x, d, f)
    # binG = (1/log2(3) + 1/log2(4) + 1/log2(5)) / num_rel 4 = (0.630930 + 0.5 + 0.430677) / 4
    v = values(["binG"])
    assert v["binG"] == pytest.approx((1 / L3 + 0.5 + 1 / L5) / 4, abs=1e-12)   # 0.390402
    # -l 2: relevant = b (rank 2, 1 above) and a (rank 4, 2 above non-relevant at level 2: x, d)
    v = values(["binG"], rel_level=2)
    assert v["binG"] == pytest.approx((1 / L3 + 0.5) / 2, abs=1e-12)


def test_G():
    # gains per rank 0,2,0,3,0,1; ideal 3,2,1,1 -> cost per position max(ideal,1) = 3,2,1,1 then 1
    # cumulative cost 3,5,6,7,8,9; cumulative run gain 0,2,2,5,5,6
    # rank 2: 2/log2(2+5-2) = 2/log2(5); rank 4: 3/log2(2+7-5) = 3/2; rank 6: 1/log2(2+9-6) = 1/log2(5)
    # G = (3/log2(5) + 1.5) / ideal gain sum 7 = (1.292030 + 1.5) / 7 = 0.398861
    assert values(["G"])["G"] == pytest.approx((3 / L5 + 1.5) / 7, abs=1e-12)


def test_ndcg_rel():
    # positive-gain ranks 2, 4, 6; ideal DCG through min(rank, 4) positions
    i2 = 3 + 2 / L3                                 # ideal DCG through 2 positions
    terms = (2 / L3) / i2 + (2 / L3 + 3 / L5) / IDCG + DCG / IDCG
    # one ideal relevant position (of 4) not matched by a retrieved positive doc: + DCG/IDCG
    want = (terms + (4 - 3) * DCG / IDCG) / 4       # (0.296082 + 0.491839 + 2 * 0.560438) / 4 = 0.477199
    assert values(["ndcg_rel"])["ndcg_rel"] == pytest.approx(want, abs=1e-12)


def test_Rndcg():
    # ideal gains 3,2,1,1: R-level boundaries where the gain changes (k=1: 3->2, k=2: 2->1) and at
    # the end of the positive prefix (k=4); the ranking (6 docs) runs >= 2 past it -> one more at the end
    k1 = 0.0 / 3                                     # first doc x has no gain
    k2 = (2 / L3) / (3 + 2 / L3)
    k4 = (2 / L3 + 3 / L5) / IDCG
    end = DCG / IDCG
    assert values(["Rndcg"])["Rndcg"] == pytest.approx((k1 + k2 + k4 + end) / 4, abs=1e-12)  # 0.337090
    # a 5-document ranking (c removed) stops one short: no end term
    run5 = RUN[RUN["doc"] != "c"]
    d5 = 2 / L3 + 3 / L5
    assert values(["Rndcg"], runs=run5)["Rndcg"] == pytest.approx((0 + k2 + d5 / IDCG) / 3, abs=1e-12)


def test_Rndcg_no_relevant_and_nan():
    q = pd.DataFrame([("t", "a", 0), ("t", "b", 0)], columns=["topic", "doc", "grade"])
    r = pd.DataFrame([("A", "t", "a", 1.0)], columns=["run", "topic", "doc", "score"])
    # no relevant document at -l 1: trec_eval returns before computing -> 0
    assert values(["Rndcg"], qrels=q, runs=r, topic="t")["Rndcg"] == 0.0
    # -l 0 makes both relevant, but every gain is 0: no boundary, 0/0 -> NaN (as trec_eval prints)
    assert math.isnan(values(["Rndcg"], qrels=q, runs=r, topic="t", rel_level=0)["Rndcg"])


def test_ndcg_cut():
    v = values(["ndcg_cut.2,4,10"])
    assert v["ndcg_cut_2"] == pytest.approx((2 / L3) / (3 + 2 / L3), abs=1e-12)          # 0.296102
    assert v["ndcg_cut_4"] == pytest.approx((2 / L3 + 3 / L5) / IDCG, abs=1e-12)          # 0.491828
    assert v["ndcg_cut_10"] == pytest.approx(DCG / IDCG, abs=1e-12)                       # = ndcg
    # gains are always the grades: no gain parameters, -l has no effect
    assert values(["ndcg_cut.2"], rel_level=3)["ndcg_cut_2"] == pytest.approx(v["ndcg_cut_2"], abs=1e-15)


def test_rbp():
    # gains 0..3 lie outside [0,1] -> rescaled by (g - 0) / (3 - 0): b 2/3 (rank 2), a 1 (rank 4), c 1/3 (6)
    # rbp = (1 - p) * sum gain * p^(rank-1) = 0.1 * (0.6 + 0.729 + 0.19683) = 0.152583
    v = values(["rbp"])
    assert v["rbp"] == pytest.approx(0.1 * (2 / 3 * 0.9 + 0.9 ** 3 + 1 / 3 * 0.9 ** 5), abs=1e-12)
    v = values(["rbp.p=0.5"])
    assert v["rbp_p=0.5"] == pytest.approx(0.5 * (2 / 3 * 0.5 + 0.5 ** 3 + 1 / 3 * 0.5 ** 5), abs=1e-12)
    # gain pairs apply too: 3=1,2=1,1=1 keeps every gain in [0, 1] (no rescaling): binary rbp
    v = values(["rbp.3=1,2=1,1=1"])
    assert v["rbp_3=1,2=1,1=1"] == pytest.approx(0.1 * (0.9 + 0.9 ** 3 + 0.9 ** 5), abs=1e-12)
    # binary judgments need no rescaling
    q = pd.DataFrame([("t", "a", 1), ("t", "b", 0)], columns=["topic", "doc", "grade"])
    r = pd.DataFrame([("A", "t", "b", 2.0), ("A", "t", "a", 1.0)], columns=["run", "topic", "doc", "score"])
    assert values(["rbp"], qrels=q, runs=r, topic="t")["rbp"] == pytest.approx(0.1 * 0.9, abs=1e-15)


def test_rbp_resid():
    # unjudged at ranks 1 (x) and 5 (f): p^6 + (1-p) * (p^0 + p^4) = 0.531441 + 0.1 * 1.6561 = 0.697051
    assert values(["rbp_resid"])["rbp_resid"] == pytest.approx(0.9 ** 6 + 0.1 * (1 + 0.9 ** 4), abs=1e-12)
    v = values(["rbp_resid.p=0.5"])
    assert v["rbp_resid_p=0.5"] == pytest.approx(0.5 ** 6 + 0.5 * (1 + 0.5 ** 4), abs=1e-12)
    # nothing unjudged -> 0 (not p^num_ret)
    judged = RUN[~RUN["doc"].isin(["x", "f"])]
    assert values(["rbp_resid"], runs=judged)["rbp_resid"] == 0.0


def test_unj():
    v = values(["unj.2,5,10"])
    # unjudged at ranks 1 and 5: 1/2, 2/5, 2/10 (missing ranks beyond 6 count as judged)
    assert (v["unj_2"], v["unj_5"], v["unj_10"]) == (0.5, 0.4, 0.2)
    v = values(["unj"], judged_only=True)           # -J removes every unjudged document
    assert (v["unj_5"], v["unj_10"], v["unj_20"]) == (0.0, 0.0, 0.0)


def test_flags_J_and_M():
    # -J: ranks become b, d, a, c -> dcg = 2/1 + 3/log2(4) + 1/log2(5)
    v = values(["dcg", "ideal_dcg"], judged_only=True)
    assert v["dcg"] == pytest.approx(2 + 1.5 + 1 / L5, abs=1e-12)
    assert v["ideal_dcg"] == pytest.approx(IDCG, abs=1e-12)
    # -M 3: x, b, d -> dcg = 2/log2(3); unj_5 = 1/5
    v = values(["dcg", "unj"], max_depth=3)
    assert v["dcg"] == pytest.approx(2 / L3, abs=1e-12)
    assert v["unj_5"] == pytest.approx(0.2, abs=1e-15)


def test_complete_stand_in_ranking():
    # run B has nothing for t1: with -c it is scored on trec_eval's stand-in ranking (one unjudged
    # document); unj and rbp_resid are then reset to 0 as trec_eval does, the rest is what the
    # ranking earns (ndcg 0, ideal_dcg the topic's)
    runs = pd.DataFrame(list(RUN.itertuples(index=False)) + [("B", "t2", "g", 1.0)], columns=RUN.columns)
    v = values(["unj", "rbp_resid", "ndcg", "ideal_dcg", "G"], runs=runs, run="B", complete=True)
    assert v["unj_5"] == 0.0 and v["rbp_resid"] == 0.0 and v["ndcg"] == 0.0 and v["G"] == 0.0
    assert v["ideal_dcg"] == pytest.approx(IDCG, abs=1e-12)
    # a gain for level -1 reaches the stand-in document: dcg = 2 / log2(2)
    v = values(["dcg.-1=2"], runs=runs, run="B", complete=True)
    assert v["dcg_-1=2"] == pytest.approx(2.0, abs=1e-12)
    # without -c, B has no t1 row at all
    assert values(["ndcg"], runs=runs, run="B") == {}


def test_reference_output_lines(trec_eval_dir):
    """The gain measures' lines of trec_eval 10.0's out.test.a / out.test.aq (binary qrels)."""
    import contextlib
    import io

    from cranfield.cli import main

    names = ("binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "rbp", "rbp_resid", "unj")
    for flags, ref in ((["-m", "all_trec"], "out.test.a"), (["-m", "all_trec", "-q"], "out.test.aq")):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            main(["eval", *flags, str(trec_eval_dir / "qrels.test"), str(trec_eval_dir / "results.test")])
        mine = lambda ln: ln.split()[0] in names or ln.split()[0].rsplit("_", 1)[0] in names  # noqa: E731
        got = [ln for ln in buf.getvalue().splitlines() if ln.strip() and mine(ln)]
        want = [ln for ln in (trec_eval_dir / ref).read_text().splitlines() if mine(ln)]
        assert got == want and len(want) >= 19


def test_segment_sums_do_not_leak_between_groups():
    # a group of huge gains next to a group of small ones: the small group's running sums must be
    # exactly its own sequential sums (a global cumsum minus a base would lose ~1e-6 here)
    from engine.ranking.gains import seg_cumsum_float
    v = np.array([1e10, 3e10, 0.1, 0.2, 0.3, 5.0, 1e-3])
    off = np.array([0, 2, 2, 5, 7])                      # lengths 2, 0, 3, 2
    got = seg_cumsum_float(v, off)
    want = [1e10, 1e10 + 3e10, 0.1, 0.1 + 0.2, (0.1 + 0.2) + 0.3, 5.0, 5.0 + 1e-3]
    assert got.tolist() == want                          # bit-identical, sequential order


def test_segment_sums_of_equal_lengths_are_sequential():
    # every ranking cut at one depth (the 2-D path) and one shorter segment (the general path): each
    # running sum is the Python loop's, bit for bit, over values of very different magnitudes
    from engine.ranking.gains import seg_cumsum_float
    rng = np.random.default_rng(5)
    v = rng.random(80 * 7) * np.array([1e-9, 1.0, 1e9])[rng.integers(0, 3, 80 * 7)]
    for off in (np.arange(0, 80 * 7 + 1, 7), np.append(np.arange(0, 80 * 7, 7), 80 * 7 - 1)):
        want = []
        for a, b in zip(off[:-1].tolist(), off[1:].tolist()):
            acc = 0.0
            for x in v[a:b].tolist():
                acc += x
                want.append(acc)
        assert seg_cumsum_float(v[:off[-1]], off).tolist() == want


# ----------------------------------------------------------------------------- sparse gain tables (issue 14)

def test_sparse_entries_equal_the_full_trec_eval_sort():
    """sparse_entries (unused levels kept as ranges) gives the entries of sorted_entries (every level
    0..N-1 materialized) in the same order, for random non-transitive gain pairs."""
    import random

    from engine.ranking.gains import sparse_entries
    rng = random.Random(14)
    for _ in range(3000):
        nrl = rng.randint(0, 40)
        pairs = tuple((str(rng.randint(-3, 45)) if rng.random() < 0.9 else "p",
                       rng.choice([rng.uniform(-3, 50), rng.randint(-2, 45), rng.uniform(0, 2), 1e12, -3e9,
                                   round(rng.uniform(0, 40), 1)]))
                      for _ in range(rng.randint(0, 6)))
        full = sorted_entries(pairs, nrl)
        named = {int(n) for n, _ in pairs if valid_level(n) and 0 <= int(n) < nrl}
        keep = tuple(sorted(rng.sample(range(nrl), rng.randint(0, nrl))))
        kept, _, top, lo, hi = sparse_entries(pairs, nrl, keep)
        assert kept == tuple(e for e in full if not (0 <= e[0] < nrl and e[0] not in named and e[0] not in keep))
        if full:
            gains = [e[1] for e in full]
            assert (top, lo, hi) == (full[-1][1], min(gains), max(gains))


def test_grade_of_a_billion_costs_one_column():
    """One grade of 1000000000 made -m ndcg allocate 149 GiB (gains expanded over 0..max); the tables
    now hold the grades judged. Hand-computed: run b(1) a(1e9) c(0);
    dcg = 1/log2(2) + 1e9/log2(3), ideal = 1e9/1 + 1/log2(3)."""
    import time
    q = pd.DataFrame([("1", "a", 1_000_000_000), ("1", "b", 1), ("1", "c", 0)], columns=["topic", "doc", "grade"])
    r = pd.DataFrame([("R", "1", "b", 3.0), ("R", "1", "a", 2.0), ("R", "1", "c", 1.0)],
                     columns=["run", "topic", "doc", "score"])
    t0 = time.perf_counter()
    v = values(["ndcg", "ndcg_cut.2"], qrels=q, runs=r, topic="1", run="R")
    v.update(values(["ndcg.1000000000=2,1=5"], qrels=q, runs=r, topic="1", run="R"))   # one ndcg per call
    assert time.perf_counter() - t0 < 5
    assert v["ndcg"] == pytest.approx((1 + 1e9 / L3) / (1e9 + 1 / L3), rel=1e-15)          # 0.630930
    assert v["ndcg_cut_2"] == pytest.approx((1 + 1e9 / L3) / (1e9 + 1 / L3), rel=1e-15)
    # gain map 1000000000=2, 1=5: b(5) at 1, a(2) at 2; ideal 5, 2
    assert v["ndcg_1000000000=2,1=5"] == pytest.approx(1.0, abs=1e-15)


def test_gain_map_with_huge_level_and_absent_levels_in_between():
    """Pairs whose gains lie within 1 of absent levels: trec_eval's comparator is not transitive, so the
    absent levels 0..N-1 take part in the sort; replayed by ranges. Dense (N small) == sparse (forced)."""
    from engine.ranking import build as ranking   # topic_judgments reads DENSE_LEVELS there
    q = pd.DataFrame([("1", "a", 5000), ("1", "b", 4999), ("1", "c", 2), ("1", "d", 0), ("1", "e", 1)],
                     columns=["topic", "doc", "grade"])
    r = pd.DataFrame([("R", "1", x, s) for x, s in zip("edcba", [5.0, 4.0, 3.0, 2.0, 1.0])],
                     columns=["run", "topic", "doc", "score"])
    sets = [["ndcg.4999=4999.5,5000=4998.7,2=1.5", "ndcg_rel.1=0.4,2=2.6", "Rndcg", "G.5000=3.2", "rbp"],
            ["ndcg", "ndcg_rel", "ndcgx", "Q", "rbp.p=0.5"]]
    dense = {k: v for ms in sets for k, v in values(ms, qrels=q, runs=r, topic="1", run="R").items()}
    old = ranking.DENSE_LEVELS
    try:
        ranking.DENSE_LEVELS = 1
        sparse = {k: v for ms in sets for k, v in values(ms, qrels=q, runs=r, topic="1", run="R").items()}
    finally:
        ranking.DENSE_LEVELS = old
    assert sparse == dense and len(dense) == 10
