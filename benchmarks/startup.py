"""Whole-process start-up cost: `cranfield eval` on one run against pytrec_eval's whole process.

    python3 benchmarks/startup.py                # median of 9 runs of each command
    python3 benchmarks/startup.py --reps 3 --json out.json

One simulated 50-topic x 1000-document run (engine.simulation.campaigns, seed 7) and its depth-100 pool as qrels are
written to a temporary directory. Timed, each as a fresh process (interpreter start, imports, reading,
evaluating, printing):

- `cranfield eval -m map -m P.10 -m ndcg_cut.10 QRELS RUN` against a pytrec_eval script doing the same:
  parse both files (pytrec_eval.parse_qrel/parse_run), evaluate map, P_10 and ndcg_cut_10, print the
  three means (target: Cranfield <= 0.8x pytrec_eval);
- `cranfield eval -m all_trec -q QRELS RUN` against a pytrec_eval script evaluating every measure of
  pytrec_eval.supported_measures and printing the per-topic values and the means, as `trec_eval -m
  all_trec -q` does (target: Cranfield <= 1.0x pytrec_eval);
- `cranfield --help`, and for scale `python -c pass` and `python -c "import numpy"` (which both
  tools pay).

As an installed tool runs: the commands run with PYTHONDONTWRITEBYTECODE (and PYTHONPYCACHEPREFIX)
removed from their environment, and the tree's bytecode is compiled beforehand (`python -m compileall
-q engine cranfield` without that variable), so no command compiles its modules at start (an install
has .pyc files; the installed peers have theirs). Each command runs once untimed first (file cache).

The commands run in turns (cranfield, pytrec_eval, cranfield, ...), so that a change of load on a
shared machine falls on each alike. Reported per command: the median wall time and the median CPU
seconds (user + sys of the process, from getrusage), and the ratios Cranfield / pytrec_eval of both
(CPU is the steadier on a shared machine). The printed values are checked: the three means equal, and
for all_trec every (measure, topic) value both print agrees to the 4 printed decimals. Timings on a
shared machine are noisy: the load average is printed beside them.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
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

PYTREC_ALL_SCRIPT = """
import sys, pytrec_eval
with open(sys.argv[1]) as f:
    qrel = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
res = pytrec_eval.RelevanceEvaluator(qrel, pytrec_eval.supported_measures).evaluate(run)
out = []
for q in sorted(res):
    for m, v in sorted(res[q].items()):
        out.append(f"{m:<22}\\t{q}\\t{v:.4f}")
for m in sorted(next(iter(res.values()))):
    mean = pytrec_eval.compute_aggregated_measure(m, [v[m] for v in res.values()])
    out.append(f"{m:<22}\\tall\\t{mean:.4f}")
