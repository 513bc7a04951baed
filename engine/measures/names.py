"""The one request parser for measure names: Cranfield's and trec_eval's (`map`, `P.10`, `P.5,10`), their
output names (`P_10`, `ndcg_cut_10`, pytrec_eval's `P_5,10`), and ir_measures' with every alias and form
(`AP`, `MAP`, `AP(rel=2)@100`, `nDCG@10`, `nDCG(dcg='exp-log2')@10`, `P(judged_only=True)@10`, `RR@10`,
`SetP(relative=True)`, `SetF(beta=0.5)`, `IPrec@0.3`, `Judged`, `NumRet(rel=1)`, ...). Each name resolves to
a registered measure plus the evaluation options it implies; options that change the ranked list
(`judged_only`, depth, relevance level, trec_eval version, gains) identify the measure's input, so they are
never shared between names (`to_requests` groups by them).

ir_measures' names mean what ir_measures' default provider computes: IPrec follows pytrec_eval (trec_eval
9.x recall cut-offs), RBP's persistence defaults to 0.8, NumRet(rel=k) counts relevant retrieved documents.

>>> from engine.measures.names import translate
>>> translate("nDCG@10"), translate("AP(rel=2)@100"), translate("P_10")
(('ndcg_cut.10', {}), ('map_cut.100', {'rel_level': 2}), ('P.10', {}))
"""
from __future__ import annotations

import ast
import re

from ..errors import CranfieldError

# ir_measures name -> (Cranfield measure without cut-off, Cranfield measure with cut-off "@k")
IR_MEASURES: dict[str, tuple[str | None, str | None]] = {
    "AP": ("map", "map_cut"),
    "P": (None, "P"),
    "R": (None, "recall"),
    "RR": ("recip_rank", "recip_rank"),      # RR@k: the first k documents (ir_measures' msmarco provider)
    "nDCG": ("ndcg", "ndcg_cut"),
    "Rprec": ("Rprec", None),
    "Bpref": ("bpref", None),
    "infAP": ("infAP", None),
    "IPrec": (None, "iprec_at_recall"),
    "NumQ": ("num_q", None),
    "NumRel": ("num_rel", None),
    "NumRet": ("num_ret", None),             # NumRet(rel=k): num_rel_ret at level k (ir_measures' meaning)
    "NumRelRet": ("num_rel_ret", None),
    "SetP": ("set_P", "set_P"),              # SetP@k, SetR@k, SetF@k: the set of the first k documents
    "SetR": ("set_recall", "set_recall"),
    "SetF": ("set_F", "set_F"),
    "SetAP": ("set_map", None),
    "Success": (None, "success"),
    "Judged": ("judged", "judged"),
    "RBP": ("rbp", "rbp"),
    "ERR": ("gd_err@", "gd_err@"),           # gdeval's ERR (ir_measures' ERR@k provider); ERR: whole ranking
    "Accuracy": ("accuracy", "accuracy"),    # Accuracy@k: over the first k documents
    "Compat": ("compat", None),
}
# ir_measures' other spellings of the same measures
ALIASES = {"MAP": "AP", "MRR": "RR", "NDCG": "nDCG", "BPref": "Bpref", "RPrec": "Rprec", "Precision": "P",
           "Recall": "R", "SetRelP": "SetP", "MAP_IA": "AP_IA", "\u03b1_nDCG": "alpha_nDCG",
           "\u03b1_DCG": "alpha_DCG"}
