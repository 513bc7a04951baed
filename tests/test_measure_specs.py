"""Measures describe themselves: one output order for every measure (trec_eval's for trec_eval's), and typed
parameter specs that `cranfield measures` lists and the parser uses."""
from __future__ import annotations

import itertools

import pytest
from test_measures_fresh_process import sampled  # noqa: F401  (the prels and sample_eval files)

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
    for n, m in reg.items():         # a condensed variant (map@cond, made on first use) follows its measure
        assert m.order == (position(n[:-5]) + 0.5 if n.endswith("@cond") else position(n)), n
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


# ---------------------------------------------------------------- parameter specs

def _accepts_parameters(m) -> bool:
    from engine.measures.params import KVMeasure
    return m.param_kind != "none" or isinstance(m, KVMeasure)


def test_every_measure_that_takes_parameters_has_specs():
    from engine.measures.specs import TYPES
    reg = load_all()
    with_specs = [n for n, m in reg.items() if m.param_specs]
    assert len(with_specs) >= 40
    for n, m in reg.items():
        assert _accepts_parameters(m) == bool(m.param_specs), n
        if not m.param_specs:
            with pytest.raises(MeasureError, match="takes no parameters"):
                m.parse_params("1")
            continue
        names = [s.name for s in m.param_specs]
        assert len(set(names)) == len(names), n
        for s in m.param_specs:
            assert s.type in TYPES and s.doc and (s.default is not None or s.default_text), (n, s)
    # the measures `cranfield measures` said took none
    assert {s.name for s in reg["GAP"].param_specs} == {"g"}
    assert {s.name for s in reg["ndcgx"].param_specs} == {"gains", "disc", "b", "a", "k", "dvec"}
    assert {s.name for s in reg["xinfAP"].param_specs} == {"cutoff"}


def test_the_parser_checks_values_against_the_specs():
    load_all()
    for spec, msg in [("accuracy.k=2.5", "k=2.5 is not an integer"), ("compat.normalize=2", "one of 0, 1"),
                      ("ndcgx.disc=cosine", "is not one of log"), ("ndcgx.k=0", "at least 1"),
                      ("inst.x=1", "unknown parameter 'x'"), ("Q.beta=abc", "beta='abc' is not a number"),
                      ("Q.beta=-1", "beta must be at least 0"), ("GAP.g=0.5:x", "numbers separated by ':'"),
                      ("xinfAP.cutoff=ten", "is not an integer"), ("rbp.p=inf", "not a finite number")]:
        with pytest.raises(MeasureError, match=msg):
            resolve([spec])
    # what the specs allow goes through, converted as before
    assert resolve(["ndcgx.disc=log10,k=5"])[0].params == (("disc", "log10"), ("k", "5"))
    assert resolve(["GAP.g=0.3:0.7"])[0].params == (("g", "0.3:0.7"),)
    assert resolve(["sdcg.k=10.0,max_rel=1"])[0].params == (("k", 10.0), ("max_rel", 1.0))
    assert resolve(["ndcg.1=3,2=9"])[0].params == (("1", 3.0), ("2", 9.0))
    assert resolve(["ndcg.foo=3"])[0].params == (("foo", 3.0),)      # trec_eval's measures ignore other names


def _explicit_defaults(m) -> list[str]:
    """Requests giving each default of `m` explicitly (the positional ones together)."""
    from engine.measures.specs import GRADE
    specs = [s for s in m.param_specs if s.default is not None and s.name != GRADE]
    if m.param_kind in ("int_cut", "float_cut", "float_params"):
        return [f"{m.name}." + ",".join(s.shown_default for s in m.param_specs)]
    return [f"{m.name}.{s.name}={s.shown_default}" for s in specs]


def _values(argv, capsys) -> list[tuple[str, str]]:
    from cranfield.cli import main
    assert main(argv) == 0
    return [tuple(ln.split("\t")[1:]) for ln in capsys.readouterr().out.splitlines()]


def _spec_cases():
    reg = load_all()
    return [(n, e) for n in sorted(reg) for e in _explicit_defaults(reg[n]) if reg[n].param_specs]


@pytest.mark.parametrize("name,explicit", _spec_cases())
def test_a_default_given_explicitly_changes_nothing(name, explicit, sampled, capsys):  # noqa: F811
    from test_measures_fresh_process import _args
    data = _args(name, sampled)
    plain = _values(["eval", "-q", "-m", name, *data], capsys)
    given = _values(["eval", "-q", "-m", explicit, *data], capsys)
    assert len(plain) >= 2 and given == plain, explicit


def test_cranfield_measures_lists_every_parameter():
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    res = subprocess.run([sys.executable, "-m", "cranfield.cli", "measures"], capture_output=True, text=True,
                         env=env, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    heads = {ln.split()[0]: i for i, ln in enumerate(lines) if not ln.startswith(" ")}
    reg = load_all()
    assert set(heads) <= set(reg) and all("@" in n for n in set(reg) - set(heads))   # variants made on first use
    for n, i in heads.items():
        m = reg[n]
        below = lines[i + 1:i + 1 + len(m.param_specs)]
        assert [ln.split()[:2] for ln in below] == [[s.name, s.type] for s in m.param_specs], n
        for ln, s in zip(below, m.param_specs):
            assert f"default {s.shown_default}" in ln and s.doc in ln, (n, ln)
    res = subprocess.run([sys.executable, "-m", "cranfield.cli", "measures", "GAP", "ndcgx", "xinfAP"],
                         capture_output=True, text=True, env=env, timeout=120, check=False)
    assert res.returncode == 0 and "(none)" not in res.stdout
    for word in ("g ", "disc", "dvec", "cutoff", "default 1000", "default log"):
        assert word in res.stdout, word