sys.stdout.write("\\n".join(out) + "\\n")
"""


def make_inputs(out: Path) -> tuple[Path, Path]:
    """One 50-topic x 1000-document run and the depth-100 pool judged from the simulated truth."""
    from engine.simulation.campaigns import simulate, write_campaign
    sim = simulate(n_runs=3, n_topics=50, depth=1000, seed=7)
    write_campaign(sim, out, pool_depth=100)
    run = sorted((out / "runs").iterdir())[0]
    return out / "judgments" / "qrels.txt", run


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmds: dict[str, list[str]], reps: int, env: dict) -> dict[str, dict]:
    """Per command: median wall and CPU seconds, all of them, and the stdout of the last run; as fresh
    processes, taking turns (a, b, a, b, ...) so that a change in a shared machine's load falls on each
    alike."""
    got = {k: {"wall": [], "cpu": [], "out": ""} for k in cmds}
    for _ in range(reps):
        for k, cmd in cmds.items():
            c0, t0 = _cpu_children(), time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True, env=env)
            got[k]["wall"].append(time.perf_counter() - t0)
            got[k]["cpu"].append(_cpu_children() - c0)
            if p.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} failed: {p.stderr.strip()[-400:]}")
            got[k]["out"] = p.stdout
    for g in got.values():
        g["wall_s"], g["cpu_s"] = statistics.median(g["wall"]), statistics.median(g["cpu"])
    return got


def _values(text: str) -> dict[tuple[str, str], str]:
    """(measure, topic) -> value printed to 4 decimals, of trec_eval-style lines."""
    out = {}
    for ln in text.splitlines():
        parts = ln.split("\t")
        if len(parts) == 3:
            try:
                out[(parts[0].strip(), parts[1])] = f"{float(parts[2]):.4f}"
            except ValueError:
                pass
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args(argv)
    py = sys.executable
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONDONTWRITEBYTECODE", None)      # as installed: .pyc files written and used
    env.pop("PYTHONPYCACHEPREFIX", None)
    subprocess.run([py, "-m", "compileall", "-q", "engine", "cranfield"], cwd=ROOT, env=env, check=True,
                   capture_output=True)
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="cranfield-startup-") as tmp:
        qrels, run = make_inputs(Path(tmp) / "c")
        script, script_all = Path(tmp) / "pytrec_whole.py", Path(tmp) / "pytrec_all.py"
        script.write_text(PYTREC_SCRIPT)
        script_all.write_text(PYTREC_ALL_SCRIPT)
        files = [str(qrels), str(run)]
        cran = [py, "-m", "cranfield.cli", "eval"]
        cmds = {"cranfield_eval": [*cran, "-m", "map", "-m", "P.10", "-m", "ndcg_cut.10", *files],
                "pytrec_eval": [py, str(script), *files],
                "cranfield_all_trec": [*cran, "-m", "all_trec", "-q", *files],
                "pytrec_eval_all": [py, str(script_all), *files],
                "cranfield_help": [py, "-m", "cranfield.cli", "--help"],
                "python": [py, "-c", "pass"],
                "python_numpy": [py, "-c", "import numpy"]}
        for cmd in cmds.values():               # warm the file cache (and any .pyc a peer lacks)
            subprocess.run(cmd, capture_output=True, env=env)
        got = timed(cmds, args.reps, env)
    load1 = os.getloadavg()
    ours = {k: v for k, v in _values(got["cranfield_eval"]["out"]).items() if k[1] == "all"}
    theirs = _values(got["pytrec_eval"]["out"])
    ours_all, theirs_all = _values(got["cranfield_all_trec"]["out"]), _values(got["pytrec_eval_all"]["out"])
    common = [k for k in ours_all if k in theirs_all]
    agree = sum(ours_all[k] == theirs_all[k] for k in common)
    c, p = got["cranfield_eval"], got["pytrec_eval"]
    ca, pa = got["cranfield_all_trec"], got["pytrec_eval_all"]
    res = {"load": load0, "load_after": load1, "reps": args.reps,
           "cranfield_eval_s": c["wall_s"], "pytrec_eval_s": p["wall_s"], "ratio": c["wall_s"] / p["wall_s"],
           "cranfield_eval_cpu_s": c["cpu_s"], "pytrec_eval_cpu_s": p["cpu_s"], "ratio_cpu": c["cpu_s"] / p["cpu_s"],
           "cranfield_all_trec_s": ca["wall_s"], "pytrec_eval_all_s": pa["wall_s"],
           "ratio_all_trec": ca["wall_s"] / pa["wall_s"],
           "cranfield_all_trec_cpu_s": ca["cpu_s"], "pytrec_eval_all_cpu_s": pa["cpu_s"],
           "ratio_all_trec_cpu": ca["cpu_s"] / pa["cpu_s"],
           "cranfield_help_s": got["cranfield_help"]["wall_s"], "cranfield_help_cpu_s": got["cranfield_help"]["cpu_s"],
           "python_s": got["python"]["wall_s"], "python_numpy_s": got["python_numpy"]["wall_s"],
           "python_numpy_cpu_s": got["python_numpy"]["cpu_s"],
           "same_values": bool(ours) and ours == theirs,
           "all_trec_values": {"lines": len(ours_all), "common_with_pytrec_eval": len(common), "agree": agree},
           "times": {k: {"wall": g["wall"], "cpu": g["cpu"]} for k, g in got.items()}}
    print(f"load average {load0[0]:.2f} -> {load1[0]:.2f} (a shared machine: figures are noisy); "
          f"median of {args.reps} fresh processes each, in turns; wall s / CPU s")
    print(f"python -c pass {res['python_s']:.3f}; python -c 'import numpy' {res['python_numpy_s']:.3f} / "
          f"{res['python_numpy_cpu_s']:.3f} (both tools pay these)")
    print(f"map, P.10, ndcg_cut.10 (50 topics x 1000 docs): cranfield eval {c['wall_s']:.3f} / {c['cpu_s']:.3f}; "
          f"pytrec_eval {p['wall_s']:.3f} / {p['cpu_s']:.3f}")
    print(f"  ratio cranfield / pytrec_eval: wall {res['ratio']:.2f}, CPU {res['ratio_cpu']:.2f} (target <= 0.8); "
          f"same printed means: {res['same_values']}")
    print(f"-m all_trec -q: cranfield eval {ca['wall_s']:.3f} / {ca['cpu_s']:.3f}; "
          f"pytrec_eval (supported_measures, per topic) {pa['wall_s']:.3f} / {pa['cpu_s']:.3f}")
    print(f"  ratio cranfield / pytrec_eval: wall {res['ratio_all_trec']:.2f}, CPU {res['ratio_all_trec_cpu']:.2f} "
          f"(target <= 1.0); values both print: {agree} of {len(common)} agree to 4 decimals")
    print(f"cranfield --help: {res['cranfield_help_s']:.3f} / {res['cranfield_help_cpu_s']:.3f} (target < 0.25 s idle)")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
