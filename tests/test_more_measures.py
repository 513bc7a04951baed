"""Measures ir_measures names that Cranfield added for issue 27, each against the ir_measures provider that
implements it as a test-only oracle: cwl_eval's C/W/L measures (INST, INSQ, SDCG, NERR8-NERR11, BPM).
Skipped, saying which, when the provider is not installed (pip install ir_measures cwl-eval)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cranfield

irm = pytest.importorskip("ir_measures", reason="ir_measures is the oracle (pip install ir_measures)")


def _case(seed: int, max_grade: int = 3):
    """Graded judgments (some unjudged documents retrieved), scores without ties (cwl_eval keeps ties in
    input order), one topic with an empty ranking."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for t in range(8):
        docs = [f"d{i:03d}" for i in rng.choice(300, 60, replace=False)]
        qrels[f"q{t}"] = {d: int(rng.integers(0, max_grade + 1)) for d in docs}
        k = 0 if t == 7 else int(rng.integers(1, 120))
        pool = docs[:40] + [f"d{i:03d}" for i in range(300, 400)]
        picked = rng.choice(len(pool), min(k, len(pool)), replace=False)
        run[f"q{t}"] = {pool[i]: float(s) for i, s in zip(picked, rng.permutation(len(picked)) + 0.5)}
    return qrels, run


def _provider(name: str):
    p = irm.providers.registry[name]
    if not p.is_available():
        pytest.skip(f"ir_measures' {name} provider is not installed ({p.install_instructions()})")
    return p


CWL_NAMES = ["INST(max_rel=3)", "INST(max_rel=3,T=2.5)", "INSQ(max_rel=3)", "INSQ(max_rel=3,T=3.0)",
             "SDCG(max_rel=3)@10", "SDCG(max_rel=3)@5", "NERR8(max_rel=3)@10", "NERR9(max_rel=3)@5",
             "NERR10(max_rel=3)", "NERR10(max_rel=3,p=0.7)", "NERR11(max_rel=3)", "NERR11(max_rel=3,T=2.0)",
             "BPM(max_rel=3)@10", "BPM(max_rel=3,T=2.0)@20", "INST(max_rel=2,min_rel=1)"]


@pytest.mark.parametrize("seed", [0, 1])
def test_cwl_measures_equal_cwl_eval(seed):
    p = _provider("cwl_eval")
    qrels, run = _case(seed)
    measures = {irm.parse_measure(n): n for n in CWL_NAMES}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = {(m.query_id, measures[m.measure]): m.value for m in p.iter_calc(list(measures), qrels, run)}
    mixed = cranfield.Evaluator(qrels, CWL_NAMES).evaluate(run)
    got = {(t, n): v for t, d in mixed.items() for n, v in d.items()}
    assert got == pytest.approx(want, abs=1e-12)
    for n in CWL_NAMES[:3]:                                    # alone equals mixed
        alone = cranfield.Evaluator(qrels, [n]).evaluate(run)
        assert {t: d[n] for t, d in alone.items()} == {t: d[n] for t, d in mixed.items()}


def test_cwl_measures_need_max_rel_and_their_cut_offs():
    q = {"1": {"a": 1}}
    for bad, why in (("INST", "max_rel"), ("SDCG(max_rel=3)", "cut-off"), ("INSQ(max_rel=3)@5", "no cut-off"),
                     ("BPM(max_rel=3,x=1)@5", "'x'")):
        with pytest.raises(cranfield.CranfieldError, match=why):
            cranfield.Evaluator(q, [bad])


def test_cwl_measures_from_the_command_line_equal_the_library(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    qrels, run = _case(3)
    run = {t: v for t, v in run.items() if v}
    (tmp_path / "q").write_text("".join(f"{t} 0 {d} {g}\n" for t, v in qrels.items() for d, g in v.items()))
    (tmp_path / "r").write_text("".join(f"{t} Q0 {d} 0 {s} x\n" for t, v in run.items() for d, s in v.items()))
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-m", "cranfield.cli", "eval", "-m", "INST(max_rel=3)",
                          "-m", "SDCG(max_rel=3)@10",
                          str(tmp_path / "q"), str(tmp_path / "r")], capture_output=True, text=True, cwd=root,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    got = {ln.split()[0]: float(ln.split()[2]) for ln in out.stdout.splitlines()}
    df = cranfield.evaluate(qrels, run, ["INST(max_rel=3)", "SDCG(max_rel=3)@10"])
    want = cranfield.summarize(df).iloc[0].to_dict()
    assert got == pytest.approx(want, abs=5e-5)


