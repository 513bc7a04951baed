"""ndeval (pyndeval as the oracle) and gdeval (hand-computed cases)."""
from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from cranfield.cli import main
from engine.official.ndeval import evaluate_diversity, measure_names

pyndeval = pytest.importorskip("pyndeval")


def _random_case(rng: random.Random):
    q, run = [], []
    for t in range(1, 4):
        docs = [f"d{j}" for j in range(rng.randint(3, 30))]
        for s in range(rng.randint(1, 5)):
            for d in rng.sample(docs, rng.randint(1, len(docs))):
                q.append((str(t), f"s{s}", d, rng.choice([0, 0, 1, 2])))
        pool = [f"d{j}" for j in range(40)]
        for d in rng.sample(pool, rng.randint(1, 35)):
            run.append((str(t), d, float(rng.randint(0, 12))))      # many score ties
    return q, run


@pytest.mark.parametrize("alpha,beta", [(0.5, 0.5), (0.3, 0.8)])
def test_ndeval_equals_pyndeval_per_topic(alpha, beta):
    rng = random.Random(11)
    for _ in range(25):
        q, run = _random_case(rng)
        # ndeval 4.5's -traditional breaks score ties by descending docno; pyndeval ranks by (-score, docno)
        # itself, so it is given tie-free scores in ndeval's order
        order = sorted(sorted(run, key=lambda x: x[1], reverse=True), key=lambda x: (x[0], -x[2]))
        ref = pyndeval.ndeval(q, [(t, d, -float(i)) for i, (t, d, _) in enumerate(order)], alpha=alpha, beta=beta)
        qd = pd.DataFrame(q, columns=["topic", "subtopic", "doc", "grade"])
        rd = pd.DataFrame(run, columns=["topic", "doc", "score"]).assign(run="r")
        mine = evaluate_diversity(qd, rd, alpha=alpha, beta=beta, order="traditional").set_index("topic")
        assert sorted(mine.index) == sorted(ref)
        for t, vals in ref.items():
            assert set(vals) == set(measure_names())
            for m, v in vals.items():
                assert mine.loc[t, m] == pytest.approx(v, abs=1e-6, nan_ok=True), (t, m)


