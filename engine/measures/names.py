"""Measure names people already type: Cranfield's and trec_eval's (`map`, `P.10`), their output names
(`P_10`, `ndcg_cut_10`), and ir_measures' (`AP`, `AP(rel=2)@100`, `nDCG@10`, `P@10`, `R@1000`, `RR`,
`Judged@10`), each resolved to a registered measure plus the evaluation options it implies.

>>> from engine.measures.names import translate
>>> translate("nDCG@10"), translate("AP(rel=2)@100"), translate("P_10")
(('ndcg_cut.10', {}), ('map_cut.100', {'rel_level': 2}), ('P.10', {}))
"""
from __future__ import annotations

import re

from ..errors import CranfieldError

# ir_measures name -> (Cranfield measure without cut-off, Cranfield measure with cut-off "@k")
IR_MEASURES: dict[str, tuple[str | None, str | None]] = {
    "AP": ("map", "map_cut"),
    "P": (None, "P"),
    "R": (None, "recall"),
    "RR": ("recip_rank", None),
    "nDCG": ("ndcg", "ndcg_cut"),
    "Rprec": ("Rprec", None),
    "Bpref": ("bpref", None),
    "infAP": ("infAP", None),
    "IPrec": (None, "iprec_at_recall"),
    "NumQ": ("num_q", None),
    "NumRel": ("num_rel", None),
    "NumRet": ("num_ret", None),
    "NumRelRet": ("num_rel_ret", None),
    "SetP": ("set_P", None),
    "SetR": ("set_recall", None),
    "SetF": ("set_F", None),
    "SetAP": ("set_map", None),
    "Success": (None, "success"),
    "Judged": (None, "judged"),
    "RBP": ("rbp", None),
    "ERR": (None, "gd_err@"),           # gdeval's ERR (the ir_measures ERR@k provider)
}
# ir_measures names Cranfield computes only from subtopic judgments (`cranfield eval -R diversity`)
DIVERSITY = {"alpha_nDCG", "ERR_IA", "nERR_IA", "P_IA", "AP_IA", "StRecall", "NRBP", "nNRBP"}
# ir_measures parameters Cranfield maps onto evaluation options or measure parameters
_OPTION_PARAMS = {"rel": "rel_level", "judged_only": "judged_only"}
_SPEC = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_\-]*)(?:\((?P<params>[^()]*)\))?(?:@(?P<cut>[^@\s]+))?$")


def _registered(name: str) -> bool:
    from .registry import REGISTRY, load_named, lookup
    if name in REGISTRY:
        return True
    if load_named([name]):
        return True
    if "@" in name:                        # a cut-off in the name (gd_err@20): its module registers the hook
        load_named([name.partition("@")[0]])
    return lookup(name) is not None


def _cranfield_spec(text: str) -> str | None:
    """`P.10`, `map`, a nickname, or an output name such as `P_10` / `ndcg_cut_10` as a Cranfield spec."""
    from .registry import nickname_members
    base = text.partition(".")[0]
    if nickname_members(base) or _registered(base):
        return text
    # output names: measure_param (trec_eval prints P_10, ndcg_cut_10, iprec_at_recall_0.10, recall_1000)
    if "_" in text and "." not in text:
        head, _, tail = text.rpartition("_")
        if head and tail and _registered(head) and re.fullmatch(r"[0-9.]+", tail):
            return f"{head}.{tail}"
    return None


