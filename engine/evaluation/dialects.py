"""Measure requests in the ecosystem's dialects, converted at the front door into the one request parser's
names (`engine.measures.names`): ir_measures' measure objects (`AP`, `nDCG@10`, `P(rel=2)@10`,
`ir_measures.parse_measure(...)` results, Cranfield's own `Cranfield(spec=...)`) and ranx's metric names
(`hits@10`, `precision@10`, `recall@10`, `f1@10`, `mrr@10`, `map@10`, `ndcg@10`, `ndcg_burges@10`,
`hit_rate@10`, `r-precision`, `bpref`). Results are keyed the way the caller asked: objects in, objects out.

A ranx name is read as ranx's only when the request parser does not know it (`map`, `bpref`, `recall`
and `ndcg` keep trec_eval's meaning, which equals ranx's for `map`, `bpref` and `ndcg`). Two ranx
measures are derived from trec_eval's: `hits@k` = k x `P@k` (relevant documents in the first k) and
`f1@k` = the harmonic mean of `P@k` and `R@k` (0 when both are 0), as ranx defines them.

>>> req = request(["P@5", "hits@5"])
>>> req.names, req.outputs
(['P@5'], ['P@5', 'hits@5'])
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# trec_eval 9.x's measure families and nicknames, as pytrec_eval exposes them
SUPPORTED_MEASURES = frozenset({
    "11pt_avg", "G", "P", "Rndcg", "Rprec", "Rprec_mult", "binG", "bpref", "gm_bpref", "gm_map", "infAP",
    "iprec_at_recall", "map", "map_cut", "ndcg", "ndcg_cut", "ndcg_rel", "num_nonrel_judged_ret", "num_q",
    "num_rel", "num_rel_ret", "num_ret", "recall", "recip_rank", "relative_P", "relstring", "runid", "set_F",
    "set_P", "set_map", "set_recall", "set_relative_P", "success", "utility"})
NICKNAMES = {
    "official": frozenset({"gm_map", "num_ret", "bpref", "iprec_at_recall", "num_rel_ret", "map", "recip_rank",
                           "num_q", "num_rel", "Rprec", "P", "runid"}),
    "set": frozenset({"set_F", "num_ret", "set_relative_P", "num_rel_ret", "set_map", "num_q", "utility",
                      "num_rel", "set_recall", "set_P", "runid"}),
    "all_trec": SUPPORTED_MEASURES,
}
_RANX = re.compile(r"^(hits|hit_rate|precision|recall|f1|mrr|map|ndcg|ndcg_burges|r-precision|r_precision|bpref)"
                   r"(?:@(\d+))?$")


def is_measure_object(m) -> bool:
    """Whether `m` is an ir_measures measure object (duck-typed: ir_measures is not imported here)."""
    return not isinstance(m, str) and hasattr(m, "NAME") and hasattr(m, "params") and hasattr(m, "SUPPORTED_PARAMS")


def object_name(m) -> str:
    """The request parser's name for an ir_measures measure object (`Cranfield(spec=...)`: the spec)."""
    if getattr(m, "NAME", None) == "Cranfield":
        return str(m["spec"])
    return str(m)


_KEYED: dict = {}


def _cached_hash(self) -> int:
    h = self.__dict__.get("_cranfield_hash")
    return h if h is not None else hash(repr(self))


def _plain_call(self, **kwargs):
    params = dict(self.params)
    params.update(kwargs)
    return type(self).__mro__[1](**params)


def _plain(base, state):
    obj = base.__new__(base)
    obj.__dict__.update(state)
    return obj


def _reduce_ex(self, protocol):
    state = {k: v for k, v in self.__dict__.items() if k != "_cranfield_hash"}
    return _plain, (type(self).__mro__[1], state)


def hash_once(m):
    """`m` (an ir_measures measure object) as a result key hashed once: an equal copy whose hash is
    computed now and kept (ir_measures hashes a measure by building its repr, which a dict of results pays
    at every insertion). It is an instance of a subclass of `type(m)` with the same names; measures derived
    from it (`key(rel=2)`, `key @ 5`), its copies and its pickles are ordinary objects of `type(m)`."""
    base = type(m)
    if base.__dict__.get("__hash__") is _cached_hash or not hasattr(m, "__dict__"):
        return m
    cls = _KEYED.get(base)
    if cls is None:
        cls = _KEYED[base] = type(base.__name__, (base,), {
            "__module__": base.__module__, "__qualname__": base.__qualname__, "__hash__": _cached_hash,
            "__eq__": base.__eq__, "__call__": _plain_call, "__reduce_ex__": _reduce_ex})
    key = cls.__new__(cls)
    key.__dict__.update(m.__dict__)
    key.__dict__["_cranfield_hash"] = hash(m)
    return key


