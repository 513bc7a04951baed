"""Time `engine.formats.read_runs` on generated TREC runs (default 100 runs x 50 topics x 1000 docs).

    python3 benchmarks/read_speed.py [--runs 100 --topics 50 --depth 1000 --dir /tmp/cranfield-read-bench]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.errors import Warnings  # noqa: E402
from engine.formats.runs import read_runs  # noqa: E402


def generate(out: Path, n_runs: int, n_topics: int, depth: int, seed: int = 7) -> list[Path]:
    """Write `n_runs` run files with realistic ids and scores; reuse them if already present."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    topics = np.repeat(np.arange(801, 801 + n_topics), depth).astype(str)
    ranks = np.tile(np.arange(1, depth + 1), n_topics).astype(str)
    paths = []
    for i in range(n_runs):
        p = out / f"run{i:03d}.txt"
        paths.append(p)
        if p.exists():
            continue
        # distinct documents per topic, drawn from a shared collection so that runs overlap
        docs = (rng.permuted(np.tile(np.arange(4 * depth), (n_topics, 1)), axis=1)[:, :depth]
                + np.arange(n_topics)[:, None] * 250_000).ravel() * 97
        docs = np.char.add("GX", np.char.zfill(docs.astype(str), 9))
        scores = np.sort(rng.random((n_topics, depth)), axis=1)[:, ::-1].ravel() * 30
        tag = f"run{i:03d}"
        lines = [f"{t} Q0 {d} {r} {s:.4f} {tag}" for t, d, r, s in zip(topics, docs, ranks, scores)]
        p.write_text("\n".join(lines) + "\n")
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--dir", default="/tmp/cranfield-read-bench")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    paths = generate(Path(a.dir), a.runs, a.topics, a.depth)
    size = sum(p.stat().st_size for p in paths) / 1e6
    best = cpu = float("inf")
    for _ in range(a.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        w = Warnings()
        df = read_runs(paths, w)
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    print(f"read_runs: {len(paths)} files, {len(df):,} lines, {size:.0f} MB: best of {a.repeat} "
          f"{best:.2f} s wall, {cpu:.2f} s CPU ({len(df) / best / 1e6:.2f} M lines/s), {len(w)} warnings")


if __name__ == "__main__":
    main()
