"""Cranfield as an ir_measures provider (issue 27): `cranfield.register_ir_measures()` makes
`ir_measures.evaluator`, `iter_calc` and `calc_aggregate` (so `pt.Experiment(eval_metrics=...)`) compute with
Cranfield, including measures no other provider has. Skipped when ir_measures is not installed."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cranfield

irm = pytest.importorskip("ir_measures", reason="ir_measures not installed: the Cranfield provider plugs into it "
                                                "(pip install ir_measures)")


def _case(seed=0, topics=6):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for t in range(topics):
        docs = [f"d{i:02d}" for i in rng.choice(40, 18, replace=False)]
        qrels[f"t{t}"] = {d: int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for d in docs}
        run[f"t{t}"] = {f"d{i:02d}": float(rng.integers(0, 8)) for i in rng.choice(40, int(rng.integers(1, 30)),
                                                                                      replace=False)}
    return qrels, run


@pytest.fixture
def provider():
    p = cranfield.register_ir_measures()
    yield p
    cranfield.unregister_ir_measures()


NAMES = ["AP", "AP(rel=2)@10", "P@5", "P(judged_only=True)@10", "nDCG@10", "RR", "R@20", "Bpref", "infAP",
         "NumRet(rel=1)", "Judged@10", "IPrec@0.3", "SetF(beta=0.5)", "Success@3", "Rprec"]


def test_registered_provider_is_used_and_equals_cranfields_evaluator(provider):
    qrels, run = _case()
    assert irm.providers.registry["cranfield"] is provider
    measures = [irm.parse_measure(n) for n in NAMES]
    ev = irm.evaluator(measures, qrels)
    assert isinstance(ev, type(provider.evaluator(measures, qrels)))      # the Cranfield evaluator answers
    got = {(m.query_id, str(m.measure)): m.value for m in ev.iter_calc(run)}
    ours = cranfield.Evaluator(qrels, NAMES).evaluate(run)
    assert got == {(t, n): v for t, d in ours.items() for n, v in d.items()}
    agg = irm.calc_aggregate(measures, qrels, run)
    assert {str(k): v for k, v in agg.items()} == pytest.approx(
        {n: np.mean([ours[t][n] for t in ours]) if n != "NumRet(rel=1)" else sum(ours[t][n] for t in ours)
         for n in NAMES})


def test_provider_values_equal_ir_measures_default_provider(provider):
    qrels, run = _case(1)
    qrels = {t: {d: g for d, g in v.items() if g >= 0} for t, v in qrels.items()}
    measures = [irm.parse_measure(n) for n in NAMES]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cranfield.unregister_ir_measures()
        want = {(m.query_id, str(m.measure)): m.value for m in irm.iter_calc(measures, qrels, run)}
        cranfield.register_ir_measures()
    got = {(m.query_id, str(m.measure)): m.value for m in irm.iter_calc(measures, qrels, run)}
    assert got == pytest.approx(want)


@pytest.mark.parametrize("name,cranfield_name", [
    ("xinfAP", "xinfAP"), ("statAP", "statAP"), ("RankEff", "RankEff"), ("GAP", "GAP"),
    ("Cranfield(spec='bpref_10')", "bpref_10"), ("Cranfield(spec='map@cond')", "map@cond"),
    ("Cranfield(spec='bpref_N')", "bpref_N"),
])
def test_measures_no_other_provider_has(provider, name, cranfield_name):
    qrels, run = _case(2)
    m = irm.parse_measure(name)
    assert provider.supports(m)
    others = [k for k, p in irm.providers.registry.items() if k != "cranfield" and p.is_available() and p.supports(m)]
    assert others == []
    got = {x.query_id: x.value for x in irm.iter_calc([m], qrels, run)}
    ours = cranfield.evaluate(qrels, run, [cranfield_name])
    assert got == pytest.approx(dict(zip(ours["topic"], ours["value"])))


def test_unregister_restores_the_default_pipeline():
    before = list(irm.DefaultPipeline.providers)
    cranfield.register_ir_measures()
    cranfield.register_ir_measures()                        # idempotent
    assert irm.DefaultPipeline.providers[0].NAME == "cranfield"
    cranfield.unregister_ir_measures()
    assert list(irm.DefaultPipeline.providers) == before and "cranfield" not in irm.providers.registry


def test_provider_accuracy_compat_cwl_and_diversity_equal_their_providers(provider):
    import pandas as pd
    qrels, run = _case(3)
    qrels = {t: {d: g for d, g in v.items() if g >= 0} for t, v in qrels.items()}
    run = {t: {d: s + 0.001 * i for i, (d, s) in enumerate(v.items())} for t, v in run.items()}   # no ties
    for name, other in (("Accuracy@10", "accuracy"), ("Compat(p=0.8)", "compat"), ("INST(max_rel=3)", "cwl_eval")):
        p = irm.providers.registry[other]
        if not p.is_available():
            continue
        m = irm.parse_measure(name)
        assert irm.calc_aggregate([m], qrels, run)[m] == pytest.approx(p.calc_aggregate([m], qrels, run)[m]), name
    rows = [(t, str(i % 3), d, g) for t, v in qrels.items() for i, (d, g) in enumerate(v.items())]
    sub = pd.DataFrame(rows, columns=["query_id", "iteration", "doc_id", "relevance"])
    m = irm.parse_measure("alpha_nDCG@10")
    if irm.providers.registry["pyndeval"].is_available():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = irm.providers.registry["pyndeval"].calc_aggregate([m], sub, run)[m]
        assert irm.calc_aggregate([m], sub, run)[m] == pytest.approx(want)
