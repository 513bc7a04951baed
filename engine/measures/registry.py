"""Measure registry: each measure is one small unit registered by name (as trec_eval's m_*.c files).

A measure computes, from a `Ranked` structure, one value per (run, topic) group, or one column per
parameter (cut-off). Averaging over topics, printing and the -c fill value are declared, not coded.
"""
from __future__ import annotations

import _thread
import importlib
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..errors import CranfieldError
from . import specs as _specs
from .specs import MeasureError

MIN_GEO_MEAN = 1e-5


_ATOL = re.compile(r"\s*([+-]?\d+)")


def atol(text: str) -> int:
    """An integer cut-off read as trec_eval reads it (C atol: the leading digits, so '23.4' is 23)."""
    m = _ATOL.match(text)
    if not m:
        raise ValueError(text)
    return int(m.group(1))


def fmt_float_param(v: float) -> str:
    """trec_eval's append_double: two decimals."""
    return f"{v:.2f}"


CUTOFF_MAX = 2**31 - 1


def _finite(name: str, text: str) -> float:
    """A parameter that must be a finite number (ValueError for the caller's message otherwise)."""
    v = float(text)
    if not np.isfinite(v):
        raise MeasureError(f"{name}: parameter {text.strip()!r} is not a finite number")
    return v


@dataclass
class Measure:
    """A registered measure.

    compute(ranked, params) returns an array of shape (n_groups,) when the measure has no cut-offs,
    or (n_groups, len(params)) when it has (one output measure per cut-off, named name_param).
    """

    name: str
    compute: Callable[..., Any]
    doc: str = ""
    order: float = -1.0                    # position in output, set by `register` from `ORDER`
    params: tuple | None = None            # default parameters
    param_kind: str = "none"               # none | int_cut | float_cut | float_params | pairs
    value_kind: str = "float"              # float | long | str
    aggregate: str = "mean"                # mean | validmean (NaN = not evaluated) | sum | gmean | first
    per_topic: bool = True                 # printed per topic with -q
    summary: bool = True                   # printed in the 'all' summary
    nicknames: frozenset = field(default_factory=frozenset)  # official, all_trec, set, ...
    complete_fill: Any = None              # value forced for -c topics a run did not retrieve for
    text_format: str = "{}"                # how a value_kind "str" value is printed (relstring: quoted)
    n_params: int | None = None            # required number of parameters (utility: 4)
    extension: bool = False                # not a trec_eval measure (Cranfield addition)
    requires: frozenset = field(default_factory=frozenset)  # extra judgment columns needed
    contributions: Callable[..., Any] | None = None  # per-row shares of the value (see `contributes`)
    uses: tuple = ()                       # measures its computation is built on (loaded with it: `dependency`)
    param_specs: tuple = ()                # its parameters (specs.Param: name, type, default, description)

    def parse_params(self, text: str | None) -> tuple:
        """Parameters from the text after the '.' of a measure spec (trec_eval's rules)."""
        if text is None:
            return self.params if self.params is not None else ()
        if self.param_kind == "none":
            raise MeasureError(f"measure {self.name!r} takes no parameters (got {text!r})")
        parts = text.split(",")
        try:
            if self.param_kind == "int_cut":
                vals = sorted(atol(p) for p in parts)
                if vals[0] <= 0:
                    raise MeasureError(f"{self.name}: cut-offs must be positive (got {text!r})")
                if vals[-1] > CUTOFF_MAX:
                    raise MeasureError(f"{self.name}: cut-off {vals[-1]} is out of range (at most {CUTOFF_MAX}, "
                                       f"trec_eval's C int; a ranking is never that long)")
                if len(set(vals)) != len(vals):
                    raise MeasureError(f"{self.name}: duplicate cut-offs in {text!r}")
                return tuple(vals)
            if self.param_kind == "float_cut":
                vals = sorted(_finite(self.name, p) for p in parts)
                if len(set(vals)) != len(vals):
                    raise MeasureError(f"{self.name}: duplicate cut-offs in {text!r}")
                return tuple(vals)
            if self.param_kind == "float_params":
                vals = tuple(_finite(self.name, p) for p in parts)
                if self.n_params is not None and len(vals) != self.n_params:
                    raise MeasureError(f"{self.name}: needs exactly {self.n_params} comma-separated "
                                       f"parameters (got {text!r})")
                return vals
            if self.param_kind == "pairs":
                out = []
                for p in parts:
                    k, sep, v = p.partition("=")
                    if not sep or not k:
                        raise MeasureError(f"{self.name}: malformed pair parameters in {text!r} (use name=value,...)")
                    val = _finite(self.name, v)
                    spec = _specs.find(self.param_specs, k)
                    if spec is not None:
                        spec.check(self.name, val)
                    elif self.extension:       # trec_eval's own measures ignore other names, as trec_eval does
                        raise MeasureError(f"{self.name}: unknown parameter {k!r} (takes "
                                           f"{', '.join(s.name for s in self.param_specs) or 'none'}; see "
                                           f"`cranfield measures {self.name}`)")
                    out.append((k, val))
                return tuple(out)
        except ValueError:
            raise MeasureError(f"{self.name}: malformed parameters {text!r}") from None
        raise MeasureError(f"{self.name}: unknown parameter kind {self.param_kind}")

    def output_names(self, params: tuple, param_text: str | None) -> list[str]:
        """Names of the values this measure produces (e.g. P_5, P_10; ndcg_1=3,2=9)."""
        if self.param_kind in ("int_cut",):
            return [f"{self.name}_{p}" for p in params]
        if self.param_kind == "float_cut":
            return [f"{self.name}_{fmt_float_param(p)}" for p in params]
        if self.param_kind in ("float_params", "pairs") and param_text is not None:
            return [f"{self.name}_{param_text}"]
        return [self.name]


