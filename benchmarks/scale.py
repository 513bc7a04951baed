"""Million-Query scale: simulate, ingest into the run store and evaluate, with wall time and peak memory.

    python3 benchmarks/scale.py [--topics 10000] [--runs 25] [--depth 1000] [--dir /tmp/cranfield-scale]
                                [--workers 2] [--judged N] [--resimulate] [--ingest-only]
    python3 benchmarks/scale.py --stages RUNFILE      # where one file's ingest CPU goes, per stage

Steps (issue 8 targets on a 2-core, 24 GB machine: ingest < 5 min, evaluate < 2 min, peak < 8 GB):
1. simulate: engine.simulation.large writes the campaign's text run files (kept between calls; not timed
   against a target);
2. ingest: RunStore.sync of every run file into Parquet (the store is emptied first);
3. re-sync with nothing changed (what every later command pays);
4. evaluate: engine.evaluation.blocks.evaluate_store, trec_eval's default measures, every judged topic;
5. reads: one topic of every run, one whole run; the depth-100 pool candidates (streamed).
Peak memory is the largest summed resident set of this process and its worker processes, sampled
every 50 ms from /proc.

`--stages RUNFILE`: the streamed ingest's steps run one after another in this process on the file's
pieces (the engine's own functions), the CPU of each per 10M lines, then the Parquet writer's options
on the part it wrote (CPU and bytes; only the first keeps the store's bytes).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import PeakRSS  # noqa: E402  (this process and its workers)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--judged", type=int, default=None, help="judged topics (default: all)")
    ap.add_argument("--dir", default="/tmp/cranfield-scale")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--resimulate", action="store_true")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    ap.add_argument("--ingest-only", action="store_true",
                    help="stop after the ingest and re-sync (steps 2-3: an ingest A/B without the evaluation)")
    ap.add_argument("--cli", action="store_true",
                    help="also time whole `cranfield` processes on the campaign (eval --campaign -m official, "
                         "pool --strategy statap --budget 64, stability gstudy -m map) with their peak memory")
    ap.add_argument("--stages", metavar="RUNFILE", default=None,
                    help="only time the ingest's stages on one clean run file (topics in byte order), then the "
                         "Parquet writer's options on its part")
    args = ap.parse_args(argv)
    if args.stages:
        return ingest_stages(Path(args.stages))

    from engine.evaluation.blocks import evaluate_store
    from engine.pooling.store import pool_candidates_store
    from engine.formats.qrels import read_qrels
    from engine.simulation.large import write_large_campaign
    from engine.evaluation.store import RunStore, store_dir

    root = Path(args.dir)
    stamp = root / "SIMULATED.json"
    want = {"topics": args.topics, "runs": args.runs, "depth": args.depth, "judged": args.judged, "seed": args.seed}
    out: dict = {"params": want, "cpus": os.cpu_count()}
    if args.resimulate or not stamp.is_file() or json.loads(stamp.read_text()) != want:
        shutil.rmtree(root, ignore_errors=True)
        t = time.perf_counter()
        write_large_campaign(root, args.topics, args.runs, args.depth, args.seed, judged=args.judged,
                             progress=lambda d, n: print(f"\r  simulating {d}/{n} topics", end="", flush=True))
        print()
        stamp.write_text(json.dumps(want))
        out["simulate_s"] = round(time.perf_counter() - t, 1)
    files = sorted((root / "runs").glob("*.txt"))
    text_bytes = sum(f.stat().st_size for f in files)
    print(f"campaign {root}: {len(files)} run files, {text_bytes / 1e9:.2f} GB of text")

    shutil.rmtree(store_dir(root), ignore_errors=True)
    st = RunStore(root)
    with PeakRSS() as m:
        rep = st.sync(files, workers=args.workers,
                      progress=lambda d, n: print(f"\r  ingested {d}/{n} files", end="", flush=True))
    print()
    store_bytes = sum(p.stat().st_size for p in store_dir(root).rglob("*.parquet"))
    out["ingest"] = {"seconds": round(m.seconds, 1), "cpu_s": round(m.cpu, 1), "load": round(m.load, 1),
                     "peak_gb": round(m.peak / 2**30, 2), "rows": rep.rows,
                     "text_gb": round(text_bytes / 1e9, 2), "store_gb": round(store_bytes / 1e9, 2)}
    print(f"ingest:   {m.seconds:7.1f} s  {m.cpu:6.1f} s CPU  peak {m.peak / 2**30:5.2f} GB  {rep.rows:,} rows "
          f"({rep.rows / m.seconds / 1e6:.1f} M rows/s); store {store_bytes / 1e9:.2f} GB  (load {m.load:.1f})")

    with PeakRSS() as m:
        rep2 = RunStore(root).sync(files)
    out["resync_s"] = round(m.seconds, 3)
    print(f"re-sync:  {m.seconds:7.3f} s  ({len(rep2.reused)} files unchanged)  (load {m.load:.1f})")

    if args.ingest_only:
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=1))
        return 0
    qrels = read_qrels(root / "judgments" / "qrels.txt")
    st = RunStore(root)
    with PeakRSS() as m:
        df = evaluate_store(st, qrels, None, workers=args.workers,
                            progress=lambda d, n: print(f"\r  evaluated {d}/{n} topic blocks", end="", flush=True))
    print()
    n_topics = qrels["topic"].nunique()
    out["evaluate"] = {"seconds": round(m.seconds, 1), "cpu_s": round(m.cpu, 1), "load": round(m.load, 1),
                       "peak_gb": round(m.peak / 2**30, 2),
                       "judged_topics": int(n_topics), "values": int(len(df)),
                       "measures": int(df["measure"].nunique())}
    print(f"evaluate: {m.seconds:7.1f} s  {m.cpu:6.1f} s CPU  peak {m.peak / 2**30:5.2f} GB  {n_topics:,} judged "
          f"topics, {df['measure'].nunique()} measures, {len(df):,} values  (load {m.load:.1f})")
    mean_map = df[df["measure"] == "map"].groupby("run", observed=True)["value"].mean()
    print(f"          MAP of the runs {mean_map.min():.4f} .. {mean_map.max():.4f}")

    topic = st.topics()[len(st.topics()) // 2]
    with PeakRSS() as m:
        one = st.read(topics=[topic])
    out["read_topic_s"] = round(m.seconds, 3)
    with PeakRSS() as m:
        run = st.read(runs=[st.runs[0]], columns=["topic", "doc", "score"])
    out["read_run_s"] = round(m.seconds, 2)
    print(f"reads:    one topic of every run {out['read_topic_s']:.3f} s ({len(one):,} rows); "
          f"one whole run {out['read_run_s']:.2f} s ({len(run):,} rows)  (load {m.load:.1f})")
    del run, one
    with PeakRSS() as m:
        cand = pool_candidates_store(st, 100, workers=args.workers)
    out["pool100"] = {"seconds": round(m.seconds, 1), "peak_gb": round(m.peak / 2**30, 2), "candidates": int(len(cand))}
    print(f"pool:     {m.seconds:7.1f} s  peak {m.peak / 2**30:5.2f} GB  depth-100 candidates {len(cand):,}")
    if args.cli:
        out["cli"] = cli_figures(root)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


def ingest_stages(path: Path) -> int:
    """Print the CPU per 10M lines of each step of the streamed ingest of `path` (in this process, one
    step after another), then of the Parquet writer's options on the part it wrote."""
    import hashlib
    import io
    import tempfile
    import numpy as np
    import pyarrow.parquet as pq
    from engine.evaluation.store import ingest as ing
    from engine.evaluation.store.layout import _ENCODING, COMPRESSION, SCHEMA
    from engine.evaluation.store.parts import _PartWriter
    from engine.evaluation.store.repeats import _Repeats
    from engine.formats.runs import _arrow_table, _clean_for_arrow, arrow_run, run_heads

    cpu: dict[str, float] = {}

    def timed(stage, fn, *a):
        c = time.process_time()
        r = fn(*a)
        cpu[stage] = cpu.get(stage, 0.0) + time.process_time() - c
        return r

    h, rows = hashlib.sha256(), 0
    tmp, pw = None, None
    with open(path, "rb") as fh:
        while True:
            text = timed("read", fh.read, ing.CHUNK_BYTES)
            if not text:
                break
            if text[-1:] != b"\n":
                text += timed("read", fh.readline)
            timed("sha256", h.update, text)
            fast = timed("arrow_run (scans, Arrow CSV read, checks)", arrow_run, str(path), text)
            if fast is None:
                print(f"{path}: not a clean run file for the streamed ingest")
                return 2
            timed("scans for bytes Arrow must not see", _clean_for_arrow, text)      # again, alone
            timed("Arrow CSV read (tokenize, convert 6 columns)", _arrow_table, text)
            cur = fast[1].select(["topic", "doc", "score", "rank"])
            heads = timed("topic starts", run_heads, cur.column("topic"))
            cur, dropped = timed("repeated documents", _Repeats(str(path)).drop, cur, heads, rows + 1)
            if dropped is not None:                       # as the ingest does (a topic's first row stays)
                heads = (np.cumsum(~dropped) - 1)[heads]
            cur = timed("trec_eval order", ing._in_trec_order, cur, heads)
            if pw is None:
                tmp = Path(tempfile.mkdtemp(prefix="cranfield-stages-"))
                pw = _PartWriter(tmp / "part.parquet", fast[0], str(path), ing.ROW_GROUP_ROWS)
            timed("Parquet writer", pw.add, cur, heads)
            rows += len(cur)
    if pw is None:
        print(f"{path}: empty")
        return 2
    timed("Parquet writer", pw.close, h.hexdigest())
    scale = 1e7 / max(rows, 1)
    print(f"{path}: {rows:,} rows kept; CPU seconds per 10M rows (pieces of {ing.CHUNK_BYTES >> 20} MB, one thread)")
    parts = ("scans for bytes Arrow must not see", "Arrow CSV read (tokenize, convert 6 columns)")
    total = sum(v for k, v in cpu.items() if k not in parts)
    for k, v in cpu.items():
        print(f"  {('  of which ' if k in parts else '') + k:<58} {v * scale:6.2f}")
    print(f"  {'all':<58} {total * scale:6.2f}")

    pf = pq.ParquetFile(tmp / "part.parquet")
    groups = [pf.read_row_group(i) for i in range(pf.num_row_groups)]
    base = dict(compression=COMPRESSION, use_dictionary=["topic"], column_encoding=_ENCODING,
                write_statistics=["topic"], write_page_checksum=True)
    variants = {"the store's (zstd level 1)": {}, "no page checksums": {"write_page_checksum": False},
                "no statistics": {"write_statistics": False}, "data pages of 4 MB": {"data_page_size": 4 << 20},
                "zstd level -5": {"compression_level": -5}, "lz4": {"compression": "lz4"},
                "snappy": {"compression": "snappy"}, "no compression": {"compression": "none"},
                "score BYTE_STREAM_SPLIT": {"column_encoding": {**_ENCODING, "score": "BYTE_STREAM_SPLIT"}},
                "doc dictionary-encoded": {"use_dictionary": ["topic", "doc"]}}
    print(f"Parquet writer options on that part ({len(groups)} row groups), best of 2:")
    for name, kw in variants.items():
        best, size = np.inf, 0
        for _ in range(2):
            buf = io.BytesIO()
            c = time.process_time()
            wr = pq.ParquetWriter(buf, SCHEMA.with_metadata(pf.schema_arrow.metadata), **{**base, **kw})
            for t in groups:
                wr.write_table(t, row_group_size=len(t))
            wr.close()
            best, size = min(best, time.process_time() - c), buf.tell()
        print(f"  {name:<30} {best * scale:6.2f} s  {size / 1e6:10.3f} MB")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def cli_figures(root: Path) -> dict:
    """Whole `cranfield` processes on the campaign (the store built): wall and CPU seconds, peak memory
    of the process and its workers (the pool with --dry-run: nothing written)."""
    from _measure import run_measured
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]) + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    cli = [sys.executable, "-m", "cranfield.cli"]
    cmds = {"eval --campaign -m official": [*cli, "eval", "--campaign", str(root), "-m", "official"],
            "pool --strategy statap --budget 64": [*cli, "pool", str(root), "--strategy", "statap", "--budget", "64",
                                                   "--seed", "1", "--dry-run"],
            "stability gstudy -m map": [*cli, "stability", "gstudy", "--campaign", str(root), "-m", "map"]}
    got = {}
    for name, cmd in cmds.items():
        m = run_measured(cmd, env)
        load = os.getloadavg()[0]
        got[name] = {"seconds": round(m.wall, 1), "cpu_s": round(m.cpu, 1), "peak_gb": round(m.peak_mb / 1024, 2),
                     "load": round(load, 1)}
        print(f"cli:      {name:<36} {m.wall:7.1f} s  {m.cpu:7.1f} s CPU  peak {m.peak_mb / 1024:5.2f} GB  "
              f"(load {load:.1f})")
    return got


if __name__ == "__main__":
    raise SystemExit(main())
