"""Condensed lists (Sakai 2007): each ranked list with its unjudged documents removed.

Any rank-based measure computed on a condensed list gives Sakai's primed variant: map -> AP',
Q -> Q', ndcg -> nDCG', P.10 -> P'@10 (P@k(j) in Buttcher et al.). Selected per measure with the
suffix `@cond`: `map@cond`, `P@cond.10`, `ndcg@cond`, `Q@cond.beta=1` (registered on first use through
registry.VARIANT_HOOKS).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ranking.ranked import Ranked

SUFFIX = "@cond"


def condense(r: Ranked) -> Ranked:
    """The same lists keeping only judged documents (rel >= 0); ranks renumbered, groups kept (maybe empty)."""
    cache = r.caches.setdefault("est", {})
    if "condensed" in cache:
        return cache["condensed"]
    keep = r.rel >= 0
    counts = np.bincount(r.row_group[keep], minlength=r.n_groups) if r.n_rows else np.zeros(r.n_groups, np.int64)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    c = replace(r, offsets=offsets, rel=r.rel[keep], doc=r.doc[keep], score=r.score[keep])
    c.caches["est"] = {"condensed": c}   # condensing twice is the identity
    cache["condensed"] = c
    return c


def condensed_variant(name: str):
    """VARIANT_HOOKS entry: `<measure>@cond` -> that measure computed on condensed lists."""
    if not name.endswith(SUFFIX):
        return None
    from .registry import REGISTRY, lookup
    base_name = name[: -len(SUFFIX)]
    base = REGISTRY.get(base_name) or lookup(base_name)
    if base is None:
        return None
    base_compute = base.compute

    def compute(r, params=()):
        return base_compute(condense(r), params)

    compute.__doc__ = f"{base_name} on condensed lists (unjudged documents removed)."
    from copy import copy
    m = copy(base)
    m.name = name
    m.compute = compute
    m.doc = f"{base.doc} -- computed on condensed lists (unjudged documents removed; Sakai 2007)."
    m.order = base.order + 0.5
    m.nicknames = frozenset()
    m.extension = True
    return m
