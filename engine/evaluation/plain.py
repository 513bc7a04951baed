"""`cranfield eval QRELS RUN [RUN ...]` on small, clean files without pandas (the start-up path).

A fresh process pays for its imports before any work, and pandas and pyarrow cost more than reading and
evaluating a few runs. When the files fit `PLAIN_MAX_BYTES` and the plain readers of `engine.formats`
accept them (what the full readers read without a word, located with numpy and read by the grammar's
column readers), their documents are coded in strcmp order, the ranked lists built by the kernel
(`ranking.ranked_from_codes`, shared with `build_ranked`), the measures computed as `compute` computes
them (`evaluate.measure_values`) and printed by the one trec_eval text writer (`evaluate.trec_eval_text`).
Anything else (a warning or a note to give, an error to report, a measure reading the judgment table)
gives None, and the caller evaluates through `engine.evaluation.evaluate.evaluate_files`, whose messages and rules
hold. The output is the same either way, byte for byte (tests/test_plain_eval.py).
"""
from __future__ import annotations

import numpy as np

from ..errors import CranfieldError
from ..ranking.ranked import EvalOptions

PLAIN_MAX_BYTES = 8_000_000
"""Input bytes (uncompressed, all files) up to which the plain path serves: small evaluations, where the
import of pandas would cost more than the work."""


def trec_eval_lines_plain(qrels_path, run_paths: list, measures=None, options: EvalOptions | None = None,
                          per_query: bool = False) -> list[str] | None:
    """trec_eval's text for judgment and run files, evaluated without pandas; None when the files or the
    measures need the full path (see the module docstring)."""
    import os

    from .evaluate import measure_values, trec_eval_text
    from ..formats.plain import plain_qrels, plain_run, strcmp_codes
    from ..formats.files import read_bytes
    from ..measures import resolve
    from ..measures.registry import reads_judgment_table
    from ..ranking.ranked import BOGUS_DOCNO
    from ..ranking.build import ranked_from_codes

    opt = options or EvalOptions()
    if opt.rel_level < 0 or (opt.max_depth is not None and opt.max_depth < 0) or not run_paths:
        return None                          # the full path words the error
    try:
        if sum(os.path.getsize(p) for p in [qrels_path, *run_paths]) > PLAIN_MAX_BYTES:
            return None
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
    width = max(p.dtype.itemsize for p in parts)
    vocab, codes = strcmp_codes(np.concatenate([p.astype(f"S{width}") for p in parts]))
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
        topic_of = [topic_names[t] for t in ranked.g_topic.tolist()]
        values, _ = measure_values(ranked, requests)
        for name, col in values.items():
            m = kinds[name].measure
            if m.value_kind != "str":
                by[(name, ri)] = (topic_of, np.asarray(col, np.float64))
            elif m.per_topic:
                sby[(name, tag)] = dict(zip(topic_of, col.tolist()))
    if groups == 0:
        return None                          # nothing evaluated: the full path says so
    return trec_eval_text([r[0] for r in runs], kinds, by, sby, per_query=per_query, numeric=bool(by))


def _per_line(values: list[int], heads: np.ndarray, n: int) -> np.ndarray:
    """Per line the value of its block (blocks start at `heads`)."""
    return np.repeat(np.asarray(values, np.int64), np.diff(np.append(heads, n)))


def _repeats(t_code: np.ndarray, d_code: np.ndarray, n_docs: int) -> bool:
    """Whether a (topic, document) pair occurs twice."""
    key = np.sort(t_code * n_docs + d_code)
    return bool((key[1:] == key[:-1]).any())
