"""`cranfield eval QRELS RUN` on small clean files takes a path without pandas (engine.evaluation.plain): its
output is byte for byte the full path's, for trec_eval's own test files, the demo and simulated campaigns,
every flag it serves; a file it does not serve gets the full path's messages and exit status; and it
imports neither pandas, pyarrow nor scipy."""
from __future__ import annotations

import gzip
import io
import json
import os
import random
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest

import engine.evaluation.plain as pe
from cranfield.cli import main
from engine.formats.grammar import float_column, int_column, parse_float, parse_int, token_matrix

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "campaigns" / "demo"

FLAGS = [
    [], ["-q"], ["-m", "all_trec"], ["-q", "-m", "all_trec"], ["-c", "-q"], ["-c", "-m", "all_trec"],
    ["-M", "7", "-q"], ["-l", "2", "-q", "-m", "all_trec"], ["-J", "-q"], ["-J", "-c", "-m", "all_trec"],
    ["-n", "-q"], ["-N", "1000", "-m", "utility.1,-1,0,0", "-q"], ["--compat", "9", "-m", "all_trec"],
    ["-m", "relstring", "-q"], ["-m", "runid"], ["-m", "map", "-m", "P.10", "-m", "ndcg_cut.10"],
    ["-m", "P.5,10", "-m", "recall.3", "-m", "ndcg_cut.5", "-q"], ["-M", "0", "-m", "all_trec", "-q"],
]


def _cli(argv: list[str], plain: bool) -> tuple[int, str, str, bool]:
    """(exit status, stdout, stderr, whether the plain path served) of `cranfield eval ...` in process."""
    served = []
    real = pe.trec_eval_lines_plain

    def spy(*a, **kw):
        lines = real(*a, **kw)
        served.append(lines is not None)
        return lines

    limit = pe.PLAIN_MAX_BYTES
    out, err = io.StringIO(), io.StringIO()
    pe.trec_eval_lines_plain, pe.PLAIN_MAX_BYTES = spy, (limit if plain else -1)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            rc = main(["eval", *argv])
    finally:
        pe.trec_eval_lines_plain, pe.PLAIN_MAX_BYTES = real, limit
    return rc, out.getvalue(), err.getvalue(), any(served)


def _same(argv: list[str], served: bool | None = True) -> str:
    """Run both paths; assert identical status, stdout and stderr (and whether the plain path served)."""
    full = _cli(argv, plain=False)
    fast = _cli(argv, plain=True)
    assert not full[3]
    assert fast[:3] == full[:3], f"{argv}: outputs differ"
    if served is not None:
        assert fast[3] is served, f"{argv}: plain path served={fast[3]}"
    return fast[1]


# ------------------------------------------------------------------ data sets

def _simulated(tmp: Path, seed: int = 3) -> tuple[Path, list[Path]]:
    from engine.simulation.campaigns import simulate, write_campaign
    sim = simulate(n_runs=3, n_topics=9, depth=60, seed=seed, grades=(0, 1, 2, 3), ties=0.3)
    write_campaign(sim, tmp / "sim", pool_depth=25)
    return tmp / "sim" / "judgments" / "qrels.txt", sorted((tmp / "sim" / "runs").iterdir())


def _messy(tmp: Path) -> tuple[Path, list[Path]]:
    """The simulated files rewritten as people write them: shuffled lines (topics interleaved, scores out
    of order), tabs and runs of blanks, comments and blank lines, CRLF, gzip, many-digit and tied scores,
    non-ASCII document ids, pooled-but-unjudged grades, a judged topic a run lacks."""
    qrels, runs = _simulated(tmp, seed=11)
    rng = random.Random(5)
    qlines = qrels.read_text().splitlines()
    topics = sorted({ln.split()[0] for ln in qlines})
    extra = [f"{t} 0 ünj-{i}é -1" for i, t in enumerate(topics)] + [f"{topics[0]} 0 zz-pool -2"]
    q = tmp / "messy.qrels.txt"
    q.write_text("# judgments\n" + "\n".join(qlines + extra) + "\n\n")
    out = []
    for i, r in enumerate(runs):
        rows = [ln.split() for ln in r.read_text().splitlines()]
        if i == 1:
            rows = [x for x in rows if x[0] != topics[-1]]          # a judged topic this run lacks (-c)
        for x in rows[::7]:
            x[4] = repr(float(x[4]) + 1e-13)                       # 17 significant digits
        for x in rows[::11]:
            x[4] = "0.5"                                           # ties across documents
        rows += [[topics[0], "Q0", f"ünj-{0}é", "999", "0.25", rows[0][5]]]
        rng.shuffle(rows)
        sep = ["\t", "  ", " \t "][i % 3]
        text = "# a comment\n\n" + "\n".join(sep.join(x) for x in rows) + "\n"
        if i == 2:
            text = text.replace("\n", "\r\n")
        p = tmp / f"messy{i}.txt"
        if i == 0:
            p = tmp / "messy0.txt.gz"
            p.write_bytes(gzip.compress(text.encode("utf-8")))
        else:
            p.write_bytes(text.encode("utf-8"))
        out.append(p)
    return q, out


