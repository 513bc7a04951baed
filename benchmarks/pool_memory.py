"""`pool --strategy statap --budget 64` at Million-Query size (issue 39, item 2): the whole command on a
campaign, or `build_pool` alone on a synthetic candidate table.

    python3 benchmarks/pool_memory.py --campaign /tmp/cranfield-scale [--write] [--tree ../other-tree]
    python3 benchmarks/pool_memory.py [--topics 10000] [--docs 864]

`--campaign DIR`: `cranfield pool DIR --strategy statap --budget 64 --seed 1` as a separate process
(--dry-run unless --write, which writes pools/pool-bench-statap.tsv; the campaign's store must be
ingested): wall and CPU seconds, the peak resident set of the process tree (parent and workers), the
load average, and with --write the pool file's sha256 (the same pools: run it from two trees, in turns,
`--tree` naming the other one).

Without it: a synthetic candidate table (`--topics` x `--docs` rows, text topic and document ids, best
ranks 1..100, priors; 10,000 x 864 is the 8.6M candidates of the MQ campaign's depth-100 pool) is built in
this process, then `engine.pooling.build_pool(None, "statap", 64, depth=100, seed=1, candidates=...)` is
measured: wall and CPU seconds, the peak resident set above the table's, and a hash of the pool table.
Load average printed.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import PeakRSS, load, tree_rss  # noqa: E402


def main(argv=None) -> int:
    import numpy as np
    import pandas as pd
    from engine.pooling import build_pool
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topics", type=int, default=10_000)
    ap.add_argument("--docs", type=int, default=864)
    ap.add_argument("--campaign", default=None, metavar="DIR", help="time the whole command on this campaign")
    ap.add_argument("--write", action="store_true", help="with --campaign: write the pool (and hash it)")
    ap.add_argument("--tree", default=None, metavar="DIR", help="with --campaign: the source tree to run "
                    "(default: this one)")
    a = ap.parse_args(argv)
    if a.campaign:
        return whole_command(Path(a.campaign), a.write, Path(a.tree) if a.tree else Path(__file__).resolve().parents[1])
    T, D = a.topics, a.docs
    rng = np.random.default_rng(1)
    t = np.repeat(np.arange(T), D)
    cand = pd.DataFrame({"topic": pd.Series([f"{x:05d}" for x in range(T)], dtype="str").take(t).reset_index(drop=True),
                         "doc": pd.Series([f"D{x}" for x in range(D)], dtype="str").take(np.tile(np.arange(D), T))
                         .reset_index(drop=True) + "-" + pd.Series(t).astype("str"),
                         "best_rank": np.minimum(rng.geometric(0.02, T * D), 100).astype(np.int64),
                         "first_run": rng.integers(0, 25, T * D), "n_runs": rng.integers(1, 25, T * D),
                         "prior": rng.random(T * D) / 50})
    cand = cand.sort_values(["topic", "best_rank", "first_run", "doc"], kind="mergesort").reset_index(drop=True)
    del t
    base = tree_rss(os.getpid())
    l0 = load()
    with PeakRSS() as m:
        p = build_pool(None, "statap", 64, depth=100, seed=1, candidates=cand)
    digest = hashlib.sha256(pd.util.hash_pandas_object(p.table, index=False).to_numpy().tobytes()).hexdigest()[:16]
    print(f"build_pool statap --budget 64 over {len(cand):,} candidates ({T:,} topics): {m.seconds:.1f} s wall, "
          f"{m.cpu:.1f} s CPU, peak {m.peak / 2**20:,.0f} MB = the table's {base / 2**20:,.0f} MB + "
          f"{(m.peak - base) / 2**20:,.0f} MB; {int((p.table['order'] > 0).sum()):,} selected; pool hash {digest}; "
          f"load {l0} -> {load()}")
    return 0


def whole_command(camp: Path, write: bool, tree: Path) -> int:
    """`cranfield pool CAMP --strategy statap --budget 64 --seed 1` from `tree`, measured."""
    from _measure import run_measured
    # PYTHONSAFEPATH: `-m` would put the working folder first on the path, whatever PYTHONPATH names
    env = dict(os.environ, PYTHONPATH=str(tree.resolve()), PYTHONSAFEPATH="1")
    cmd = [sys.executable, "-m", "cranfield.cli", "pool", str(camp), "--strategy", "statap", "--budget", "64",
           "--seed", "1", "--name", "bench-statap"] + ([] if write else ["--dry-run"])
    l0 = load()
    m = run_measured(cmd, env)
    digest = ""
    heads = "heads" if (camp / ".cranfield-store" / "heads").is_dir() else "no heads"
    if write:
        from engine.util import fs
        h = hashlib.sha256()
        with fs.open(camp / "pools" / "pool-bench-statap.tsv", "rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        digest = f"; pool file sha256 {h.hexdigest()[:16]}"
    print(f"cranfield pool --strategy statap --budget 64{'' if write else ' --dry-run'} ({tree.name}; store with {heads}): "
          f"{m.wall:.1f} s wall, {m.cpu:.1f} s CPU, peak {m.peak_mb / 1024:.2f} GB (process tree){digest}; "
          f"load {l0} -> {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
