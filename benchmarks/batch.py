"""A batch of run files evaluated by whole processes, side by side: `cranfield eval` on the files, the
same through the campaign's Parquet store, trec_eval one file after another and two at a time, pytrec_eval.

    python3 benchmarks/batch.py                      # 100 runs x 100 topics x 1000 docs = 10M lines
    python3 benchmarks/batch.py --quick              # 20 runs x 20 topics x 1000 (CI scale)
    python3 benchmarks/batch.py --trec-eval /tmp/trec_eval/trec_eval --reps 3 --json out.json

The campaign is simulated once (engine.simulation.campaigns, seed 7; depth-100 pool as qrels) under --dir
and reused.
Every tool evaluates trec_eval's default measures for every run file, as a fresh process (interpreter start,
imports, reading, evaluating, printing). The tools take turns in every repetition (cranfield, store,
trec_eval, ...), so a change of load on a shared machine falls on all alike; medians are reported, with
CPU seconds (the process and its workers) and peak memory (summed resident set of the process tree, sampled
every 20 ms). Python runs with its bytecode compiled and cached first, as an installed tool does. The
store path's store is built (ingested) before timing: it measures what a campaign pays on every later
`eval --campaign DIR -m official` (trec_eval's default measures, the work the file path does).
`cranfield eval`'s output is compared with trec_eval's, byte for byte (the runs' outputs concatenated in
file order), and the store path's with the file path's.

Targets (issue 28): CPU <= 0.5x trec_eval's (one file after another), wall <= trec_eval two at a time
(`xargs -P 2`), peak <= 300 MB, store path <= file path.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _p in (str(ROOT), str(ROOT / "benchmarks")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from _measure import Measured, machine, run_group, run_measured  # noqa: E402

PYTREC = """
import sys, pytrec_eval
with open(sys.argv[1]) as f:
    ev = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(f), pytrec_eval.supported_measures)
for p in sys.argv[2:]:
    with open(p) as f:
        res = ev.evaluate(pytrec_eval.parse_run(f))
    print(p, sum(v["map"] for v in res.values()) / len(res))