def _datasets(tmp: Path) -> dict[str, tuple[Path, list[Path]]]:
    sets = {"demo": (DEMO / "judgments" / "qrels.txt", sorted((DEMO / "runs").glob("*.txt"))[:4]),
            "simulated": _simulated(tmp), "messy": _messy(tmp)}
    te = ROOT / "tests" / "data" / "reference" / "trec_eval"
    sets["trec_eval"] = (te / "qrels.test", [te / "results.test"])
    return sets


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    return _datasets(tmp_path_factory.mktemp("plain"))


@pytest.mark.parametrize("name", ["trec_eval", "demo", "simulated", "messy"])
def test_plain_path_prints_what_the_full_path_prints(datasets, name):
    qrels, runs = datasets[name]
    for flags in FLAGS:
        _same([*flags, str(qrels), *map(str, runs)])
        _same([*flags, str(qrels), str(runs[-1])])


REFERENCE = (([], "out.test"), (["-m", "all_trec"], "out.test.a"), (["-m", "all_trec", "-q"], "out.test.aq"))
"""trec_eval 10.0's own expected outputs of qrels.test and results.test, by flags."""


def test_reference_output_through_the_plain_path(trec_eval_dir):
    """trec_eval 10.0's own expected outputs, from the plain path (not only equal to the full path)."""
    for flags, expected in REFERENCE:
        rc, out, _, served = _cli([*flags, str(trec_eval_dir / "qrels.test"), str(trec_eval_dir / "results.test")],
                                  plain=True)
        assert (rc, served) == (0, True)
        assert out == (trec_eval_dir / expected).read_text()


# ------------------------------------------------------------------ inputs the plain path leaves to the full one

RUN = "T1 Q0 d1 1 3.5 r1\nT1 Q0 d2 2 2.5 r1\nT2 Q0 d1 1 1.5 r1\n"
QRELS = "T1 0 d1 1\nT1 0 d2 0\nT2 0 d1 2\nT2 0 d3 1\n"

# served: whether the plain path reads the files (the full path reads them without a word too)
SERVED = {"signed rank", "unit separator in a document id", "unicode space in a document id",
          "grade of a billion (sparse gain table)"}
