"""Measures for incomplete judgments: hand-computed cases (working in comments) and the exact
identities of issue 3 (complete judgments: infAP = xinfAP = statAP = AP, infNDCG = nDCG;
AP' = bpref_relative2; ideal rankings score 1)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import engine
import engine.formats
from engine.estimators import mean_ci
from engine.measures.registry import MeasureError

# ---------------------------------------------------------------------------------------------
# Example A. One topic; grades a=2, b=0, c=1, d=-1 (pooled, unjudged), e=0, f=1: R=3 (a,c,f), N=2 (b,e).
# Run ranks: a(1) x(2, not pooled) b(3) c(4) d(5) g(6, not pooled). Condensed list: a(1') b(2') c(3').
QA = pd.DataFrame({"topic": ["1"] * 6, "doc": list("abcdef"), "grade": [2, 0, 1, -1, 0, 1]})
RA = pd.DataFrame({"run": "r", "topic": "1", "doc": list("axbcdg"), "score": [6, 5, 4, 3, 2, 1]})


def values(q, runs, measures, **kw) -> dict:
    df = engine.evaluate(q, runs, measures, **kw)
    return {str(m): float(v) for m, v in zip(df["measure"], df["value"])}


def test_binary_preference_family_example_a():
    v = values(QA, RA, ["bpref_10", "bpref_N", "bpref_relative", "bpref_relative2", "RankEff",
                        "map@cond", "P@cond.2"])
    # bpref_10: a has no non-relevant above -> 1; c has b above -> 1 - min(1, R+10)/min(N=2, R+10) = 0.5
    #           (1 + 0.5) / R=3 = 0.5
    assert v["bpref_10"] == pytest.approx(0.5)
    # bpref_N: c -> 1 - 1/N = 0.5; (1 + 0.5)/3 = 0.5
    assert v["bpref_N"] == pytest.approx(0.5)
    # bpref_relative: only r' != 1: c at r'=3 -> 1 - (3 - 2)/(3 - 1) = 0.5; 0.5/3
    assert v["bpref_relative"] == pytest.approx(0.5 / 3)
    # AP' (condensed a,b,c): (1/1 + 2/3)/3 = 0.5556 = bpref_relative2 (1 - 0/1 and 1 - 1/3)
    assert v["map@cond"] == pytest.approx((1 + 2 / 3) / 3)
    assert v["bpref_relative2"] == pytest.approx((1 + 2 / 3) / 3)
    # P'@2: a, b -> 1/2
    assert v["P@cond_2"] == pytest.approx(0.5)
    # RankEff: non-relevant below a: b, e (e unretrieved, counts as below) = 2; below c: e = 1
    #          (2 + 1) / (R N = 6) = 0.5
    assert v["RankEff"] == pytest.approx(0.5)


def test_rpref_family_example_a():
    v = values(QA, RA, ["rpref_N", "rpref_relative", "rpref_relative2"])
    # gains = grades: a 2, c 1, f 1 -> cg_I(R) = 4, gain(H) = 2, N' = R + N - cg_I/gain(H) = 5 - 2 = 3
    # penalty(a) = 0; penalty(c at r'=3) = b above with gain 0: (1 - 0)/1 = 1
    # rpref_N = (2*(1 - 0) + 1*(1 - 1/3)) / 4 = 0.6667
    assert v["rpref_N"] == pytest.approx((2 + 2 / 3) / 4)
    # rpref_relative: r' != 1 only: c -> 1*(1 - 1/(3-1)) = 0.5; 0.5/4
    assert v["rpref_relative"] == pytest.approx(0.125)
    # rpref_relative2: (2*(1 - 0/1) + 1*(1 - 1/3)) / 4
    assert v["rpref_relative2"] == pytest.approx((2 + 2 / 3) / 4)
    # explicit gains 0:1:3 -> a 3, c 1, f 1: cg_I = 5, gain(H) = 3, N' = 5 - 5/3 = 10/3
    # rpref_N = (3 + 1*(1 - 1/(10/3))) / 5 = (3 + 0.7)/5
    v2 = values(QA, RA, ["rpref_N.gains=0:1:3"])
    assert v2["rpref_N_gains=0:1:3"] == pytest.approx(3.7 / 5)


def test_q_measure_example_a():
    v = values(QA, RA, ["Q", "Q@cond"])   # (a measure asked twice keeps the last parameters, as trec_eval)
    # raw list: ideal gains 2,1,1 -> cg_I(1)=2, cg_I(4)=4. a at 1: (2 + 1)/(2 + 1) = 1;
    # c at 4: cg = 3, count = 2 -> (3 + 2)/(4 + 4) = 0.625.   Q = (1 + 0.625)/3
    assert v["Q"] == pytest.approx(1.625 / 3)
    # condensed: c at 3': (3 + 2)/(4 + 3) = 5/7
    assert v["Q@cond"] == pytest.approx((1 + 5 / 7) / 3)
    # beta = 0 is AP: (1/1 + 2/4)/3 = 0.5
    v0 = values(QA, RA, ["Q.beta=0"])
    assert v0["Q_beta=0"] == pytest.approx(0.5)


@pytest.mark.parametrize("spec,expected", [
    # gains 2 (rank 1) and 1 (rank 4); ideal 2, 1, 1
    ("ndcgx", (2 + 1 / math.log2(5)) / (2 + 1 / math.log2(3) + 1 / math.log2(4))),
    # thesis 3.1.4: 1/log_b(r + b - 1) with b = 10
    ("ndcgx.disc=log,b=10", (2 + 1 / math.log10(13)) / (2 + 1 / math.log10(11) + 1 / math.log10(12))),
    ("ndcgx.disc=log10", (2 + 1 / math.log10(13)) / (2 + 1 / math.log10(11) + 1 / math.log10(12))),
    # Sakai eq. 22, a = 2: no discount for r <= 2, 1/log2(r) after
    ("ndcgx.disc=sakai,a=2", (2 + 1 / math.log2(4)) / (2 + 1 + 1 / math.log2(3))),
    ("ndcgx.disc=zipf", (2 + 1 / 4) / (2 + 1 / 2 + 1 / 3)),
    # linear with k = 4: (5 - r)/4 -> 1, .75, .5, .25
    ("ndcgx.disc=linear,k=4", (2 + 0.25) / (2 + 0.75 + 0.5)),
    # explicit discounts for ranks 1, 2 only: DCG = 2, ideal 2 + 0.5
    ("ndcgx.disc=vec,dvec=1:0.5", 2 / 2.5),
    # gains 0:1:3: a -> 3
    ("ndcgx.gains=0:1:3", (3 + 1 / math.log2(5)) / (3 + 1 / math.log2(3) + 0.5)),
    # cut-off 3: c (rank 4) is cut; ideal over 3 ranks
    ("ndcgx.k=3", 2 / (2 + 1 / math.log2(3) + 0.5)),
])
def test_ndcgx_discounts_example_a(spec, expected):
    v = values(QA, RA, [spec])
    assert list(v.values())[0] == pytest.approx(expected, abs=1e-12)


def test_campaign_gains_reach_graded_measures():
    # compute(..., extra={"gains": ...}) as the campaign passes relevance.scale: grade 2 -> gain 3
    c = engine.compute(QA, RA, ["ndcgx"], extra={"gains": {0: 0, 1: 1, 2: 3}})
    assert c.values["ndcgx"][0] == pytest.approx((3 + 1 / math.log2(5)) / (3 + 1 / math.log2(3) + 0.5))


def test_gap_example_a_and_binary():
    v = {**values(QA, RA, ["GAP"]), **values(QA, RA, ["GAP.g=1:0"]), **values(QA, RA, ["GAP.g=0:1"])}
    # default g1 = g2 = 0.5: G(1) = .5, G(2) = 1. Pivot a (grade 2, rank 1): G(2)/1 = 1;
    # pivot c (grade 1, rank 4): (G(min(1,2)) + G(1))/4 = 0.25. Denominator 2*G(1) + 1*G(2) = 2.
    assert v["GAP"] == pytest.approx(1.25 / 2)
    # g = (1, 0): grades >= 1 relevant -> AP = (1 + 2/4)/3
    assert v["GAP_g=1:0"] == pytest.approx(0.5)
    # g = (0, 1): only grade 2 relevant -> AP with R = 1: 1
    assert v["GAP_g=0:1"] == pytest.approx(1.0)


def test_infap_and_variance_example_a():
    v = values(QA, RA, ["infAP", "infAP_var"])
    # infAP: a -> 1; c at k=4: |d| above = 2 (a, b), n = 2, r = 1: 1/4 + (2/4)(1+e)/(2+2e) = 0.5
    assert v["infAP"] == pytest.approx(0.5, abs=1e-5)
    # variance: p = 5 judged / 6 pooled. PC = 1, 0.5, 0 (f unretrieved), infAP = 0.5
    # s^2 = (0.25 + 0 + 0.25)/(3-1) = 0.25; (1-p) s^2/R = (1/6)(0.25)/3 = 0.013889
    # second stage: c has n = |d| = 2 judged above -> finite-population correction 0 -> 0
    assert v["infAP_var"] == pytest.approx((1 / 6) * 0.25 / 3, abs=1e-6)


def test_infap_variance_second_stage():
    # Topic: a=1, b=0, u1..u3 pooled unjudged (-1). Run: u1 a b u2 c? -> keep it small:
    # run ranks: u1(1) b(2) u2(3) a(4). For a at k=4: |d| = 3, n = 1 (b), r = 0, q = 0 -> q(1-q) = 0.
    # Use a relevant judged doc above instead: ranks a(1) u1(2) u2(3) c(4) with c relevant, b nonrel unret.
    q = pd.DataFrame({"topic": "t", "doc": ["a", "b", "c", "u1", "u2", "u3"], "grade": [1, 0, 1, -1, -1, -1]})
    run = pd.DataFrame({"run": "r", "topic": "t", "doc": ["a", "b", "u1", "c"], "score": [4, 3, 2, 1]})
    v = values(q, run, ["infAP", "infAP_var"])
    # ranks a(1) b(2) u1(3) c(4). PC(a) = 1. c: |d| = 3, n = 2 (a, b), r = 1: 1/4 + (3/4)(1/2) = 0.625
    ap = (1 + 0.625) / 2
    assert v["infAP"] == pytest.approx(ap, abs=1e-5)
    # p = 3/6. s^2 = ((1-ap)^2 + (0.625-ap)^2)/(2-1); v1 = (1-p) s^2 / 2
    v1 = 0.5 * ((1 - ap) ** 2 + (0.625 - ap) ** 2) / 2
    # var[PC(c)] = (|d|/k)^2 (1 - n/|d|) q(1-q)/(n-1) = (3/4)^2 * (1 - 2/3) * 0.25/1; / R^2 = 4
    v2 = (3 / 4) ** 2 * (1 / 3) * 0.25 / 4
    assert v["infAP_var"] == pytest.approx(v1 + v2, abs=1e-6)          # 0.017578125 + 0.01171875


def test_infap_jackknife_variance():
    # same lists: a(1, rel) b(2, non-rel) u1(3, unjudged) c(4, rel); judged a, b, c of 6 pooled, p = 1/2.
    # drop a: judged b, c; c: |d| = 3, n = 1, r = 0 -> PC = 1/4 + (3/4)(e/(1+2e)) ~ 0.25; R = 1 -> 0.25
    # drop b: judged a, c; c: n = 1, r = 1 -> PC = 1/4 + 3/4 = 1; infAP = (1 + 1)/2 = 1
    # drop c: judged a, b; R = 1 -> infAP = 1
    # mean 0.75; sum sq = 0.25 + 0.0625 + 0.0625 = 0.375; var = (1 - 1/2) (2/3) 0.375 = 0.125
    q = pd.DataFrame({"topic": "t", "doc": ["a", "b", "c", "u1", "u2", "u3"], "grade": [1, 0, 1, -1, -1, -1]})
    run = pd.DataFrame({"run": "r", "topic": "t", "doc": ["a", "b", "u1", "c"], "score": [4, 3, 2, 1]})
    v = values(q, run, ["infAP_varjack"])
    assert v["infAP_varjack"] == pytest.approx(0.125, abs=1e-4)
    # complete judgments: no sampling variance
    full = q.assign(grade=[1, 0, 1, 0, 0, 0])
    assert values(full, run, ["infAP_varjack"])["infAP_varjack"] == 0.0


def test_infap_linearized_variance():
    # same lists as above: a(1, rel) b(2, non-rel) u1(3, unjudged) c(4, rel); p = 3/6; R = 2;
    # PC(a) = 1, PC(c) = 0.625, infAP = 0.8125. For c: |d| = 3, n = 2, q = 1/2: c_d = 3/(4*2) = 0.375
    # influence: a: (1 - 0.8125) + 0.375 - 0.375*0.5 = 0.375; b: -0.375*0.5 = -0.1875;
    #            c: 0.625 - 0.8125 = -0.1875.   var = (1 - p)/R^2 * (0.140625 + 2 * 0.03515625)
    q = pd.DataFrame({"topic": "t", "doc": ["a", "b", "c", "u1", "u2", "u3"], "grade": [1, 0, 1, -1, -1, -1]})
    run = pd.DataFrame({"run": "r", "topic": "t", "doc": ["a", "b", "u1", "c"], "score": [4, 3, 2, 1]})
    v = values(q, run, ["infAP_varlin"])
    assert v["infAP_varlin"] == pytest.approx(0.5 * 0.2109375 / 4, abs=1e-5)


def test_mean_ci():
    df = pd.DataFrame({"run": ["r"] * 4, "topic": ["1", "2", "1", "2"],
                       "measure": ["infAP", "infAP", "infAP_var", "infAP_var"],
                       "value": [0.4, 0.6, 0.01, 0.03]})
    out = mean_ci(df)
    # mean 0.5, var = (0.01 + 0.03)/2^2 = 0.01, se 0.1, 95%: 0.5 +- 1.959964 * 0.1
    row = out.iloc[0]
    assert row["mean"] == pytest.approx(0.5) and row["var"] == pytest.approx(0.01)
    assert row["lo"] == pytest.approx(0.5 - 0.1959964, abs=1e-6)
    assert row["hi"] == pytest.approx(0.5 + 0.1959964, abs=1e-6)
    with pytest.raises(KeyError):
        mean_ci(df[df["measure"] == "infAP"])


# ---------------------------------------------------------------------------------------------
# Example B. Stratified sample (sample_eval format): stratum 1: a=1, b=0; stratum 2: c=1, d=-1, e=-1, f=0.
# Run ranks: a(1, s1) d(2, s2 unsampled) c(3, s2) b(4, s1) x(5, not pooled) f(6, s2).
SAMPLE_B = "1 0 a 1 1\n1 0 b 1 0\n1 0 c 2 1\n1 0 d 2 -1\n1 0 e 2 -1\n1 0 f 2 0\n"
RB = pd.DataFrame({"run": "r", "topic": "1", "doc": list("adcbxf"), "score": [6, 5, 4, 3, 2, 1]})


def test_xinfap_infndcg_example_b(tmp_path):
    p = tmp_path / "b.sample"
    p.write_text(SAMPLE_B)
    q = engine.formats.read_sample(p)
    v = values(q, RB, ["xinfAP", "infNDCG"])
    # strata: s1 N=2 n=2 r=1 -> R_1 = 1; s2 N=4 n=2 r=1 -> R_2 = 2; R_hat = 3
    # PC(a) = 1. PC(c, k=3): above a (s1: N=1,n=1,r=1), d (s2: N=1,n=0,r=0):
    #   1/3 + (1/3)[1*(1+e)/(1+3e) + 1*(0+e)/(0+3e)] = 1/3 + (1/3)(1 + 1/3) = 7/9
    # xinfAP = (R_1/R) PC(a)/r_1 + (R_2/R) PC(c)/r_2 = 1/3 + (2/3)(7/9) = 23/27
    assert v["xinfAP"] == pytest.approx(23 / 27, abs=1e-4)
    # DCG: s1 retrieved pool a,b (both sampled): (2/2) * 1/log2(2) = 1;
    #      s2 retrieved pool d,c,f (c,f sampled): (3/2) * 1/log2(4) = 0.75      -> 1.75
    # optimal: grade-1 count = 1*2/2 + 1*4/2 = 3 -> 1 + 1/log2(3) + 1/log2(4)
    assert v["infNDCG"] == pytest.approx(1.75 / (1 + 1 / math.log2(3) + 0.5), abs=1e-9)


def test_infndcg_optimal_dcg_rounding_and_cutoff():
    from engine.estimators.xinfap import optimal_dcg
    # one topic, one stratum N=10 n=4, sampled: grade 2 x1, grade 1 x1 -> estimates 2.5 and 2.5
    # int(x + 0.5) -> 3 and 3; ideal 2,2,2,1,1,1 with 1/log2(r+1)
    N = np.array([[10.0]]); n = np.array([[4.0]])
    rG = np.zeros((1, 1, 3)); rG[0, 0, 2] = 1; rG[0, 0, 1] = 1
    d = [1 / math.log2(r + 1) for r in range(1, 7)]
    assert optimal_dcg(N, n, rG, np.array([0.0, 1.0, 2.0]), 1000)[0] == pytest.approx(2 * sum(d[:3]) + sum(d[3:]))
    # cut-off 2: the grade-2 block (ranks 1-3) stops after rank 2; the grade-1 block starts at rank
    # 3 + 1 = 4, past the cut-off, but the script still adds that first rank before testing the cut-off
    assert optimal_dcg(N, n, rG, np.array([0.0, 1.0, 2.0]), 2)[0] == pytest.approx(2 * (d[0] + d[1]) + d[3])


def test_statap_example():
    # prels: a rel pi=1, b nonrel pi=.5, c rel pi=.5, d rel pi=.25 (not retrieved). Run a b c x.
    q = pd.DataFrame({"topic": "1", "doc": list("abcd"), "grade": [1, 0, 1, 1], "prob": [1, 0.5, 0.5, 0.25]})
    run = pd.DataFrame({"run": "r", "topic": "1", "doc": list("abcx"), "score": [4, 3, 2, 1]})
    v = values(q, run, ["statAP", "statAP_bc", "statAP_ratio", "statAP_var", "statP.2,3", "statRprec", "statR"])
    # R_hat = 1 + 2 + 4 = 7. PC(a) = 1; PC(c, k=3) = (1 + 1/1)/3 = 2/3.
    # ratio estimate = (1*1 + (2/3)*2)/7 = (7/3)/7 = 1/3
    assert v["statAP_ratio"] == pytest.approx(1 / 3)
    # bias correction: V = sum (1-pi)/pi^2 = 0 + 2 + 12 = 14; C = 2 * (PC(c) + 0) = 4/3 (a has pi = 1)
    # statAP = 1/3 - (N V / R^3 - C / R^2) = 1/3 - ((7/3)*14/343 - (4/3)/49) = 1/3 - 10/147
    assert v["statAP_bc"] == pytest.approx(1 / 3 - 10 / 147)
    assert v["statAP"] == pytest.approx(1 / 3)     # the Million Query script's statAP is the ratio estimate
    # variance: [c: 2 (2/3 - 1/3)^2 + d: 12 (0 - 1/3)^2] / 49 = (2/9 + 12/9)/49
    assert v["statAP_var"] == pytest.approx((14 / 9) / 49)
    # P@2 = (1)/2; P@3 = (1 + 2)/3; R-prec at round(7) = 7: (1 + 2)/7
    assert v["statP_2"] == pytest.approx(0.5) and v["statP_3"] == pytest.approx(1.0)
    assert v["statRprec"] == pytest.approx(3 / 7)
    assert v["statR"] == pytest.approx(7.0)


# ---------------------------------------------------------------------------------------------
# Identities on a simulated campaign

@pytest.fixture(scope="module")
def sim():
    from engine.simulation.campaigns import simulate
    return simulate(6, 6, 100, seed=11)


def _ap_by_pytrec(qrels: pd.DataFrame, runs: pd.DataFrame, measure: str) -> dict:
    import pytrec_eval
    qd: dict = {}
    for t, d, g in zip(qrels["topic"], qrels["doc"], qrels["grade"]):
        qd.setdefault(str(t), {})[str(d)] = int(g)
    out = {}
    ev = pytrec_eval.RelevanceEvaluator(qd, {measure})
    for run, grp in runs.groupby("run"):
        rd: dict = {}
        for t, d, s in zip(grp["topic"], grp["doc"], grp["score"]):
            rd.setdefault(str(t), {})[str(d)] = float(s)
        for t, m in ev.evaluate(rd).items():
            out[(run, t)] = m[measure]
    return out


def _wide(df):
    return df.pivot_table(index=["run", "topic"], columns="measure", values="value", observed=True)


def test_complete_judgments_estimators_equal_ap_and_ndcg(sim):
    truth = sim.truth.copy()
    rng = np.random.default_rng(0)
    truth["stratum"] = rng.integers(0, 4, len(truth))   # any strata
    truth["prob"] = 1.0
    w = _wide(engine.evaluate(truth, sim.runs, ["map", "infAP", "xinfAP", "statAP", "infNDCG", "ndcgx"]))
    assert np.abs(w["infAP"] - w["map"]).max() < 1e-4
    assert np.abs(w["xinfAP"] - w["map"]).max() < 1e-4
    assert np.abs(w["statAP"] - w["map"]).max() < 1e-12
    assert np.abs(w["infNDCG"] - w["ndcgx"]).max() < 1e-4
    # and ndcgx (gain = grade, 1/log2(r+1), whole list) is trec_eval's ndcg
    ref = _ap_by_pytrec(sim.truth, sim.runs, "ndcg")
    got = w["ndcgx"]
    assert max(abs(got[k] - v) for k, v in ref.items()) < 1e-9
    refap = _ap_by_pytrec(sim.truth, sim.runs, "map")
    assert max(abs(w["map"][k] - v) for k, v in refap.items()) < 1e-9


def test_ap_prime_equals_bpref_relative2_exactly(sim):
    q = sim.truth.copy()
    rng = np.random.default_rng(1)
    q = q[rng.random(len(q)) < 0.4]                      # incomplete judgments
    w = _wide(engine.evaluate(q, sim.runs, ["map@cond", "bpref_relative2", "GAP.g=1:0", "map"]))
    assert (w["map@cond"] == w["bpref_relative2"]).all() or np.abs(w["map@cond"] - w["bpref_relative2"]).max() < 1e-15
    # GAP with all probability on grade 1 is binary AP
    assert np.abs(w["GAP_g=1:0"] - w["map"]).max() < 1e-12


def test_ideal_ranking_scores_one(sim):
    q = sim.truth
    ideal = q[q["grade"] >= 0].sort_values(["topic", "grade"], ascending=[True, False]).copy()
    ideal["run"] = "ideal"
    ideal["score"] = -ideal.groupby("topic").cumcount().astype(float)
    run = ideal[["run", "topic", "doc", "score"]]
    for spec in [["rpref_relative2", "GAP", "Q", "ndcgx"], ["GAP.g=0.2:0.8"]]:
        w = _wide(engine.evaluate(q, run, spec))
        for m in w.columns:
            assert np.allclose(w[m], 1.0, atol=1e-12), m


def test_condensed_variant_names_and_errors():
    v = values(QA, RA, ["ndcgx@cond.disc=zipf"])
    # condensed a(1) b(2) c(3): DCG = 2 + 1/3; ideal 2 + 1/2 + 1/3
    assert v["ndcgx@cond_disc=zipf"] == pytest.approx((2 + 1 / 3) / (2 + 0.5 + 1 / 3))
    with pytest.raises(MeasureError):
        engine.evaluate(QA, RA, ["ndcgx.disc=cosine"])
    with pytest.raises(MeasureError):
        engine.evaluate(QA, RA, ["Q.gamma=2"])
    with pytest.raises(MeasureError):
        engine.evaluate(QA, RA, ["nosuch@cond"])


def test_bpref_10_uses_r_plus_10_nonrelevant():
    # R = 1 (a), N = 20 (n0..n19); run: n0..n4, a -> 5 judged non-relevant above a
    q = pd.DataFrame({"topic": "t", "doc": ["a"] + [f"n{i}" for i in range(20)], "grade": [1] + [0] * 20})
    run = pd.DataFrame({"run": "r", "topic": "t", "doc": [f"n{i}" for i in range(5)] + ["a"],
                        "score": [6, 5, 4, 3, 2, 1]})
    v = values(q, run, ["bpref", "bpref_10", "bpref_N", "RankEff"])
    assert v["bpref"] == pytest.approx(0.0)              # 1 - min(5, 1)/min(20, 1)
    assert v["bpref_10"] == pytest.approx(1 - 5 / 11)    # 1 - min(5, 11)/min(20, 11)
    assert v["bpref_N"] == pytest.approx(1 - 5 / 20)     # 1 - 5/20
    assert v["RankEff"] == pytest.approx(15 / 20)        # 15 non-relevant below a, / (R N)


def test_bpref_family_agrees_with_trec_eval_bpref(sim):
    # bpref_10 with N <= R + 10 for every topic reduces to min(., N) normalisation; the generic
    # capped kernel with extra 0 must reproduce trec_eval's bpref everywhere
    from engine.measures.preference import bpref_capped
    q = sim.truth.sample(frac=0.5, random_state=3)
    c = engine.compute(q, sim.runs, ["bpref"])
    assert np.abs(bpref_capped(c.ranked, 0.0) - c.values["bpref"]).max() < 1e-12


def test_rankeff_is_bpref_allnonrel(sim):
    # RankEff = 1/(R N) sum_ret (N - nonrel_above) = 1/R sum_ret (1 - nonrel_above/N) = bpref_N
    # (Buttcher et al.'s form 1 - sum |n above r| / (R (|J| - R)) with unretrieved relevant below all)
    q = sim.truth.sample(frac=0.3, random_state=4)
    w = _wide(engine.evaluate(q, sim.runs, ["RankEff", "bpref_N"]))
    assert np.abs(w["RankEff"] - w["bpref_N"]).max() < 1e-12


def test_infap_jackknife_equals_brute_force():
    # the vectorized jackknife (one replicate per judged position, all topics at once) against
    # re-evaluating infAP with each judged document of one topic turned into pooled-unjudged
    from engine.evaluation.evaluate import compute
    from engine.estimators.infap import infap_variance_jackknife
    from engine.simulation.campaigns import simulate
    sim = simulate(4, 3, 40, seed=3)
    pool = sim.pool(40)
    rng = np.random.default_rng(0)
    q = pool.copy()
    q["grade"] = np.where(rng.random(len(pool)) < 0.3, q["grade"], -1)
    r = compute(q, sim.runs, ["infAP"]).ranked
    vj = infap_variance_jackknife(r)
    g = 0
    topic = str(r.topic_names[r.g_topic[g]])
    rows = q.index[(q["topic"].astype(str) == topic) & (q["grade"] >= 0)]
    vals = []
    for i in rows:
        vals.append(compute(q.assign(grade=q["grade"].where(q.index != i, -1)), sim.runs, ["infAP"]).values["infAP"][g])
    vals = np.asarray(vals)
    n, p = len(rows), len(rows) / (q["topic"].astype(str) == topic).sum()
    assert vj[g] == pytest.approx((1 - p) * (n - 1) / n * ((vals - vals.mean()) ** 2).sum(), rel=1e-9)
    assert vj[g] > 0


def test_ci_cli_bias_corrected_interval(tmp_path, capsys):
    """`cranfield ci --variance jackknife_bc`: the jackknife interval shifted by minus the run's mean
    per-topic jackknife bias (experiment.infap_jackknife); the reported mean stays infAP."""
    import json
    from cranfield.cli import main
    from engine.planning.estimator_experiments import infap_jackknife
    from engine.evaluation.evaluate import compute
    # topic t: a(rel) b(non) c(rel) judged, u1..u3 pooled-unjudged (p = 1/2); two topics, two runs
    q = "".join(f"{t} 0 {d} {g}\n" for t in ("1", "2") for d, g in
                [("a", 1), ("b", 0), ("c", 1), ("u1", -1), ("u2", -1), ("u3", -1)])
    (tmp_path / "q.qrels").write_text(q)
    r1 = "".join(f"{t} Q0 {d} {i + 1} {10 - i} r1\n" for t in ("1", "2") for i, d in enumerate(["a", "b", "u1", "c"]))
    r2 = "".join(f"{t} Q0 {d} {i + 1} {10 - i} r2\n" for t in ("1", "2") for i, d in enumerate(["u2", "c", "b", "a"]))
    (tmp_path / "r1.txt").write_text(r1)
    (tmp_path / "r2.txt").write_text(r2)
    args = [str(tmp_path / "q.qrels"), str(tmp_path / "r1.txt"), str(tmp_path / "r2.txt"), "--format", "json"]
    assert main(["ci", *args, "--variance", "jackknife"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["ci", *args, "--variance", "jackknife_bc"]) == 0
    bc = json.loads(capsys.readouterr().out)
    c = compute(engine.formats.read_qrels(tmp_path / "q.qrels"),
                engine.read_runs([tmp_path / "r1.txt", tmp_path / "r2.txt"]), ["infAP"])
    _, bias = infap_jackknife(c.ranked)
    for p, b, run in zip(plain, bc, ("r1", "r2")):
        assert p["run"] == b["run"] == run and b["mean"] == pytest.approx(p["mean"])
        exp = bias[np.asarray(c.ranked.g_run) == c.ranked.run_names.index(run)].mean()
        assert b["bias"] == pytest.approx(exp, abs=1e-9) and b["centre"] == pytest.approx(p["mean"] - exp)
        assert b["lo"] == pytest.approx(p["lo"] - exp) and b["hi"] == pytest.approx(p["hi"] - exp)
    assert any(abs(b["bias"]) > 1e-4 for b in bc)          # the correction is not a no-op here
    assert main(["ci", *args, "-m", "statAP", "--variance", "jackknife_bc"]) == 3
