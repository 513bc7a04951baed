"""Building `Ranked` from runs and judgments (tables, codes or the Arrow run store), with the per-topic
judgment tables.
"""
from __future__ import annotations

import numpy as np

from ..util.lazy import lazy_module
from ..errors import CranfieldError
from .ranked import (ArrowDocs, BOGUS_DOCNO, EvalOptions, LazyDocs, RELVALUE_NONPOOL, RELVALUE_UNJUDGED, Ranked,
    _SparseRows, _seg_starts)
from .join import PairGrades, _lut_apply, dict_codes, lookup_rel
from ..util.arrowbuf import arrow_bytes
from .order import _str_codes, apply_order, ascending_tie_order, rank_tie_order, trec_order, vocab_tie_order

pd = lazy_module("pandas")            # imported by the functions that read tables, not by the kernel


pa = lazy_module("pyarrow")


pc = lazy_module("pyarrow.compute")


def build_ranked(qrels: pd.DataFrame, runs: pd.DataFrame, options: EvalOptions | None = None,
                 run_order: list[str] | None = None, presorted: bool = False) -> tuple[Ranked, dict]:
    """Join runs with qrels into a `Ranked` structure, with integer codes throughout.

    Returns the structure and a notes dict (topics ignored because they have no judgments, etc.)
    so the caller can report what was left out. `presorted` promises the rows are already in
    trec_eval order (runs in `run_order`, topics in byte order; the run store's order).
    """
    opt = options or EvalOptions()
    _check_options(opt)
    notes: dict = {}
    topic_names, q_tcode, q_grade = _judged_topics(qrels)
    topic_index = {t: i for i, t in enumerate(topic_names)}

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
    run_code = _lut_apply(run_lut, rr_codes)
    if (run_code < 0).any():
        raise CranfieldError(f"run {rr_names[int(rr_codes[np.argmax(run_code < 0)])]!r} is not in run_order")

    t_lut = np.asarray([topic_index.get(t, -1) for t in rt_names], np.int64)
    t_code = _lut_apply(t_lut, rt_codes)
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

    ranked = ranked_from_codes(opt, run_names, topic_names, run_code, t_code, r_score, rd_codes, vocab,
                               q_tcode, q_dcode_raw, q_grade, notes, presorted=presorted)
    return ranked, notes


