"""`ranking.join.PairGrades`, the streamed evaluation's join of run rows with judgments by sorted 64-bit
(topic, document id) keys: the same grades as `lookup_rel` on shared codes (ids of any width, on either
side), None for a pair retrieved twice, and a key collision is caught by the byte check, not joined."""
from __future__ import annotations

import numpy as np

from engine.ranking.join import PairGrades, id_words, lookup_rel, pair_keys
from engine.ranking.ranked import RELVALUE_NONPOOL, RELVALUE_UNJUDGED


def _ids(rng, n: int, vocab: list[bytes]) -> np.ndarray:
    return np.asarray([vocab[i] for i in rng.integers(0, len(vocab), n)], dtype="S")


def test_grades_match_lookup_rel_on_shared_codes():
    rng = np.random.default_rng(3)
    # ids of 1 to 30 bytes: the run's and the judgments' padded widths differ
    vocab = sorted({bytes(rng.integers(97, 123, rng.integers(1, 31)).astype(np.uint8)) for _ in range(400)})
    vocab += [b"x" * 7, b"x" * 8, b"x" * 9, b"x" * 16, b"x" * 17]          # word boundaries
    pairs = {(int(t), bytes(d)) for t, d in zip(rng.integers(0, 6, 900), _ids(rng, 900, vocab))}
    q_t = np.asarray([t for t, _ in sorted(pairs)], np.int64)
    q_d = np.asarray([d for _, d in sorted(pairs)], dtype="S")
    q_g = rng.integers(-1, 3, len(q_t)).astype(np.int64)
    pg = PairGrades(q_t, q_d, q_g)
    assert pg.distinct
    run = sorted({(int(t), bytes(d)) for t, d in zip(rng.integers(0, 6, 700), _ids(rng, 700, vocab[:60]))})
    run += [(1, b"x" * 8), (2, b"x" * 16)]
    r_t = np.asarray([t for t, _ in run], np.int64)
    r_d = np.asarray([d for _, d in run], dtype="S")
    got = pg.grades(r_t, r_d)
    code = {d: i for i, d in enumerate(vocab)}
    want = lookup_rel(q_t, np.asarray([code[d] for d in q_d.tolist()]), q_g, r_t,
                      np.asarray([code[d] for d in r_d.tolist()]), 6, len(vocab))
    assert np.array_equal(got, want)
    assert {RELVALUE_NONPOOL, RELVALUE_UNJUDGED, 0, 1, 2} <= set(got.tolist())
    # the same pairs with the judgments' ids padded wider give the same keys
    assert np.array_equal(pair_keys(q_t, id_words(q_d)), pair_keys(q_t, id_words(q_d.astype("S64"))))


def test_a_pair_twice_gives_none_and_a_key_collision_takes_another_seed():
    q_t = np.asarray([0, 0, 1], np.int64)
    q_d = np.asarray([b"a", b"b", b"a"])
    pg = PairGrades(q_t, q_d, np.asarray([1, 0, 2]))
    assert pg.grades(np.asarray([1, 0]), np.asarray([b"a", b"zz"])).tolist() == [2, RELVALUE_NONPOOL]
    assert pg.grades(np.asarray([0, 1, 0]), np.asarray([b"a", b"a", b"a"])) is None    # (0, a) twice
    assert pg.rows(np.asarray([0, 1, 0]), np.asarray([b"a", b"a", b"a"]), repeats=True).tolist() == [0, 2, 0]
    # a pair judged twice keeps its last row
    twice = PairGrades(np.asarray([0, 0, 0]), np.asarray([b"a", b"b", b"a"]), np.asarray([1, 0, 2]))
    assert not twice.distinct
    assert twice.rows(np.asarray([0, 0]), np.asarray([b"a", b"b"])).tolist() == [2, 1]
    # a run pair whose key equals a judged pair's but whose bytes differ is not joined: the keys are
    # made again with another seed (here the judged side's words are corrupted to fake the collision)
    pg.keys = pg.keys._replace(words=id_words(np.asarray([b"c", b"c", b"c"])))
    assert pg.seed == 0
    assert pg.grades(np.asarray([0]), np.asarray([b"a"])).tolist() == [1]
    assert pg.seed == 1


