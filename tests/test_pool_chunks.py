"""statAP pools in bounded memory (issue 39): the samplers worked chunk by chunk of whole topics draw
the same random stream and give the same probabilities and samples as one pass over the table."""
from __future__ import annotations

import numpy as np
import pytest

from engine.pooling import samplers


def _groups(seed: int):
    rng = np.random.default_rng(seed)
    g = int(rng.integers(1, 300))
    sizes = rng.integers(1, 200, g)
    codes = np.repeat(np.arange(g), sizes)
    p = rng.random(len(codes)) ** 3
    p[rng.random(len(p)) < 0.05] = 0.0
    n = np.minimum(rng.integers(0, 80, g), sizes)
    return codes, p, n, int(rng.integers(40, 3000))


@pytest.mark.parametrize("seed", range(12))
def test_chunked_samplers_equal_one_pass(monkeypatch, seed):
    codes, p, n, chunk = _groups(seed)
    monkeypatch.setattr(samplers, "CHUNK_ROWS", 10 ** 9)               # one chunk: the one-pass code
    pi1 = samplers.pps_probabilities(codes, p, n)
    r1 = np.random.default_rng(seed + 100)
    s1 = samplers.pps_systematic(codes, pi1, r1)
    monkeypatch.setattr(samplers, "CHUNK_ROWS", chunk)
    assert len(samplers.group_chunks(codes)) > 1 or len(codes) <= chunk
    pi2 = samplers.pps_probabilities(codes, p, n)
    r2 = np.random.default_rng(seed + 100)
    s2 = samplers.pps_systematic(codes, pi2, r2)
    assert np.array_equal(pi1, pi2) and np.array_equal(s1, s2)
    assert r1.random() == r2.random()                                    # the generator ends in the same place
    # the budget is met exactly in every group, and the probabilities sum to it
    assert np.array_equal(np.bincount(codes[s2], minlength=len(n)), np.minimum(n, np.bincount(codes[p > 0], minlength=len(n))))


def test_group_chunks_hold_whole_groups():
    codes = np.repeat(np.arange(6), [3, 10, 1, 1, 7, 2])
    ch = samplers.group_chunks(codes, 4)
    assert ch[0][0] == 0 and ch[-1][1] == len(codes)
    assert all(b0 == a1 for (_, b0), (a1, _) in zip(ch, ch[1:]))
    for a, b in ch:                                 # no group is cut
        assert (a == 0 or codes[a] != codes[a - 1]) and (b == len(codes) or codes[b] != codes[b - 1])
    assert (3, 13) in ch                            # a group larger than a chunk stays whole
    assert samplers.group_chunks(np.array([0, 1, 0])) is None            # not grouped: one pass


def test_judged_in_pool_equals_pairs_compared_as_pairs():
    import pandas as pd
    from engine.pooling import judged_in_pool
    rng = np.random.default_rng(4)
    n = 3_000
    table = pd.DataFrame({"topic": rng.integers(0, 30, n).astype(str), "doc": [f"d{x}" for x in rng.integers(0, 200, n)],
                          "order": rng.integers(0, 3, n)})
    qrels = pd.DataFrame({"topic": pd.Categorical(rng.integers(0, 30, 2_000).astype(str)),
                          "doc": [f"d{x}" for x in rng.integers(0, 200, 2_000)], "grade": rng.integers(-1, 3, 2_000)})
    qrels.loc[0, ["topic", "doc"]] = [table["topic"].iat[5], "d1"]          # "3" + "d1" is not "3d" + "1"
    table.loc[7, ["topic", "doc"]] = [table["topic"].iat[5] + "d", "1"]
    want_pairs = set(zip(qrels.loc[qrels["grade"] >= 0, "topic"].astype(str), qrels.loc[qrels["grade"] >= 0, "doc"]))
    sel = table[table["order"] > 0]
    want = [(t, d) in want_pairs for t, d in zip(sel["topic"], sel["doc"])]
    got = judged_in_pool(table, qrels)
    assert got.index.equals(sel.index) and got.tolist() == want and 0 < sum(want) < len(want)
    table.loc[table.index[table["order"] > 0][0], "doc"] = "a\x00b"   # the separator in an id: pairs as pairs
    sel = table[table["order"] > 0]
    assert judged_in_pool(table, qrels).tolist() == [(t, d) in want_pairs for t, d in zip(sel["topic"], sel["doc"])]


def test_judging_order_by_counts_equals_the_sorted_rank():
    from engine.pooling.build import _selected_order
    from engine.pooling.candidates import rank_within
    rng = np.random.default_rng(1)
    for _ in range(40):
        codes = np.sort(rng.integers(0, 40, rng.integers(1, 500)))
        sel = rng.random(len(codes)) < 0.3
        for c, s in ((codes, sel), (codes[::-1].copy(), sel[::-1].copy())):      # grouped, and not in order
            want = np.where(s, rank_within(np.where(s, c, -1 - c)) + 1, 0)
            assert np.array_equal(_selected_order(c, s), want)


def test_a_statap_pool_table_takes_assignments_in_place():
    """Caught in review: a read-only (broadcast) stratum column made `table.loc[...] = ...` raise."""
    import pandas as pd
    from engine.pooling import build_pool
    rng = np.random.default_rng(2)
    runs = pd.DataFrame({"run": np.repeat(["a", "b", "c"], 200), "topic": np.tile(np.repeat(["1", "2"], 100), 3),
                         "doc": [f"d{x}" for x in rng.integers(0, 150, 600)], "score": rng.random(600)})
    t = build_pool(runs.drop_duplicates(["run", "topic", "doc"]), "statap", 10, depth=50, seed=1).table
    for col, value in (("stratum", 2), ("order", 0), ("prob", 0.5), ("method", "canary"), ("doc", "x")):
        t.loc[t.index[:3], col] = value
        assert (t[col].iloc[:3] == value).all()


@pytest.mark.parametrize("n,groups", [(1, 1), (10, 3), (5_000, 4_000), (300_000, 2_500)])
def test_sorting_within_groups_is_lexsort(n, groups):
    rng = np.random.default_rng(n)
    c = np.sort(rng.integers(0, groups, n)).astype(np.int64)
    k = rng.random(n)
    k[::7] = k[0]                                       # ties: kept in row order, as lexsort keeps them
    assert np.array_equal(samplers._sorted_in_groups(c, k), np.lexsort((k, c)))
    shuffled = rng.permutation(c)                       # not grouped: lexsort itself
    assert np.array_equal(samplers._sorted_in_groups(shuffled, k), np.lexsort((k, shuffled)))
    odd = k + 1e-300 * (k > 0.5)                        # not the generator's multiples of 2**-53 (kept exact)
    assert np.array_equal(samplers._sorted_in_groups(c, k / 3), np.lexsort((k / 3, c)))
    assert np.array_equal(samplers._sorted_in_groups(c, odd), np.lexsort((odd, c)))
