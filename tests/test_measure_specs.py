"""Measures describe themselves: one output order for every measure (trec_eval's for trec_eval's), and typed
parameter specs that `cranfield measures` lists and the parser uses."""
from __future__ import annotations

import itertools

import pytest

from engine.measures import load_all, resolve
from engine.measures.registry import ORDER, REGISTRY, MeasureError, position

# trec_eval 10.0's measure table (measures.c, te_trec_measures) in its order, unj last (added in 10.0)
TREC_EVAL_ORDER = [
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG",
    "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
    "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "prefs_num_prefs_poss",
    "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
    "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap",
    "rbp", "rbp_resid", "unj"]


def test_every_measure_has_one_place_in_the_order_table():
    reg = load_all()
    assert len(set(ORDER)) == len(ORDER)
    places = {n: m.order for n, m in reg.items()}
    assert len(set(places.values())) == len(places), [
        (a, b) for a, b in itertools.combinations(places, 2) if places[a] == places[b]]
    for n, m in reg.items():
        assert m.order == position(n)
    # every table entry is a registered measure (or a name@k family with a registered member)
    for n in ORDER:
        assert n in reg or (n.endswith("@") and any(k.startswith(n) for k in reg)), n
    # trec_eval's measures keep trec_eval's order
    assert sorted(TREC_EVAL_ORDER, key=position) == TREC_EVAL_ORDER
    assert set(TREC_EVAL_ORDER) <= set(reg) and not any(reg[n].extension for n in TREC_EVAL_ORDER)


def test_output_order_does_not_follow_the_order_asked():
    load_all()
    # pairs that shared an order number before the table (cwl_eval's and ir_measures' vs trec_eval's prefs)
    for names in (["inst", "prefs_num_prefs_poss"], ["accuracy", "prefs_avgjg_Rnonrel_ret"],
                  ["compat", "prefs_pair_imp"], ["yaap", "prefs_simp", "map_avgjg"], ["gd_err@5", "gd_ndcg@30"]):
        got = [r.measure.name for r in resolve(names)]
        assert got == [r.measure.name for r in resolve(names[::-1])], names
    assert [r.measure.name for r in resolve(["yaap", "prefs_simp", "map_avgjg"])] == ["prefs_simp", "map_avgjg",
                                                                                      "yaap"]
    assert [r.measure.name for r in resolve(["gd_err@5", "gd_ndcg@30", "gd_ndcg@3"])] == [
        "gd_ndcg@3", "gd_ndcg@30", "gd_err@5"]


def test_a_measure_outside_the_table_cannot_register():
    from engine.measures.registry import Measure, register
    with pytest.raises(MeasureError, match="no place in"):
        register(Measure(name="not_in_the_table", compute=lambda r, p=(): None))
    assert "not_in_the_table" not in REGISTRY
