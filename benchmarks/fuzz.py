"""Push mutated input files through the CLI; count tracebacks, hangs over 5 s and silent differences.

    python3 benchmarks/fuzz.py [--count 5000 --seed 1 --jobs 2] [--csv]
    python3 benchmarks/fuzz.py --boundaries      # the fixed adversarial inputs of issues 26 and 34, as a table
    CRANFIELD_SWAP_ITER=20 python3 benchmarks/fuzz.py --boundaries --races   # with the swap races (minutes)

Each case mutates a valid run or qrels file (byte flips, inserted fields, numbers C reads
differently, NUL bytes, truncation, deep nesting) and runs `cranfield eval QRELS RUN -m map -q`
(text output, served by the pandas-free plain path when the files are clean; `--csv` takes the
table path).
A traceback or a run over 5 s counts as a failure; a run that exits 0 must give the numbers of the
file as trec_eval reads it (blank lines skipped, fields split on C isspace bytes; pytrec_eval computes
the numbers), else it is a silent difference.
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
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


def _fields(text: str) -> list[list[bytes]]:
    """Fields of each non-blank line, split the way trec_eval's C code does.

    trec_eval skips lines holding only whitespace ("Ignore blank lines (people seem to insist on
    them!)" in get_qrels.c / get_trec_results.c) and splits on C ``isspace`` bytes, so the reference
    works on bytes: Python's ``str.split`` would also split on U+001C..U+001F, U+0085, U+00A0.
    """
    raw = text.encode("utf-8", "surrogateescape")
    return [ln.split() for ln in raw.split(b"\n") if ln.split()]


def _key(b: bytes) -> str:
    return b.decode("latin-1")       # a 1:1 byte -> str map pytrec_eval can take (no lone surrogates)


def reference_map(qrels: str, run: str) -> dict:
    """pytrec_eval map of the files as trec_eval reads them; ValueError/IndexError if it would refuse."""
    import pytrec_eval
    q: dict = {}
    for f in _fields(qrels):
        t, _, d, g = f
        q.setdefault(_key(t), {})[_key(d)] = int(g)
    r: dict = {}
    for f in _fields(run):
        r.setdefault(_key(f[0]), {})[_key(f[2])] = float(f[4])
    return {t: v["map"] for t, v in pytrec_eval.RelevanceEvaluator(q, {"map"}).evaluate(r).items()}


def run_case(n: int, run: str, qrels: str, d: str, csv: bool = False) -> str:
    """Evaluate one mutated pair through the CLI: 'hang', 'traceback', 'refused', 'ok' or 'silent'.
    Text output (default) is what `cranfield eval QRELS RUN` prints, served by the pandas-free plain
    path for clean small files; `csv` takes the table path."""
    case = Path(d) / str(n)
    case.mkdir()
    rp, qp = case / "r.txt", case / "q.qrels"
    rp.write_bytes(run.encode("utf-8", "surrogateescape"))
    qp.write_bytes(qrels.encode("utf-8", "surrogateescape"))
    try:
        fmt = ["--format", "csv"] if csv else []
        p = subprocess.run([sys.executable, "-m", "cranfield.cli", "eval", str(qp), str(rp), "-m", "map",
                            "-q", *fmt], cwd=ROOT, capture_output=True, text=True,
                           timeout=5, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    except subprocess.TimeoutExpired:
        print(f"hang on case {n}", file=sys.stderr)
        return "hang"
    if "Traceback" in p.stderr:
        print(f"traceback on case {n}:\n{p.stderr[-600:]}", file=sys.stderr)
        return "traceback"
    if p.returncode != 0:
        return "refused"
    if run == RUN and qrels == QRELS:
        return "ok"
    try:
        ref = reference_map(qrels, run)
    except (ValueError, IndexError) as e:     # exit 0 on a file trec_eval's rules refuse
        print(f"silent difference on case {n}: reference refuses ({e}); run={run!r} qrels={qrels!r}",
              file=sys.stderr)
        return "silent"
    got = {}
    if csv:
        for ln in p.stdout.splitlines()[1:]:   # run,topic,map
            f = ln.split(",")
            if len(f) == 3 and f[1] != "all":
                got[f[1]] = float(f[2])
    else:
        for ln in p.stdout.splitlines():       # map<TAB>topic<TAB>value (trec_eval -q)
            f = ln.split("\t")
            if len(f) == 3 and f[0].strip() == "map" and f[1] != "all":
                got[f[1]] = float(f[2])
    if any(abs(got.get(t, 0.0) - v) > 1e-4 for t, v in ref.items()):
        print(f"silent difference on case {n}: got {got}, reference {ref}; run={run!r} qrels={qrels!r}",
              file=sys.stderr)
        return "silent"
    return "ok"


def _fifo(d: Path) -> Path:
    import os
    os.mkfifo(d / "pipe.txt")
    return d / "pipe.txt"


def _bomb(d: Path) -> Path:
    import gzip
    with gzip.open(d / "bomb.txt.gz", "wb", compresslevel=9) as fh:
        for _ in range(64):
            fh.write(b"\n" * (1 << 20))
    return d / "bomb.txt.gz"


def _put(d: Path, name: str, text: str) -> Path:
    (d / name).write_text(text)
    return d / name


# name -> (make(dir) -> (qrels, run), what a correct tool does); issue 26's bad inputs of `eval QRELS RUN`
BOUNDARY_CASES = {
    "run is a FIFO": (lambda d: (_put(d, "q.qrels", QRELS), _fifo(d)), "refused: not a regular file"),
    "run is /dev/zero": (lambda d: (_put(d, "q.qrels", QRELS), Path("/dev/zero")), "refused: not a regular file"),
    "run is /dev/urandom": (lambda d: (_put(d, "q.qrels", QRELS), Path("/dev/urandom")), "refused: not a regular file"),
    "run.gz: 64 MB of newlines in 65 KB": (lambda d: (_put(d, "q.qrels", QRELS), _bomb(d)), "refused: decompresses"),
    "qrels: a 5th field 7 on every line": (lambda d: (_put(d, "q.txt", "".join(ln + " 7\n" for ln in QRELS.splitlines())),
                                                       _put(d, "r.txt", RUN)), "refused: 5 fields"),
    "qrels is a directory": (lambda d: (d, _put(d, "r.txt", RUN)), "refused: is a directory"),
}


def _demo(d: Path) -> Path:
    import shutil
    return Path(shutil.copytree(ROOT / "campaigns" / "demo", d / "c"))


def _answers(d: Path, run_id: str, text: str = "an answer") -> Path:
    import json
    obj = {"run_id": run_id, "topic_id": "401", "topic": "a question", "references": ["D401-1"], "response_length": 2,
           "answer": [{"text": text, "citations": [0]}]}
    return _put(d, "a.jsonl", json.dumps(obj) + "\n")


def _widened(d: Path) -> list[str]:
    c = _demo(d)
    secret = _put(d, "secret.txt", "root:x:0:0:SECRET\n")
    with open(c / "campaign.yaml", "a") as fh:
        fh.write("allow_outside: ['/']\n")
    text = (c / "campaign.yaml").read_text()
    (c / "campaign.yaml").write_text(text.replace("runs:\n", f"runs:\n  evil:\n    file: {secret}\n", 1))
    return ["eval", "--campaign", str(c), "-m", "map"]


def _big(d: Path) -> list[str]:
    with open(d / "r.txt", "w") as f:
        for t in range(50):
            f.write("".join(f"{t} Q0 d{t}-{i} {i + 1} {1000000 - i} big\n" for i in range(10000)))
    _put(d, "q.qrels", "".join(f"{t} 0 d{t}-{i} 1\n" for t in range(50) for i in range(0, 400, 3)))
    return ["eval", str(d / "q.qrels"), str(d / "r.txt"), "-m", "map"]


def _source_line(d: Path, line: str) -> Path:
    c = _demo(d)
    (c / "judgments" / "sources").mkdir()
    _put(c / "judgments" / "sources", "llm-x.jsonl", line + "\n")
    return c


def _surrogate_lease(d: Path) -> list[str]:
    c = _demo(d)
    subprocess.run([sys.executable, "-m", "cranfield.cli", "pool", str(c), "--strategy", "depth", "--depth", "80",
                    "--name", "p"], cwd=ROOT, capture_output=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    _put(c / "judgments", "leases.jsonl", '{"op": "lease", "topic": "401", "doc": "D\\ud800", "assessor": "a", '
                                          '"ts": 1.0, "expires": 9999999999.0}\n')
    return ["judgments", "next", str(c), "--topic", "401", "--pool", "p", "--assessor", "b"]


def _nuggets_import(d: Path, run_id: str) -> list[str]:
    c = d / "rag"
    subprocess.run([sys.executable, "-m", "cranfield.cli", "simulate", "--rag", "--out", str(c), "--runs", "2",
                    "--topics", "1", "--no-nuggets"], cwd=ROOT, capture_output=True,
                   env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return ["nuggets", "import", str(c), str(_put(d, "a.tsv", f"{run_id}\tq1\tN-1\t2\n")), "--source", "x"]


def races() -> list[tuple[str, str, str]]:
    """Issue 34's swap races and planted temporary names, through tests/test_swap_race.py and
    tests/test_temp_names.py (the same cases and checks; CRANFIELD_SWAP_ITER runs per tight-loop case)."""
    import os
    os.environ.setdefault("CRANFIELD_SWAP_ITER", "5")
    sys.path.insert(0, str(ROOT / "tests"))
    import test_swap_race as sr
    import test_temp_names as tn

    class _Dirs:
        def __init__(self, base: Path):
            self.base = base

        def mktemp(self, name: str) -> Path:
            return Path(tempfile.mkdtemp(prefix=name, dir=self.base))

    def said(exc) -> str:
        if exc is None:
            return "kept inside"
        return "FAILED: " + (str(exc).strip().splitlines() or ["?"])[0][:110]

    rows = []
    expected = "kept inside: nothing outside changed or shown, acknowledged writes kept"
    with tempfile.TemporaryDirectory() as tmp, sr.model_endpoints():
        dirs = _Dirs(Path(tmp))
        tpl = sr.make_templates(dirs.mktemp("tpl"))
        worst = sr._all(tpl, dirs, sr._worst, sr.ALL)
        loop = sr._all(tpl, dirs, sr._loop, sr.ALL)
        for p, k in sr.ALL:
            rel = sr.PATHS[p][1]
            rows.append((f"`{rel}` linked out at the first use: `{k}`", expected, said(worst[(p, k)])))
            rows.append((f"`{rel}` swapped in a tight loop ({sr.ITER} runs): `{k}`", expected, said(loop[(p, k)])))
        base = tn.make_template(dirs.mktemp("tn"))
        for k in tn.COMMANDS:
            try:
                tn.planted_case(base, dirs.mktemp("case"), k)
                seen = "kept inside"
            except AssertionError as exc:
                seen = said(exc)
            rows.append((f"links at the next {tn.AHEAD} temp names: `{k}`", expected, seen))
    return rows


def _limit(kind: str, n: int):
    import resource
    which = {"as": resource.RLIMIT_AS, "fsize": resource.RLIMIT_FSIZE}[kind]
    return lambda: resource.setrlimit(which, (n, n))


# issue 34: other commands, a limit (preexec_fn) or none; case -> (argv maker, expected, limit)
BOUNDARY_COMMANDS = {
    "campaign.yaml `allow_outside: ['/']` and a run at a secret": (_widened, "refused: outside the campaign", None),
    "answer run id `a/b`: submit": (lambda d: ["submit", str(_demo(d)), str(_answers(d, "a/b"))],
                                    "refused: path separator", None),
    "answer run id `.hidden`: submit": (lambda d: ["submit", str(_demo(d)), str(_answers(d, ".hidden"))],
                                        "refused: starts with '.'", None),
    "answer text with a lone surrogate \\ud800: nuggets check": (
        lambda d: ["nuggets", "check", str(_put(d, "s.jsonl", '{"run_id": "r", "topic_id": "401", "topic": "q", '
                                                            '"references": [], "response_length": 2, "answer": [{"text": "x \\ud800", "citations": []}]}\n'))],
        "refused: lone surrogate", None),
    "eval of a 500k-line run with RLIMIT_AS 300-400 MB": (_big, "refused: out of memory",
                                                          [_limit("as", mb * 10**6) for mb in (300, 350, 400)]),
    "report with RLIMIT_FSIZE 3000 bytes": (lambda d: ["report", str(_demo(d)), "--out", str(d / "rep")],
                                            "refused: cannot be written", _limit("fsize", 3000)),
    "a lone surrogate \\ud800 in judgments/sources/llm-x.jsonl: judgments sources": (
        lambda d: ["judgments", "sources", str(_source_line(d, '{"topic": "401", "doc": "D\\ud800", "grade": 1}'))],
        "refused: lone surrogate", None),
    "a lone surrogate \\ud800 in judgments/leases.jsonl: judgments next": (_surrogate_lease, "refused: lone surrogate",
                                                                           None),
    "nuggets import: assignment run id `a/b`": (lambda d: _nuggets_import(d, "a/b"), "refused: path separator", None),
    "nuggets import: assignment run id `.hidden`": (lambda d: _nuggets_import(d, ".hidden"), "refused: starts with '.'",
                                                   None),
    "nuggets import: assignment run id of 250 characters": (lambda d: _nuggets_import(d, "r" * 250),
                                                            "refused: 250 characters long", None),
    "nuggets import: assignment run id with ESC": (lambda d: _nuggets_import(d, "x\x1b[2Jy"),
                                                   "refused: control character", None),
}


def _observe(argv: list[str], limit=None) -> str:
    try:
        p = subprocess.run([sys.executable, "-m", "cranfield.cli", *argv], cwd=ROOT, capture_output=True, text=True,
                           timeout=60, preexec_fn=limit,       # no .pyc: the file-size limit would cut one short
                           env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"})
    except subprocess.TimeoutExpired:
        return "hang (> 60 s)"
    if "Traceback" in p.stderr:
        return "traceback"
    if p.returncode < 0:
        return f"killed by signal {-p.returncode}"
    if p.returncode == 0:
        return "exit 0: " + (p.stdout.strip().splitlines() or [""])[0]
    return "refused: " + p.stderr.strip().splitlines()[0].split(": ", 1)[-1][:300]


def boundaries() -> int:
    """Run BOUNDARY_CASES and BOUNDARY_COMMANDS through the CLI; print case | expected | observed."""
    rows, bad = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, (make, expected, limit)) in enumerate(BOUNDARY_COMMANDS.items()):
            d = Path(tmp) / f"cmd{i}"
            d.mkdir()
            argv = make(d)
            for lim in (limit if isinstance(limit, list) else [limit]):   # Arrow's C++ may abort (SIGABRT) first
                seen = _observe(argv, lim)
                if not seen.startswith(("killed", "exit 0")):
                    break
            ok = seen.startswith("refused") and expected.split(": ", 1)[1] in seen
            bad += not ok
            rows.append((name, expected, seen[:120]))
        for i, (name, (make, expected)) in enumerate(BOUNDARY_CASES.items()):
            d = Path(tmp) / str(i)
            d.mkdir()
            qp, rp = make(d)
            try:
                p = subprocess.run([sys.executable, "-m", "cranfield.cli", "eval", str(qp), str(rp), "-m", "map"],
                                   cwd=ROOT, capture_output=True, text=True, timeout=10,
                                   env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
                if "Traceback" in p.stderr:
                    seen = "traceback"
                elif p.returncode == 0:
                    seen = "exit 0: " + (p.stdout.strip().splitlines() or [""])[0]
                else:
                    seen = "refused: " + p.stderr.strip().splitlines()[0].split(": ", 2)[-1][:90]
            except subprocess.TimeoutExpired:
                seen = "hang (> 10 s)"
            ok = seen.startswith("refused") and expected.split(": ", 1)[1] in seen
            bad += not ok
            rows.append((name, expected, seen))
    if "--races" in sys.argv[1:]:
        for r in races():
            bad += r[2] != "kept inside"
            rows.append(r)
    print("| case | expected | observed |\n|---|---|---|")
    for r in rows:
        print("| " + " | ".join(x.replace("|", "\\|") for x in r) + " |")
    print(f"\n{len(rows) - bad} of {len(rows)} as expected")
    return 1 if bad else 0


def main() -> None:
    if "--boundaries" in sys.argv[1:]:
        sys.exit(boundaries())
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="CLI processes at once (cases stay the same)")
    ap.add_argument("--csv", action="store_true", help="--format csv (the table path) instead of text output")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    cases = []
    for n in range(a.count):                   # drawn up front: the same cases whatever --jobs is
        which = rng.random() < 0.5
        cases.append((n, mutate(RUN, rng) if which else RUN, QRELS if which else mutate(QRELS, rng)))
    with tempfile.TemporaryDirectory() as d, ThreadPoolExecutor(a.jobs) as pool:
        out = Counter(pool.map(lambda c: run_case(*c, d, a.csv), cases))
    print(f"fuzz ({'csv' if a.csv else 'text'} output): {a.count} files, {out['traceback']} tracebacks, {out['hang']} hangs > 5 s, "
          f"{out['silent']} silent differences ({out['refused']} refused with a message, "
          f"{out['ok'] + out['silent']} evaluated)")

if __name__ == "__main__":
    main()