@pytest.mark.parametrize("name", ["Accuracy", "Accuracy@10", "Accuracy(rel=2)@20"])
def test_accuracy_equals_ir_measures_accuracy_provider(name):
    """ir_measures leaves a topic without a relevant retrieved document out (Cranfield: NaN, out of the mean)."""
    p = _provider("accuracy")
    qrels, run = _case(0)
    m = irm.parse_measure(name)
    want = {x.query_id: x.value for x in p.iter_calc([m], qrels, run)}
    got = cranfield.Evaluator(qrels, [name]).evaluate(run)
    assert {t: v[name] for t, v in got.items() if not np.isnan(v[name])} == pytest.approx(want, abs=1e-12)
    assert len(want) < len(got)                                   # some topics are left out
    df = cranfield.evaluate(qrels, run, [name])
    assert float(cranfield.summarize(df)[name].iloc[0]) == pytest.approx(p.calc_aggregate([m], qrels, run)[m])


@pytest.mark.parametrize("ties", [False, True])
def test_compat_equals_ir_measures_compat_provider(ties):
    """Compat: rank-biased overlap with the ideal ranking; with tied scores the provider orders the ranking
    by document id ascending and the ideal's equal grades and scores by the judgments' order."""
    p = _provider("compat")
    qrels, run = _case(4)
    if ties:
        run = {t: {d: float(int(s) // 7) for d, s in v.items()} for t, v in run.items()}
    names = ["Compat", "Compat(p=0.8)", "Compat(normalize=False)", "Compat(p=0.5,normalize=False)"]
    measures = {irm.parse_measure(n): n for n in names}
    want = {(m.query_id, measures[m.measure]): m.value for m in p.iter_calc(list(measures), qrels, run)}
    got = cranfield.Evaluator(qrels, names).evaluate(run)
    assert {(t, n): v for t, d in got.items() for n, v in d.items()} == pytest.approx(want, abs=1e-12)
    assert sum(v > 0 for v in want.values()) > 10


def _diversity_case(seed: int, ties: bool):
    import pandas as pd
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(6):
        for d in rng.choice(60, 30, replace=False):
            for s in rng.choice(4, int(rng.integers(1, 3)), replace=False):
                rows.append((f"q{t}", str(s), f"d{d:02d}", int(rng.integers(0, 3))))
    qrels = pd.DataFrame(rows, columns=["query_id", "iteration", "doc_id", "relevance"])
    run = {f"q{t}": {f"d{d:02d}": float(rng.integers(0, 5)) if ties else float(rng.random())
                     for d in rng.choice(60, 40, replace=False)} for t in range(6)}
    return qrels, run


DIVERSITY = ["alpha_nDCG@20", "alpha_nDCG@5", "alpha_DCG@10", "ERR_IA@20", "nERR_IA@10", "P_IA@10", "AP_IA",
             "MAP_IA", "StRecall@10", "NRBP", "nNRBP", "alpha_nDCG(alpha=0.3)@10", "NRBP(alpha=0.2,beta=0.7)",
             "P_IA(rel=2)@10"]


@pytest.mark.parametrize("ties", [False, True])
def test_diversity_measures_from_python_equal_pyndeval(ties):
    """Subtopic judgments as ir_measures gives them (iteration = subtopic); the oracle is asked one name at
    a time (ir_measures' pyndeval provider reads the run once, so a second parameter set in one call gets
    nothing)."""
    p = _provider("pyndeval")
    qrels, run = _diversity_case(0, ties)
    got = cranfield.Evaluator(qrels, DIVERSITY + ["AP"]).evaluate(run)
    for n in DIVERSITY:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = {x.query_id: x.value for x in p.iter_calc([irm.parse_measure(n)], qrels, run)}
        assert {t: got[t][n] for t in want} == pytest.approx(want, abs=1e-12), n
    # elsewhere a document's grade is its best over the subtopics
    best = qrels.groupby(["query_id", "doc_id"], as_index=False)["relevance"].max()
    assert {t: d["AP"] for t, d in got.items()} == {t: d["AP"] for t, d in
                                                     cranfield.Evaluator(best, ["AP"]).evaluate(run).items()}


def test_diversity_measures_from_a_qrels_file_and_the_command_line(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    qrels, run = _diversity_case(1, False)
    (tmp_path / "q").write_text("".join(f"{t} {s} {d} {g}\n" for t, s, d, g in qrels.itertuples(index=False)))
    (tmp_path / "r").write_text("".join(f"{t} Q0 {d} 0 {s} x\n" for t, v in run.items() for d, s in v.items()))
    lib = cranfield.Evaluator(str(tmp_path / "q"), ["alpha_nDCG@20", "ERR_IA@20"]).evaluate(run)
    assert lib == cranfield.Evaluator(qrels, ["alpha_nDCG@20", "ERR_IA@20"]).evaluate(run)
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-m", "cranfield.cli", "eval", "-m", "alpha_nDCG@20", str(tmp_path / "q"),
                          str(tmp_path / "r")], capture_output=True, text=True, cwd=root, timeout=120)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.split()[2]) == pytest.approx(np.mean([v["alpha_nDCG@20"] for v in lib.values()]),
                                                         abs=5e-5)


def test_diversity_measures_need_subtopics():
    with pytest.raises(cranfield.CranfieldError, match="subtopic"):
        cranfield.Evaluator({"1": {"a": 1}}, ["alpha_nDCG@20"])