# ir_measures' diversity names -> (ndeval's measure name (engine.measures.diversity), parameters, takes a cut-off); they
# need subtopic judgments (a subtopic / ir_measures' iteration column, or a qrels file's second column)
DIVERSITY: dict[str, tuple[str, set[str], bool]] = {
    "alpha_nDCG": ("alpha-nDCG", {"alpha", "rel", "judged_only"}, True),
    "alpha_DCG": ("alpha-DCG", {"alpha", "rel", "judged_only"}, True),
    "ERR_IA": ("ERR-IA", {"rel", "judged_only"}, True), "nERR_IA": ("nERR-IA", {"rel", "judged_only"}, True),
    "P_IA": ("P-IA", {"rel", "judged_only"}, True), "AP_IA": ("MAP-IA", {"rel", "judged_only"}, False),
    "StRecall": ("strec", {"rel"}, True), "NRBP": ("NRBP", {"alpha", "beta", "rel"}, False),
    "nNRBP": ("nNRBP", {"alpha", "beta", "rel"}, False),
}
NDEVAL = "ndeval:"          # the spec prefix of a diversity measure (`ndeval:alpha-nDCG@20`)
# parameters each ir_measures name takes in Cranfield (as ir_measures defines them)
_PARAMS: dict[str, set[str]] = {
    "AP": {"rel", "judged_only"}, "P": {"rel", "judged_only"}, "R": {"rel", "judged_only"},
    "RR": {"rel", "judged_only"}, "nDCG": {"dcg", "gains", "judged_only"}, "Rprec": {"rel", "judged_only"},
    "Bpref": {"rel"}, "infAP": {"rel"}, "IPrec": {"rel", "judged_only"}, "NumQ": set(), "NumRel": {"rel"},
    "NumRet": {"rel"}, "NumRelRet": {"rel"}, "SetP": {"rel", "relative", "judged_only"},
    "SetR": {"rel", "judged_only"}, "SetF": {"rel", "beta", "judged_only"}, "SetAP": {"rel", "judged_only"},
    "Success": {"rel", "judged_only"}, "Judged": set(), "RBP": {"p", "rel"}, "ERR": set(),
    "Accuracy": {"rel"}, "Compat": {"p", "normalize"},
}
# cwl_eval's C/W/L measures (engine.measures.m_cwl): ir_measures name -> (Cranfield measure, parameters,
# whether a cut-off is required (it becomes k))
CWL: dict[str, tuple[str, set[str], bool]] = {
    "INST": ("inst", {"T", "min_rel", "max_rel"}, False), "INSQ": ("insq", {"T", "min_rel", "max_rel"}, False),
    "SDCG": ("sdcg", {"dcg", "min_rel", "max_rel"}, True), "NERR8": ("nerr8", {"min_rel", "max_rel"}, True),
    "NERR9": ("nerr9", {"min_rel", "max_rel"}, True), "NERR10": ("nerr10", {"p", "min_rel", "max_rel"}, False),
    "NERR11": ("nerr11", {"T", "min_rel", "max_rel"}, False), "BPM": ("bpm", {"T", "min_rel", "max_rel"}, True),
}
WHOLE_RANKING = 2 ** 31 - 1     # `Judged` without a cut-off: the whole ranking (min(k, retrieved) divides)
_IR_WORDS = set(IR_MEASURES) | set(ALIASES) | set(CWL) | set(DIVERSITY)


def _registered(name: str) -> bool:
    from .registry import REGISTRY, load_named, lookup
    if name in REGISTRY:
        return True
    if load_named([name]):
        return True
    if "@" in name:                        # a variant (gd_err@20, map@cond): the modules register the hooks
        load_named([name.partition("@")[0]])
        if lookup(name) is None:
            from . import load_all
            load_all()
    return lookup(name) is not None


def _cranfield_spec(text: str) -> str | None:
    """`P.10`, `map`, a nickname, or an output name such as `P_10` / `ndcg_cut_10` / `P_5,10` as a
    Cranfield spec."""
    from .registry import nickname_members
    base = text.partition(".")[0]
    if _registered(base) or nickname_members(base):
        return text
    # output names: measure_param (trec_eval prints P_10, ndcg_cut_10, iprec_at_recall_0.10, recall_1000;
    # pytrec_eval takes P_5,10)
    m = re.fullmatch(r"(.+?)_([0-9.]+(?:,[0-9.]+)*)", text)
    if m is not None and _registered(m.group(1)):
        return f"{m.group(1)}.{m.group(2)}"
    return None


