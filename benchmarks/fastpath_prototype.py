"""Prototype of a faster read_runs + build_ranked, for the lead to fold into formats.py / ranking.py.

Not imported by the engine. `python3 benchmarks/fastpath_prototype.py DIR` (a campaign directory with
runs/*.txt and judgments/qrels.txt) times the engine's path against this one and checks that both
build identical `Ranked` structures and identical measure values.

The two changes:
1. read_runs_fast: parse clean files (single-space separated, no tabs/comments/CR) with Arrow's
   multi-threaded CSV reader instead of pandas' tokenizer; any file that is not clean, or that Arrow
   rejects, goes through the existing validating reader (same messages). Run, topic and doc come back
   as pandas Categoricals whose categories are sorted (so sorting by them is still lexical and
   `==`/isin/merge work as on strings); no Python str object is made per row.
2. build_ranked_fast: takes integer codes from categorical columns (or factorizes once), maps the
   few topic/run names with a lookup table instead of `Series.map(dict)` over every row, and replaces
   the 4-key `np.lexsort` by one argsort of a composite int64 key (run*topics + topic, dense score
   rank descending, docno rank descending), falling back to lexsort if the key could overflow.
"""
from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.errors import FormatError, Problem, Warnings  # noqa: E402
from engine.ranking import (BOGUS_DOCNO, RELVALUE_NONPOOL, RELVALUE_UNJUDGED, CranfieldError,  # noqa: E402
                            EvalOptions, Ranked, _seg_starts)


# ----------------------------------------------------------------------------- reading

def _clean_for_arrow(data: bytes) -> bool:
    """No tab, CR or comment (one-byte scans). Double, leading or trailing spaces need no scan: they
    make extra columns, which Arrow rejects; blank lines are caught by the row count."""
    return len(data) > 0 and b"\t" not in data and b"\r" not in data and b"#" not in data


def _arrow_table(data: bytes):
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = ["topic", "q0", "doc", "rank", "score", "tag"]
    types = {"topic": pa.string(), "q0": pa.string(), "doc": pa.string(), "rank": pa.int64(),
             "score": pa.float64(), "tag": pa.string()}
    return pacsv.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(column_names=names),
                          parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False,
                                                           double_quote=False),
                          convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                               quoted_strings_can_be_null=False))


