"""End-to-end evaluation speed: our engine vs pytrec_eval vs ranx on a simulated campaign.

    python3 benchmarks/eval_speed.py                 # 100 runs x 50 topics x 1000 docs (default)
    python3 benchmarks/eval_speed.py --runs 20 --reps 1

The campaign is simulated (engine.simulation.campaigns, seed 7) and written to a temporary directory: one TREC
run file per run and the depth-100 pool of the pooled runs as qrels. Each tool then reads the files
and evaluates every run (parse included), in this process, after a warm-up on a tiny campaign (so
imports and ranx's numba compilation are not timed; ranx's cold first call is reported apart).

Measure set (the "standard set"): trec_eval's `official` (num_q, num_ret, num_rel, num_rel_ret, map,
gm_map, Rprec, bpref, recip_rank, iprec_at_recall_0.00..1.00, P_5..P_1000) plus ndcg, ndcg_cut_10 and
recall_100: 32 values per run and topic. ranx has no gm_map, iprec_at_recall or num_* measures; it
computes its nearest set: map, mrr, r-precision, bpref, precision@5..1000, ndcg, ndcg@10, recall@100,
hits (17 values).

Peak memory is measured per tool in a child process: the peak resident set size (Linux VmHWM, reset
after imports and warm-up) minus the RSS at that point, so the tools do not share a high-water mark
and C/Arrow allocations (invisible to tracemalloc) are counted.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _p in (str(ROOT), str(ROOT / "benchmarks")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

ENGINE_MEASURES = ["official", "ndcg", "ndcg_cut.10", "recall.100"]
PYTREC_MEASURES = {"official", "ndcg", "ndcg_cut.10", "recall.100"}
RANX_MEASURES = ["map", "mrr", "r-precision", "bpref", "precision@5", "precision@10", "precision@15",
                 "precision@20", "precision@30", "precision@100", "precision@200", "precision@500",
                 "precision@1000", "ndcg", "ndcg@10", "recall@100", "hits"]


# ----------------------------------------------------------------------------- the three tools

def run_engine(qrels_path: Path, run_paths: list[Path]) -> dict:
    """Our engine end to end from files: engine.evaluate_files (reads and evaluates a batch of run
    files per core, in threads)."""
    import engine

    df = engine.evaluate_files(qrels_path, run_paths, ENGINE_MEASURES)
    m = df[df["measure"] == "map"]
    return {"values": int(len(df)), "mean_map": float(m.groupby("run", observed=True)["value"].mean().mean())}


def run_engine_tables(qrels_path: Path, run_paths: list[Path]) -> dict:
    """Our engine in two steps: read_qrels + read_runs (all files into one table), then evaluate."""
    import engine

    qrels = engine.read_qrels(qrels_path)
    runs = engine.read_runs(run_paths)
    df = engine.evaluate(qrels, runs, ENGINE_MEASURES)
    m = df[df["measure"] == "map"]
    return {"values": int(len(df)), "mean_map": float(m.groupby("run", observed=True)["value"].mean().mean())}


def run_pytrec_eval(qrels_path: Path, run_paths: list[Path]) -> dict:
    """pytrec_eval: parse_qrel once, one RelevanceEvaluator, then parse_run + evaluate per run."""
    import pytrec_eval

    with open(qrels_path) as fh:
        qrel = pytrec_eval.parse_qrel(fh)
    ev = pytrec_eval.RelevanceEvaluator(qrel, PYTREC_MEASURES)
    n = 0
    maps = []
    for p in run_paths:
        with open(p) as fh:
            run = pytrec_eval.parse_run(fh)
        res = ev.evaluate(run)
        n += sum(len(v) for v in res.values())
        maps.append(statistics.fmean(v["map"] for v in res.values()))
    return {"values": n, "mean_map": float(statistics.fmean(maps))}


def run_ranx(qrels_path: Path, run_paths: list[Path]) -> dict:
    """ranx: Qrels.from_file once, then Run.from_file + evaluate per run."""
    from ranx import Qrels, Run, evaluate

    qrels = Qrels.from_file(str(qrels_path), kind="trec")
    n = 0
    maps = []
    for p in run_paths:
        run = Run.from_file(str(p), kind="trec")
        res = evaluate(qrels, run, RANX_MEASURES, return_mean=False)
        n += sum(len(v) for v in res.values())
        maps.append(float(res["map"].mean()))
    return {"values": n, "mean_map": float(statistics.fmean(maps))}


TOOLS = {"engine": run_engine, "engine_tables": run_engine_tables, "pytrec_eval": run_pytrec_eval,
         "ranx": run_ranx}


# ----------------------------------------------------------------------------- helpers

def write_files(out: Path, n_runs: int, n_topics: int, depth: int, seed: int, pool_depth: int = 100):
    """Simulate and write a campaign; returns (qrels path, run paths, seconds to simulate)."""
    from engine.simulation.campaigns import simulate, write_campaign

    t0 = time.perf_counter()
    sim = simulate(n_runs, n_topics, depth, seed)
    t_sim = time.perf_counter() - t0
    write_campaign(sim, out, pool_depth=pool_depth)
    return out / "judgments" / "qrels.txt", sorted((out / "runs").glob("*.txt")), t_sim


def _rss_now_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _hwm_mb() -> float:
    """Peak RSS of this process image (VmHWM; unlike ru_maxrss it is not inherited from the parent)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _reset_hwm() -> bool:
    """Reset the peak-RSS mark (Linux: write 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def warm_up(tmp: Path, tools) -> dict[str, float]:
    """Run each tool once on a tiny campaign (imports, numba JIT); returns those cold times."""
    q, rp, _ = write_files(tmp / "tiny", 3, 3, 20, 1, pool_depth=10)
    cold = {}
    for name in tools:
        t0 = time.perf_counter()
        TOOLS[name](q, rp)
        cold[name] = time.perf_counter() - t0
    return cold


def child(tool: str, directory: Path) -> None:
    """Memory probe: warm up, then evaluate once; print JSON with the peak RSS increase."""
    with tempfile.TemporaryDirectory() as tmp:
        warm_up(Path(tmp), [tool])
    gc.collect()
    _reset_hwm()
    base = _rss_now_mb()
    q = directory / "judgments" / "qrels.txt"
    rp = sorted((directory / "runs").glob("*.txt"))
    t0 = time.perf_counter()
    TOOLS[tool](q, rp)
    dt = time.perf_counter() - t0
    peak = _hwm_mb()
    print(json.dumps({"tool": tool, "peak_rss_mb": peak, "base_rss_mb": base,
                      "peak_increase_mb": peak - base, "seconds": dt}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--reps", type=int, default=3, help="timed repetitions per tool (median reported)")
    ap.add_argument("--tools", default="engine,engine_tables,pytrec_eval,ranx")
    ap.add_argument("--ranx-reps", type=int, default=1, help="timed repetitions for ranx (slow; default 1)")
    ap.add_argument("--no-memory", action="store_true", help="skip the per-tool memory probes")
    ap.add_argument("--whole-process", type=int, default=3, metavar="REPS",
                    help="also time whole processes (cranfield eval, a pytrec_eval script, trec_eval per run "
                         "file) REPS times each; 0 skips")
    ap.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL") or shutil.which("trec_eval"),
                    help="a trec_eval binary (e.g. built with -O2) for the whole-process comparison")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, Path(args.dir))
        return
    tools = [t for t in args.tools.split(",") if t]
    for t in tools:
        if t not in TOOLS:
            sys.exit(f"unknown tool {t!r}; choose from {', '.join(TOOLS)}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        q, rp, t_sim = write_files(tmp / "camp", args.runs, args.topics, args.depth, args.seed)
        t_write = time.perf_counter() - t0 - t_sim
        size = sum(p.stat().st_size for p in rp) / 2**20
        n_lines = sum(1 for _ in open(q))
        print(f"campaign: {args.runs} runs x {args.topics} topics x {args.depth} docs "
              f"({len(rp)} files, {size:.0f} MiB), qrels {n_lines} lines (depth-100 pool); "
              f"simulated in {t_sim:.2f} s, written in {t_write:.2f} s")
        print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}")
        cold = warm_up(tmp, tools)
        times: dict[str, list[float]] = {t: [] for t in tools}
        results = {}
        for rep in range(args.reps):
            for t in tools:  # interleaved so load changes hit every tool alike
                if t == "ranx" and rep >= args.ranx_reps:
                    continue
                gc.collect()
                t0 = time.perf_counter()
                results[t] = TOOLS[t](q, rp)
                times[t].append(time.perf_counter() - t0)
        mem = {}
        if not args.no_memory:
            for t in tools:
                out = subprocess.run([sys.executable, __file__, "--child", t, "--dir", str(tmp / "camp")],
                                     capture_output=True, text=True, check=True)
                mem[t] = json.loads(out.stdout.strip().splitlines()[-1])
        med = {t: statistics.median(v) for t, v in times.items()}
        ref = med.get("engine")
        print()
        print(f"{'tool':<16} {'median s':>9} {'min s':>8} {'vs engine':>10} {'values':>9} {'mean MAP':>9} "
              f"{'peak RSS +MiB':>14} {'cold s':>7}")
        for t in tools:
            ratio = f"{med[t] / ref:.2f}x" if ref else "-"
            pk = f"{mem[t]['peak_increase_mb']:.0f}" if t in mem else "-"
            print(f"{t:<16} {med[t]:>9.2f} {min(times[t]):>8.2f} {ratio:>10} {results[t]['values']:>9} "
                  f"{results[t]['mean_map']:>9.4f} {pk:>14} {cold[t]:>7.2f}")
        if ref and "pytrec_eval" in med:
            print(f"\nengine is {med['pytrec_eval'] / ref:.2f}x faster than pytrec_eval end to end "
                  f"(target >= 2x)")
        if ref and "ranx" in med:
            print(f"engine is {med['ranx'] / ref:.2f}x faster than ranx end to end")
        print(f"load average during the run: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} CPUs)")
        if args.whole_process:
            whole_process(q, rp, tmp, args.whole_process, args.trec_eval)
        if "engine" in results and "pytrec_eval" in results:
            d = abs(results["engine"]["mean_map"] - results["pytrec_eval"]["mean_map"])
            print(f"|mean MAP engine - pytrec_eval| = {d:.2e}")


PYTREC_WHOLE = """
import statistics, sys, pytrec_eval
with open(sys.argv[1]) as f:
    ev = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(f), {measures!r})