def _ranx(name: str):
    """(parts, combine) of a ranx metric name the parser does not know, else None. `parts`: parser names;
    `combine(values)`: the ranx value from the parts' values (None: the one part as it is)."""
    m = _RANX.match(name)
    if not m:
        return None
    base, k = m.group(1), m.group(2)
    at = f"@{k}" if k else ""
    simple = {"hit_rate": "Success", "mrr": "RR", "map": "AP", "ndcg": "nDCG", "ndcg_burges": "nDCG(dcg='exp-log2')",
              "r-precision": "Rprec", "r_precision": "Rprec", "bpref": "Bpref"}
    if base in simple:
        if base in ("hit_rate",) and not k:
            return None
        if base in ("r-precision", "r_precision", "bpref") and k:
            return None
        return [simple[base] + at], None
    if base == "precision":
        return [f"P@{k}" if k else "SetP"], None
    if base == "recall":
        return [f"R@{k}" if k else "SetR"], None
    if base == "hits":
        if not k:
            return ["NumRelRet"], None
        kk = int(k)
        return [f"P@{k}"], lambda v: float(round(v[0] * kk))
    if base == "f1":
        parts = [f"P@{k}", f"R@{k}"] if k else ["SetP", "SetR"]
        return parts, lambda v: 0.0 if v[0] + v[1] == 0 else 2 * v[0] * v[1] / (v[0] + v[1])
    return None


@dataclass
class Request:
    """Measures as asked, converted: `names` for the request parser, `outputs` the caller's keys in the
    order asked, `keys` parser label -> caller's keys, `derived` (key, parser labels, combine)."""

    names: list
    outputs: list
    keys: dict = field(default_factory=dict)
    derived: list = field(default_factory=list)
    plain: bool = True              # every measure a string the parser reads as it is

    def key_of(self, label):
        """The caller's keys for one parser label."""
        return self.keys.get(label, (label,))


def request(measures) -> Request:
    """The `Request` for `measures` (a name, a measure object or an iterable of them)."""
    from ..errors import CranfieldError
    from ..measures.names import translate

    if isinstance(measures, str) or is_measure_object(measures):
        measures = [measures]
    names: list = []
    outputs: list = []
    keys: dict = {}
    derived: list = []
    plain = True
    for m in measures:
        if is_measure_object(m):
            name = object_name(m)
            plain = False
            names.append(name)
            keys.setdefault(name, [])
            if m not in keys[name]:
                keys[name].append(m)
            outputs.append(m)
            continue
        if not isinstance(m, str) or not m:
            raise CranfieldError(f"a measure must be a non-empty name or an ir_measures measure object, got {m!r}")
        try:
            translate(m)
        except CranfieldError as e:
            got = _ranx(m)
            if got is None:
                raise e from None
            parts, combine = got
            plain = False
            names += parts
            outputs.append(m)
            if combine is None:
                keys.setdefault(parts[0], [])
                if m not in keys[parts[0]]:
                    keys[parts[0]].append(m)
            else:
                derived.append((m, parts, combine))
            continue
        names.append(m)
        outputs.append(m)
        if m in keys and m not in keys[m]:
            keys[m].append(m)
    # a parser label asked for itself keeps its own key beside its dialect keys
    for label, ks in keys.items():
        if label in outputs and label not in ks:
            ks.insert(0, label)
    visible = set(outputs)
    for _, parts, _ in derived:
        for p in parts:
            if p not in keys and p not in visible:
                keys[p] = []                # a hidden part: computed for a derived measure only
    return Request(list(dict.fromkeys(names)), list(dict.fromkeys(outputs)), keys, derived, plain)


def apply(req: Request, values):
    """Re-key (label, topics, column) triples from `Evaluator.values` to the caller's keys and add the
    derived measures."""
    import numpy as np

    stash: dict = {}
    need = {p for _, parts, _ in req.derived for p in parts}
    for label, topics, col in values:
        if label in need:
            stash[label] = (topics, np.asarray(col, np.float64))
        for k in req.key_of(label):
            yield k, topics, col
    for key, parts, combine in req.derived:
        topics = stash[parts[0]][0]
        cols = [stash[p][1] for p in parts]
        yield key, topics, np.asarray([combine([c[i] for c in cols]) for i in range(len(topics))], np.float64)


def for_version(names: list, version: str) -> list:
    """`names` with trec_eval 9.x's `all_trec` (without 10.0's rbp, rbp_resid and unj) when `version` is "9"."""
    if version != "9" or "all_trec" not in names:
        return names
    out: list = []
    for n in names:
        out += sorted(NICKNAMES["all_trec"]) if n == "all_trec" else [n]
    return list(dict.fromkeys(out))