def translate(name: str) -> tuple[str, dict]:
    """(Cranfield measure spec, evaluation-option overrides) for a name in any of the vocabularies."""
    if not isinstance(name, str) or not name.strip():
        raise CranfieldError(f"a measure name must be a non-empty string, got {name!r}")
    name = name.strip()
    spec = _cranfield_spec(name)
    if spec is not None:
        return spec, {}
    m = _SPEC.match(name)
    if m and m.group("name") in DIVERSITY:
        raise CranfieldError(f"measure {name!r} needs subtopic (diversity) judgments: Cranfield computes it "
                             f"with ndeval's definitions in `cranfield eval -R diversity QRELS RUN`")
    if m and m.group("name") in IR_MEASURES:
        plain, cut = IR_MEASURES[m.group("name")]
        opts: dict = {}
        mparams: list[str] = []
        for part in filter(None, (p.strip() for p in (m.group("params") or "").split(","))):
            k, eq, v = part.partition("=")
            k, v = k.strip(), v.strip()
            if not eq:
                raise CranfieldError(f"measure {name!r}: parameter {part!r} must be name=value")
            if k == "rel":
                opts["rel_level"] = _int(v, name, k)
            elif k == "judged_only":
                opts["judged_only"] = v.lower() in ("true", "1", "yes")
            elif k == "p" and m.group("name") == "RBP":
                mparams.append(f"p={float(v)}")
            elif k == "dcg" and m.group("name") == "nDCG" and v in ("log2", "exp-log2"):
                if v == "exp-log2":
                    raise CranfieldError(f"measure {name!r}: Cranfield's nDCG uses trec_eval's linear gains; "
                                         f"exp-log2 gains are not supported")
            else:
                raise CranfieldError(f"measure {name!r}: parameter {k!r} is not supported by Cranfield")
        c = m.group("cut")
        target = cut if c is not None else plain
        if target is None:
            need = "a cut-off (@k)" if c is None else "no cut-off"
            raise CranfieldError(f"measure {name!r}: {m.group('name')} takes {need} in Cranfield")
        if not _registered(target + (c if target.endswith("@") else "")):
            raise CranfieldError(f"measure {name!r}: ir_measures' {m.group('name')} corresponds to Cranfield's "
                                 f"{target!r}, which is not available in this installation")
        if target.endswith("@"):                  # the cut-off is part of the name (gd_err@20)
            return f"{target}{c}", opts
        ptxt = ",".join(([c] if c is not None else []) + mparams)
        return (f"{target}.{ptxt}" if ptxt else target), opts
    raise CranfieldError(f"unknown measure {name!r}{suggest(name)}; cranfield.measures() "
                         f"(or `cranfield measures`) lists them all")


def _int(v: str, name: str, k: str) -> int:
    try:
        return int(v)
    except ValueError:
        raise CranfieldError(f"measure {name!r}: {k} must be an integer, got {v!r}") from None


def vocabulary() -> list[str]:
    """Every measure name and alias Cranfield accepts (registered names and ir_measures' names)."""
    from . import load_all
    reg = load_all()
    return sorted(set(reg) | set(IR_MEASURES))


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
            elif cut and w not in IR_MEASURES:
                hits.append(f"{w}.{cut}")
            else:
                hits.append(w)
    hits = list(dict.fromkeys(hits))[:5]
    return f" (did you mean {', '.join(hits)}?)" if hits else ""


def to_requests(names, base_options) -> list[tuple[object, list, dict]]:
    """Group measure names by the evaluation options they imply: [(options, requests, {output name: [user
    names]})]. Each name is resolved on its own, so two cut-offs of one measure are both kept; a name
    giving several values (`P.5,10`, `official`) keeps the output names."""
    import dataclasses

    from .registry import resolve

    if isinstance(names, str):
        names = [names]
    if not names:
        raise CranfieldError("no measures given")
    groups: dict = {}
    for user in names:
        spec, opts = translate(user)
        opt = dataclasses.replace(base_options, **opts) if opts else base_options
        reqs, seen, mapping = groups.setdefault(opt, ([], set(), {}))
        got = resolve([spec])
        outs = [n for req in got for n in req.names]
        for req in got:
            key = (req.measure.name, req.params)
            if key not in seen:
                seen.add(key)
                reqs.append(req)
        for n in outs:
            label = user if len(outs) == 1 else n
            if label not in mapping.setdefault(n, []):
                mapping[n].append(label)
    return [(opt, reqs, m) for opt, (reqs, _, m) in groups.items()]
