"""Whole-process start-up cost: `cranfield eval` on one run against pytrec_eval's whole process.

    python3 benchmarks/startup.py                # median of 9 runs of each command
    python3 benchmarks/startup.py --reps 3 --json out.json

One simulated 50-topic x 1000-document run (engine.simulation.campaigns, seed 7) and its depth-100 pool as qrels are
written to a temporary directory. Timed, each as a fresh process (interpreter start, imports, reading,
evaluating, printing):

- `cranfield eval -m map -m P.10 -m ndcg_cut.10 QRELS RUN`
- a pytrec_eval script doing the same: parse both files (pytrec_eval.parse_qrel/parse_run), evaluate
  map, P_10 and ndcg_cut_10, print the three means
- `cranfield --help`

The two evaluations run in turns (cranfield, pytrec_eval, cranfield, ...), so that a change of load on a
shared machine falls on both alike. Reported: the median wall time of each and the ratio cranfield /
pytrec_eval (target <= 1.0), and
`cranfield --help` (target < 0.25 s on an idle machine). Timings on a shared machine are noisy: the load
average is printed beside them.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PYTREC_SCRIPT = """
import sys, pytrec_eval
with open(sys.argv[1]) as f:
    qrel = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
ev = pytrec_eval.RelevanceEvaluator(qrel, {"map", "P_10", "ndcg_cut_10"})
res = ev.evaluate(run)
for m in ("map", "P_10", "ndcg_cut_10"):
    vals = [v[m] for v in res.values()]
    print(f"{m:<22}\\tall\\t{sum(vals) / len(vals):.4f}")
"""


def make_inputs(out: Path) -> tuple[Path, Path]:
    """One 50-topic x 1000-document run and the depth-100 pool judged from the simulated truth."""
    from engine.simulation.campaigns import simulate, write_campaign
    sim = simulate(n_runs=3, n_topics=50, depth=1000, seed=7)
    write_campaign(sim, out, pool_depth=100)
    run = sorted((out / "runs").iterdir())[0]
    return out / "judgments" / "qrels.txt", run


def timed(cmds: list[list[str]], reps: int, env: dict) -> list[tuple[float, list[float], str]]:
    """Per command (median seconds, all times, stdout of the last run) as fresh processes. The commands
    take turns (a, b, a, b, ...), so a change in a shared machine's load falls on each alike."""
    times: list[list[float]] = [[] for _ in cmds]
    outs = [""] * len(cmds)
    for _ in range(reps):
        for i, cmd in enumerate(cmds):
            t0 = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True, env=env)
            times[i].append(time.perf_counter() - t0)
            if p.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} failed: {p.stderr.strip()[-400:]}")
            outs[i] = p.stdout
    return [(statistics.median(t), t, o) for t, o in zip(times, outs)]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args(argv)
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="cranfield-startup-") as tmp:
        # as an installed tool runs: compiled bytecode cached (in the temporary directory, not the tree)
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   PYTHONPYCACHEPREFIX=str(Path(tmp) / "pycache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        qrels, run = make_inputs(Path(tmp) / "c")
        script = Path(tmp) / "pytrec_whole.py"
        script.write_text(PYTREC_SCRIPT)
        cran = [py, "-m", "cranfield.cli", "eval", "-m", "map", "-m", "P.10", "-m", "ndcg_cut.10", str(qrels), str(run)]
        for cmd in (cran, [py, str(script), str(qrels), str(run)]):   # warm the file cache and .pyc files
            subprocess.run(cmd, capture_output=True, env=env)
        (t_c, all_c, out_c), (t_p, all_p, out_p) = timed([cran, [py, str(script), str(qrels), str(run)]],
                                                         args.reps, env)
        [(t_h, all_h, _)] = timed([[py, "-m", "cranfield.cli", "--help"]], args.reps, env)
    ours = {ln.split("\t")[0].strip(): float(ln.split("\t")[2]) for ln in out_c.splitlines() if "\tall\t" in ln}
    theirs = {ln.split("\t")[0].strip(): float(ln.split("\t")[2]) for ln in out_p.splitlines()}
    res = {"load": os.getloadavg(), "reps": args.reps, "cranfield_eval_s": t_c, "pytrec_eval_s": t_p,
           "ratio": t_c / t_p, "cranfield_help_s": t_h, "same_values": ours == theirs,
           "times": {"cranfield_eval": all_c, "pytrec_eval": all_p, "cranfield_help": all_h}}
    print(f"load average {res['load'][0]:.2f} (a shared machine: figures are noisy)")
    print(f"cranfield eval (map, P.10, ndcg_cut.10; 50 topics x 1000 docs): {t_c:.3f} s  (median of {args.reps})")
    print(f"pytrec_eval whole process, same files and measures:            {t_p:.3f} s")
    print(f"ratio cranfield / pytrec_eval: {res['ratio']:.2f} (target <= 1.0); same printed means: {res['same_values']}")
    print(f"cranfield --help: {t_h:.3f} s (target < 0.25 s idle)")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