def test_ndeval_cli_layout_order_and_complete(tmp_path, capsys):
    (tmp_path / "q").write_text("1 1 a 1\n1 2 b 1\n1 2 c 0\n2 1 z 1\n")
    # rank field order (default) puts b first; score order (-traditional) puts a first
    (tmp_path / "r").write_text("1 Q0 b 1 1.0 run1\n1 Q0 a 2 2.0 run1\n")
    assert main(["eval", "-R", "diversity", str(tmp_path / "q"), str(tmp_path / "r")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "runid,topic," + ",".join(measure_names())
    assert [ln.split(",")[1] for ln in lines[1:]] == ["1", "amean"]
    col = measure_names().index("P-IA@5") + 2
    assert lines[1].split(",")[col] == "0.200000"                     # (1/5 + 1/5) / 2 subtopics
    strec_col = measure_names().index("alpha-DCG@5") + 2
    default_dcg = float(lines[1].split(",")[strec_col])
    assert main(["eval", "-R", "diversity", "--traditional", str(tmp_path / "q"), str(tmp_path / "r")]) == 0
    trad_dcg = float(capsys.readouterr().out.splitlines()[1].split(",")[strec_col])
    assert default_dcg == pytest.approx(trad_dcg)                     # symmetric case: same value
    assert main(["eval", "-R", "diversity", "-c", str(tmp_path / "q"), str(tmp_path / "r")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split(",")[1] for ln in lines[1:]] == ["1", "2", "amean"]
    assert lines[2].split(",")[col] == "0.000000"                     # topic 2 not retrieved: 0 with -c
    assert float(lines[3].split(",")[col]) == pytest.approx(0.1)      # mean over both topics


def test_ndeval_rank_field_order_differs_from_score_order():
    q = pd.DataFrame({"topic": "1", "subtopic": "1", "doc": ["a"], "grade": [1]})
    run = pd.DataFrame({"run": "r", "topic": "1", "doc": ["x", "a"], "rank": [1, 2], "score": [1.0, 2.0]})
    by_rank = evaluate_diversity(q, run).iloc[0]
    by_score = evaluate_diversity(q, run, order="traditional").iloc[0]
    assert by_rank["P-IA@5"] == by_score["P-IA@5"] == pytest.approx(0.2)
    assert by_rank["NRBP"] == pytest.approx(0.375) and by_score["NRBP"] == pytest.approx(0.75)
    # ndeval 4.5 -traditional: equal scores, the larger document id first (x above a)
    tied = run.assign(score=[1.0, 1.0])
    assert evaluate_diversity(q, tied, order="traditional").iloc[0]["NRBP"] == pytest.approx(0.375)
    assert evaluate_diversity(q, tied.assign(doc=["0", "a"]), order="traditional").iloc[0]["NRBP"] == \
        pytest.approx(0.75)


# ------------------------------------------------------------------------------------------- gdeval
GQ = "1 0 a 2\n1 0 b 1\n1 0 c 0\n1 0 d 4\n2 0 e 1\n3 0 f 3\n"
GRUN = "1 Q0 a 1 3 sys\n1 Q0 c 2 2 sys\n1 Q0 b 3 1 sys\n2 Q0 e 1 1 sys\n"
GBASE = "1 Q0 d 1 3 base\n1 Q0 a 2 2 base\n2 Q0 x 1 1 base\n"
# topic 1: run a(2) c(0) b(1): DCG = 3/1 + 0 + 1/log2(4) = 3.5; ideal d(4) a(2) b(1) = 15 + 3/log2(3) + 1/2
IDCG1 = 15 + 3 / math.log2(3) + 0.5
NDCG1 = 3.5 / IDCG1
ERR1 = 3 / 16 + (1 - 3 / 16) * (1 / 16) / 3          # R = (2^g - 1)/16
# topic 2: e(1) at rank 1: nDCG 1, ERR 1/16
BASE_NDCG1 = (15 + 3 / math.log2(3)) / IDCG1


def _csv(capsys, *argv):
    assert main([str(a) for a in argv]) == 0
    # gdeval.pl's risk run id itself contains commas: the last three fields are topic and values
    return [ln.rsplit(",", 3) for ln in capsys.readouterr().out.splitlines()]


@pytest.fixture
def gfiles(tmp_path):
    for name, text in (("q", GQ), ("run", GRUN), ("base", GBASE)):
        (tmp_path / name).write_text(text)
    return tmp_path


def test_gdeval_ndcg_err_hand_computed(gfiles, capsys):
    rows = _csv(capsys, "gdeval", gfiles / "q", gfiles / "run")
    assert rows[0] == ["runid", "topic", "ndcg@20", "err@20"]
    assert rows[1] == ["sys", "1", f"{NDCG1:.5f}", f"{ERR1:.5f}"]
    assert rows[2] == ["sys", "2", "1.00000", f"{1 / 16:.5f}"]
    assert rows[3] == ["sys", "amean", f"{(NDCG1 + 1) / 2:.5f}", f"{(ERR1 + 1 / 16) / 2:.5f}"]
    rows = _csv(capsys, "gdeval", "-c", "-k", "1", gfiles / "q", gfiles / "run")
    # gdeval.pl -c: topic 3 (judged, not retrieved) is not printed but counts 0 in the mean
    assert [r[1] for r in rows[1:]] == ["1", "2", "amean"]
    assert rows[1][2:] == [f"{3 / 15:.5f}", f"{3 / 16:.5f}"]          # @1: gain 3 over ideal 15
    assert rows[3][2:] == [f"{(3 / 15 + 1) / 3:.5f}", f"{(3 / 16 + 1 / 16) / 3:.5f}"]


def test_gdeval_ignores_topics_without_a_positive_judgment(tmp_path, capsys):
    (tmp_path / "q").write_text(GQ + "4 0 g 0\n4 0 h -2\n")
    (tmp_path / "run").write_text(GRUN + "4 Q0 g 1 1 sys\n")
    rows = _csv(capsys, "gdeval", "-c", tmp_path / "q", tmp_path / "run")
    assert [r[1] for r in rows[1:]] == ["1", "2", "amean"]            # 3 counted (-c), 4 never
    assert rows[3][2] == f"{(NDCG1 + 1) / 3:.5f}"


def test_gdeval_risk_sensitive_against_baseline(gfiles, capsys):
    rows = _csv(capsys, "gdeval", "--baseline", gfiles / "base", "--risk-alpha", "1", gfiles / "q", gfiles / "run")
    assert rows[1][0] == "sys (rel to. base, rs=1+a, a=1)"
    d1 = NDCG1 - BASE_NDCG1                                           # a loss: weighted 1 + alpha = 2
    assert float(rows[1][2]) == pytest.approx(2 * d1, abs=1e-5)
    base_err1 = 15 / 16 + (1 - 15 / 16) * (3 / 16) / 2
    assert float(rows[1][3]) == pytest.approx(2 * (ERR1 - base_err1), abs=1e-5)
    assert rows[2][2:] == ["1.00000", f"{1 / 16:.5f}"]                # baseline found nothing: a gain of 1
    assert float(rows[3][2]) == pytest.approx((2 * d1 + 1) / 2, abs=1e-5)


def test_gd_measures_on_the_leaderboard(gfiles, capsys):
    assert main(["eval", "-m", "gd_ndcg@20", "-m", "gd_err@20", str(gfiles / "q"), str(gfiles / "run")]) == 0
    out = dict((ln.split("\t")[0].strip(), float(ln.split("\t")[2])) for ln in capsys.readouterr().out.splitlines())
    assert out["gd_ndcg@20"] == pytest.approx((NDCG1 + 1) / 2, abs=1e-4)
    assert out["gd_err@20"] == pytest.approx((ERR1 + 1 / 16) / 2, abs=1e-4)


def test_gdeval_risk_complete_prints_missing_topics_last(gfiles, capsys):
    rows = _csv(capsys, "gdeval", "-c", "--baseline", gfiles / "base", "--risk-alpha", "0.50", gfiles / "q",
                gfiles / "run")
    assert {r[0] for r in rows[1:]} == {"sys (rel to. base, rs=1+a, a=0.50)"}   # alpha as typed
    assert [r[1] for r in rows[1:]] == ["1", "2", "3", "amean"]
    assert rows[3][2:] == ["0.00000", "0.00000"]                      # neither retrieved for topic 3
    d1 = 1.5 * (NDCG1 - BASE_NDCG1)
    assert float(rows[4][2]) == pytest.approx((d1 + 1) / 3, abs=1e-5)