"""


def make_campaign(root: Path, runs: int, topics: int, depth: int, seed: int = 7) -> tuple[Path, list[Path]]:
    """The simulated campaign under `root` (made once per size, then reused): qrels path, run paths."""
    stamp = root / "BATCH.json"
    want = {"runs": runs, "topics": topics, "depth": depth, "seed": seed}
    if not stamp.is_file() or json.loads(stamp.read_text()) != want:
        from engine.simulation.campaigns import simulate, write_campaign
        shutil.rmtree(root, ignore_errors=True)
        write_campaign(simulate(runs, topics, depth, seed), root, pool_depth=100)
        stamp.write_text(json.dumps(want))
    return root / "judgments" / "qrels.txt", sorted((root / "runs").glob("*.txt"))


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="20 runs x 20 topics x 1000 docs, one repetition")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dir", default=None, help="where the campaign is kept (default /tmp/cranfield-batch-RxTxD)")
    ap.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL") or shutil.which("trec_eval"),
                    help="a trec_eval 10.0 binary (e.g. built with -O2)")
    ap.add_argument("--tools", default="cranfield,store,trec_eval,trec_eval_P2,pytrec_eval")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args(argv)
    if args.quick:
        args.runs, args.topics, args.reps = 20, 20, 1
    root = Path(args.dir or f"/tmp/cranfield-batch-{args.runs}x{args.topics}x{args.depth}")
    qrels, runs = make_campaign(root, args.runs, args.topics, args.depth)
    lines = args.runs * args.topics * args.depth
    # as an installed tool runs: bytecode compiled once and cached (under the campaign directory, not the tree)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONPYCACHEPREFIX=str(root / "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cli = [sys.executable, "-m", "cranfield.cli"]
    tools = [t for t in args.tools.split(",") if t]
    if not args.trec_eval:
        tools = [t for t in tools if not t.startswith("trec_eval")]
        print("trec_eval: not found (pass --trec-eval PATH or set TREC_EVAL)")
    if "store" in tools:
        subprocess.run([*cli, "ingest", str(root)], env=env, check=True, stdout=subprocess.DEVNULL)
    script = root / "pytrec_batch.py"
    script.write_text(PYTREC)
    subprocess.run([*cli, "eval", str(qrels), *map(str, runs[:2])], env=env, check=True,   # compiles the bytecode
                   stdout=subprocess.DEVNULL)
    cmds = {
        "cranfield": lambda: run_measured([*cli, "eval", str(qrels), *map(str, runs)], env),
        "store": lambda: run_measured([*cli, "eval", "--campaign", str(root), "-m", "official"], env),
        "trec_eval": lambda: run_group([[args.trec_eval, str(qrels), str(r)] for r in runs]),
        "trec_eval_P2": lambda: run_measured(
            f"printf '%s\\n' {' '.join(map(str, runs))} | xargs -P 2 -n 1 {args.trec_eval} {qrels} > /dev/null",
            shell=True),
        "pytrec_eval": lambda: run_measured([sys.executable, str(script), str(qrels), *map(str, runs)], env),
    }
    got: dict[str, list[Measured]] = {t: [] for t in tools}
    load_seen = []
    for _ in range(args.reps):
        for t in tools:
            got[t].append(cmds[t]())
            load_seen.append(os.getloadavg()[0])
    med = {t: Measured(statistics.median(m.wall for m in v), statistics.median(m.cpu for m in v),
                       max(m.peak_mb for m in v), v[-1].stdout) for t, v in got.items()}
    same = None
    if "cranfield" in med and "trec_eval" in med:
        same = med["cranfield"].stdout == med["trec_eval"].stdout
    store_same = None                 # the same work: trec_eval's default measures, the same bytes
    if "cranfield" in med and "store" in med:
        store_same = med["cranfield"].stdout == med["store"].stdout
    print(f"{args.runs} runs x {args.topics} topics x {args.depth} docs = {lines:,} lines; {machine()}; "
          f"median of {args.reps}; load {min(load_seen):.1f}-{max(load_seen):.1f}")
    print(f"{'tool':<14} {'wall s':>8} {'CPU s':>8} {'peak MB':>8} {'wall/cranfield':>15} "
          f"{'cranfield CPU/tool CPU':>23}")
    ref = med.get("cranfield")
    for t, m in med.items():
        rw = f"{m.wall / ref.wall:.2f}" if ref else "-"
        rc = f"{ref.cpu / m.cpu:.2f}" if ref and m.cpu else "-"
        print(f"{t:<14} {m.wall:>8.2f} {m.cpu:>8.2f} {m.peak_mb:>8.0f} {rw:>15} {rc:>23}")
    if same is not None:
        n = med["trec_eval"].stdout.count(b"\n")
        print(f"cranfield output {'==' if same else '!='} trec_eval output ({n:,} lines, byte for byte)")
    if store_same is not None:
        print(f"store path output {'==' if store_same else '!='} file path output (byte for byte)")
    for t, v in got.items():
        print(f"{t:<14} turns: " + ", ".join(f"{m.wall:.2f} s / {m.cpu:.2f} s CPU" for m in v))
    store_wins = None
    if "store" in got and "cranfield" in got:
        store_wins = sum(s.wall <= c.wall and s.cpu <= c.cpu for s, c in zip(got["store"], got["cranfield"]))
        print(f"store path <= file path (wall and CPU) in {store_wins} of {args.reps} turns")
    out = {"params": {"runs": args.runs, "topics": args.topics, "depth": args.depth, "lines": lines,
                      "reps": args.reps},
           "machine": machine(), "load": [min(load_seen), max(load_seen)], "identical": same, "store_identical": store_same,
           "store_not_slower_turns": store_wins,
           "turns": {t: [{"wall": round(m.wall, 3), "cpu": round(m.cpu, 3)} for m in v] for t, v in got.items()},
           "tools": {t: {"wall": round(m.wall, 3), "cpu": round(m.cpu, 3), "peak_mb": round(m.peak_mb, 1)}
                     for t, m in med.items()}}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
