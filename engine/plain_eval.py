"""`cranfield eval QRELS RUN [RUN ...]` on small, clean files without pandas (the start-up path).

A fresh process pays for its imports before any work, and pandas and pyarrow cost more than reading and
evaluating a few runs. When the files fit `PLAIN_MAX_BYTES` and the plain readers of `engine.formats`
accept them (what the full readers read without a warning), they become pytrec_eval-style dicts, are
evaluated by `engine.api.Evaluator` (the ranked-list kernel of `engine.ranking`) and printed by the one
trec_eval text writer (`engine.evaluate.trec_eval_text`). Anything else (a warning or a note to give, an
error to report, a measure reading the judgment table) gives None, and the caller evaluates through
`engine.evaluate.evaluate_files`, whose messages and rules hold. The output is the same either way
(tests/test_plain_eval.py).
"""
from __future__ import annotations

import numpy as np

from .errors import CranfieldError
from .ranking import EvalOptions

PLAIN_MAX_BYTES = 8_000_000
"""Above this many bytes of (uncompressed) input, the pandas/Arrow readers are faster than the import
they cost: the plain path is for the small evaluations a fresh process does."""


def trec_eval_lines_plain(qrels_path, run_paths: list, measures=None, options: EvalOptions | None = None,
                          per_query: bool = False) -> list[str] | None:
    """trec_eval's text for judgment and run files, evaluated without pandas; None when the files or the
    measures need the full path (see the module docstring)."""
    import os

    from .api import Evaluator
    from .evaluate import trec_eval_text
    from .formats import plain_qrels, plain_run, read_bytes
    from .measures import resolve

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
    q = plain_qrels(qrels_path, blobs[0])
    if q is None:
        return None
    judged: dict[str, dict[str, int]] = {}
    for t, d, g in zip(*q):
        judged.setdefault(t, {})[d] = g
    ev = Evaluator(judged, requests, options=opt)
    if ev.needs_table:
        return None
    kinds = {n: req for req in requests for n in req.names}
    runs: list[str] = []
    by: dict = {}
    sby: dict = {}
    for path, data in zip(run_paths, blobs[1:]):
        r = plain_run(path, data)
        if r is None or r[0] in runs:
            return None                      # a file to report on, or two runs with one tag
        tag, topics, docs, scores = r
        run = _nested(topics, docs, scores)
        if run is None or not judged.keys() >= run.keys():
            return None                      # a repeated document, or topics without judgments (a note)
        ranked = ev.ranked_dict(run, tag)
        ri = len(runs)
        runs.append(tag)
        if ranked.n_groups == 0:
            return None
        topic_of = [ev.topic_names[t] for t in ranked.g_topic.tolist()]
        for name, col in ev.values(ranked):
            m = kinds[name].measure
            if m.value_kind != "str":
                by[(name, ri)] = (topic_of, np.asarray(col, np.float64))
            elif m.per_topic:
                sby[(name, tag)] = dict(zip(topic_of, col.tolist()))
    return trec_eval_text(runs, kinds, by, sby, per_query=per_query, numeric=bool(by))


def _nested(topics: list[str], docs: list[str], scores: list[float]) -> dict | None:
    """{topic: {doc: score}} of a run's lines (a topic's lines mostly in one block); None if a document
    repeats within a topic."""
    from itertools import groupby

    run: dict[str, dict[str, float]] = {}
    a = 0
    for t, lines in groupby(topics):
        b = a + len(list(lines))
        block = dict(zip(docs[a:b], scores[a:b]))
        seen = run.setdefault(t, {})
        before = len(seen)
        seen.update(block)
        if len(seen) != before + b - a:
            return None
        a = b
    return run
