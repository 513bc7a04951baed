"""ndcgx: nDCG with configurable gains, discount and cut-off.

Parameters (all optional), e.g. `ndcgx.disc=sakai,a=2,gains=0:1:2:3,k=1000`:
  gains=g0:g1:...   gain per grade (default: campaign.yaml relevance.scale gains, else the grade)
  disc=log          1/log_b(r + b - 1), base b=2 (thesis 3.1.4; b=2 is 1/log2(r+1))   [default]
                    (disc=log2, disc=log10 are shorthands for disc=log,b=2 / b=10)
  disc=sakai        1 for r <= a, 1/log_a(r) after, base a=2 (Sakai 2007 eq. 22)
  disc=zipf         1/r
  disc=linear       (k + 1 - r)/k, needs k
  disc=vec          explicit discounts dvec=d1:d2:... for ranks 1.., 0 after
  k=N               cut-off: DCG and ideal DCG over the first N ranks (default: whole list)
The ideal list orders every judged document of the topic by gain, highest first.
"""
import re

import numpy as np

from .graded import discount, gains_per_grade, ideal_gains, row_gains
from .params import as_dict, get_float, get_int, get_list, kv_measure
from .registry import MeasureError, contributes
from .specs import GAINS, Param


def _disc_args(d: dict) -> dict:
    kind = d.get("disc", "log")
    b = get_float("ndcgx", d, "b", 2.0)
    m = re.fullmatch(r"log(\d+(?:\.\d+)?)", kind)
    if m:                                   # disc=log2, disc=log10: shorthand for disc=log,b=...
        kind, b = "log", float(m.group(1))
    k = get_int("ndcgx", d, "k", None)
    return {"kind": kind, "b": b, "a": get_float("ndcgx", d, "a", 2.0), "k": k, "vec": get_list("ndcgx", d, "dvec")}


SPECS = (GAINS,
          Param("disc", "choice", "log", "discount: log (base b), log<b> (log2, log10), sakai (base a), zipf, "
                "linear (needs k), vec (dvec)", choices=("log", "log<b>", "sakai", "zipf", "linear", "vec")),
          Param("b", "float", 2.0, "base of the log discount"),
          Param("a", "float", 2.0, "base of the sakai discount (ranks up to a are not discounted)"),
          Param("k", "int", None, "cut-off: DCG and ideal DCG over the first k ranks", default_text="whole list",
                minimum=1),
          Param("dvec", "list", None, "discounts of ranks 1, 2, ... for disc=vec (0 after)",
                default_text="none (needed by disc=vec)"))


@kv_measure("ndcgx", SPECS, nicknames={"incomplete"})
def ndcgx(r, params=()):
    """Normalized discounted cumulative gain with configurable gains, discount and cut-off."""
    per_row, idcg = _parts(r, params)
    dcg = r.seg_sum(per_row)
    return np.divide(dcg, idcg, out=np.zeros(r.n_groups), where=idcg > 0)


@contributes("ndcgx")
def ndcgx_contributions(r, params=()):
    """Each document's gain x discount over the ideal DCG (gains as the value: parameters, else the
    campaign's scale, else the grade)."""
    per_row, idcg = _parts(r, params)
    ideal = idcg[r.row_group]
    return np.divide(per_row, ideal, out=np.zeros(r.n_rows), where=ideal > 0)


def _parts(r, params=()) -> tuple[np.ndarray, np.ndarray]:
    """(per row: gain x discount within the cut-off, per group: the topic's ideal DCG)."""
    d = as_dict(params)
    da = _disc_args(d)
    if da["kind"] == "vec" and da["vec"] is None:
        raise MeasureError("ndcgx: disc=vec needs dvec=d1:d2:...")
    k = da["k"]
    g_tab = gains_per_grade(r, get_list("ndcgx", d, "gains"))
    g = row_gains(r, g_tab)
    keep = r.rank <= k if k is not None else np.ones(r.n_rows, bool)
    per_row = np.where(keep, g * discount(r.rank, **da), 0.0)
    off, ig = ideal_gains(r, g_tab)
    n_t = np.diff(off)
    t_of = np.repeat(np.arange(len(n_t)), n_t)
    pos = np.arange(len(ig)) - off[:-1][t_of] + 1 if len(ig) else np.zeros(0, np.int64)
    ok = (pos <= k) if k is not None else np.ones(len(ig), bool)
    idcg_t = np.bincount(t_of[ok], weights=(ig * discount(pos, **da))[ok], minlength=len(n_t)) if len(ig) else np.zeros(len(n_t))
    return per_row, idcg_t[r.g_topic]
