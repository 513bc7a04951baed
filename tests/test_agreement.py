"""Agreement measures against test-only oracles (scikit-learn, krippendorff) and a hand-computed example;
judgment sources: 6-column import, combining rules."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.judgments.agreement import (cohen_kappa, confusion, kappa_from_confusion, krippendorff_alpha,
    label_agreement, leaderboard_agreement, top_k_overlap)
from engine.errors import FormatError
from engine.judgments.sources import combine, read_rj6

ROOT = Path(__file__).resolve().parents[1]


def _pairs(m: np.ndarray):
    a, b = [], []
    for i in range(len(m)):
        for j in range(len(m)):
            a += [i] * int(m[i, j])
            b += [j] * int(m[i, j])
    return np.array(a), np.array(b)


HAND = np.array([[10, 2, 0], [3, 8, 1], [0, 2, 4]])


def test_hand_computed_3x3():
    # n = 30, po = 22/30; rows 12 12 6, columns 13 12 5; pe = 330/900 -> kappa = 11/19
    assert kappa_from_confusion(HAND) == pytest.approx(11 / 19)
    # linear: observed 240/900, expected 708/900 -> 39/59; quadratic: 240 vs 984 -> 31/41
    assert kappa_from_confusion(HAND, "linear") == pytest.approx(39 / 59)
    assert kappa_from_confusion(HAND, "quadratic") == pytest.approx(31 / 41)
    a, b = _pairs(HAND)
    assert (confusion(a, b, [0, 1, 2]) == HAND).all()
    # nominal alpha: coincidences M + M^T, n = 60, n_c = 25 24 11, Do = 16/60, De = 2278/3540 -> 667/1139
    assert krippendorff_alpha(a, b, "nominal") == pytest.approx(667 / 1139)


def test_kappa_and_alpha_match_oracles_on_random_pairs():
    from sklearn.metrics import cohen_kappa_score
    import krippendorff
    rng = np.random.default_rng(5)
    for _ in range(25):
        k = int(rng.integers(2, 5))
        n = int(rng.integers(5, 200))
        a = rng.integers(0, k, n)
        noise = rng.random(n) < rng.random()
        b = np.where(noise, rng.integers(0, k, n), a)
        for w, sk in (("unweighted", None), ("linear", "linear"), ("quadratic", "quadratic")):
            want = cohen_kappa_score(a, b, weights=sk)
            got = cohen_kappa(a, b, w)
            if np.isnan(want):
                assert np.isnan(got)
            else:
                assert got == pytest.approx(want, abs=1e-12)
        dom = list(range(k))
        for level in ("nominal", "ordinal"):
            if len(set(a) | set(b)) < 2:
                continue
            want = krippendorff.alpha(reliability_data=np.vstack([a, b]).astype(float), level_of_measurement=level,
                                      value_domain=dom)
            assert krippendorff_alpha(a, b, level, dom) == pytest.approx(want, abs=1e-12)


def test_label_agreement_binarized_and_per_topic():
    a = pd.DataFrame({"topic": ["1"] * 4 + ["2"] * 4, "doc": list("abcdabcd"), "grade": [0, 1, 2, 2, 0, 0, 1, 2]})
    b = pd.DataFrame({"topic": ["1"] * 4 + ["2"] * 4 + ["3"], "doc": list("abcdabcd") + ["x"],
                      "grade": [0, 1, 2, 2, 2, 0, 0, 2, 1]})
    la = label_agreement(a, b, ("A", "B"), [0, 1, 2], threshold=1)
    assert la.graded["n"] == 8 and la.n_b == 9
    assert la.graded["agreement"] == pytest.approx(6 / 8)
    # binarized at 1: A = 0 1 1 1 0 0 1 1, B = 0 1 1 1 1 0 0 1
    assert (la.binary["confusion"] == np.array([[2, 1], [1, 4]])).all()
    assert list(la.per_topic["topic"]) == ["2", "1"]          # topic 2 disagrees, listed first
    assert la.per_topic["kappa"].iloc[1] == pytest.approx(1.0)


def test_leaderboard_agreement():
    a = pd.Series({"r1": 0.5, "r2": 0.4, "r3": 0.3, "r4": 0.2})
    b = pd.Series({"r1": 0.45, "r2": 0.1, "r3": 0.35, "r4": 0.2})
    sa = leaderboard_agreement(a, b, ("A", "B"), "map", k=2)
    # B's order r1 r3 r4 r2: discordant pairs (r2,r3) (r2,r4) of 6 -> tau = (4-2)/6
    assert sa.tau == pytest.approx(1 / 3)
    assert sa.largest_change == {"run": "r2", "rank_a": 2, "rank_b": 4, "change": -2}
    assert sa.overlap == pytest.approx(0.5)
    assert top_k_overlap(["a", "b", "c"], ["c", "b", "a"], 3) == 1.0


def test_rj6_two_runids_two_sources_and_malformed_line(tmp_path):
    f = tmp_path / "rj.txt"
    f.write_text("1 Q0 d1 2 0.9 gpt\n1 Q0 d2 0 0.8 gpt\n1 Q0 d1 1 0.5 llama\n2 Q0 d3 3 1.0 llama\n")
    t = read_rj6(f)
    assert list(t) == ["gpt", "llama"]
    assert t["llama"][["topic", "doc", "grade"]].values.tolist() == [["1", "d1", 1], ["2", "d3", 3]]
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 d1 2 0.9 gpt\n1 Q0 d2 x 0.8 gpt\n")
    with pytest.raises(FormatError) as e:
        read_rj6(bad)
    assert f"{bad}:2:" in str(e.value)


def test_import_cli_creates_sources_and_refuses_bad_file(tmp_path, capsys):
    import shutil
    from cranfield.cli import main
    camp = tmp_path / "c"
    shutil.copytree(ROOT / "campaigns" / "demo", camp, ignore=shutil.ignore_patterns(".cranfield-cache", "pools"))
    f = tmp_path / "rj.txt"
    f.write_text("401 Q0 D401-104 2 0.9 gpt\n401 Q0 D401-109 0 0.8 gpt\n401 Q0 D401-104 1 0.5 llama\n")
    assert main(["judgments", "import", str(camp), str(f)]) == 0
    assert "gpt, llama" in capsys.readouterr()[0]
    assert (camp / "judgments" / "sources" / "gpt.qrels").read_text().split("\n")[0] == "401 0 D401-104 2"
    f.write_text("401 Q0 D401-104 2 0.9 gpt\n401 Q0 D401-109\n")
    assert main(["judgments", "import", str(camp), str(f)]) == 3
    assert f"{f}:2:" in capsys.readouterr()[1]
    assert main(["agreement", str(camp), "--sources", "official", "gpt"]) == 0
    out = capsys.readouterr()[0]
    assert "Cohen's kappa (unweighted)" in out and "Kendall tau" in out


def test_combine_rules():
    t = {"a": pd.DataFrame({"topic": ["1", "1"], "doc": ["x", "y"], "grade": [1, 0]}),
         "b": pd.DataFrame({"topic": ["1", "1", "1"], "doc": ["x", "y", "z"], "grade": [0, 2, 2]}),
         "c": pd.DataFrame({"topic": ["1", "1"], "doc": ["x", "y"], "grade": [0, 0]})}
    p = combine(t, "precedence", ["a", "b"])
    assert p.values.tolist() == [["1", "x", 1, "a"], ["1", "y", 0, "a"], ["1", "z", 2, "b"]]
    assert combine(t, "official", ["a", "b"])["doc"].tolist() == ["x", "y"]
    m = combine(t, "majority", ["a", "b", "c"])
    assert m[["doc", "grade"]].values.tolist() == [["x", 0], ["y", 0], ["z", 2]]
    assert m["source"].tolist() == ["b", "a", "b"]


def test_simulated_judge_kappa_within_sampling_error_of_implied():
    from engine.judgments.simulated import apply_judge, implied_kappa, judge_matrix, kappa_sampling_error
    from engine.simulation.campaigns import depth_pool, simulate
    sim = simulate(n_runs=6, n_topics=10, depth=60, seed=11)
    pool = depth_pool(sim, 30)
    grades = [0, 1, 2]
    share = np.array([(pool["grade"] == g).mean() for g in grades])
    m = judge_matrix("lenient", 3, 0.25)
    assert m.tolist() == [[0.75, 0.25, 0], [0, 0.75, 0.25], [0, 0, 1.0]]
    judged = apply_judge(pool, m, grades, seed=4)
    la = label_agreement(pool, judged, ("truth", "judge"), grades)
    got = la.graded["kappa_unweighted"]
    imp = implied_kappa(m, share)
    sd = kappa_sampling_error(m, share, len(pool), draws=400)
    assert 0 < sd < 0.05
    assert abs(got - imp) < 3 * sd
    # a lenient judge never lowers a grade
    assert (la.graded["confusion"][np.tril_indices(3, -1)] == 0).all()
    # the strict judge at error 0: identical labels
    assert (apply_judge(pool, judge_matrix("strict", 3, 0.0), grades)["grade"] == pool["grade"]).all()


def test_agreement_cli_on_two_plain_files(tmp_path, capsys):
    from cranfield.cli import main
    a, b = tmp_path / "a.qrels", tmp_path / "b.qrels"
    pa, pb = _pairs(HAND)
    a.write_text("".join(f"1 0 d{i} {g}\n" for i, g in enumerate(pa)))
    b.write_text("".join(f"1 0 d{i} {g}\n" for i, g in enumerate(pb)) + "2 0 x 1\n")
    assert main(["agreement", str(a), str(b)]) == 0
    out = capsys.readouterr()[0]
    assert "documents judged by both: 30" in out
    assert f"Cohen's kappa (unweighted) {11 / 19:.3f}" in out and f"Cohen's kappa (quadratic)  {31 / 41:.3f}" in out
    assert "  0                      10     2     0" in out      # the confusion matrix, row 0
    assert main(["agreement", str(a)]) == 3