for p in sys.argv[2:]:
    with open(p) as f:
        res = ev.evaluate(pytrec_eval.parse_run(f))
    print("map", statistics.fmean(v["map"] for v in res.values()))
"""


def whole_process(qrels: Path, runs: list[Path], tmp: Path, reps: int, trec_eval: str | None) -> dict:
    """Median wall time of whole processes evaluating every run file (interpreter start, imports, reading,
    evaluating, printing): `cranfield eval` once on all files, a pytrec_eval script once on all files,
    and trec_eval once per run file (it takes one run), with the standard measure set."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONPYCACHEPREFIX=str(tmp / "pycache"))     # bytecode cached, as an installed tool
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    script = tmp / "pytrec_whole.py"
    script.write_text(PYTREC_WHOLE.format(measures=sorted(PYTREC_MEASURES)))
    cmds = {"cranfield eval": [[sys.executable, "-m", "cranfield.cli", "eval",
                                *[a for m in ENGINE_MEASURES for a in ("-m", m)], str(qrels), *map(str, runs)]],
            "pytrec_eval": [[sys.executable, str(script), str(qrels), *map(str, runs)]]}
    if trec_eval:
        cmds["trec_eval"] = [[trec_eval, *[a for m in ("official", "ndcg", "ndcg_cut.10", "recall.100")
                                          for a in ("-m", m)], str(qrels), str(r)] for r in runs]
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for rep in range(reps + 1):                    # the first round warms caches and is not counted
        for name, group in cmds.items():
            t0 = time.perf_counter()
            for cmd in group:
                subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
            if rep:
                times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"\nwhole processes, {len(runs)} run files (median of {reps}; load {os.getloadavg()[0]:.1f}):")
    for name, t in med.items():
        print(f"  {name:<16} {t:7.2f} s" + ("" if name == "cranfield eval" else
                                             f"   cranfield / {name} = {med['cranfield eval'] / t:.2f}"))
    if not trec_eval:
        print("  trec_eval: not found (pass --trec-eval PATH or set TREC_EVAL to compare)")
    print("  targets: cranfield / pytrec_eval <= 0.5, and below trec_eval")
    return med


if __name__ == "__main__":
    main()