REGISTRY: dict[str, Measure] = {}

ORDER: tuple[str, ...] = (
    # trec_eval 10.0's measures, in its order (measures.c's te_trec_measures; unj after rbp_resid), with
    # Cranfield's variance estimates of infAP after infAP and judged after unj
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "infAP_var", "infAP_varlin", "infAP_varjack",
    "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg",
    "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
    "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
    "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
    "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap", "rbp", "rbp_resid", "unj", "judged",
    # Cranfield's measures (incomplete judgments, sampling estimators, gdeval, cwl_eval, ir_measures')
    "bpref_10", "bpref_N", "bpref_allnonrel", "bpref_relative", "bpref_relative2", "rpref_N", "rpref_relative",
    "rpref_relative2", "RankEff", "Q", "ndcgx", "GAP", "xinfAP", "infNDCG", "statAP", "statAP_bc",
    "statAP_ratio", "statAP_var", "statP", "statP_file", "statRprec", "statRprec_round", "statR",
    "gd_ndcg@", "gd_err@", "inst", "insq", "sdcg", "nerr8", "nerr9", "nerr10", "nerr11", "bpm", "accuracy",
    "compat",
)
"""The one output order of every measure: whatever the order asked, values come out in this order (as
trec_eval prints its measures in its table's order). A name ending in '@' places a family whose cut-off is
part of the name (gd_ndcg@20): its members follow by cut-off. tests/test_measure_specs.py checks every
registered measure has exactly one place."""

_POSITION = {n: i for i, n in enumerate(ORDER)}


def position(name: str) -> float:
    """A measure's place in `ORDER` (name@k: its family's place plus k / 2^32, below the next place)."""
    if name in _POSITION:
        return float(_POSITION[name])
    base, at, k = name.partition("@")
    if at and base + at in _POSITION and k.isascii() and k.isdigit() and int(k) < 2 ** 32:
        return _POSITION[base + at] + int(k) / 2 ** 32
    raise MeasureError(f"measure {name!r} has no place in engine.measures.registry.ORDER (add it there)")

NICKNAMES: dict[str, list[str]] = {}

# Variant hooks: functions name -> Measure | None that derive a measure from a registered one
# (e.g. 'map@cond' = map on condensed lists). A derived measure is registered on first use.
VARIANT_HOOKS: list[Callable[[str], "Measure | None"]] = []
DERIVED: set[str] = set()
"""Names a VARIANT_HOOK made on demand (gd_ndcg@3 once asked for): registered, but not part of the fixed list
that menus offer, so what a menu shows never depends on what was asked before in the process."""


def lookup(name: str) -> "Measure | None":
    """A registered measure by name, deriving a variant through VARIANT_HOOKS when needed."""
    if name in REGISTRY:
        return REGISTRY[name]
    for hook in VARIANT_HOOKS:
        m = hook(name)
        if m is not None:
            REGISTRY[m.name] = m
            DERIVED.add(m.name)
            return m
    return None