BAD = {
    "five fields": (QRELS, RUN + "T2 Q0 d2 2 0.5\n"),
    "seven fields (ignored, warned)": (QRELS, RUN + "T2 Q0 d2 2 0.5 r1 extra\n"),
    "digit separator in rank": (QRELS, RUN + "T2 Q0 d2 1_0 0.5 r1\n"),
    "signed rank": (QRELS, RUN + "T2 Q0 d2 +3 0.5 r1\n"),
    "nan score": (QRELS, RUN + "T2 Q0 d2 2 nan r1\n"),
    "infinite score": (QRELS, RUN + "T2 Q0 d2 2 1e400 r1\n"),
    "hex score": (QRELS, RUN + "T2 Q0 d2 2 0x1p3 r1\n"),
    "repeated document": (QRELS, RUN + "T1 Q0 d1 3 0.5 r1\n"),
    "tag changes": (QRELS, RUN + "T2 Q0 d2 2 0.5 r2\n"),
    "topic without judgments": (QRELS, RUN + "T9 Q0 d2 1 0.5 r1\n"),
    "only unjudged topics": (QRELS, "T9 Q0 d2 1 0.5 r1\n"),
    "empty run": (QRELS, "# nothing\n\n"),
    "conflicting judgments": (QRELS + "T1 0 d1 0\n", RUN),
    "repeated judgment": (QRELS + "T1 0 d1 1\n", RUN),
    "grade out of bounds": (QRELS + "T2 0 d9 2147483648\n", RUN),   # beyond C int
    "grade of a billion (sparse gain table)": (QRELS + "T2 0 d9 1000000000\n", RUN),
    "grade not an integer": (QRELS + "T2 0 d9 1.5\n", RUN),
    "empty judgments": ("\n", RUN),
    "prels judgments": ("T1 d1 1 0 0.5\nT1 d2 0 1 0.25\nT2 d1 2 2 1\n", RUN),
    "five-field qrels": ("T1 0 d1 1 x\nT1 0 d2 0 y\n", RUN),
    "not UTF-8": (QRELS, RUN + "T2 Q0 d\xff 2 0.5 r1\n"),
    "NUL byte": (QRELS, RUN + "T2 Q0 d\x002 2 0.5 r1\n"),
    "comment after CR": (QRELS, RUN + "\r# T2 Q0 d2 2 0.5\n"),
    "comment after VT": (QRELS, RUN + "\x0b# T2 Q0 d2 2 0.5\n"),
    "unit separator in a document id": (QRELS, RUN + "T2 Q0 d\x1f2 2 0.5 r1\n"),
    "unicode space in a document id": (QRELS, RUN + "T2 Q0 d\u00a02 2 0.5 r1\n"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_inputs_the_plain_path_leaves_get_the_full_paths_messages(tmp_path, case):
    qtext, rtext = BAD[case]
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_bytes(qtext.encode("latin-1") if "\xff" in qtext else qtext.encode("utf-8"))
    r.write_bytes(rtext.encode("latin-1") if "\xff" in rtext else rtext.encode("utf-8"))
    served = case in SERVED
    for flags in ([], ["-q", "-m", "all_trec"], ["-c"]):
        _same([*flags, str(q), str(r)], served=served)


def test_errors_outside_the_files(tmp_path):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text(QRELS)
    r.write_text(RUN)
    r2 = tmp_path / "r2.txt"
    r2.write_text(RUN)                                             # the same tag twice
    for argv, status in ((["-m", "no_such_measure", str(q), str(r)], 3), (["-l", "-1", str(q), str(r)], 3),
                         (["-M", "-2", str(q), str(r)], 3), ([str(q), str(tmp_path / "absent.txt")], 3),
                         ([str(tmp_path / "absent.txt"), str(r)], 3), ([str(q), str(r), str(r2)], 3),
                         ([str(q)], 3), (["-m", "P.0", str(q), str(r)], 3)):
        _same(argv, served=False)
        assert _cli(argv, plain=True)[0] == status, argv


def test_large_files_take_the_full_path(tmp_path, monkeypatch):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text(QRELS)
    r.write_text(RUN)
    monkeypatch.setattr(pe, "PLAIN_MAX_BYTES", len(QRELS) + len(RUN) - 1)
    assert pe.trec_eval_lines_plain(q, [r], ["map"]) is None
    monkeypatch.setattr(pe, "PLAIN_MAX_BYTES", len(QRELS) + len(RUN))
    assert pe.trec_eval_lines_plain(q, [r], ["map"]) == [f"{'map':<22}\tall\t0.7500"]   # (1 + 1/2) / 2


# ------------------------------------------------------------------ one grammar

# tokens as a line's fields are (never empty, no white space)
TOKENS = ["0", "7", "-3", "+2", "007", "1e2", "1_0", "٣", "+", "-", "1.", ".5", "-.5", "+.5e-3", "3e-2",
          "1E5", "1.e5", "inf", "-inf", "nan", "NaN", "infinity", "0x1p3", "1e400", "-1e400", "1e", "e5", ".",
          "1.5.2", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
          "-9223372036854775809", "99999999999999999999", "12.5", "1__0", "0b1", "-0", "-0.0", "+0", "0.1",
          "000.5", "5.", "123456789012345", "1234567890123456", "0.30000000000000004", "15.445771",
          "-2.129133", "0.000000000000001", "1.7976931348623157e308", "4e-324", "--1", "1-2", "1+", "12a"]


def _column(tokens: list[bytes]):
    lens = np.array([len(t) for t in tokens])
    starts = np.concatenate(([0], np.cumsum(lens + 1)[:-1]))
    chars = np.concatenate((np.frombuffer(b" ".join(tokens), np.uint8), np.zeros(int(lens.max()), np.uint8)))
    return token_matrix(chars, starts, lens), lens


def _one(fn, tok):
    try:
        return fn(tok)
    except ValueError:
        return None


@pytest.mark.parametrize("tok", TOKENS)
def test_column_readers_read_each_token_as_the_line_reader_does(tok):
    """The vectorized column readers accept and read exactly what parse_int / parse_float do, alone and
    beside other tokens (values compared by repr: the sign of zero counts)."""
    b = tok.encode("utf-8")
    for col in ([b], [b"1", b], [b, b"25.5"], [b"-7", b, b"0.001", b"1234567"]):
        ints = [_one(parse_int, x.decode()) for x in col]
        floats = [_one(parse_float, x.decode()) for x in col]
        got = int_column(*_column(col))
        assert (None if None in ints else ints) == (None if got is None else got.tolist()), col
        got = float_column(*_column(col))
        assert (None if None in floats else [repr(v) for v in floats]) == \
            (None if got is None else [repr(v) for v in got.tolist()]), col


def test_column_readers_agree_with_float_on_random_decimals():
    rng = np.random.default_rng(4)
    toks = [f"{x:.{d}f}".encode() for x, d in zip(rng.normal(0, 10 ** rng.integers(0, 9, 3000) / 7),
                                                 rng.integers(0, 12, 3000))]
    toks += [repr(float(x)).encode() for x in rng.random(500)]
    got = float_column(*_column(toks))
    assert [repr(v) for v in got.tolist()] == [repr(float(t)) for t in toks]


# ------------------------------------------------------------------ imports

def _modules_after(argv: list[str]) -> list[str]:
    code = ("import contextlib, io, json, sys\nfrom cranfield.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = main({argv!r})\n"
            "print(json.dumps([rc, sorted({m.split('.')[0] for m in sys.modules} & "
            "{'pandas', 'pyarrow', 'scipy', 'textual', 'matplotlib', 'sklearn'})]))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_plain_eval_imports_no_pandas_pyarrow_or_scipy():
    q, r = str(DEMO / "judgments" / "qrels.txt"), str(DEMO / "runs" / "asterA1.txt")
    assert _modules_after(["eval", "-m", "map", "-m", "P.10", "-m", "ndcg_cut.10", q, r]) == [0, []]
    assert _modules_after(["eval", q, r, str(DEMO / "runs" / "birchA1.txt")]) == [0, []]
    assert _modules_after(["eval", "-q", "-c", "-m", "all_trec", q, r]) == [0, []]


# ------------------------------------------------------------------ the reused Evaluator's dict path

def test_evaluator_dict_path_fills_missing_topics_with_complete():
    """Evaluator(complete=True) on a dict gives what the table path gives: a judged topic the run lacks
    scores as trec_eval -c scores it (its stand-in document), hand-checked: AP 0, P@1 0, num_ret 0 (the
    measure's -c fill), num_rel 2; T1 ranks x, b (tied, document id descending), then a: AP 1/3."""
    from engine.evaluation.api import Evaluator
    qrels = {"T1": {"a": 1, "b": 0}, "T2": {"c": 2, "d": 1}, "T3": {"e": 1}}
    run = {"T1": {"a": 0.5, "b": 0.9, "x": 0.9}, "T3": {"e": 0.1}}
    ev = Evaluator(qrels, ["map", "P.1", "num_ret", "num_rel"], complete=True)
    got = ev.evaluate(run)
    assert got["T2"] == {"map": 0.0, "P.1": 0.0, "num_ret": 0.0, "num_rel": 2.0}
    assert got["T1"]["map"] == pytest.approx(1 / 3) and got["T3"]["map"] == 1.0
    import pandas as pd
    frame = pd.DataFrame([(t, d, s) for t, r in run.items() for d, s in r.items()], columns=["topic", "doc", "score"])
    long = ev.evaluate(frame, frame=True)
    assert {(t, m): v for t, m, v in zip(long["topic"], long["measure"], long["value"])} == \
        {(t, m): v for t, vs in got.items() for m, v in vs.items()}
    assert Evaluator(qrels, ["map"]).evaluate(run).keys() == {"T1", "T3"}      # without -c: only T1, T3


def test_per_topic_text_by_topic_then_measure_in_trec_eval_format():
    """The -q writer (`evaluate.trec_eval_text`): topic after topic in the order of the first numeric
    measure, each measure's value found by topic whatever its own order; floats as %6.4f, NaN with its
    sign as trec_eval's printf prints it, integers as integers, text measures in their format."""
    from engine.evaluation.evaluate import trec_eval_text
    from engine.measures import resolve
    kinds = {n: r for r in resolve(["runid", "num_ret", "map", "relstring"]) for n in r.names}
    by = {("num_ret", 0): (["a", "b"], np.array([3.0, 12.0])),
          ("map", 0): (["b", "a"], np.array([-np.nan, 0.123456]))}
    sby = {("relstring", "r1"): {"a": "10", "b": ""}}
    lines = trec_eval_text(["r1"], kinds, by, sby, per_query=True)
    assert lines[:6] == ["num_ret               \ta\t3", "map                   \ta\t0.1235",
                         "relstring             \ta\t'10'", "num_ret               \tb\t12",
                         "map                   \tb\t  -nan", "relstring             \tb\t''"]
    assert lines[6:8] == ["runid                 \tall\tr1", "num_ret               \tall\t15"]
