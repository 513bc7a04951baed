"""`cranfield eval QRELS RUN [RUN ...]` on small, clean files without pandas (the start-up path).

A fresh process pays for its imports before any work, and pandas and pyarrow cost more than reading and
evaluating a few runs. When the files fit `PLAIN_MAX_BYTES` and the plain readers of `engine.formats`
accept them (what the full readers read without a word, located with numpy and read by the grammar's
column readers), their documents are coded in strcmp order, the ranked lists built by the kernel
(`ranking.ranked_from_codes`, shared with `build_ranked`), the measures computed as `compute` computes
them (`evaluate.measure_values`) and printed by the one trec_eval text writer (`evaluate.trec_eval_text`).
Anything else (a warning or a note to give, an error to report, a measure reading the judgment table)
gives None, and the caller evaluates through `engine.evaluation.evaluate.evaluate_files`, whose messages
and rules hold. The output is the same either way, byte for byte (tests/test_plain_eval.py).

Files too large for that path are evaluated run by run (`trec_eval_lines_streamed`): each run file alone
in a worker process (Arrow's parser for clean files, the plain reader for the others), the same kernel,
measures and writer, so peak memory is one run per core whatever the number of runs, with the same
fallback to the full path (tests/test_streamed_eval.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import CranfieldError
from ..ranking.ranked import EvalOptions

PLAIN_MAX_BYTES = 8_000_000
"""Input bytes (uncompressed, all files) up to which the plain path serves: small evaluations, where the
import of pandas would cost more than the work."""
from ..util import fs


def trec_eval_lines_plain(qrels_path, run_paths: list, measures=None, options: EvalOptions | None = None,
                          per_query: bool = False) -> list[str] | None:
    """trec_eval's text for judgment and run files, evaluated without pandas; None when the files or the
    measures need the full path (see the module docstring)."""
    from .evaluate import trec_eval_text
    from ..formats.plain import plain_qrels, plain_run, strcmp_codes
    from ..formats.files import read_bytes
    from ..measures import resolve
    from ..measures.registry import reads_judgment_table
    from ..ranking.ranked import BOGUS_DOCNO
    from ..ranking.build import ranked_from_codes

    opt = options or EvalOptions()
    if opt.rel_level < 0 or (opt.max_depth is not None and opt.max_depth < 0) or not run_paths:
        return None                          # the full path words the error
    if not plain_sized([qrels_path, *run_paths]):
        return None
    try:
        blobs = [read_bytes(p) for p in [qrels_path, *run_paths]]
        if sum(map(len, blobs)) > PLAIN_MAX_BYTES:
            return None
        requests = resolve(measures)
    except (OSError, CranfieldError):
        return None
    if any(reads_judgment_table(req.measure) for req in requests):
        return None
    q = plain_qrels(qrels_path, blobs[0])
    runs = [plain_run(p, data) for p, data in zip(run_paths, blobs[1:])]
    if q is None or None in runs or len({r[0] for r in runs}) < len(runs):
        return None                          # a file to report on, or two runs with one tag
    (q_heads, q_topics), q_docs, q_grade = q
    topic_names = sorted(set(q_topics), key=lambda t: t.encode("utf-8"))      # trec_eval's (strcmp) order
    tindex = {t: i for i, t in enumerate(topic_names)}
    q_tcode = _per_line([tindex[t] for t in q_topics], q_heads, len(q_docs))

    # one document vocabulary for judgments, runs and trec_eval's -c stand-in, in strcmp order
    parts = [q_docs, *(r[2] for r in runs)] + ([np.array([BOGUS_DOCNO.encode()])] if opt.complete else [])
    width = -(-max(p.dtype.itemsize for p in parts) // 8) * 8          # whole words: strcmp_codes reads them in place
    vocab, codes = strcmp_codes(np.concatenate([p.astype(f"S{width}", copy=False) for p in parts]))
    n_docs = len(vocab)
    q_dcode = codes[:len(q_docs)]
    if _repeats(q_tcode, q_dcode, n_docs):
        return None                          # a document judged twice: read_qrels reports it
    kinds = {n: req for req in requests for n in req.names}
    by: dict = {}
    sby: dict = {}
    at = len(q_docs)
    groups = 0
    for ri, (tag, (heads, topics), docs, scores) in enumerate(runs):
        d_code = codes[at:at + len(docs)].copy()
        at += len(docs)
        t_list = [tindex.get(t, -1) for t in topics]
        if -1 in t_list:
            return None                      # topics without judgments: the full path notes them
        t_code = _per_line(t_list, heads, len(docs))
        if _repeats(t_code, d_code, n_docs):
            return None                      # a document retrieved twice: read_runs reports it
        ranked = ranked_from_codes(opt, [tag], topic_names, np.zeros(len(docs), np.int64), t_code, scores, d_code,
                                   vocab, q_tcode, q_dcode, q_grade, {}, d_rank=np.arange(n_docs),
                                   bogus=int(codes[-1]) if opt.complete else None)
        groups += ranked.n_groups
        _collect(ranked, requests, kinds, tag, ri, by, sby)
    if groups == 0:
        return None                          # nothing evaluated: the full path says so
    return trec_eval_text([r[0] for r in runs], kinds, by, sby, per_query=per_query, numeric=bool(by))


def plain_sized(paths: list) -> bool:
    """Whether the files exist and hold at most `PLAIN_MAX_BYTES` in all (as stored; the plain path
    checks again once they are read, decompressed)."""
    import os
    try:
        return sum(os.path.getsize(p) for p in paths) <= PLAIN_MAX_BYTES
    except (OSError, TypeError, ValueError):
        return False


def _collect(ranked, requests, kinds: dict, tag: str, ri: int, by: dict, sby: dict) -> None:
    """One run's measure values into `trec_eval_text`'s containers: `by[(name, ri)]` numeric,
    `sby[(name, tag)]` text-valued."""
    from .evaluate import measure_values

    topic_of = [ranked.topic_names[t] for t in ranked.g_topic.tolist()]
    values, _ = measure_values(ranked, requests)
    for name, col in values.items():
        m = kinds[name].measure
        if m.value_kind != "str":
            by[(name, ri)] = (topic_of, np.asarray(col, np.float64))
        elif m.per_topic:
            sby[(name, tag)] = dict(zip(topic_of, col.tolist()))


def _per_line(values: list[int], heads: np.ndarray, n: int) -> np.ndarray:
    """Per line the value of its block (blocks start at `heads`)."""
    return np.repeat(np.asarray(values, np.int64), np.diff(np.append(heads, n)))


def _repeats(t_code: np.ndarray, d_code: np.ndarray, n_docs: int) -> bool:
    """Whether a (topic, document) pair occurs twice."""
    key = np.sort(t_code * n_docs + d_code)
    return bool((key[1:] == key[:-1]).any())


# --------------------------------------------------------------------------- many or large files, run by run

_JUDGMENTS: dict = {}      # per process: the prepared judgments of the last judgment file (see _judgments)


def trec_eval_lines_streamed(qrels_path, run_paths: list, measures=None, options: EvalOptions | None = None,
                             per_query: bool = False, workers: int | None = None,
                             meanwhile: Callable[[], None] | None = None) -> tuple[list[str], list[str]] | None:
    """trec_eval's text for judgment and run files and the runs' topics without judgments (left out, for
    the caller to note), each run file read and evaluated alone in a worker process (one run in memory
    per core: peak memory follows the largest run, not the number of runs); None when a file or a
    measure needs the full path (`evaluate.evaluate_files`, which words every problem and warning), as
    `trec_eval_lines_plain`. The output is the same, byte for byte. A run given as a `PartRun` is read
    from its run store part (a campaign's store path: `seam.campaign_trec_lines`). `meanwhile`: the
    caller's work beside the runs' (`util.parallel.map_tasks`)."""
    import os

    from ..measures import resolve
    from ..measures.registry import reads_judgment_table
    from ..util.parallel import map_tasks

    opt = options or EvalOptions()
    paths = [p if isinstance(p, PartRun) else str(p) for p in run_paths]
    if opt.rel_level < 0 or (opt.max_depth is not None and opt.max_depth < 0) or not paths:
        return None
    try:
        if any(reads_judgment_table(req.measure) for req in resolve(measures)):
            return None
        os.stat(qrels_path)
    except (OSError, CranfieldError):
        return None
    try:
        if _judgments(str(qrels_path)) is None:
            return None                      # the full reader words what is wrong with the judgments
    except (OSError, CranfieldError):
        return None
    _warm(any(isinstance(p, PartRun) for p in paths))     # forked workers start with the judgments and the imports
    tasks = [(str(qrels_path), p, measures, opt, per_query) for p in paths]
    results = map_tasks(_stream_one, tasks, workers, here=True, meanwhile=meanwhile)
    if any(r is None for r in results) or len({r[0] for r in results}) < len(results):
        return None                          # a file to report on, or two runs with one tag
    return [ln for r in results for ln in r[1]], sorted({t for r in results for t in r[2]})


def _judgments(qrels_path: str):
    """The judgment file read by the plain reader and prepared once per process: (topic names in strcmp
    order, topic index, per line its topic code, its grade, its (topic, document) keys (`PairGrades`),
    the per-topic judgment tables, per line whether its document is -c's stand-in); None when the file
    needs the full reader (a pair judged twice, anything the plain reader refuses)."""
    import os

    from ..formats.files import read_bytes
    from ..formats.plain import plain_qrels
    from ..ranking.build import topic_judgments
    from ..ranking.join import PairGrades
    from ..ranking.ranked import BOGUS_DOCNO

    st = os.stat(qrels_path)
    key = (qrels_path, st.st_size, st.st_mtime_ns, st.st_ino)
    if key in _JUDGMENTS:
        return _JUDGMENTS[key]
    _JUDGMENTS.clear()
    q = plain_qrels(qrels_path, read_bytes(qrels_path))
    prepared = None
    if q is not None:
        (q_heads, q_topics), q_docs, q_grade = q
        topic_names = sorted(set(q_topics), key=lambda t: t.encode("utf-8"))
        tindex = {t: i for i, t in enumerate(topic_names)}
        q_tcode = _per_line([tindex[t] for t in q_topics], q_heads, len(q_docs))
        pairs = PairGrades(q_tcode, q_docs, q_grade)
        if pairs.distinct:
            prepared = (topic_names, tindex, q_tcode, q_grade, pairs,
                        topic_judgments(len(topic_names), q_tcode, q_grade), q_docs == BOGUS_DOCNO.encode())
    _JUDGMENTS[key] = prepared
    return prepared


def judgment_grades(qrels_path) -> np.ndarray | None:
    """The grades of a judgment file as the streamed path reads it (None when it needs the full reader)."""
    try:
        judg = _judgments(str(qrels_path))
    except (OSError, CranfieldError):
        return None
    return None if judg is None else judg[3]


def _warm(parts: bool = False) -> None:
    """Import what `_stream_one` uses (before worker processes are forked from this one); `parts`: for
    run store parts."""
    import pyarrow.compute  # noqa: F401
    import pyarrow.csv  # noqa: F401
    if parts:
        import pyarrow.parquet  # noqa: F401

    from ..formats import runs  # noqa: F401
    from ..ranking import build, order  # noqa: F401
    from . import evaluate  # noqa: F401


def _topic_codes(col, tindex: dict) -> tuple[np.ndarray, list[str]]:
    """Per line of a run's Arrow topic column its code in `tindex` (-1 when not there), and the topics:
    by blocks of equal topics (a run's lines come topic by topic), else by a dictionary of the column."""
    import pyarrow.compute as pc

    from ..util.arrowbuf import arrow_numpy

    arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    blocks = pc.run_end_encode(arr)
    if len(blocks.values) <= 4096:
        topics = blocks.values.to_pylist()
        lens = np.diff(arrow_numpy(blocks.run_ends).astype(np.int64), prepend=0)
        return np.repeat(np.asarray([tindex.get(t, -1) for t in topics], np.int64), lens), topics
    enc = pc.dictionary_encode(arr)
    topics = enc.dictionary.to_pylist()
    return np.asarray([tindex.get(t, -1) for t in topics], np.int64)[arrow_numpy(enc.indices)], topics


def _system_pool() -> None:
    """Arrow allocates from the C library's heap in this process: its default pool keeps what a run
    freed, so a worker would hold the largest run's memory several times over."""
    import pyarrow as pa
    if pa.default_memory_pool().backend_name != "system":
        pa.set_memory_pool(pa.system_memory_pool())


@dataclass(frozen=True)
class PartRun:
    """A run read from a campaign's run store (`engine.evaluation.store`): its verified Parquet part (rows
    in trec_eval order), the name it is evaluated under (campaign.yaml's key for a renamed run) and the
    campaign's gains (grade -> gain), for `trec_eval_lines_streamed`."""

    name: str
    part: str
    gains: tuple[tuple[int, float], ...] | None = None


def _text_rows(path: str, tindex: dict):
    """A run file's rows: (tag, per row its topic code in `tindex` (-1: not judged), the file's topics,
    documents (Arrow), scores, documents as numpy bytes or None); None when it needs the full path."""
    from ..formats.files import read_bytes
    from ..formats.plain import plain_run
    from ..formats.runs import arrow_run
    from ..util.arrowbuf import arrow_numpy, bytes_arrow

    data = read_bytes(path)
    fast = arrow_run(path, data)
    if fast is not None:                     # a clean file: Arrow's parser
        tag, tab = fast
        t_code, topics = _topic_codes(tab.column("topic"), tindex)
        return tag, t_code, topics, tab.column("doc"), arrow_numpy(tab.column("score")).astype(np.float64), None
    plain = plain_run(path, data)            # tabs, runs of blanks, comments: the plain reader
    if plain is None:
        return None                          # a file to report on: the full path words it
    tag, (heads, topics), ids, score = plain
    t_code = _per_line([tindex.get(t, -1) for t in topics], heads, len(ids))
    return tag, t_code, topics, bytes_arrow(ids), score, ids


def _part_rows(run: PartRun, tindex: dict):
    """A store part's rows, as `_text_rows` gives them (the part's rows are in trec_eval order); None
    when the part cannot be read (the caller's full path repairs it or words the error)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..util.arrowbuf import arrow_numpy

    try:
        with fs.proc_path(run.part) as name:
            pf = pq.ParquetFile(name, read_dictionary=["topic"], page_checksum_verification=True)
            tab = pf.read(columns=["topic", "doc", "score"], use_threads=False)
    except (OSError, pa.ArrowException, ValueError):
        return None
    codes, topics = [], set()
    for ch in tab.column("topic").chunks:            # dictionary chunks: each topic looked up once
        names = ch.dictionary.to_pylist()
        topics.update(names)
        codes.append(np.asarray([tindex.get(t, -1) for t in names], np.int64)[arrow_numpy(ch.indices)])
    t_code = np.concatenate(codes) if codes else np.zeros(0, np.int64)
    score = arrow_numpy(tab.column("score")).astype(np.float64)
    return run.name, t_code, sorted(topics), tab.column("doc"), score, None


def _stream_one(task) -> tuple[str, list[str], list[str]] | None:
    """One run's trec_eval text (a run file, or a `PartRun` of the run store): (tag, lines, its topics
    without judgments), or None when it needs the full path."""
    from ..measures import resolve
    from ..ranking.build import ranked_from_codes
    from ..ranking.order import arrow_tie_order
    from ..ranking.ranked import BOGUS_DOCNO
    from ..util.arrowbuf import arrow_bytes, numpy_arrow
    from .evaluate import trec_eval_text

    qrels_path, source, measures, opt, per_query = task
    _system_pool()
    try:
        judg = _judgments(qrels_path)
        if judg is None:
            return None
        requests = resolve(measures)
        topic_names, tindex, q_tcode, q_grade, pairs, topic_arrays, q_bogus = judg
        stored = isinstance(source, PartRun)
        got = _part_rows(source, tindex) if stored else _text_rows(source, tindex)
    except (OSError, CranfieldError):
        return None
    if got is None:
        return None
    tag, t_code, topics, doc, score, ids = got
    unjudged: list[str] = []
    if (t_code < 0).any():                   # topics without judgments: left out, and noted
        keep = np.flatnonzero(t_code >= 0)
        if not len(keep):
            return None                      # nothing to evaluate: the full path says so
        unjudged = sorted({t for t in topics if t not in tindex})
        t_code, score, doc = t_code[keep], score[keep], doc.take(numpy_arrow(keep))
        ids = ids[keep] if ids is not None else None
    if ids is None:
        ids = arrow_bytes(doc, multiple=8, copy=False)     # whole 64-bit words (join.id_words)
    rel = pairs.grades(t_code, ids)
    if rel is None:
        return None                          # a document retrieved twice: read_runs reports it
    # each row its own vocabulary entry (the kernel reads document ids only to break ties, by `doc`)
    n = len(ids)
    names, bogus = ids, None
    q_dcode = np.zeros(0, np.int64)
    if opt.complete:
        if (ids == BOGUS_DOCNO.encode()).any():
            return None                      # -c's stand-in is a real document here: the full path codes it
        names, bogus = np.append(ids, [b"", BOGUS_DOCNO.encode()]), n + 1
        q_dcode = np.where(q_bogus, bogus, n)
    ranked = ranked_from_codes(opt, [tag], topic_names, np.zeros(n, np.int64), t_code, score, np.arange(n),
                               names, q_tcode, q_dcode, q_grade, {}, presorted=stored,
                               tie_order=None if stored else arrow_tie_order(doc),
                               topic_arrays=topic_arrays, bogus=bogus, rel=rel)
    if ranked.n_groups == 0:
        return None
    if stored and source.gains:
        ranked.extra = {"gains": dict(source.gains)}
    kinds = {n: req for req in requests for n in req.names}
    by: dict = {}
    sby: dict = {}
    _collect(ranked, requests, kinds, tag, 0, by, sby)
    return tag, trec_eval_text([tag], kinds, by, sby, per_query=per_query, numeric=bool(by)), unjudged