def ranked_from_codes(opt: EvalOptions, run_names: list[str], topic_names: list[str], run_code: np.ndarray,
                      t_code: np.ndarray, r_score: np.ndarray, d_code: np.ndarray, vocab: np.ndarray,
                      q_tcode: np.ndarray, q_dcode: np.ndarray, q_grade: np.ndarray, notes: dict, *,
                      presorted: bool = False, d_rank: np.ndarray | None = None,
                      bogus: int | None = None, tie_order=None, topic_arrays=None,
                      rel: np.ndarray | None = None) -> Ranked:
    """The `Ranked` of run rows given as codes (run, judged topic, document into `vocab`; the judgments'
    documents coded into the same `vocab`): -c's stand-in rows, trec_eval's order, the grades. `d_rank`:
    each document's rank in strcmp order (computed when None); `bogus`: BOGUS_DOCNO's code when `vocab`
    holds it (else it is appended when -c needs it); `tie_order`: `trec_order`'s tie-breaker when the caller
    has one (e.g. `arrow_tie_order` of the rows' document column; `vocab`'s ids are then distinct). The
    arrays may be reordered in place. `topic_arrays`: `topic_judgments` of these judgments, when the
    caller keeps them (one judgment file, many runs). `rel`: the rows' grades when the caller joined them
    (`join.PairGrades`); `q_dcode` then serves only -c's stand-in rows, and `vocab` may hold a string
    twice (e.g. one entry per row)."""
    n_topics = len(topic_names)
    missing = np.zeros(0, np.int64)
    if opt.complete and n_topics and run_names:
        present = np.zeros(len(run_names) * n_topics, bool)     # (np.unique would import numpy.ma)
        present[run_code * n_topics + t_code] = True
        missing = np.flatnonzero(~present).astype(np.int64)
        if len(missing):
            if bogus is None:
                vocab = np.append(vocab, BOGUS_DOCNO)
                bogus = len(vocab) - 1
            run_code = np.concatenate((run_code, missing // n_topics))
            t_code = np.concatenate((t_code, missing % n_topics))
            d_code = np.concatenate((d_code, np.full(len(missing), bogus, np.int64)))
            r_score = np.concatenate((r_score, np.ones(len(missing))))
            notes["topics_filled_by_c"] = int(len(missing))
    # BOGUS_DOCNO may also be a real document: equal strings get one code (for the join: not with `rel`)
    if d_rank is None and tie_order is None and rel is None and len(vocab) != len(set(vocab.tolist())):
        vc, vu = pd.factorize(vocab)
        r_dcode = vc[d_code] if len(d_code) else d_code
        q_dcode = vc[q_dcode] if len(q_dcode) else q_dcode
    else:
        vu, r_dcode = vocab, d_code
    if vu.dtype.kind != "S":
        vu = np.asarray(vu, dtype=object)
    n_docs = max(len(vu), 1)

    # documents are ranked in strcmp order (tie-breaking) only for the rows that must move
    if presorted:
        # store order already; -c fill rows (one per missing group) are moved into place
        order = np.argsort(run_code * n_topics + t_code, kind="stable") if len(missing) else None
    else:
        if tie_order is None:
            tie_order = vocab_tie_order(vu, r_dcode) if d_rank is None else rank_tie_order(d_rank, r_dcode)
        order = trec_order(run_code, t_code, r_score, n_topics, tie_order)
    if isinstance(order, tuple):
        # the partial reorder works in place: the code arrays are this function's own (_str_codes
        # returns fresh int64 arrays); the scores may be a view of `runs`
        r_score = r_score.copy()
    if rel is None:
        run_code, t_code, r_dcode, r_score = apply_order(order, run_code, t_code, r_dcode, r_score)
        rel = lookup_rel(q_tcode, q_dcode, q_grade, t_code, r_dcode, n_topics, n_docs)
    else:
        if len(missing):                 # the stand-in rows' grades (a judged BOGUS_DOCNO counts)
            rel = np.concatenate((rel, lookup_rel(q_tcode, q_dcode, q_grade, t_code[-len(missing):],
                                                  r_dcode[-len(missing):], n_topics, n_docs)))
        run_code, t_code, r_dcode, r_score, rel = apply_order(order, run_code, t_code, r_dcode, r_score, rel)
    return _assemble(opt, run_names, topic_names, run_code, t_code, r_score, rel, LazyDocs(vu, r_dcode),
                     q_tcode, q_grade, missing, topic_arrays=topic_arrays)


def _assemble(opt: EvalOptions, run_names: list[str], topic_names: list[str], run_code: np.ndarray,
              t_code: np.ndarray, r_score: np.ndarray, rel: np.ndarray, r_doc, q_tcode: np.ndarray,
              q_grade: np.ndarray, missing: np.ndarray, row_qrel=None, topic_arrays=None,
              drop: np.ndarray | None = None) -> Ranked:
    """The `Ranked` of rows already in trec_eval order with their grades (-M, -J applied here; with
    `ascending_ties`, tied scores reordered by document id ascending first). `topic_arrays`:
    `topic_judgments(...)` of these judgments, when the caller has them already; `drop`: rows removed
    after grouping (a stand-in row keeps an empty ranking as a group of length 0)."""
    n_topics = len(topic_names)
    gid = run_code.astype(np.int64) * n_topics + t_code
    starts = _seg_starts(gid)
    g_gid = gid[starts] if len(gid) else np.zeros(0, np.int64)
    offsets = np.append(starts, len(gid)).astype(np.int64)     # as long as no row is dropped

    if opt.ascending_ties and len(gid):
        perm = ascending_tie_order(gid, r_score)
        if perm is not None:
            rel, r_score, r_doc = rel[perm], r_score[perm], r_doc.subset(perm)
            row_qrel = row_qrel.subset(perm) if row_qrel is not None else None
            drop = drop[perm] if drop is not None else None
    if (opt.max_depth is not None or opt.judged_only or drop is not None) and len(gid):
        keep = np.ones(len(gid), bool) if drop is None else ~drop
        lens = np.diff(offsets)
        if opt.max_depth is not None:
            pos_in = np.arange(len(gid)) - np.repeat(starts, lens)
            keep &= pos_in < opt.max_depth
        if opt.judged_only:
            keep &= rel >= 0
        if not keep.all():                   # (-M deeper than every ranking keeps every row)
            row_g = np.repeat(np.arange(len(starts)), lens)
            rel, r_score = rel[keep], r_score[keep]
            r_doc = r_doc.subset(keep)
            if row_qrel is not None:
                row_qrel = row_qrel.subset(keep)
            lens = np.bincount(row_g[keep], minlength=len(starts)).astype(np.int64)
            offsets = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)

    g_run = g_gid // max(n_topics, 1)
    g_topic = g_gid % max(n_topics, 1)
    g_missing = np.isin(g_gid, missing) if len(missing) else np.zeros(len(g_gid), bool)

    t_levels, t_grades_offsets, t_grades, *lg = topic_arrays or topic_judgments(n_topics, q_tcode, q_grade)
    ranked = Ranked(options=opt, run_names=run_names, topic_names=topic_names,
                    g_run=g_run.astype(np.int64), g_topic=g_topic.astype(np.int64), offsets=offsets,
                    rel=rel, doc=r_doc, score=r_score, t_levels=t_levels, t_level_grades=lg[0] if lg else None,
                    t_grades_offsets=t_grades_offsets, t_grades=t_grades, g_missing=g_missing)
    if row_qrel is not None:
        ranked.caches.setdefault("est", {})["row_index_sparse"] = row_qrel
    return ranked


DENSE_LEVELS = 4096   # above this highest grade, t_levels has a column per grade judged, not per 0..max


def topic_judgments(n_topics: int, q_tcode: np.ndarray, q_grade: np.ndarray, max_grade: int | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Per topic the judged documents per grade (topics x 0..max grade; topics x the grades judged, in
    order, when the highest grade is above DENSE_LEVELS), the judged grades sorted descending in CSR
    form (offsets, grades), and the grade of each column (None for 0..max grade). `max_grade`: the
    dense width (default: the highest judged grade), e.g. a subset's keeping its full judgments' width."""
    judged = q_grade >= 0
    jt, jg = q_tcode[judged], q_grade[judged]
    if max_grade is None:
        max_grade = int(jg.max()) if len(jg) else 0
    if max_grade < DENSE_LEVELS:
        grades, col = None, jg
        t_levels = np.zeros((n_topics, max_grade + 1), dtype=np.int64)
    else:
        grades, col = np.unique(jg, return_inverse=True)
        grades = grades.astype(np.int64)
        t_levels = np.zeros((n_topics, len(grades)), dtype=np.int64)
    np.add.at(t_levels, (jt, col), 1)
    srt = np.lexsort((-jg, jt))
    t_counts = np.bincount(jt, minlength=n_topics)
    return t_levels, np.concatenate(([0], np.cumsum(t_counts))).astype(np.int64), jg[srt], grades


def _judged_topics(qrels: pd.DataFrame) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(judged topics in byte order, per qrels row its topic index, per row its grade)."""
    qt_codes, qt_names = _str_codes(qrels["topic"])
    topic_names = sorted(set(qt_names.tolist()), key=lambda s: s.encode("utf-8"))
    index = {t: i for i, t in enumerate(topic_names)}
    q_tcode = np.asarray([index[t] for t in qt_names], np.int64)[qt_codes] if len(qt_codes) else qt_codes
    return topic_names, q_tcode, qrels["grade"].to_numpy(np.int64)


def _check_options(opt: EvalOptions) -> None:
    if opt.rel_level < 0:
        raise CranfieldError(f"-l {opt.rel_level}: the relevance level must be >= 0 (grades below 0 mark "
                             "pooled-but-unjudged documents); use -l 0 to count every judged document")
    if opt.max_depth is not None and opt.max_depth < 0:
        raise CranfieldError(f"-M {opt.max_depth}: the evaluation depth must be >= 0")


class ArrowJudgments:
    """Judgments prepared once for `ranked_from_arrow` on many tables (e.g. the blocks of one
    evaluation): judged topics, per row topic code and grade, the sorted pair keys, per-topic tables."""

    def __init__(self, qrels: pd.DataFrame):
        self.qrels = qrels
        self.topic_names, self.q_tcode, self.q_grade = _judged_topics(qrels)
        self.pairs = PairGrades(self.q_tcode, arrow_bytes(_text_arrow(qrels["doc"])), self.q_grade)
        self.topic_arrays = topic_judgments(len(self.topic_names), self.q_tcode, self.q_grade)
        self.rel = np.where(self.q_grade < 0, RELVALUE_UNJUDGED, self.q_grade)     # per judgment row


def ranked_from_arrow(qrels: pd.DataFrame, table: pa.Table, run_order: list[str],
                      options: EvalOptions | None = None, judged: ArrowJudgments | None = None
                      ) -> tuple[Ranked, dict]:
    """`build_ranked` for an Arrow table in store order (columns run (dictionary), topic, doc, score;
    runs in `run_order`, each in trec_eval order): the join with the judgments is done on Arrow
    strings, no Python string objects are made per row. `judged`: `ArrowJudgments(qrels)` when the
    caller keeps it."""
    opt = options or EvalOptions()
    _check_options(opt)
    notes: dict = {}
    if judged is None or judged.qrels is not qrels:
        judged = ArrowJudgments(qrels)
    topic_names, q_tcode, q_grade, pairs = judged.topic_names, judged.q_tcode, judged.q_grade, judged.pairs
    n_topics = len(topic_names)
    run_names = list(run_order)
    run_index = {r: i for i, r in enumerate(run_names)}

    n = len(table)
    rcol = table.column("run").combine_chunks() if n else None
    run_code = np.zeros(0, np.int64)
    if n:
        rlut = np.asarray([run_index[str(x)] for x in rcol.dictionary.to_pylist()], np.int64)
        run_code = rcol.indices.to_numpy()
        if not np.array_equal(rlut, np.arange(len(rlut))):
            run_code = rlut[run_code]
    t_code = dict_codes(table.column("topic"), topic_names) if n else np.zeros(0, np.int32)
    known = t_code >= 0
    if not known.all():
        rt = pc.unique(table.column("topic").filter(pa.array(~known)).cast(pa.string())).to_pylist()
        notes["topics_without_judgments"] = sorted(rt)
        table = table.filter(pa.array(known))
        run_code, t_code = run_code[known], t_code[known]
        n = len(table)
    r_score = table.column("score").to_numpy() if n else np.zeros(0)
    doc_col = table.column("doc")

    # per row: its judgment row (topic, doc), by the sorted keys of the judged pairs (the last of equal ones)
    pos = pairs.rows(t_code, arrow_bytes(doc_col, multiple=8, copy=False), repeats=True)
    sel = np.flatnonzero(pos >= 0)
    q_sel = pos[sel]

    missing = np.zeros(0, np.int64)
    r_doc = ArrowDocs(doc_col)
    if opt.complete and n_topics and run_names:
        present = np.unique(run_code.astype(np.int64) * n_topics + t_code)
        missing = np.setdiff1d(np.arange(len(run_names) * n_topics, dtype=np.int64), present, assume_unique=True)
        if len(missing):
            bogus_q = pairs.rows(missing % n_topics, np.full(len(missing), BOGUS_DOCNO.encode()), repeats=True)
            row_qrel = np.full(n + len(missing), -1, np.int64)
            row_qrel[sel] = q_sel
            row_qrel[n:] = bogus_q
            run_code = np.concatenate((run_code, missing // n_topics))
            t_code = np.concatenate((t_code, missing % n_topics))
            r_score = np.concatenate((r_score, np.ones(len(missing))))
            r_doc = ArrowDocs(pa.chunked_array(r_doc.arr.chunks + [pa.array([BOGUS_DOCNO] * len(missing), pa.string())],
                                               type=pa.string()))
            order = np.argsort(run_code.astype(np.int64) * n_topics + t_code, kind="stable")
            run_code, t_code, r_score, row_qrel = run_code[order], t_code[order], r_score[order], row_qrel[order]
            r_doc = r_doc.subset(order)
            sel = np.flatnonzero(row_qrel >= 0)
            q_sel = row_qrel[sel]
            notes["topics_filled_by_c"] = int(len(missing))
    rel = np.full(len(run_code), RELVALUE_NONPOOL, np.int64)
    rel[sel] = judged.rel[q_sel]
    row_qrel = _SparseRows(len(rel), sel, q_sel)
    ranked = _assemble(opt, run_names, topic_names, run_code, t_code, r_score, rel, r_doc, q_tcode, q_grade,
                       missing, row_qrel, topic_arrays=judged.topic_arrays)
    return ranked, notes


def _text_arrow(col: pd.Series) -> pa.Array:
    """A table column of ids (text, categorical or numbers) as an Arrow string array, as `astype(str)`
    would spell them."""
    if len(col) == 0:
        return pa.array([], pa.string())
    try:
        arr = pa.array(col, from_pandas=True)
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
            return arr
    except (pa.ArrowException, TypeError, ValueError):
        pass                                 # mixed objects: spelled by pandas
    return pa.array(col.astype(str).to_numpy(object), pa.string())