def _sorted_categorical(chunked) -> pd.Categorical:
    """An Arrow string column as a Categorical with lexically (byte-order) sorted categories."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = chunked.combine_chunks() if isinstance(chunked, pa.ChunkedArray) else chunked
    de = arr.dictionary_encode()
    dic = de.dictionary
    order = pc.array_sort_indices(dic).to_numpy()
    rank = np.empty(len(order), np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    codes = rank[de.indices.to_numpy()]
    cats = np.asarray(dic.take(pa.array(order)).to_numpy(zero_copy_only=False), dtype=object)
    return pd.Categorical.from_codes(codes, categories=pd.Index(cats, dtype=object), validate=False)


def _grouped_categorical(chunked) -> pd.Categorical:
    """Like _sorted_categorical for a column made of long runs of equal values (topic ids in run
    files): only the first value of each run of equal values is hashed."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = chunked.combine_chunks() if isinstance(chunked, pa.ChunkedArray) else chunked
    n = len(arr)
    if n == 0:
        return _sorted_categorical(arr)
    change = np.ones(n, bool)
    change[1:] = pc.not_equal(arr.slice(1), arr.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    heads = np.flatnonzero(change)
    cat = _sorted_categorical(arr.take(pa.array(heads)))
    codes = np.repeat(np.asarray(cat.codes), np.diff(np.append(heads, n)))
    return pd.Categorical.from_codes(codes, dtype=cat.dtype, validate=False)


def _duplicate_rows(run_c: np.ndarray, topic_c: np.ndarray, doc_c: np.ndarray, n_topics: int,
                    n_docs: int) -> np.ndarray:
    """Rows whose (run, topic, doc) occurred before. Rows of a run are contiguous (one file each):
    per run, a scatter/gather in one reusable (topic, doc) table finds whether anything repeats;
    only then the hash-based check runs."""
    n = len(doc_c)
    if n == 0:
        return np.zeros(0, bool)
    size = n_topics * n_docs
    if size > 50_000_000:
        key = (run_c.astype(np.int64) * n_topics + topic_c) * n_docs + doc_c
        return pd.Series(key).duplicated(keep="first").to_numpy()
    buf = np.full(size, -1, dtype=np.int32)
    starts = np.flatnonzero(np.concatenate(([True], run_c[1:] != run_c[:-1])))
    ends = np.append(starts[1:], n)
    any_dup = False
    for a, b in zip(starts, ends):
        k = topic_c[a:b].astype(np.int64) * n_docs + doc_c[a:b]
        buf[k] = np.arange(b - a, dtype=np.int32)          # a repeated key keeps its last row
        if not np.array_equal(buf[k], np.arange(b - a, dtype=np.int32)):
            any_dup = True
        buf[k] = -1
        if any_dup:
            break
    if not any_dup:
        return np.zeros(n, bool)
    key = (run_c.astype(np.int64) * n_topics + topic_c) * n_docs + doc_c
    return pd.Series(key).duplicated(keep="first").to_numpy()


def read_runs_fast(paths, warnings: Warnings | None = None) -> pd.DataFrame:
    """Same table as engine.read_runs (plus categorical string columns), faster on clean files."""
    import pyarrow as pa

    from engine import formats as F

    w = warnings if warnings is not None else Warnings()
    tables, slow = [], []
    for p in paths:
        data = F.read_bytes(p)
        tab = None
        if _clean_for_arrow(data):
            try:
                tab = _arrow_table(data)
            except Exception:  # malformed: the validating reader reports it
                tab = None
            n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
            if tab is not None and (tab.column("score").null_count or len(tab) != n_lines):
                tab = None  # NaN/empty scores or blank lines: the validating reader words it
        if tab is None or len(tab) == 0:
            slow.append(p)
            continue
        tags = tab.column("tag")
        tag = tags[0].as_py()
        if not pa.compute.all(pa.compute.equal(tags, tag)).as_py():
            slow.append(p)  # let the reader word the warning
            continue
        tables.append((p, tag, tab))
    frames = []
    if slow:
        frames.append(F.read_runs(slow, w))
    seen = {}
    if frames:
        for t in dict.fromkeys(frames[0]["run"].tolist()):
            seen[t] = "an earlier file"
    problems = []
    for p, tag, _ in tables:
        if tag in seen:
            problems.append(Problem(str(p), 1, f"run tag {tag!r} is also the tag of {seen[tag]}"))
        seen[tag] = str(p)
    if problems:
        raise FormatError(problems, hint="every run needs a distinct tag; edit the 6th column of one file")
    if tables:
        lens = [len(t) for _, _, t in tables]
        big = pa.concat_tables([t for _, _, t in tables])
        topic = _grouped_categorical(big.column("topic"))
        doc = _sorted_categorical(big.column("doc"))
        run_names = [tag for _, tag, _ in tables]
        run = pd.Categorical.from_codes(np.repeat(np.arange(len(run_names), dtype=np.int32), lens),
                                        categories=pd.Index(run_names, dtype=object), validate=False)
        line = np.concatenate([np.arange(1, n + 1, dtype=np.int64) for n in lens])
        df = pd.DataFrame({"run": run, "topic": topic, "doc": doc,
                           "rank": big.column("rank").to_numpy(), "score": big.column("score").to_numpy(),
                           "line": line})
        # a document twice in a run's topic: first kept, repeat reported (as the reader does)
        dup = _duplicate_rows(np.asarray(run.codes), np.asarray(topic.codes), np.asarray(doc.codes),
                              len(topic.categories), len(doc.categories))
        if dup.any():
            path_of = {tag: str(p) for p, tag, _ in tables}
            for i in np.flatnonzero(dup)[:50]:
                r = df.iloc[i]
                w.add(path_of[r["run"]], int(r["line"]), f"document {r['doc']} retrieved twice for topic "
                      f"{r['topic']}; rule: the first occurrence is kept, this one is ignored")
            df = df[~dup]
        frames.append(df)
    if len(frames) == 1:
        return frames[0]
    return pd.concat([f.astype({"run": object, "topic": object, "doc": object}) for f in frames],
                     ignore_index=True)


# ----------------------------------------------------------------------------- building Ranked

def _str_codes(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(codes, names): integer codes per row and the distinct names as str, without per-row hashing
    when the column is categorical."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes = col.cat.codes.to_numpy(np.int64)
        names = np.asarray(col.cat.categories, dtype=object)
    else:
        vals = col.to_numpy(object)
        codes, names = pd.factorize(vals, sort=False)
        codes = codes.astype(np.int64)
        names = np.asarray(names, dtype=object)
    if not all(type(x) is str for x in names):  # e.g. integer topic ids: same text, same code
        s = np.asarray([str(x) for x in names], dtype=object)
        c2, names = pd.factorize(s, sort=False)
        codes = c2[codes].astype(np.int64)
        names = np.asarray(names, dtype=object)
    return codes, names


def _byte_rank(names: np.ndarray) -> np.ndarray:
    """Rank of each name in strcmp (UTF-8 byte = code point) order."""
    order = np.argsort(names.astype(str), kind="stable") if len(names) else np.zeros(0, np.int64)
    rank = np.empty(len(names), np.int64)
    rank[order] = np.arange(len(names))
    return rank


def trec_order(run_code, t_code, score, d_rank, n_topics, n_docs) -> np.ndarray:
    """Row order (run, topic, score desc, docno desc).

    Run files are nearly always in this order already except among tied scores: then only the tied
    rows are re-sorted (by docno). Otherwise one int64 argsort of a composite key, or lexsort if the
    key could overflow.
    """
    n = len(score)
    if n == 0:
        return np.zeros(0, np.int64)
    gid = run_code * max(n_topics, 1) + t_code
    d_desc = (n_docs - 1 - d_rank).astype(np.int64)
    same_g = gid[1:] == gid[:-1]
    if (gid[1:] >= gid[:-1]).all() and (~same_g | (score[1:] <= score[:-1])).all():
        tie = same_g & (score[1:] == score[:-1])          # row i+1 tied with row i
        order = np.arange(n, dtype=np.int64)
        if tie.any():
            in_tie = np.zeros(n, bool)
            in_tie[1:] |= tie
            in_tie[:-1] |= tie
            idx = np.flatnonzero(in_tie)
            tied_to_prev = np.concatenate(([False], tie))[idx]
            seg = np.cumsum(~tied_to_prev)
            order[idx] = idx[np.lexsort((d_desc[idx], seg))]
        return order
    uniq, inv = np.unique(score, return_inverse=True)
    s_desc = (len(uniq) - 1 - inv).astype(np.int64)
    n_g = (int(run_code.max()) + 1) * max(n_topics, 1)
    if float(n_g) * len(uniq) * n_docs < 2.0 ** 62:
        key = (gid * len(uniq) + s_desc) * n_docs + d_desc
        return np.argsort(key, kind="stable")
    return np.lexsort((d_desc, s_desc, t_code, run_code))


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


def build_ranked_fast(qrels: pd.DataFrame, runs: pd.DataFrame, options: EvalOptions | None = None,
                      run_order: list[str] | None = None) -> tuple[Ranked, dict]:
    """engine.ranking.build_ranked with integer codes throughout (same result)."""
    opt = options or EvalOptions()
    if opt.rel_level < 0:
        raise CranfieldError(f"-l {opt.rel_level}: the relevance level must be >= 0")
    if opt.max_depth is not None and opt.max_depth < 0:
        raise CranfieldError(f"-M {opt.max_depth}: the evaluation depth must be >= 0")
    notes: dict = {}
    qt_codes, qt_names = _str_codes(qrels["topic"])
    q_grade = qrels["grade"].to_numpy(np.int64)
    topic_names = sorted(set(qt_names.tolist()), key=lambda s: s.encode("utf-8"))
    topic_index = {t: i for i, t in enumerate(topic_names)}
    n_topics = len(topic_names)
    q_tcode = np.asarray([topic_index[t] for t in qt_names], np.int64)[qt_codes] if len(qt_codes) else qt_codes

    rr_codes, rr_names = _str_codes(runs["run"])
    rt_codes, rt_names = _str_codes(runs["topic"])
    rd_codes, rd_names = _str_codes(runs["doc"])
    r_score = runs["score"].to_numpy(np.float64)

    if run_order is None:
        first = pd.unique(rr_codes) if len(rr_codes) else np.zeros(0, np.int64)
        run_names = [rr_names[i] for i in first]
    else:
        run_names = list(run_order)
    run_index = {r: i for i, r in enumerate(run_names)}
    run_lut = np.asarray([run_index.get(r, -1) for r in rr_names], np.int64)
    run_code = run_lut[rr_codes] if len(rr_codes) else rr_codes

    t_lut = np.asarray([topic_index.get(t, -1) for t in rt_names], np.int64)
    t_code = t_lut[rt_codes] if len(rt_codes) else rt_codes
    known = t_code >= 0
    if not known.all():
        notes["topics_without_judgments"] = sorted(set(rt_names[np.unique(rt_codes[~known])].tolist()))
        run_code, t_code, rd_codes, r_score = run_code[known], t_code[known], rd_codes[known], r_score[known]

    # documents: the runs' vocabulary plus judged documents no run retrieved
    q_doc = qrels["doc"]
    if isinstance(q_doc.dtype, pd.CategoricalDtype):
        q_doc = q_doc.astype(object)
    q_doc = q_doc.to_numpy(object)
    if not all(type(x) is str for x in q_doc):
        q_doc = np.asarray([str(x) for x in q_doc], dtype=object)
    idx = pd.Index(rd_names).get_indexer(q_doc) if len(rd_names) else np.full(len(q_doc), -1)
    extra = q_doc[idx < 0]
    ec, eu = pd.factorize(extra) if len(extra) else (np.zeros(0, np.int64), np.zeros(0, object))
    q_dcode_raw = idx.astype(np.int64)
    q_dcode_raw[idx < 0] = len(rd_names) + ec
    vocab = np.concatenate((rd_names, np.asarray(eu, dtype=object)))

    missing = np.zeros(0, np.int64)
    if opt.complete and n_topics and run_names:
        present = np.unique(run_code * n_topics + t_code)
        missing = np.setdiff1d(np.arange(len(run_names) * n_topics, dtype=np.int64), present, assume_unique=True)
        if len(missing):
            vocab = np.append(vocab, BOGUS_DOCNO)
            run_code = np.concatenate((run_code, missing // n_topics))
            t_code = np.concatenate((t_code, missing % n_topics))
            rd_codes = np.concatenate((rd_codes, np.full(len(missing), len(vocab) - 1, np.int64)))
            r_score = np.concatenate((r_score, np.ones(len(missing))))
            notes["topics_filled_by_c"] = int(len(missing))
    # BOGUS_DOCNO may also be a real document: equal strings get one code
    if len(vocab) != len(set(vocab.tolist())):
        vc, vu = pd.factorize(vocab)
    else:
        vc, vu = np.arange(len(vocab)), vocab
    vu = np.asarray(vu, dtype=object)
    rank_u = _byte_rank(vu)
    rank_of = rank_u[vc]                      # raw vocabulary index -> strcmp rank
    r_dcode = rank_of[rd_codes] if len(rd_codes) else rd_codes
    q_dcode = rank_of[q_dcode_raw] if len(q_dcode_raw) else q_dcode_raw
    doc_by_rank = np.empty(len(vu), dtype=object)
    doc_by_rank[rank_u] = vu
    n_docs = max(len(vu), 1)

    order = trec_order(run_code, t_code, r_score, r_dcode, n_topics, n_docs)
    run_code, t_code, r_dcode, r_score = run_code[order], t_code[order], r_dcode[order], r_score[order]
    r_doc = doc_by_rank[r_dcode]

    gid = run_code * n_topics + t_code
    starts = _seg_starts(gid)
    g_gid = gid[starts] if len(gid) else np.zeros(0, np.int64)
    lens = np.diff(np.concatenate((starts, [len(gid)]))).astype(np.int64)

    rel = lookup_rel(q_tcode, q_dcode, q_grade, t_code, r_dcode, n_topics, n_docs)

    if (opt.max_depth is not None or opt.judged_only) and len(gid):
        keep = np.ones(len(gid), bool)
        if opt.max_depth is not None:
            pos_in = np.arange(len(gid)) - np.repeat(starts, lens)
            keep &= pos_in < opt.max_depth
        if opt.judged_only:
            keep &= rel >= 0
        row_g = np.repeat(np.arange(len(starts)), lens)
        rel, r_doc, r_score = rel[keep], r_doc[keep], r_score[keep]
        lens = np.bincount(row_g[keep], minlength=len(starts)).astype(np.int64)
    offsets = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)

    g_run = g_gid // max(n_topics, 1)
    g_topic = g_gid % max(n_topics, 1)
    g_missing = np.isin(g_gid, missing) if len(missing) else np.zeros(len(g_gid), bool)

    judged = q_grade >= 0
    max_grade = int(q_grade[judged].max()) if judged.any() else 0
    t_levels = np.zeros((n_topics, max_grade + 1), dtype=np.int64)
    np.add.at(t_levels, (q_tcode[judged], q_grade[judged]), 1)
    jt, jg = q_tcode[judged], q_grade[judged]
    srt = np.lexsort((-jg, jt))
    t_grades = jg[srt]
    t_counts = np.bincount(jt, minlength=n_topics)
    t_grades_offsets = np.concatenate(([0], np.cumsum(t_counts))).astype(np.int64)

    ranked = Ranked(options=opt, run_names=run_names, topic_names=topic_names,
                    g_run=g_run.astype(np.int64), g_topic=g_topic.astype(np.int64), offsets=offsets,
                    rel=rel, doc=r_doc, score=r_score, t_levels=t_levels,
                    t_grades_offsets=t_grades_offsets, t_grades=t_grades, g_missing=g_missing)
    return ranked, notes


# ----------------------------------------------------------------------------- check and time

def _same_ranked(a: Ranked, b: Ranked) -> list[str]:
    diffs = []
    for f in ("run_names", "topic_names"):
        if list(getattr(a, f)) != list(getattr(b, f)):
            diffs.append(f)
    for f in ("g_run", "g_topic", "offsets", "rel", "score", "t_levels", "t_grades_offsets", "t_grades",
              "g_missing"):
        if not np.array_equal(getattr(a, f), getattr(b, f)):
            diffs.append(f)
    if not np.array_equal(np.asarray(a.doc, dtype=object), np.asarray(b.doc, dtype=object)):
        diffs.append("doc")
    return diffs


def main() -> None:
    import engine
    E = sys.modules["engine.evaluate"]
    from engine import ranking as R

    d = Path(sys.argv[1] if len(sys.argv) > 1 else "campaigns/demo")
    q = d / "judgments" / "qrels.txt"
    rp = sorted((d / "runs").glob("*.txt"))
    measures = ["official", "ndcg", "ndcg_cut.10", "recall.100"]
    T = time.perf_counter
    engine.evaluate(engine.read_qrels(q), engine.read_runs(rp[:1]), measures)  # imports
    t0 = T(); qr = engine.read_qrels(q); runs = engine.read_runs(rp); t1 = T()
    ra, _ = R.build_ranked(qr, runs); t2 = T()
    print(f"engine : read {t1 - t0:6.2f} s   build_ranked {t2 - t1:6.2f} s")
    t0 = T(); qr2 = engine.read_qrels(q); runs2 = read_runs_fast(rp); t1 = T()
    rb, _ = build_ranked_fast(qr2, runs2); t2 = T()
    print(f"fast   : read {t1 - t0:6.2f} s   build_ranked {t2 - t1:6.2f} s")
    diffs = _same_ranked(ra, rb)
    print("Ranked identical" if not diffs else f"Ranked differs in {diffs}")
    # end to end with the fast builder patched in
    orig = E.build_ranked
    try:
        E.build_ranked = build_ranked_fast
        t0 = T()
        df_fast = engine.evaluate(engine.read_qrels(q), read_runs_fast(rp), measures)
        t1 = T()
    finally:
        E.build_ranked = orig
    t2 = T()
    df_ref = engine.evaluate(engine.read_qrels(q), engine.read_runs(rp), measures)
    t3 = T()
    same = np.array_equal(df_fast["value"].to_numpy(), df_ref["value"].to_numpy(), equal_nan=True)
    print(f"end to end: engine {t3 - t2:.2f} s, fast path {t1 - t0:.2f} s; values identical: {same}")
    import pytrec_eval
    t0 = T()
    with open(q) as fh:
        qrel = pytrec_eval.parse_qrel(fh)
    ev = pytrec_eval.RelevanceEvaluator(qrel, set(measures))
    for p in rp:
        with open(p) as fh:
            ev.evaluate(pytrec_eval.parse_run(fh))
    print(f"pytrec_eval end to end {T() - t0:.2f} s")


if __name__ == "__main__":
    main()
