"""Million-Query-size simulated campaigns, written block by block in bounded memory.

`engine.simulation.campaigns` models groups, manual runs and graded truth for campaigns of tens of topics; this
module trades that detail for speed so that 10,000 topics x 25 runs x 1,000 documents (250 million
run lines, ~12 GB of text) can be written in minutes. Per topic: a candidate set of documents from a
GOV2-like collection (ids `GXnnn-nn-nnnnnnn`), a log-normal number of relevant ones with grades 1-2,
and a shared attractiveness (why runs overlap). A run scores a candidate

    x = q[s] * v[d] + a[d] + e[s, d]

(v = grade signal, a = attractiveness, e = the run's noise), keeps its best `depth` and prints the
score rounded to 4 decimals, so tied scores occur and trec_eval's tie-break by document id matters.
Judgments: the depth-`pool_depth` pool of every run, graded from the truth, for `judged` topics.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import yaml
from ..util import fs

BLOCK_TOPICS = 100


def _doc_ids(codes: np.ndarray) -> np.ndarray:
    """GOV2-like document ids for integer codes (as an object array of str)."""
    seg, rest = np.divmod(codes, 100 * 10_000_000)
    sub, num = np.divmod(rest, 10_000_000)
    s = np.char.add(np.char.add(np.char.add("GX", np.char.zfill(seg.astype(str), 3)), "-"),
                    np.char.zfill(sub.astype(str), 2))
    return np.char.add(np.char.add(s, "-"), np.char.zfill(num.astype(str), 7)).astype(object)


def write_large_campaign(out_dir, n_topics: int = 10_000, n_runs: int = 25, depth: int = 1000, seed: int = 1,
                         *, candidates: int | None = None, judged: int | None = None, pool_depth: int = 10,
                         progress=None) -> Path:
    """Write a campaign directory (campaign.yaml, runs/, judgments/qrels.txt) of the given size.

    `judged` topics (default all) get judgments; `progress(done_topics, total)` is called per block.
    Returns the campaign path. Deterministic in `seed`.
    """
    import pyarrow.csv as pacsv

    out = Path(out_dir)
    fs.makedirs(out / "runs")
    fs.makedirs(out / "judgments")
    cand = int(candidates or max(depth * 3, 50))
    judged = n_topics if judged is None else min(int(judged), n_topics)
    rng = np.random.default_rng(seed)
    quality = np.sort(rng.uniform(0.4, 2.4, n_runs))[::-1]
    tags = [f"run{i + 1:02d}" for i in range(n_runs)]
    topics = [str(10001 + i) for i in range(n_topics)]
    judged_set = np.sort(rng.choice(n_topics, size=judged, replace=False))
    wopt = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    schema = pa.schema([("topic", pa.string()), ("q0", pa.string()), ("doc", pa.string()),
                        ("rank", pa.int32()), ("score", pa.string()), ("tag", pa.string())])
    files = [fs.open(out / "runs" / f"{t}.txt", "wb") for t in tags]
    writers = [pacsv.CSVWriter(fh, schema, write_options=wopt) for fh in files]
    qrels_lines: list[str] = []
    n_docs = 0
    try:
        for b0 in range(0, n_topics, BLOCK_TOPICS):
            tb = np.arange(b0, min(b0 + BLOCK_TOPICS, n_topics))
            B = len(tb)
            brng = np.random.default_rng([seed, b0])
            stride = 25 * 10**9 // cand                                     # distinct codes per topic
            docs = (brng.permuted(np.tile(np.arange(cand, dtype=np.int64), (B, 1)), axis=1) * stride
                    + brng.integers(0, stride, size=(B, cand)))
            n_rel = np.minimum(np.rint(np.exp(brng.normal(3.8, 0.9, B))), cand // 3).astype(np.int64)
            grade = np.zeros((B, cand), np.int8)
            col = np.arange(cand)[None, :]
            grade[col < n_rel[:, None]] = 1
            grade[col < (n_rel // 4)[:, None]] = 2
            signal = grade.astype(np.float64) + (grade > 0) * brng.normal(0, 0.5, (B, cand))
            attract = brng.normal(0, 1.0, (B, cand))
            names = _doc_ids(docs.ravel()).reshape(B, cand)
            names_arr = pa.array(names.ravel(), type=pa.string())
            topic_arr = pa.array(np.repeat(np.asarray(topics, dtype=object)[tb], depth), type=pa.string())
            q0_arr = pa.array(np.full(B * depth, "Q0", dtype=object), type=pa.string())
            rank_arr = pa.array(np.tile(np.arange(1, depth + 1, dtype=np.int32), B))
            pooled = []
            for s in range(n_runs):
                x = quality[s] * signal + attract + brng.normal(0, 1.1, (B, cand))
                top = np.argpartition(-x, depth - 1, axis=1)[:, :depth]
                xs = np.round(np.take_along_axis(x, top, axis=1), 4)
                # trec_eval order: score descending, ties by document id descending (ids sort as codes)
                order = np.lexsort((-np.take_along_axis(docs, top, axis=1), -xs), axis=1)
                top = np.take_along_axis(top, order, axis=1)
                xs = np.take_along_axis(xs, order, axis=1)
                if pool_depth:
                    pooled.append(top[:, :pool_depth])
                n = B * depth
                flat = (np.arange(B)[:, None] * cand + top).ravel()
                tbl = pa.table({"topic": topic_arr, "q0": q0_arr, "doc": names_arr.take(pa.array(flat)),
                                "rank": rank_arr, "score": pa.array(xs.ravel()).cast(pa.string()),
                                "tag": pa.array(np.full(n, tags[s], dtype=object), type=pa.string())},
                               schema=schema)
                writers[s].write_table(tbl)
                n_docs += n
            # judged: the pool plus every relevant candidate (as if found by a deeper pool)
            sel = grade > 0
            if pooled:
                rows = np.repeat(np.arange(B), pooled[0].shape[1] * len(pooled))
                sel[rows, np.concatenate(pooled, axis=1).ravel()] = True
            sel &= np.isin(tb, list(judged_set))[:, None]
            ii, jj = np.nonzero(sel)
            qrels_lines.extend(f"{topics[tb[i]]} 0 {names[i, j]} {int(grade[i, j])}\n" for i, j in zip(ii, jj))
            if progress is not None:
                progress(int(tb[-1]) + 1, n_topics)
    finally:
        for w in writers:
            w.close()
        for fh in files:
            fh.close()
    fs.atomic_write(out / "judgments" / "qrels.txt", "".join(qrels_lines))
    config = {"name": f"Large simulated campaign ({n_topics} topics, {n_runs} runs, depth {depth}, seed {seed})",
              "description": "Written by engine.simulation.large (benchmarks/scale.py).",
              "evaluation": {"depth": depth, "measures": ["map", "P.10", "ndcg_cut.10", "bpref"]},
              "runs": {t: {"group": t, "type": "automatic", "pooled": True, "file": f"runs/{t}.txt"} for t in tags}}
    fs.atomic_write(out / "campaign.yaml", yaml.safe_dump(config, sort_keys=False))
    return out