def _parse_ir(name: str) -> tuple[str, dict, object] | None:
    """(measure name, parameters, cut-off or None) of an ir_measures-style name, or None."""
    try:
        node = ast.parse(name, mode="eval").body
    except SyntaxError:
        return None
    cut = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        try:
            cut = ast.literal_eval(node.right)
        except ValueError:
            return None
        node = node.left
    params: dict = {}
    if isinstance(node, ast.Call):
        if node.args:
            raise CranfieldError(f"measure {name!r}: parameters must be named (name=value)")
        for kw in node.keywords:
            if kw.arg is None or kw.arg in params:
                raise CranfieldError(f"measure {name!r}: parameter {kw.arg or '**'} given twice or unnamed")
            try:
                params[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                raise CranfieldError(f"measure {name!r}: parameter {kw.arg} must be a literal value") from None
        node = node.func
    if not isinstance(node, ast.Name):
        return None
    return node.id, params, cut


def _bool(v, name: str, k: str) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    raise CranfieldError(f"measure {name!r}: {k} must be True or False, got {v!r}")


def _int(v, name: str, k: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise CranfieldError(f"measure {name!r}: {k} must be an integer, got {v!r}")
    return int(v)


def _num(v, name: str, k: str, lo: float, hi: float, lo_open: bool = False) -> float:
    """A number parameter within [lo, hi] ((lo, hi] with lo_open)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or not (lo < v if lo_open else lo <= v) \
            or not v <= hi:
        where = f"{'(' if lo_open else '['}{lo:g}, {hi:g}]"
        raise CranfieldError(f"measure {name!r}: {k} must be a number in {where}, got {v!r}")
    return float(v)


def _gain_pairs(gains: dict, name: str) -> tuple:
    try:
        return tuple(sorted((_int(k, name, "a gains grade"), _num(v, name, "a gain", -1e300, 1e300))
                            for k, v in gains.items()))
    except AttributeError:
        raise CranfieldError(f"measure {name!r}: gains must be a dict grade -> gain") from None


def translate(name: str) -> tuple[str, dict]:
    """(Cranfield measure spec, evaluation-option overrides) for a name in any of the vocabularies.
    Overrides: rel_level, judged_only, max_depth, trec_eval_version, gains (a tuple of (grade, gain)),
    gains_exp (gains 2^grade - 1)."""
    if not isinstance(name, str) or not name.strip():
        raise CranfieldError(f"a measure name must be a non-empty string, got {name!r}")
    name = name.strip()
    spec = _cranfield_spec(name)
    if spec is not None:
        return spec, {}
    parsed = _parse_ir(name)
    if parsed is None or parsed[0] not in _IR_WORDS:
        from . import load_all
        load_all()                          # a nickname (official, all_trec) is known once every measure is
        spec = _cranfield_spec(name)
        if spec is not None:
            return spec, {}
    if parsed is None:
        raise CranfieldError(f"unknown measure {name!r}{suggest(name)}; cranfield.measures() "
                             f"(or `cranfield measures`) lists them all")
    base, params, cut = parsed
    if base == "SetRelP":
        params = {**params, "relative": True}
    base = ALIASES.get(base, base)
    if base in DIVERSITY:
        return _diversity(name, base, params, cut)
    if base in CWL:
        return _cwl(name, base, params, cut), {}
    if base not in IR_MEASURES:
        raise CranfieldError(f"unknown measure {name!r}{suggest(name)}; cranfield.measures() "
                             f"(or `cranfield measures`) lists them all")
    bad = sorted(set(params) - _PARAMS[base])
    if bad:
        raise CranfieldError(f"measure {name!r}: parameter {bad[0]!r} is not one of {base}'s "
                             f"({', '.join(sorted(_PARAMS[base])) or 'none'})")
    plain, with_cut = IR_MEASURES[base]
    opts: dict = {}
    mparams: list[str] = []
    if "rel" in params:
        opts["rel_level"] = _int(params["rel"], name, "rel")
    if _bool(params.get("judged_only", False), name, "judged_only"):
        opts["judged_only"] = True
    if base == "IPrec":
        opts["trec_eval_version"] = "9"          # pytrec_eval (ir_measures' provider) is trec_eval 9.x
    if base == "NumRet" and "rel" in params:
        plain = "num_rel_ret"
    if base == "SetP" and _bool(params.get("relative", False), name, "relative"):
        plain = with_cut = "set_relative_P"
    if base == "SetF" and "beta" in params:
        mparams.append(repr(_num(params["beta"], name, "beta", 0.0, 1e9)))
    if base == "nDCG":
        dcg = params.get("dcg", "log2")
        if dcg not in ("log2", "exp-log2"):
            raise CranfieldError(f"measure {name!r}: dcg must be 'log2' or 'exp-log2', got {dcg!r}")
        if "gains" in params:
            if not isinstance(params["gains"], dict):
                raise CranfieldError(f"measure {name!r}: gains must be a dict grade -> gain")
            opts["gains"] = _gain_pairs(params["gains"], name)
        if dcg == "exp-log2":
            opts["gains_exp"] = True
    if base == "RBP":
        mparams.append(f"p={_num(params.get('p', 0.8), name, 'p', 0.0, 1.0, True)!r}")   # ir_measures' default
        if "rel" in params:                         # binary: grades >= rel gain 1
            opts["gains_binary"] = opts.pop("rel_level")
    if cut is not None:
        if isinstance(cut, bool) or not isinstance(cut, (int, float)):
            raise CranfieldError(f"measure {name!r}: the cut-off must be a number, got {cut!r}")
        if base == "IPrec":
            _num(cut, name, "the recall level", 0.0, 1.0)
        elif not float(cut).is_integer() or cut <= 0:
            raise CranfieldError(f"measure {name!r}: the cut-off must be a positive integer, got {cut!r}")
    target = with_cut if cut is not None else plain
    if target is None:
        need = "a cut-off (@k)" if cut is None else "no cut-off"
        raise CranfieldError(f"measure {name!r}: {base} takes {need}")
    if base == "Judged":
        mparams.insert(0, str(int(cut) if cut is not None else WHOLE_RANKING))
    elif base == "Compat":
        mparams += [f"p={_num(params.get('p', 0.95), name, 'p', 0.0, 1.0, True)!r}",
                    f"normalize={int(_bool(params.get('normalize', True), name, 'normalize'))}"]
    elif base == "Accuracy":
        if cut is not None:
            mparams.insert(0, f"k={int(cut)}")
    elif cut is not None and target in ("recip_rank", "set_P", "set_relative_P", "set_recall", "set_F", "rbp"):
        opts["max_depth"] = int(cut)              # the measure over the first k documents
        if base == "RR":
            opts["ascending_ties"] = True         # as ir_measures' RR@k provider (msmarco) orders ties
    elif cut is not None and not target.endswith("@"):
        mparams.insert(0, str(int(cut)) if base != "IPrec" else repr(float(cut)))
    k = int(cut) if cut is not None else WHOLE_RANKING
    if not _registered(target + (str(k) if target.endswith("@") else "")):
        raise CranfieldError(f"measure {name!r}: ir_measures' {base} corresponds to Cranfield's {target!r}, "
                             f"which is not available in this installation")
    if target.endswith("@"):                      # the cut-off is part of the name (gd_err@20)
        return f"{target}{k}", opts
    ptxt = ",".join(mparams)
    return (f"{target}.{ptxt}" if ptxt else target), opts


def _diversity(name: str, base: str, params: dict, cut) -> tuple[str, dict]:
    """The spec and options of a diversity measure (ndeval's definitions, engine.measures.diversity)."""
    target, allowed, needs_cut = DIVERSITY[base]
    bad = sorted(set(params) - allowed)
    if bad:
        raise CranfieldError(f"measure {name!r}: parameter {bad[0]!r} is not one of {base}'s "
                             f"({', '.join(sorted(allowed))})")
    if needs_cut != (cut is not None):
        raise CranfieldError(f"measure {name!r}: {base} takes {'a cut-off (@k)' if needs_cut else 'no cut-off'}")
    opts: dict = {}
    if "rel" in params:
        opts["rel_level"] = _int(params["rel"], name, "rel")
    if _bool(params.get("judged_only", False), name, "judged_only"):
        opts["judged_only"] = True
    ab = []
    for k in ("alpha", "beta"):
        v = params.get(k, 0.5)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
            raise CranfieldError(f"measure {name!r}: {k} must be a number in [0, 1], got {v!r}")
        ab.append(float(v))
    opts["diversity"] = tuple(ab)
    if cut is not None and _int(cut, name, "the cut-off") < 1:
        raise CranfieldError(f"measure {name!r}: the cut-off must be a positive integer, got {cut!r}")
    return NDEVAL + target + (f"@{_int(cut, name, 'the cut-off')}" if cut is not None else ""), opts


def _cwl(name: str, base: str, params: dict, cut) -> str:
    """The Cranfield spec of one of cwl_eval's measures (`inst.T=1,max_rel=3,min_rel=0`)."""
    target, allowed, needs_cut = CWL[base]
    bad = sorted(set(params) - allowed)
    if bad:
        raise CranfieldError(f"measure {name!r}: parameter {bad[0]!r} is not one of {base}'s "
                             f"({', '.join(sorted(allowed))})")
    if "max_rel" not in params:
        raise CranfieldError(f"measure {name!r}: {base} needs max_rel, the highest grade (e.g. {base}(max_rel=3)"
                             f"{'@10' if needs_cut else ''}), as in ir_measures")
    if params.get("dcg", "log2") != "log2":
        raise CranfieldError(f"measure {name!r}: SDCG's dcg must be 'log2'")
    if needs_cut != (cut is not None):
        raise CranfieldError(f"measure {name!r}: {base} takes {'a cut-off (@k)' if needs_cut else 'no cut-off'}")
    if cut is not None and _int(cut, name, "the cut-off") < 1:
        raise CranfieldError(f"measure {name!r}: the cut-off must be a positive integer, got {cut!r}")
    pairs = [("k", _int(cut, name, "the cut-off"))] if cut is not None else []
    for k in ("T", "p", "min_rel", "max_rel"):
        if k in params:
            v = params[k]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise CranfieldError(f"measure {name!r}: {k} must be a number, got {v!r}")
            pairs.append((k, v))
    if not _registered(target):
        raise CranfieldError(f"measure {name!r}: Cranfield's {target!r} is not available in this installation")
    return f"{target}." + ",".join(f"{k}={float(v)!r}" for k, v in pairs)


def vocabulary() -> list[str]:
    """Every measure name and alias Cranfield accepts (registered names and ir_measures' names)."""
    from . import load_all
    reg = load_all()
    return sorted(set(reg) | set(IR_MEASURES) | set(ALIASES) | set(CWL) | set(DIVERSITY))


def suggest(name: str) -> str:
    """' (did you mean X, Y?)' from both vocabularies (with the cut-off typed, if any), or ''."""
    import difflib

    m = re.match(r"^([^.@(]*)(?:\([^)]*\))?(?:[.@](\S+))?$", name)
    base, cut = (m.group(1), m.group(2)) if m else (name, None)
    words = vocabulary()
    by_lower: dict[str, list[str]] = {}
    for w in words:
        by_lower.setdefault(w.lower(), []).append(w)
    close = difflib.get_close_matches(base.lower(), list(by_lower), n=4, cutoff=0.6)
    if base.lower() in ("ap", "mean_ap", "meanap") and "map" not in close:
        close.insert(0, "map")
    hits = []
    for c in close:
        for w in sorted(by_lower[c], key=lambda w: w not in IR_MEASURES):   # ir_measures' spelling first
            if cut and w in IR_MEASURES and IR_MEASURES[w][1]:
                hits.append(f"{w}@{cut}")
            elif cut and w not in IR_MEASURES and w not in ALIASES:
                hits.append(f"{w}.{cut}")
            else:
                hits.append(w)
    hits = list(dict.fromkeys(hits))[:5]
    return f" (did you mean {', '.join(hits)}?)" if hits else ""


LIST_OPTIONS = ("max_depth", "judged_only")     # EvalOptions fields that change the ranked lists


def to_requests(names, base_options, *, trec_labels: bool = False) -> list[tuple[object, list, dict]]:
    """Group measure names by the evaluation options they imply: [((options, gains), requests, {output name:
    [user names]})]. Each name is resolved on its own, so two cut-offs of one measure are both kept; a name
    giving several values (`P.5,10`, `official`) keeps the output names. `gains`: None, a tuple of (grade,
    gain) pairs, ("exp",) for 2^grade - 1, or ("binary", k) for grade >= k -> 1; ("ndeval", alpha, beta)
    marks a group of diversity measures (its requests are ndeval's measure names)."""
    import dataclasses

    from .registry import resolve

    if isinstance(names, str):
        names = [names]
    groups: dict = {}
    for user in names:
        spec, opts = translate(user)
        opts = dict(opts)
        gains = opts.pop("gains", None)
        if opts.pop("gains_exp", False):
            gains = ("exp",) if gains is None else ("exp", gains)
        if "gains_binary" in opts:
            gains = ("binary", opts.pop("gains_binary"))
        if "diversity" in opts:
            gains = ("ndeval",) + opts.pop("diversity")          # (alpha, beta): one ndeval pass
        if "max_depth" in opts and base_options.max_depth is not None:
            opts["max_depth"] = min(opts["max_depth"], base_options.max_depth)
        opt = dataclasses.replace(base_options, **opts) if opts else base_options
        reqs, seen, mapping = groups.setdefault((opt, gains), ([], set(), {}))
        if spec.startswith(NDEVAL):                       # ndeval's measures: requests are their names
            out = spec[len(NDEVAL):]
            if out not in seen:
                seen.add(out)
                reqs.append(out)
            if user not in mapping.setdefault(out, []):
                mapping[out].append(user)
            continue
        got = resolve([spec])
        outs = [n for req in got for n in req.names]
        for req in got:
            key = (req.measure.name, req.params)
            if key not in seen:
                seen.add(key)
                reqs.append(req)
        for n in outs:
            label = user if len(outs) == 1 and not (trec_labels and spec == user) else n
            if label not in mapping.setdefault(n, []):
                mapping[n].append(label)
    return [(key, reqs, m) for key, (reqs, _, m) in groups.items()]


def plain(names) -> bool:
    """Whether every name is a Cranfield / trec_eval spec (the engine's own paths take them as they are)."""
    return all(translate(n) == (n, {}) for n in ([names] if isinstance(names, str) else names))


def evaluate_named(names, base_options, evaluate_specs):
    """A long table (run, topic, measure, value) for measure names of any vocabulary through an engine
    evaluation `evaluate_specs(specs, options)` (a campaign's cached evaluation, ...): one call per set of
    options the names imply, values labelled with the names asked (trec_eval's output names for
    Cranfield's), measures in the order asked."""
    import pandas as pd

    names = [names] if isinstance(names, str) else list(names)
    parts, labels = [], []
    for (opt, gains), reqs, mapping in to_requests(names, base_options, trec_labels=True):
        if gains is not None:
            raise CranfieldError(f"measure(s) {', '.join(u for us in mapping.values() for u in us)}: gains given "
                                 f"in the name are computed by cranfield.evaluate / Evaluator, not on this path")
        specs = [f"{r.measure.name}.{r.param_text}" if r.param_text is not None else r.measure.name for r in reqs]
        df = evaluate_specs(specs, opt)
        meas = df["measure"].astype(str)
        for n, users in mapping.items():
            sub = df[meas == n]
            for u in users:
                parts.append(sub.assign(measure=u))
                labels.append(u)
    order = [u for u in dict.fromkeys(_labels_in_order(names, base_options)) if u in labels]
    if not parts:
        return pd.DataFrame({"run": pd.Categorical([]), "topic": [], "measure": pd.Categorical([]), "value": []})
    long = pd.concat(parts, ignore_index=True)
    long["measure"] = pd.Categorical(long["measure"].astype(str), categories=order)
    runs = list(dict.fromkeys(long["run"].astype(str)))
    long["run"] = pd.Categorical(long["run"].astype(str), categories=runs)
    return long.sort_values(["run", "measure"], kind="stable").reset_index(drop=True)


def _labels_in_order(names, base_options) -> list[str]:
    """The labels of `names` (as `to_requests` gives them with trec_labels) in the order asked."""
    out = []
    for n in names:
        for _, _, mapping in to_requests([n], base_options, trec_labels=True):
            out += [u for us in mapping.values() for u in us]
    return out
