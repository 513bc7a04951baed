"""The one join of runs with judgments: grades per retrieved row, judgment keys, judged@k, rank rows."""
from __future__ import annotations

import numpy as np

from ..util.lazy import lazy_module
from .ranked import RELVALUE_NONPOOL, RELVALUE_UNJUDGED, Ranked
from .order import _str_codes, byte_rank, order_rows, trec_order, vocab_tie_order

pd = lazy_module("pandas")            # imported by the functions that read tables, not by the kernel


pa = lazy_module("pyarrow")


pc = lazy_module("pyarrow.compute")


def _lut_apply(lut: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """lut[codes], skipped when the lookup table is the identity (the common case)."""
    if len(codes) == 0 or (len(lut) and lut[0] == 0 and np.array_equal(lut, np.arange(len(lut)))):
        return codes
    return lut[codes]


def lookup_rel(q_tcode, q_dcode, q_grade, t_code, r_dcode, n_topics, n_docs) -> np.ndarray:
    """Per run row: its judgment grade, RELVALUE_UNJUDGED (grade < 0) or RELVALUE_NONPOOL."""
    g = np.where(q_grade < 0, RELVALUE_UNJUDGED, q_grade)
    if n_topics * n_docs <= 30_000_000 and (len(g) == 0 or (g.min() >= -128 and g.max() <= 127)):
        lut = np.full(n_topics * n_docs, RELVALUE_NONPOOL, dtype=np.int8)   # dense (topic, doc) table
        lut[q_tcode * n_docs + q_dcode] = g      # duplicates were resolved by the reader (last wins here)
        return lut[t_code * n_docs + r_dcode].astype(np.int64)
    q_key = q_tcode * n_docs + q_dcode
    srt = np.argsort(q_key, kind="stable")
    q_key_s, g_s = q_key[srt], g[srt]
    r_key = t_code * n_docs + r_dcode
    rel = np.full(len(r_key), RELVALUE_NONPOOL, dtype=np.int64)
    if len(r_key) and len(q_key_s):
        pos = np.minimum(np.searchsorted(q_key_s, r_key), len(q_key_s) - 1)
        found = q_key_s[pos] == r_key
        rel[found] = g_s[pos[found]]
    return rel


def _merged(chunks: list, rows: int) -> list:
    """Consecutive chunks concatenated into arrays of about `rows` rows (at least one chunk each)."""
    out, cur, n = [], [], 0
    for ch in chunks:
        cur.append(ch)
        n += len(ch)
        if n >= rows:
            out.append(pa.concat_arrays(cur) if len(cur) > 1 else cur[0])
            cur, n = [], 0
    if cur:
        out.append(pa.concat_arrays(cur) if len(cur) > 1 else cur[0])
    return out


def dict_codes(col, values: list[str]) -> np.ndarray:
    """Per row of a (chunked, possibly dictionary-encoded) string column: its index in `values`, -1 if
    absent. Dictionary chunks are looked up once per distinct value."""
    vs = pa.array(values, pa.string())
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    if len(chunks) > 1 and not any(pa.types.is_dictionary(ch.type) for ch in chunks):
        chunks = _merged(chunks, 1 << 20)          # index_in hashes `values` once per call, not per chunk
    out = []
    for ch in chunks:
        if pa.types.is_dictionary(ch.type):
            lut = pc.fill_null(pc.index_in(ch.dictionary, value_set=vs), -1).to_numpy()
            out.append(lut[ch.indices.to_numpy()])
        else:
            out.append(pc.fill_null(pc.index_in(ch, value_set=vs), -1).to_numpy())
    return np.concatenate(out) if out else np.zeros(0, np.int32)


def ranked_rows(runs: pd.DataFrame, depth: int | None = None, by_name: bool = False
                ) -> tuple[np.ndarray, np.ndarray]:
    """trec_eval's ranking of run rows (columns run, topic, doc, score): (positional row indices in
    trec_eval order, each row's 1-based rank in its (run, topic)). Groups come runs then topics in order
    of first appearance (`by_name`: in byte order of their names); within a group score descending,
    ties by document id descending in byte order (equal rows keep file order). With `depth`, only
    rows ranked <= depth."""
    n = len(runs)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rc, r_names = _str_codes(runs["run"])
    tc, t_names = _str_codes(runs["topic"])
    if by_name:
        rc, tc = byte_rank(r_names)[rc], byte_rank(t_names)[tc]
    dc, d_names = _str_codes(runs["doc"])
    score = runs["score"].to_numpy(np.float64)
    n_t = max(len(t_names), 1)
    rows = order_rows(trec_order(rc, tc, score, n_t, vocab_tie_order(d_names, dc)), n)
    g = (rc * n_t + tc)[rows]
    first = np.concatenate(([True], g[1:] != g[:-1]))
    rank = np.arange(n, dtype=np.int64) - np.maximum.accumulate(np.where(first, np.arange(n), 0)) + 1
    if depth is not None:
        keep = rank <= depth
        rows, rank = rows[keep], rank[keep]
    return rows, rank


def ranked_doc_lists(runs, run_names, depth: int | None = None) -> dict[tuple[str, str], list[str]]:
    """{(run, topic): documents in trec_eval order} for the runs named (first `depth` per topic), from
    one `ranked_rows` over those runs' rows: names are compared by code, documents turned to text once."""
    want = {str(r) for r in run_names}
    rc, r_names = _str_codes(runs["run"])
    keep = np.flatnonzero(np.isin(rc, np.flatnonzero(np.isin(r_names.astype(str), list(want)))))
    sub = runs.iloc[keep]
    if not len(sub):
        return {}
    rows, _ = ranked_rows(sub, depth or None)
    src, s_runs = _str_codes(sub["run"])
    stc, s_topics = _str_codes(sub["topic"])
    dc, d_names = _str_codes(sub["doc"])
    g = (src * max(len(s_topics), 1) + stc)[rows]
    docs = d_names.astype(str)[dc[rows]].tolist()
    cut = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1], [True])))
    n_t = max(len(s_topics), 1)
    return {(str(s_runs[g[i] // n_t]), str(s_topics[g[i] % n_t])): docs[i:j] for i, j in zip(cut[:-1], cut[1:])}


def _join_codes(runs: pd.DataFrame, qrels: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Topic and document codes shared by run rows (first len(runs)) and judgment rows (the rest),
    equal for equal text: (topic codes, doc codes, number of topics, number of docs)."""
    tc, t_names = _str_codes(pd.concat([runs["topic"].astype(object), qrels["topic"].astype(object)],
                                       ignore_index=True))
    dc, d_names = _str_codes(pd.concat([runs["doc"].astype(object), qrels["doc"].astype(object)],
                                       ignore_index=True))
    return tc, dc, max(len(t_names), 1), max(len(d_names), 1)


def judgment_keys(runs: pd.DataFrame, qrels: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, int]:
    """The join of run rows with judgments on (topic, doc) as text: (per run row, per judgment row) a
    code of its (topic, doc) pair, equal codes for equal pairs; and the number of codes."""
    n = len(runs)
    if n + len(qrels) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    tc, dc, _, n_d = _join_codes(runs, qrels)
    codes, uniq = pd.factorize(tc * n_d + dc)
    codes = codes.astype(np.int64)
    return codes[:n], codes[n:], len(uniq)


def run_grades(runs: pd.DataFrame, qrels: pd.DataFrame) -> np.ndarray:
    """The judgment of each run row joined on (topic, doc): its grade (>= 0), RELVALUE_UNJUDGED for a
    pooled but unjudged document (grade < 0 in the judgments) and RELVALUE_NONPOOL without one."""
    if len(runs) == 0:
        return np.zeros(0, np.int64)
    tc, dc, n_t, n_d = _join_codes(runs, qrels)
    n = len(runs)
    return lookup_rel(tc[n:], dc[n:], qrels["grade"].to_numpy(np.int64), tc[:n], dc[:n], n_t, n_d)


def judged_at(group: np.ndarray, rank: np.ndarray, rel: np.ndarray, k: int, n_groups: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """judged@k counts per group from per-row group index, rank and judgment (`rel`, as run_grades or
    Ranked.rel): (rows ranked <= k that carry a judgment (rel >= 0), rows ranked <= k)."""
    top = rank <= k
    g = np.asarray(group, np.int64)[top]
    judged = np.bincount(g, weights=(np.asarray(rel)[top] >= 0), minlength=n_groups).astype(np.int64)
    return judged, np.bincount(g, minlength=n_groups).astype(np.int64)


def judged_share_at(runs: pd.DataFrame, qrels: pd.DataFrame, depths: tuple[int, ...] = (10,)
                    ) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """judged@k: per run (in order of first appearance), the share of its top-k documents over all its
    topics that carry a judgment (grade >= 0); NaN for a run with no rows. (run names, {k: shares})."""
    rc, r_names = _str_codes(runs["run"])
    rows, rank = ranked_rows(runs, max(depths) if depths else 0)
    rel = run_grades(runs.iloc[rows], qrels)
    out = {}
    for k in depths:
        num, den = judged_at(rc[rows], rank, rel, k, len(r_names))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[k] = np.where(den > 0, num / np.maximum(den, 1), np.nan)
    return r_names, out


def ranked_judgment_rows(r: Ranked, q_topic: np.ndarray, q_doc) -> np.ndarray:
    """The join of a `Ranked`'s rows with judgment rows: per row, the index of its (topic, doc) judgment
    (the last of equal ones, as the readers resolve duplicates), -1 when none. `q_topic`: per judgment
    row its index in r.topic_names (-1 when unknown); `q_doc`: its document id."""
    q_topic = np.asarray(q_topic, np.int64)
    if r.n_rows == 0 or len(q_topic) == 0:
        return np.full(r.n_rows, -1, np.int64)
    codes, uniq = pd.factorize(np.concatenate((np.asarray(r.doc, dtype=object), np.asarray(q_doc, dtype=object))))
    nd = max(len(uniq), 1)
    rkey = r.g_topic[r.row_group].astype(np.int64) * nd + codes[: r.n_rows]
    qkey = np.where(q_topic >= 0, q_topic * nd + codes[r.n_rows:], -1)
    return _key_lookup(qkey, rkey, np.ones(len(rkey), bool))


def _key_lookup(q_key: np.ndarray, r_key: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per r_key: the index of the last equal q_key (the judgment row), -1 if none or not `valid`."""
    out = np.full(len(r_key), -1, np.int64)
    if len(q_key) == 0 or len(r_key) == 0:
        return out
    order = np.argsort(q_key, kind="stable")
    ks = q_key[order]
    last = np.concatenate((ks[1:] != ks[:-1], [True]))
    ks, pos_of = ks[last], order[last]
    sel = np.flatnonzero(valid)
    p = np.minimum(np.searchsorted(ks, r_key[sel]), len(ks) - 1)
    hit = ks[p] == r_key[sel]
    out[sel[hit]] = pos_of[p[hit]]
    return out


def rename_runs(df: pd.DataFrame, rename: dict[str, str], column: str = "run") -> pd.DataFrame:
    """`df` with store run tags replaced by campaign names (categorical or plain column), in place."""
    if not rename or df is None or len(df) == 0:
        return df
    col = df[column]
    if isinstance(col.dtype, pd.CategoricalDtype):
        df[column] = col.cat.rename_categories([rename.get(r, r) for r in col.cat.categories])
    else:
        df[column] = col.map(lambda r: rename.get(r, r))
    return df

