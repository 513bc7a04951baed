"""Hand-computed trec_eval semantics: -c, -M, -J, -l, -N, tie-breaking, negative grades, every measure.

The example (working shown once here, used by every test):

qrels                                   run "r"  (score; trec_eval sorts score desc, then docno desc)
  T1: a 1, b 0, c 2, d 1, e -1, f 0      T1: c 3.0, g 2.0, b 2.0, a 1.0, e 1.0, h 0.5
  T2: x9 1, x10 0                        T2: x10 1.0, x9 1.0
  T3: z 0                                T3: z 5.0
  T4: w 1                                (no results: only -c evaluates it)
  T5: v 1                                T5: zz 1.0  (not judged: -J leaves nothing)
  T6: u -1   (only a pooled-unjudged)    T6: u 1.0
                                         T9: q 1.0   (no judgments: never evaluated)

T1 ranking: ties 2.0 -> "g" > "b" so g first; ties 1.0 -> "e" > "a" so e first:
  rank 1 c(2)  2 g(not pooled)  3 b(0)  4 e(pooled, unjudged)  5 a(1)  6 h(not pooled)
  R = 3 (a, c, d), judged non-relevant N = 2 (b, f), relevant retrieved at ranks 1 and 5.
T2 ranking: tie 1.0, strcmp("x9", "x10") > 0 so x9 (relevant) is ranked first (numeric order would not).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cranfield.cli import main
from engine.evaluation.evaluate import compute, summarize, to_long
from engine.errors import CranfieldError
from engine.measures.registry import MeasureError
from engine.ranking.ranked import EvalOptions

QRELS = pd.DataFrame(
    [("T1", "a", 1), ("T1", "b", 0), ("T1", "c", 2), ("T1", "d", 1), ("T1", "e", -1), ("T1", "f", 0),
     ("T2", "x9", 1), ("T2", "x10", 0), ("T3", "z", 0), ("T4", "w", 1), ("T5", "v", 1), ("T6", "u", -1)],
    columns=["topic", "doc", "grade"])
RUN = pd.DataFrame(
    [("r", "T1", "c", 3.0), ("r", "T1", "g", 2.0), ("r", "T1", "b", 2.0), ("r", "T1", "a", 1.0),
     ("r", "T1", "e", 1.0), ("r", "T1", "h", 0.5), ("r", "T2", "x10", 1.0), ("r", "T2", "x9", 1.0),
     ("r", "T3", "z", 5.0), ("r", "T5", "zz", 1.0), ("r", "T6", "u", 1.0), ("r", "T9", "q", 1.0)],
    columns=["run", "topic", "doc", "score"])


def values(measures, topic="T1", **opt):
    """{output name: value} for one topic of run r."""
    c = compute(QRELS, RUN, measures, EvalOptions(**opt))
    r = c.ranked
    g = [i for i in range(r.n_groups) if r.topic_names[r.g_topic[i]] == topic]
    assert len(g) == 1, f"topic {topic} evaluated {len(g)} times"
    return {n: v[g[0]] for n, v in c.values.items()}


def summary(measures, **opt):
    c = compute(QRELS, RUN, measures, EvalOptions(**opt))
    return summarize(to_long(c)).loc["r"].to_dict(), c


# ------------------------------------------------------------------ ranking, ties, negative grades

def test_ties_broken_by_docno_in_decreasing_strcmp_order():
    c = compute(QRELS, RUN, ["num_ret"])
    r = c.ranked
    g1 = r.topic_names.index("T1")
    grp = int(np.flatnonzero(r.g_topic == g1)[0])
    docs = list(r.doc[r.offsets[grp]:r.offsets[grp + 1]])
    assert docs == ["c", "g", "b", "e", "a", "h"]
    # T2: x9 before x10 (strcmp), so AP = 1/1 = 1 (x10 first would give 1/2)
    assert values(["map", "recip_rank"], "T2") == {"map": 1.0, "recip_rank": 1.0}


def test_negative_grades_are_pooled_unjudged():
    v = values(["num_rel", "relstring", "num_nonrel_judged_ret"])
    # grades: c=2 -> '2', g not pooled '-', b '0', e grade -1 -> '.', a '1', h '-'
    assert v["relstring"] == "2-0.1-"
    assert v["num_rel"] == 3                     # e (grade -1) is not counted anywhere
    assert v["num_nonrel_judged_ret"] == 1       # 6 retrieved - 2 not pooled - 1 unjudged - 2 relevant = b
    # T6 has only a negative grade: the topic exists (num_rel 0) and u shows as '.'
    v6 = values(["num_rel", "relstring", "map"], "T6")
    assert v6 == {"num_rel": 0, "relstring": ".", "map": 0.0}


def test_topics_without_judgments_are_ignored_and_reported():
    c = compute(QRELS, RUN, ["num_q"])
    assert "T9" not in c.ranked.topic_names
    assert c.notes["topics_without_judgments"] == ["T9"]
    # judged topics without results (T4) are ignored without -c: T1 T2 T3 T5 T6
    assert c.ranked.n_groups == 5


# ------------------------------------------------------------------ one hand-computed value per measure

def test_every_measure_on_T1():
    v = values(["map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P.5", "recall.5",
                "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "map_cut.1,4,5",
                "relative_P.2,5", "success.1,2", "set_P", "set_relative_P", "set_recall", "set_map",
                "set_F", "num_nonrel_judged_ret", "yaap", "relstring"])
    want = {
        "map": (1 / 1 + 2 / 5) / 3,              # precision 1 at rank 1, 2/5 at rank 5; R = 3
        "gm_map": (1 + 0.4) / 3,                 # per topic gm_map is AP (geometric mean in summary)
        "Rprec": 1 / 3,                          # top R=3: c g b -> 1 relevant
        "bpref": (1 + (1 - 1 / 2)) / 3,          # c: no judged non-rel above; a: b above -> 1 - min(1,3)/min(2,3)
        "recip_rank": 1.0,
        "P_5": 2 / 5,
        "recall_5": 2 / 3,
        # infAP: c at j=0 -> 1; a at j=4 with 1 rel, 1 non-rel, 1 unjudged above:
        #   1/5 + 4/5 * (1+1+1)/4 * (1+eps)/(1+1+2eps) = 0.2 + 0.6 * 0.5 = 0.5 ; (1 + 0.5) / 3
        "infAP": 0.5,
        "gm_bpref": 0.5,
        # Rprec_mult: k = trunc(m*3 + 0.9) = 1,2,2,3,3,4,5,5,6,6 ; P@k with rel at ranks 1 and 5
        "Rprec_mult_0.20": 1.0, "Rprec_mult_0.40": 0.5, "Rprec_mult_0.60": 0.5, "Rprec_mult_0.80": 1 / 3,
        "Rprec_mult_1.00": 1 / 3, "Rprec_mult_1.20": 0.25, "Rprec_mult_1.40": 0.4, "Rprec_mult_1.60": 0.4,
        "Rprec_mult_1.80": 1 / 3, "Rprec_mult_2.00": 1 / 3,
        "utility": 1 * 2 - 1 * (6 - 2),          # default coefficients 1,-1,0,0
        # iprec (10.0, lround(p*3)): levels 0,0,1,1,1,2,2,2,2,3,3; level 0 and 1 -> max(1, 0.4) = 1,
        # level 2 -> best precision at/after rank 5 = 0.4, level 3 > 2 retrieved -> 0
        "iprec_at_recall_0.00": 1.0, "iprec_at_recall_0.10": 1.0, "iprec_at_recall_0.20": 1.0,
        "iprec_at_recall_0.30": 1.0, "iprec_at_recall_0.40": 1.0, "iprec_at_recall_0.50": 0.4,
        "iprec_at_recall_0.60": 0.4, "iprec_at_recall_0.70": 0.4, "iprec_at_recall_0.80": 0.4,
        "iprec_at_recall_0.90": 0.0, "iprec_at_recall_1.00": 0.0,
        "11pt_avg": (5 * 1.0 + 4 * 0.4) / 11,
        "map_cut_1": 1 / 3, "map_cut_4": 1 / 3, "map_cut_5": 1.4 / 3,
        "relative_P_2": 1 / 2, "relative_P_5": 2 / 3,   # 1 / min(2,3) ; 2 / min(5,3)
        "success_1": 1.0, "success_2": 1.0,
        "set_P": 2 / 6, "set_relative_P": 2 / 3, "set_recall": 2 / 3, "set_map": 4 / 18,
        "set_F": 2 * (1 / 3) * (2 / 3) / (1 / 3 + 2 / 3),
        "num_nonrel_judged_ret": 1,
        "yaap": math.log((1 + 1.4) / (1 + 3 - 1.4)),
        "relstring": "2-0.1-",
    }
    assert set(v) == set(want)
    for k, w in want.items():
        if isinstance(w, str):
            assert v[k] == w
        else:
            assert v[k] == pytest.approx(w, abs=1e-12), k


def test_iprec_and_11pt_rounding_10_vs_9():
    # 9.x: levels trunc(p*3 + 0.9) = 0,1,1,1,2,2,2,2,3,3,3 (0.7*3+0.9 is 2.9999999999999996 -> 2)
    v = values(["iprec_at_recall", "11pt_avg"], trec_eval_version="9")
    assert [v[f"iprec_at_recall_{p / 10:.2f}"] for p in range(11)] == \
        [1.0, 1.0, 1.0, 1.0, 0.4, 0.4, 0.4, 0.4, 0.0, 0.0, 0.0]
    assert v["11pt_avg"] == pytest.approx((4 * 1.0 + 4 * 0.4) / 11, abs=1e-12)
    v10 = values(["iprec_at_recall.0.4"])
    assert v10 == {"iprec_at_recall_0.40": 1.0}      # lround(1.2) = 1 -> level 1


def test_11pt_avg_with_unsorted_levels_follows_trec_eval_walk():
    # 11pt_avg keeps its levels in the order given. Levels 0.9,0.4 on T1 (R=3): lround -> 3, 1.
    # trec_eval serves cut-offs from the last: level 1 is served (precision 1); level 3 exceeds the
    # 2 relevant retrieved and is never reached, so it gets the final interpolated precision, 1.
    # Sorted (0.4,0.9) would give (1 + 0) / 2 instead.
    assert values(["11pt_avg.0.9,0.4"]) == {"11pt_avg_0.9,0.4": pytest.approx(1.0)}
    assert values(["11pt_avg.0.4,0.9"]) == {"11pt_avg_0.4,0.9": pytest.approx(0.5)}


def test_parameterized_set_measures_and_utility_N():
    # set_F beta 0.5: (1.5 * P * R) / (0.5 P + R) with P = 1/3, R = 2/3 -> (1/3) / (5/6) = 0.4
    assert values(["set_F.0.5"])["set_F_0.5"] == pytest.approx(0.4)
    # utility 2,-1,-3,0.5 with -N 100: 2*2 - 1*4 - 3*(3-2) + 0.5*(100 + 2 - 6 - 3) = -3 + 46.5
    assert values(["utility.2,-1,-3,0.5"], num_docs_in_coll=100)["utility_2,-1,-3,0.5"] == 43.5
    with pytest.raises(MeasureError, match="exactly 4"):
        values(["utility.1,2"])
    # relstring.3 -> first three; relstring.0 -> ''
    assert values(["relstring.3"])["relstring_3"] == "2-0"


def test_gm_summaries():
    s, _ = summary(["gm_map", "gm_bpref", "map"])
    # APs over T1 T2 T3 T5 T6: 0.4667, 1 (x9 first), 0 (no relevant), 0 (zz not relevant), 0
    ap = [1.4 / 3, 1.0, 0.0, 0.0, 0.0]
    assert s["map"] == pytest.approx(sum(ap) / 5)
    assert s["gm_map"] == pytest.approx(math.exp(sum(math.log(max(a, 1e-5)) for a in ap) / 5))
    # bpref: T1 0.5, T2 1, T3 0 (R=0), T5 0 (no judged retrieved), T6 0
    bp = [0.5, 1.0, 0.0, 0.0, 0.0]
    assert s["gm_bpref"] == pytest.approx(math.exp(sum(math.log(max(b, 1e-5)) for b in bp) / 5))


# ------------------------------------------------------------------ -c

def test_complete_fills_missing_topics_as_trec_eval():
    s, c = summary(["num_q", "num_ret", "map", "P.5", "utility", "set_P", "num_nonrel_judged_ret",
                    "gm_map"], complete=True)
    assert s["num_q"] == 6                        # every judged topic, T4 included
    v4 = values(["num_ret", "num_rel", "map", "utility", "relstring", "set_P", "num_nonrel_judged_ret",
                 "recall.5"], "T4", complete=True)
    # T4 is evaluated on the stand-in ranking (one non-pooled document); num_ret and utility are
    # reset to 0 (utility would be -1), relstring to '', everything else scores 0
    assert v4 == {"num_ret": 0, "num_rel": 1, "map": 0.0, "utility": 0.0, "relstring": "",
                  "set_P": 0.0, "num_nonrel_judged_ret": 0, "recall_5": 0.0}
    assert s["num_ret"] == 6 + 2 + 1 + 1 + 1     # T1 T2 T3 T5 T6; T4 adds 0
    ap = [1.4 / 3, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert s["map"] == pytest.approx(sum(ap) / 6)
    assert s["gm_map"] == pytest.approx(math.exp(sum(math.log(max(a, 1e-5)) for a in ap) / 6))
    # utility: T1 -2, T2 1-1 = 0, T3 -1, T4 0 (reset), T5 -1, T6 -1 -> -5 / 6
    assert s["utility"] == pytest.approx(-5 / 6)


def test_complete_prints_filled_topics_with_q(tmp_path, capsys):
    qf, rf = tmp_path / "q.txt", tmp_path / "r.txt"
    qf.write_text("".join(f"{t} 0 {d} {g}\n" for t, d, g in QRELS.itertuples(index=False)))
    rf.write_text("".join(f"{t} Q0 {d} 1 {s} r\n" for _, t, d, s in RUN.itertuples(index=False)))
    assert main(["eval", "-c", "-q", "-m", "num_ret", "-m", "relstring", "-m", "map", str(qf), str(rf)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "num_ret               \tT4\t0" in out
    assert "relstring             \tT4\t''" in out
    assert "relstring             \tT1\t'2-0.1-'" in out
    assert "num_ret               \tall\t11" in out
    assert out[-1] == f"map                   \tall\t{(1.4 / 3 + 1.0) / 6:6.4f}"
    # without -c, T4 does not appear at all
    assert main(["eval", "-q", "-m", "num_ret", str(qf), str(rf)]) == 0
    assert not any("\tT4\t" in ln for ln in capsys.readouterr().out.splitlines())


# ------------------------------------------------------------------ -M, -J, -l

def test_max_depth():
    v = values(["num_ret", "num_rel_ret", "map", "P.5", "relstring"], max_depth=3)
    # top 3 after sorting: c g b -> map 1/3, P_5 = 1/5 (missing documents are non-relevant)
    assert v == {"num_ret": 3, "num_rel_ret": 1, "map": pytest.approx(1 / 3), "P_5": pytest.approx(0.2),
                 "relstring": "2-0"}
    # -M 0 keeps every topic with nothing retrieved
    assert values(["num_ret", "map"], max_depth=0) == {"num_ret": 0, "map": 0.0}


def test_judged_only():
    v = values(["num_ret", "map", "bpref", "relstring", "P.2"], judged_only=True)
    # judged only: c(2) b(0) a(1) -> AP = (1/1 + 2/3) / 3 ; bpref unchanged; P_2 = 1/2
    assert v == {"num_ret": 3, "map": pytest.approx(5 / 9), "bpref": pytest.approx(0.5),
                 "relstring": "201", "P_2": pytest.approx(0.5)}
    # -M applies before -J: top 3 = c g b, then judged: c b
    assert values(["num_ret"], judged_only=True, max_depth=3) == {"num_ret": 2}


def test_empty_ranking_after_judged_only():
    # T5 retrieved only zz (not judged): -J leaves an empty list. trec_eval 10.0 divides 0 by 0 in
    # iprec_at_recall: every cut-off at 0 relevant documents gets NaN, printed "-nan". R = 1, so the
    # levels 0.0 .. 0.4 round to lround(x * 1) = 0 and 0.5 .. 1.0 to 1 (lround rounds halves away from
    # zero); 11pt_avg sums those cut-offs and is NaN as well.
    v = values(["num_ret", "map", "P.5", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "11pt_avg",
                "set_P", "set_F", "infAP", "Rprec_mult", "relative_P.5", "utility", "relstring"],
               "T5", judged_only=True)
    assert v.pop("relstring") == ""
    assert v.pop("utility") == 0.0              # 0 rel_ret, 0 non-rel retrieved
    assert v.pop("num_ret") == 0
    nan = {k for k, x in v.items() if x != x}
    assert nan == {f"iprec_at_recall_0.{i}0" for i in range(5)} | {"11pt_avg"}, nan
    assert all(x == 0.0 for k, x in v.items() if k not in nan), v


def test_rel_level():
    v = values(["num_rel", "num_rel_ret", "map", "bpref", "num_nonrel_judged_ret", "Rprec"], rel_level=2)
    # only c (grade 2) is relevant: R = 1, found at rank 1. Non-relevant judged: a b d f (N = 4).
    # retrieved judged non-relevant: b, a -> 2
    assert v == {"num_rel": 1, "num_rel_ret": 1, "map": 1.0, "bpref": 1.0, "num_nonrel_judged_ret": 2,
                 "Rprec": 1.0}
    v0 = values(["num_rel", "num_rel_ret"], rel_level=0)
    assert v0 == {"num_rel": 5, "num_rel_ret": 3}     # every judged doc (a b c d f); retrieved c b a
    with pytest.raises(CranfieldError, match="-l -1"):
        values(["map"], rel_level=-1)


def test_cli_flags_parse(tmp_path, capsys):
    qf, rf = tmp_path / "q.txt", tmp_path / "r.txt"
    qf.write_text("".join(f"{t} 0 {d} {g}\n" for t, d, g in QRELS.itertuples(index=False)))
    rf.write_text("".join(f"{t} Q0 {d} 1 {s} r\n" for _, t, d, s in RUN.itertuples(index=False)))
    assert main(["eval", "-J", "-M", "3", "-l", "2", "-N", "100", "-m", "utility.0,0,0,1", "-q",
                 str(qf), str(rf)]) == 0
    out = capsys.readouterr().out.splitlines()
    # T1 with -M 3 then -J: c b retrieved, R = 1 at -l 2, rel_ret 1: d term = 100 + 1 - 2 - 1
    assert "utility_0,0,0,1       \tT1\t98.0000" in out


def test_no_relevant_document_retrieved_anywhere():
    # one topic, one judged non-relevant document retrieved: no relevant row exists at all, so every
    # measure summing over relevant rows sums nothing (R = 0 -> 0; bpref, infAP divide only when R > 0)
    q = pd.DataFrame([("1", "d0", 0)], columns=["topic", "doc", "grade"])
    r = pd.DataFrame([("A", "1", "d0", 1.0)], columns=["run", "topic", "doc", "score"])
    c = compute(q, r, ["bpref", "infAP", "gm_bpref", "map", "iprec_at_recall.0", "11pt_avg",
                       "num_nonrel_judged_ret", "relstring"])
    got = {n: v[0] for n, v in c.values.items()}
    assert got == {"bpref": 0.0, "infAP": 0.0, "gm_bpref": 0.0, "map": 0.0, "iprec_at_recall_0.00": 0.0,
                   "11pt_avg": 0.0, "num_nonrel_judged_ret": 1, "relstring": "0"}


def test_compat_9_all_trec_is_the_library_s_9x_set_as_a_process():
    """`cranfield eval --compat 9 -m all_trec` prints trec_eval 9.x's set (no rbp, rbp_resid, unj), the same
    measures and values as `cranfield.evaluate(..., trec_eval_version="9")`."""
    import subprocess
    import sys
    from pathlib import Path

    import cranfield
    ref = Path(__file__).resolve().parent / "data" / "reference" / "trec_eval"
    q, r = str(ref / "qrels.test"), str(ref / "results.test")
    out = subprocess.run([sys.executable, "-m", "cranfield.cli", "eval", "--compat", "9", "-m", "all_trec", q, r],
                         capture_output=True, text=True, check=True).stdout
    cli = {ln.split("\t")[0].strip(): ln.split("\t")[2] for ln in out.splitlines()}
    df = cranfield.evaluate(q, r, ["all_trec"], trec_eval_version="9")
    lib = cranfield.summarize(df).iloc[0].to_dict()
    assert not {m for m in cli if m.startswith(("rbp", "unj"))}
    assert set(cli) - {"runid"} == set(lib) - {"runid"}
    for m, v in lib.items():
        if m != "runid":
            assert abs(float(cli[m]) - float(v)) < 5e-5, m
