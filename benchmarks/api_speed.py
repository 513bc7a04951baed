"""Small-call speed of the Python API against pytrec_eval, ir_measures and ranx, and whole-process start-up.

    python3 benchmarks/api_speed.py [--calls 1000]

- per call: 5 topics x 100 documents x 5 measures (map, P@10, nDCG@10, RR, R@100), the judgments prepared
  once (Cranfield's `Evaluator`, pytrec_eval's `RelevanceEvaluator`, ir_measures' `evaluator`), median of
  `--calls` calls; Cranfield with the run as a dict, as a DataFrame (PyTerrier's columns) and with
  ir_measures' names and measure objects (dict and frame); ranx's `evaluate` (no reusable evaluator), and a fresh pytrec_eval evaluator per call;
- whole process: `python -c "import cranfield"` and a first value (import, prepare, evaluate one small run,
  print), median of 7, beside `import pytrec_eval` and its first value.
Prints the machine load (`os.getloadavg`) with the figures; on a shared machine they are noisy.

    python3 benchmarks/api_speed.py --ab BASE_TREE [--turns 5] [--calls 1000]

A/B on a shared machine: Cranfield's per-call rows for BASE_TREE (e.g. a worktree of main) and for this tree,
each measured in its own process, in turns (base, this, base, this, ...); per row the median over turns of
each side's median, its CPU time and the ratio this/base, with the load average of each turn.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if "--root" in sys.argv:                    # --ab's child process: the tree to measure
    ROOT = Path(sys.argv[sys.argv.index("--root") + 1]).resolve()
sys.path.insert(0, str(ROOT))
MEASURES = ["map", "P.10", "ndcg_cut.10", "recip_rank", "recall.100"]


def data(seed: int = 0):
    rng = np.random.default_rng(seed)
    qrels = {f"q{t}": {f"d{d}": int(rng.integers(0, 3)) for d in range(0, 200, 2)} for t in range(5)}
    run = {f"q{t}": {f"d{d}": float(rng.random()) for d in range(100)} for t in range(5)}
    return qrels, run


def per_call(fn, calls: int) -> tuple[float, float]:
    """(median wall time, mean CPU time) per call in ms; CPU time is what a loaded machine disturbs less."""
    for _ in range(min(50, calls)):
        fn()
    ts = []
    cpu = time.process_time()
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3, (time.process_time() - cpu) / calls * 1e3


def whole(code: str, reps: int = 7) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env, stdout=subprocess.DEVNULL)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


FIRST = ("import cranfield; ev = cranfield.Evaluator({'q': {'a': 1, 'b': 0}}, ['map', 'P.10']); "
         "print(ev.evaluate({'q': {'a': 1.0, 'b': 2.0}}))")
FIRST_PT = ("import pytrec_eval; ev = pytrec_eval.RelevanceEvaluator({'q': {'a': 1, 'b': 0}}, {'map', 'P.10'}); "
            "print(ev.evaluate({'q': {'a': 1.0, 'b': 2.0}}))")


def cranfield_rows(calls: int) -> list:
    """Cranfield's per-call rows: (name, (median ms, CPU ms)) for the dict, frame, names and objects calls."""
    from engine.evaluation.api import Evaluator
    import pandas as pd
    qrels, run = data()
    frame = pd.DataFrame([(t, d, s) for t, docs in run.items() for d, s in docs.items()],
                         columns=["qid", "docno", "score"])
    ev = Evaluator(qrels, MEASURES)
    irn = Evaluator(qrels, ["AP", "P@10", "nDCG@10", "RR", "R@100"])
    import ir_measures as irm
    iro = Evaluator(qrels, [irm.AP, irm.P @ 10, irm.nDCG @ 10, irm.RR, irm.R @ 100])
    return [("dict", per_call(lambda: ev.evaluate(run), calls)),
            ("DataFrame", per_call(lambda: ev.evaluate(frame), calls)),
            ("ir_measures names, dict", per_call(lambda: irn.evaluate(run), calls)),
            ("ir_measures objects, dict", per_call(lambda: iro.evaluate(run), calls)),
            ("ir_measures names, DataFrame", per_call(lambda: irn.evaluate(frame), calls)),
            ("ir_measures objects, DataFrame", per_call(lambda: iro.evaluate(frame), calls))]


