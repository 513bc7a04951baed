"""Measures averaged over judgment groups (trec_eval's `-R qrels_jg`: P_avgjg, map_avgjg, Rprec_mult_avgjg):
the base measure computed against each group's judgments, averaged over the groups judging the topic."""
from __future__ import annotations

import numpy as np

from .registry import Measure, dependency, register


def _runs_of(r):
    """The (run, topic, doc, score) rows of a Ranked structure, as a run table (a DataFrame)."""
    import pandas as pd

    n = r.num_ret
    return pd.DataFrame({"run": np.repeat(np.asarray(r.run_names, dtype=object)[r.g_run], n),
                         "topic": np.repeat(np.asarray(r.topic_names, dtype=object)[r.g_topic], n),
                         "doc": np.asarray(r.doc[:], dtype=object), "score": np.asarray(r.score, np.float64)})


def avg_over_groups(r, m: Measure, params: tuple) -> np.ndarray:
    """Per (run, topic) group: the mean over judgment groups of measure `m` (with `params`)."""
    from ..ranking.build import build_ranked
    extra = getattr(r, "extra", None) or {}
    groups = extra.get("qrels_jg")
    if groups is None:          # ordinary judgments: one group, the base measure itself
        return np.asarray(m.compute(r, params), dtype=np.float64)
    cache = r.caches.setdefault("qrels_jg", {})
    n_par = len(params) if m.param_kind != "none" else 0
    total = np.zeros((r.n_groups, n_par) if n_par else r.n_groups)
    count = np.zeros(r.n_groups)
    key_of = {(r.run_names[r.g_run[g]], r.topic_names[r.g_topic[g]]): g for g in range(r.n_groups)}
    runs = cache.get("runs")
    if runs is None:
        runs = cache["runs"] = _runs_of(r)
    for jg, q in groups.items():
        if jg not in cache:
            cache[jg] = build_ranked(q, runs, r.options, run_order=list(r.run_names))[0]
        sub = cache[jg]
        vals = np.asarray(m.compute(sub, params), dtype=np.float64)
        for h in range(sub.n_groups):
            g = key_of.get((sub.run_names[sub.g_run[h]], sub.topic_names[sub.g_topic[h]]))
            if g is not None:
                total[g] += vals[h]
                count[g] += 1
    c = np.maximum(count, 1)
    return total / (c[:, None] if total.ndim == 2 else c)


def avgjg_measure(name: str, base: str, doc: str) -> Measure:
    """Register `name`: measure `base` (its parameters and their defaults) averaged over judgment groups;
    `base` is bound here, when `name` is defined (declared in `uses`)."""
    m = dependency(base)

    def compute(r, params=()):
        return avg_over_groups(r, m, params)

    compute.__doc__ = doc
    return register(Measure(name=name, compute=compute, doc=doc, params=m.params, param_kind=m.param_kind,
                            param_specs=m.param_specs,
                            nicknames=frozenset({"qrels_jg"}), uses=(base,)))