def test_rows_and_grades_equal_a_dict_lookup_on_generated_ids():
    """Generated judgments and run rows (ids empty, 1 to 70 bytes, at and around word boundaries, non-ASCII
    bytes, padded wider than needed): `rows` is the last judgment of each pair, `grades` its grade, and None
    exactly when the run holds a pair twice."""
    from hypothesis import given, settings, strategies as st
    ids = st.one_of(st.sampled_from([b"", b"a", b"a" * 8, b"a" * 9, b"a" * 16, b"\xff" * 8, b"\xc3\xa9", b"x" * 65]),
                    st.binary(max_size=70).map(lambda b: b.replace(b"\0", b"\1")))

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 3), ids, st.integers(-2, 3)), max_size=25),
           st.lists(st.tuples(st.integers(0, 3), ids), max_size=25), st.integers(0, 9))
    def check(judged, run, pad):
        width = max([len(d) for _, d, _ in judged] + [1]) + pad
        pg = PairGrades(np.asarray([t for t, _, _ in judged], np.int64),
                        np.asarray([d for _, d, _ in judged], dtype=f"S{width}"),
                        np.asarray([g for _, _, g in judged], np.int64))
        last = {(t, d): i for i, (t, d, _) in enumerate(judged)}
        assert pg.distinct == (len(last) == len(judged))
        r_t = np.asarray([t for t, _ in run], np.int64)
        r_d = np.asarray([d for _, d in run], dtype="S") if run else np.zeros(0, "S1")
        want = [last.get(p, -1) for p in run]
        assert pg.rows(r_t, r_d, repeats=True).tolist() == want
        got = pg.grades(r_t, r_d)
        if len(set(run)) < len(run):
            assert got is None
        else:
            assert got.tolist() == [RELVALUE_NONPOOL if i < 0 else RELVALUE_UNJUDGED if judged[i][2] < 0
                                    else judged[i][2] for i in want]

    check()


def test_probe_table_finds_exactly_the_keys_present_even_in_long_clusters():
    """The hash probe of the judgment keys: keys crowded into a few home slots (long probe runs), key 0
    (an empty slot's stored value) and the largest key, looked up among near misses, equal the sorted
    search it replaced."""
    from engine.ranking.join import _Keys, _probe, _probe_table
    rng = np.random.default_rng(5)
    top = np.uint64(1) << np.uint64(60)
    crowd = (rng.integers(0, 3, 300).astype(np.uint64) * top) + rng.integers(0, 1000, 300).astype(np.uint64)
    spread = rng.integers(0, 2**63, 300, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    key = np.unique(np.concatenate((crowd, spread, np.asarray([0, 2**64 - 1], np.uint64))))
    shift, slot_key, slot_pos = _probe_table(key)
    assert (slot_pos >= 0).sum() == len(key) and slot_pos[-1] == -1
    keys = _Keys(0, key, np.arange(len(key)), np.zeros(len(key)), np.zeros((0, len(key))), np.zeros(len(key)),
                 shift, slot_key, slot_pos)
    ask = np.concatenate((key, key + np.uint64(1), key - np.uint64(1), rng.permutation(key),
                          rng.integers(0, 2**63, 500, dtype=np.int64).astype(np.uint64)))
    rows, pos = _probe(keys, ask)
    want = np.searchsorted(key, ask)
    hit = (want < len(key)) & (key[np.minimum(want, len(key) - 1)] == ask)
    order = np.argsort(rows)
    assert np.array_equal(rows[order], np.flatnonzero(hit))
    assert np.array_equal(pos[order], want[hit])
    empty = _probe_table(np.zeros(0, np.uint64))
    assert _probe(_Keys(0, np.zeros(0, np.uint64), *[np.zeros(0)] * 4, *empty), ask)[0].size == 0


def test_a_repeat_hidden_behind_a_key_collision_in_the_run_is_still_found(monkeypatch):
    """Run rows (0, x), (2, y), (0, x) whose keys all collide under seed 0: the pair repeated is not next
    to itself among the equal keys, so the repeat must not pass as a collision of different pairs; the
    keys are made again and the repeat is found (None), under crowded home slots too."""
    from engine.ranking import join

    real = join.pair_keys

    def weak(t, words, seed=0):         # seed 0: keys of 2 bits (collisions, one home slot); others exact
        k = real(t, words, seed)
        return k >> np.uint64(62) if seed == 0 else k

    monkeypatch.setattr(join, "pair_keys", weak)
    q_t, q_d = np.asarray([1], np.int64), np.asarray([b"zz"])
    r_t = np.asarray([0, 2, 0], np.int64)
    r_d = np.asarray([b"a" * 9, b"a", b"a" * 9])
    assert len(set(weak(r_t, id_words(r_d)).tolist())) == 1           # the three keys collide
    assert PairGrades(q_t, q_d, np.asarray([1])).grades(r_t, r_d) is None
    assert PairGrades(q_t[:0], q_d[:0], np.zeros(0, np.int64)).grades(r_t, r_d) is None
    ok = PairGrades(q_t, q_d, np.asarray([1])).grades(r_t[:2], r_d[:2])
    assert ok is not None and ok.tolist() == [RELVALUE_NONPOOL, RELVALUE_NONPOOL]
