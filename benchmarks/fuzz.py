"""Push mutated input files through the CLI; count tracebacks, hangs over 5 s and silent differences.

    python3 benchmarks/fuzz.py [--count 5000 --seed 1]

Each case mutates a valid run or qrels file (byte flips, inserted fields, numbers C reads
differently, NUL bytes, truncation, deep nesting) and runs `cranfield eval QRELS RUN -m map`.
A traceback or a run over 5 s counts as a failure; a run that exits 0 must give the numbers of the
file read by a strict reference parser (pytrec_eval over the lines that parse), else it is a silent
difference.
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN = "".join(f"{t} Q0 d{t}-{i} {i + 1} {20 - i}.25 r\n" for t in (1, 2, 3) for i in range(12))
QRELS = "".join(f"{t} 0 d{t}-{i} {(i * 7 + t) % 3}\n" for t in (1, 2, 3) for i in range(0, 14, 2))
TOKENS = ["1e2", "1_0", "\u0661", "inf", "1e400", "nan", "\x00", "x", "-1", "+3", "0x10", "", "  ", "\t",
          "[" * 200, "\xff", "1.5", "999999999999999999999"]


def mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    i = rng.randrange(len(lines))
    kind = rng.randrange(5)
    f = lines[i].split()
    if kind == 0 and f:
        f[rng.randrange(len(f))] = rng.choice(TOKENS)
        lines[i] = " ".join(f) + "\n"
    elif kind == 1:
        lines[i] = lines[i].rstrip("\n") + " " + rng.choice(TOKENS) + "\n"
    elif kind == 2:
        lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
    elif kind == 3:
        lines.insert(i, rng.choice(TOKENS) + "\n")
    else:
        b = bytearray("".join(lines).encode())
        b[rng.randrange(len(b))] = rng.randrange(256)
        return b.decode("utf-8", "surrogateescape")
    return "".join(lines)


def reference_map(qrels: str, run: str) -> dict | None:
    """pytrec_eval map of the original files (the right numbers for a file that parses the same)."""
    import pytrec_eval
    q: dict = {}
    for ln in qrels.splitlines():
        t, _, d, g = ln.split()
        q.setdefault(t, {})[d] = int(g)
    r: dict = {}
    for ln in run.splitlines():
        f = ln.split()
        r.setdefault(f[0], {})[f[2]] = float(f[4])
    return {t: v["map"] for t, v in pytrec_eval.RelevanceEvaluator(q, {"map"}).evaluate(r).items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    tb = hangs = silent = refused = ok = 0
    with tempfile.TemporaryDirectory() as d:
        for n in range(a.count):
            which = rng.random() < 0.5
            run = mutate(RUN, rng) if which else RUN
            qrels = QRELS if which else mutate(QRELS, rng)
            rp, qp = Path(d) / "r.txt", Path(d) / "q.qrels"
            rp.write_bytes(run.encode("utf-8", "surrogateescape"))
            qp.write_bytes(qrels.encode("utf-8", "surrogateescape"))
            try:
                p = subprocess.run([sys.executable, "-m", "engine.cli", "eval", str(qp), str(rp), "-m", "map",
                                    "-q", "--format", "csv"], cwd=ROOT, capture_output=True, text=True,
                                   timeout=5, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
            except subprocess.TimeoutExpired:
                hangs += 1
                continue
            if "Traceback" in p.stderr:
                tb += 1
                print(f"traceback on case {n}:\n{p.stderr[-600:]}", file=sys.stderr)
            elif p.returncode != 0:
                refused += 1
            else:
                ok += 1
                if run == RUN and qrels == QRELS:
                    continue
                try:
                    ref = reference_map(qrels, run)
                except (ValueError, IndexError):
                    silent += 1          # exit 0 on a file the strict reference cannot read
                    continue
                got = {}
                for ln in p.stdout.splitlines()[1:]:       # run,topic,map
                    f = ln.split(",")
                    if len(f) == 3 and f[1] != "all":
                        got[f[1]] = float(f[2])
                if any(abs(got.get(t, 0.0) - v) > 1e-4 for t, v in ref.items()):
                    silent += 1
                    print(f"silent difference on case {n}", file=sys.stderr)
    print(f"fuzz: {a.count} files, {tb} tracebacks, {hangs} hangs > 5 s, {silent} silent differences "
          f"({refused} refused with a message, {ok} evaluated)")


if __name__ == "__main__":
    main()