def ab(base: str, turns: int, calls: int) -> int:
    """Base tree and this one measured in turns (see the module docstring)."""
    import json
    got: dict = {"base": [], "this": []}
    for turn in range(turns):
        for side, tree in (("base", base), ("this", str(Path(__file__).resolve().parents[1]))):
            out = subprocess.run([sys.executable, __file__, "--calls", str(calls), "--root", tree, "--json"],
                                 check=True, capture_output=True, text=True).stdout
            got[side].append(json.loads(out))
            print(f"turn {turn + 1} {side:<4} load {os.getloadavg()[0]:5.2f}  " + "  ".join(
                f"{n} {ms:.3f}" for n, (ms, _) in got[side][-1]), flush=True)
    print(f"\nmedian over {turns} turns of each turn's median of {calls} calls (ms; CPU ms mean per call):")
    print(f"  {'call':<32} {'base':>8} {'this':>8} {'ratio':>6}   {'base CPU':>8} {'this CPU':>8}")
    for i, (name, _) in enumerate(got["this"][0]):
        b = statistics.median(t[i][1][0] for t in got["base"])
        t_ = statistics.median(t[i][1][0] for t in got["this"])
        bc = statistics.median(t[i][1][1] for t in got["base"])
        tc = statistics.median(t[i][1][1] for t in got["this"])
        print(f"  {name:<32} {b:8.3f} {t_:8.3f} {t_ / b:6.2f}   {bc:8.3f} {tc:8.3f}")
    this = {n: statistics.median(t[i][1][0] for t in got["this"]) for i, (n, _) in enumerate(got["this"][0])}
    print(f"  objects / names (this tree): dict {this['ir_measures objects, dict'] / this['ir_measures names, dict']:.2f}"
          f", DataFrame {this['ir_measures objects, DataFrame'] / this['ir_measures names, DataFrame']:.2f}")
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--ab", metavar="BASE_TREE", help="A/B against another tree, in turns")
    ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--root", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.ab:
        return ab(a.ab, a.turns, a.calls)
    if a.json:
        import json
        print(json.dumps(cranfield_rows(a.calls)))
        return 0
    qrels, run = data()
    print(f"load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    from engine.evaluation.api import Evaluator
    ev = Evaluator(qrels, MEASURES)
    rows = [("cranfield Evaluator (reused)", per_call(lambda: ev.evaluate(run), a.calls))]
    # the same run as a DataFrame (PyTerrier's columns): the one input adapter's frame path
    import pandas as pd
    frame = pd.DataFrame([(t, d, s) for t, docs in run.items() for d, s in docs.items()],
                         columns=["qid", "docno", "score"])
    rows.append(("cranfield Evaluator, DataFrame", per_call(lambda: ev.evaluate(frame), a.calls)))
    irn = Evaluator(qrels, ["AP", "P@10", "nDCG@10", "RR", "R@100"])
    rows.append(("cranfield, ir_measures names", per_call(lambda: irn.evaluate(run), a.calls)))
    rows.append(("cranfield, names, DataFrame", per_call(lambda: irn.evaluate(frame), a.calls)))
    try:        # the same measures as ir_measures' objects (keys of the result are the objects)
        import ir_measures as irm
        iro = Evaluator(qrels, [irm.AP, irm.P @ 10, irm.nDCG @ 10, irm.RR, irm.R @ 100])
        rows.append(("cranfield, ir_measures objects", per_call(lambda: iro.evaluate(run), a.calls)))
        rows.append(("cranfield, objects, DataFrame", per_call(lambda: iro.evaluate(frame), a.calls)))
    except ImportError:
        pass
    try:
        import pytrec_eval
        pe = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES))
        rows.append(("pytrec_eval (reused)", per_call(lambda: pe.evaluate(run), a.calls)))
        rows.append(("pytrec_eval (fresh per call)", per_call(
            lambda: pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES)).evaluate(run), a.calls)))
    except ImportError:
        print("pytrec_eval not installed (pip install pytrec-eval-terrier)")
    try:
        import ir_measures
        irev = ir_measures.evaluator([ir_measures.AP, ir_measures.P @ 10, ir_measures.nDCG @ 10, ir_measures.RR,
                                      ir_measures.R @ 100], qrels)
        rows.append(("ir_measures evaluator (reused)", per_call(lambda: list(irev.iter_calc(run)), a.calls)))
    except ImportError:
        print("ir_measures not installed")
    try:
        import ranx
        rq = ranx.Qrels(qrels)
        ranx.evaluate(rq, ranx.Run(run), ["map", "precision@10", "ndcg@10", "mrr", "recall@100"])  # compile
        rows.append(("ranx evaluate", per_call(lambda: ranx.evaluate(
            rq, ranx.Run(run), ["map", "precision@10", "ndcg@10", "mrr", "recall@100"], make_comparable=True),
            max(50, a.calls // 10))))
    except ImportError:
        print("ranx not installed")
    print(f"\n{a.calls} calls of 5 topics x 100 documents x 5 measures, median per call (CPU: mean per call):")
    base = rows[0][1][0]
    for name, (ms, cpu) in rows:
        print(f"  {name:<32} {ms:8.3f} ms   ({ms / base:5.2f}x cranfield)   CPU {cpu:8.3f} ms")
    print("\nwhole process, median of 7:")
    print(f"  python -c 'import cranfield'        {whole('import cranfield'):.3f} s")
    print(f"  cranfield first value               {whole(FIRST):.3f} s")
    try:
        import pytrec_eval  # noqa: F401
        print(f"  python -c 'import pytrec_eval'      {whole('import pytrec_eval'):.3f} s")
        print(f"  pytrec_eval first value             {whole(FIRST_PT):.3f} s")
    except ImportError:
        pass
    print(f"  python -c 'pass'                    {whole('pass'):.3f} s")
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