def register(m: Measure) -> Measure:
    """Add a measure to the registry (one call per measure module); the measures it `uses` must be
    registered already (`dependency` loads them when the measure is defined)."""
    if m.name in REGISTRY:
        raise MeasureError(f"measure {m.name!r} registered twice")
    m.order = position(m.name)
    if m.param_kind in ("int_cut", "float_cut", "float_params") and m.param_specs:
        defaults = _specs.positional_defaults(m.param_specs)
        if m.params is None:
            m.params = defaults
        elif m.params != defaults:
            raise MeasureError(f"measure {m.name!r}: default parameters {m.params} are not its specs' {defaults}")
    missing = [u for u in m.uses if u not in REGISTRY]
    if missing:
        raise MeasureError(f"measure {m.name!r} uses {', '.join(missing)}, not registered: define it through "
                           f"`dependency`")
    REGISTRY[m.name] = m
    return m


def dependency(name: str) -> Measure:
    """The registered measure `name`, its module loaded now: how a measure built on another one (declared in
    its `uses`) binds it when it is defined, never by name when it computes (a fresh process loads only the
    measures asked for)."""
    if not load_named([name]):
        raise MeasureError(f"measure {name!r}, a dependency, has no module m_{name}.py registering it")
    return REGISTRY[name]


def measure(name: str, **kw) -> Callable:
    """Decorator form of `register`: @measure("map", nicknames={"official"})."""
    def deco(fn):
        kw.setdefault("doc", (fn.__doc__ or "").strip())
        if "nicknames" in kw:
            kw["nicknames"] = frozenset(kw["nicknames"])
        if "requires" in kw:
            kw["requires"] = frozenset(kw["requires"])
        register(Measure(name=name, compute=fn, **kw))
        return fn
    return deco


def contributes(name: str) -> Callable:
    """Decorator for a measure that can explain its score: fn(ranked, params) returns, per row of the
    ranked lists, each document's share of the value, shaped as `compute`'s result ((n_rows,) or
    (n_rows, len(params))); per (run, topic) group the shares sum to the value `compute` gives."""
    def deco(fn):
        REGISTRY[name].contributions = fn
        return fn
    return deco


def explain(ranked, req: "MeasureRequest") -> dict[str, Any] | None:
    """Per output name of `req`, each row's contribution to the value (None when the measure cannot
    explain its score)."""
    fn = req.measure.contributions
    if fn is None:
        return None
    res = np.asarray(fn(ranked, req.params), dtype=np.float64)
    if res.ndim == 1:
        res = res[:, None]
    return {n: res[:, j] for j, n in enumerate(req.names)}


def request_for_output(name: str) -> "MeasureRequest":
    """The measure request that produces output `name` (map, P_10, ndcg_cut_10, ndcgx_k=10, ...)."""
    tries = [name] + [f"{name[:i]}.{name[i + 1:]}" for i, ch in enumerate(name) if ch == "_" and i]
    for spec in tries:
        try:
            reqs = resolve([spec])
        except CranfieldError:
            continue
        for req in reqs:
            if name in req.names:
                return req
    raise MeasureError(f"no measure produces {name!r}")


@dataclass(frozen=True)
class MeasureRequest:
    """One measure with resolved parameters, as asked for on the command line."""

    measure: Measure
    params: tuple
    param_text: str | None

    @cached_property
    def names(self) -> list[str]:
        """The output names (made once per request: requests are immutable and reused on every call)."""
        return self.measure.output_names(self.params, self.param_text)


def reads_judgment_table(m: Measure) -> bool:
    """True for measures that read the judgment table itself (the sampling estimators, extra columns),
    not only the grades the ranked lists carry."""
    import sys
    mod = sys.modules.get(m.compute.__module__)
    return mod is None or any(getattr(v, "__module__", "").startswith("engine.estimators") or
                              getattr(v, "__name__", "").startswith("engine.estimators")
                              for v in vars(mod).values()) or bool(m.requires)


def nickname_members(nick: str) -> list[str]:
    return [m.name for m in sorted(REGISTRY.values(), key=lambda m: m.order) if nick in m.nicknames]


