"""Fixed-size samplers with exact inclusion probabilities, vectorized over groups (topics or strata);
simple random sampling is engine.pooling.designs.srs_mask.

- `pps_probabilities` + `pps_systematic`: unequal-probability sampling of a fixed size n_g with
  inclusion probabilities pi_i = min(1, c_g * p_i) (sum pi = n_g), drawn by systematic sampling
  over a random permutation (Madow): a unit is selected with probability exactly pi_i.
"""
from __future__ import annotations

import numpy as np


CHUNK_ROWS = 500_000     # rows of whole groups worked on at a time: memory bounded whatever the table's size


def group_chunks(codes: np.ndarray, rows: int = 0) -> list[tuple[int, int]] | None:
    """Row ranges [a, b) of about `rows` (default CHUNK_ROWS) rows, each holding whole groups, when the
    codes are non-decreasing (rows grouped in order, as a pool's candidates are); else None."""
    rows = rows or CHUNK_ROWS
    n = len(codes)
    if n and (np.diff(codes) < 0).any():
        return None
    cuts = [0]
    while cuts[-1] < n:
        a = cuts[-1]
        b = min(a + rows, n)
        if b < n:
            b = int(np.searchsorted(codes, codes[b], side="left"))
            if b <= a:                                       # one group larger than a chunk: whole
                b = int(np.searchsorted(codes, codes[a], side="right"))
        cuts.append(b)
    return list(zip(cuts[:-1], cuts[1:]))


def pps_probabilities(codes: np.ndarray, p: np.ndarray, n_per_group: np.ndarray) -> np.ndarray:
    """Inclusion probabilities pi = min(1, c_g p) with sum pi = n_g per group (units with p = 0 get 0).
    Worked out chunk by chunk of whole groups when the codes are grouped (the same values)."""
    codes = np.asarray(codes, np.int64)
    p = np.asarray(p, np.float64)
    n_groups = int(codes.max()) + 1 if len(codes) else 0
    n = np.asarray(n_per_group, np.float64)
    chunks = group_chunks(codes)
    if chunks is None or len(chunks) <= 1:
        return _pps_probabilities(codes, p, n, 0, n_groups)
    out = np.empty(len(p))
    for a, b in chunks:
        g0 = int(codes[a])
        out[a:b] = _pps_probabilities(codes[a:b] - g0, p[a:b], n[g0:int(codes[b - 1]) + 1], g0, None)
    return out


def _pps_probabilities(codes, p, n, g0, n_groups) -> np.ndarray:
    n_groups = len(n) if n_groups is None else n_groups
    n = n[:n_groups] if len(n) >= n_groups else n
    positive = np.bincount(codes, weights=(p > 0).astype(float), minlength=n_groups)
    n = np.minimum(n, positive)
    capped = np.zeros(len(p), bool)
    pi = np.zeros(len(p))
    for _ in range(len(p) + 1):
        free = ~capped & (p > 0)
        mass = np.bincount(codes[free], weights=p[free], minlength=n_groups)
        left = n - np.bincount(codes[capped], minlength=n_groups)
        c = np.divide(left, mass, out=np.zeros(n_groups), where=mass > 0)
        pi = np.where(capped, 1.0, np.where(p > 0, c[codes] * p, 0.0))
        new = free & (pi >= 1.0)
        if not new.any():
            break
        capped |= new
    return np.minimum(pi, 1.0)


def pps_systematic(codes: np.ndarray, pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Selection mask of a systematic sample with inclusion probabilities `pi` (units with pi = 1
    are certain; the others are laid on [0, sum) in random order and hit by u, u+1, u+2, ...).

    Draws: one uniform per uncertain unit (its place in the order), in row order, then one start u
    per group. With grouped codes and a generator that can skip ahead, the same draws are taken chunk
    by chunk of whole groups (the starts from a copy skipped past every unit's draw)."""
    codes = np.asarray(codes, np.int64)
    pi = np.asarray(pi, np.float64)
    sel = pi >= 1.0 - 1e-12
    uncertain = ~sel & (pi > 0)
    n_rest = int(uncertain.sum())
    if n_rest == 0:
        return sel
    n_groups = int(codes.max()) + 1
    chunks = group_chunks(codes)
    bg = rng.bit_generator
    if chunks is None or len(chunks) <= 1 or not hasattr(bg, "advance"):
        rest = np.flatnonzero(uncertain)
        key = rng.random(len(rest))
        _systematic_hits(codes, pi, rest, key, rng.random(n_groups), sel)
        return sel
    ahead = np.random.Generator(type(bg)())
    ahead.bit_generator.state = bg.state
    ahead.bit_generator.advance(n_rest)
    u = ahead.random(n_groups)
    carry = 0.0
    for a, b in chunks:
        rest = a + np.flatnonzero(uncertain[a:b])
        if len(rest):
            carry = _systematic_hits(codes, pi, rest, rng.random(len(rest)), u, sel, carry)
    rng.random(n_groups)                   # the generator ends where drawing all at once leaves it
    return sel


def _systematic_hits(codes, pi, rest, key, u_group, sel, carry: float = 0.0) -> float:
    """Mark in `sel` the units of `rest` (uncertain, with their order keys) hit by u, u+1, ...; the
    running sum of pi starts at `carry` (where the previous chunk's ended, so every sum is rounded as
    in one pass) and its end is returned."""
    order = rest[_sorted_in_groups(codes[rest], key)]
    c = codes[order]
    cum = np.cumsum(np.concatenate(([carry], pi[order])))
    starts = np.flatnonzero(np.concatenate(([True], c[1:] != c[:-1])))
    base = np.repeat(cum[starts], np.diff(np.concatenate((starts, [len(c)]))))
    cum = cum[1:]
    hi = cum - base
    lo = hi - pi[order]
    u = u_group[c]
    hit = np.ceil(hi - u) - np.ceil(lo - u) >= 1
    sel[order[hit]] = True
    return float(cum[-1])


def _sorted_in_groups(c: np.ndarray, key: np.ndarray) -> np.ndarray:
    """`np.lexsort((key, c))`. When `c` is nondecreasing and the keys are the generator's uniforms
    (multiples of 2**-53 in [0, 1)), one stable integer sort per 1,024 groups: group (10 bits) above
    key (53 bits), ties kept in row order as lexsort keeps them."""
    scaled = key * 2.0 ** 53
    ki = scaled.astype(np.int64)
    if len(c) < 2 or bool((c[1:] < c[:-1]).any()) or not bool((ki == scaled).all()) or bool((ki < 0).any()):
        return np.lexsort((key, c))
    cuts = np.searchsorted(c, np.arange(int(c[0]), int(c[-1]) + 1, 1024), "left").tolist() + [len(c)]
    out = np.empty(len(c), np.int64)
    for a, b in zip(cuts[:-1], cuts[1:]):
        if b > a:
            out[a:b] = a + np.argsort(((c[a:b] - c[a]) << 53) | ki[a:b], kind="stable")
    return out