def resolve(specs: list[str] | str | None) -> list[MeasureRequest]:
    """Resolve measure specs (`map`, `P.5,10`, `ndcg.1=3,2=9`, `all_trec`, `official`) in registry order.

    As trec_eval: a nickname marks every member; parameters given for a measure apply to it; output
    follows registry order whatever the order asked. Plain measure names load only their own
    modules (m_<name>.py), nicknames their members'; variants and unknown names load every measure.
    """
    if specs is None:
        specs = ["official"]
    if isinstance(specs, str):
        specs = [specs]
    if not load_named([spec.partition(".")[0] for spec in specs]):
        load_all()
    chosen: dict[str, str | None] = {}
    for spec in specs:
        base, dot, ptext = spec.partition(".")
        ptext = ptext if dot else None
        if dot and ptext == "":
            raise MeasureError(f"improper measure in parameter {spec!r}")
        members = nickname_members(base)
        if members:
            for n in members:
                chosen.setdefault(n, None)
            if ptext is not None:
                raise MeasureError(f"nickname {base!r} takes no parameters")
            continue
        if lookup(base) is None:
            close = [n for n in REGISTRY if n.lower().startswith(base.lower()[:3])][:6]
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise MeasureError(f"unknown measure {base!r}{hint}; `cranfield measures` lists them all")
        if base not in chosen or (chosen[base] is None and ptext is not None):
            chosen[base] = ptext      # trec_eval: the first explicit parameters win, later ones are ignored
    out = []
    for n in sorted(chosen, key=lambda n: REGISTRY[n].order):
        m = REGISTRY[n]
        out.append(MeasureRequest(m, m.parse_params(chosen[n]), chosen[n]))
    return out


def aggregate_values(kind: str, values: np.ndarray) -> float:
    """Summary over topics: arithmetic mean, sum, or geometric mean of per-topic values."""
    v = np.asarray(values, dtype=np.float64)
    if len(v) == 0:
        return 0.0
    # sums run topic after topic, as trec_eval accumulates (pairwise summation could differ in the last bit)
    if kind == "mean":
        return float(np.add.accumulate(v)[-1] / len(v))
    if kind == "validmean":        # mean over the topics with a value (NaN: topic not evaluated)
        v = v[~np.isnan(v)]
        return float(np.add.accumulate(v)[-1] / len(v)) if len(v) else 0.0
    if kind == "sum":
        return float(np.add.accumulate(v)[-1])
    if kind == "gmean":
        return float(np.exp(np.add.accumulate(np.log(np.maximum(v, MIN_GEO_MEAN)))[-1] / len(v)))
    raise MeasureError(f"unknown aggregate {kind!r}")


def measures_table():
    """Every registered measure: name, default parameters, nicknames, first line of its description
    (the table `cranfield measures` prints, as a DataFrame)."""
    import pandas as pd

    reg = load_all()
    rows = []
    for m in sorted(reg.values(), key=lambda m: (m.extension, m.order, m.name)):
        rows.append({"name": m.name, "parameters": "; ".join(f"{p.name}={p.shown_default}" for p in m.param_specs),
                     "nicknames": ",".join(sorted(m.nicknames)),
                     "description": (m.doc.splitlines() or [""])[0]})
    return pd.DataFrame(rows, columns=["name", "parameters", "nicknames", "description"])


_loaded = False
_lock = _thread.RLock()
_DIR = Path(__file__).parent


NICKNAMES: dict[str, tuple[str, ...]] = {
    "all_prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
                  "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret",
                  "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
                  "prefs_pair_imp", "prefs_avgjg_imp"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult",
                 "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut",
                 "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
                 "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj"),
    "incomplete": ("infAP_var", "bpref_10", "bpref_N", "rpref_relative2", "RankEff", "Q", "ndcgx", "GAP",
                   "xinfAP", "infNDCG", "statAP", "statP", "statRprec"),
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
              "prefs_pair", "prefs_avgjg"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_relative_P",
            "set_recall", "set_map", "set_F"),
}
"""Each nickname's members, as their modules declare them (`Measure.nicknames`), so that a nickname loads
its members' modules alone, not every measure's; tests/test_startup.py checks it against the modules."""


def load_named(names: list[str]) -> bool:
    """Import the measure modules m_<name>.py of `names` (measures load on first use), and for a nickname
    its members' modules (`NICKNAMES`); False when a name has no module of its own registering it (a
    variant, an unknown name)."""
    with _lock:
        for name in names:
            if name in REGISTRY:
                continue
            if name in NICKNAMES:
                if not load_named(list(NICKNAMES[name])):
                    return False
                continue
            if not name.replace("_", "").isalnum() or not (_DIR / f"m_{name}.py").is_file():
                return False
            importlib.import_module(f"{__package__}.m_{name}")
            if name not in REGISTRY:
                return False
    return True


def load_all() -> dict[str, Measure]:
    """Import every measure module of this package (and return the registry); safe across threads."""
    global _loaded
    if not _loaded:
        import pkgutil

        with _lock:
            if not _loaded:
                for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda i: i.name):
                    if info.name.startswith("m_"):
                        importlib.import_module(f"{__package__}.{info.name}")
                _loaded = True
    return REGISTRY
