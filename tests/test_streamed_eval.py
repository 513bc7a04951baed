"""`cranfield eval QRELS RUN...` on files too large for the plain path evaluates run by run in worker
processes (engine.evaluation.plain.trec_eval_lines_streamed): one run in memory per core. Its output is
byte for byte the full path's (every flag, trec_eval's own files, the demo, simulated and messy campaigns);
files it does not serve get the full path's messages and exit status; its workers import no pandas."""
from __future__ import annotations

import functools
import io
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import engine.evaluation.plain as pe
from cranfield.cli import main
from test_plain_eval import BAD, FLAGS, REFERENCE, datasets  # noqa: F401  (the plain path's data sets and cases)

ROOT = Path(__file__).resolve().parents[1]


def _cli(argv: list[str], streamed: bool, workers: int = 1) -> tuple[int, str, str, bool]:
    """(exit status, stdout, stderr, whether the streamed path served) of `cranfield eval ...` in process,
    the plain path off; `streamed` False: the full path only."""
    served = []
    real = pe.trec_eval_lines_streamed

    def spy(*a, **kw):
        lines = functools.partial(real, workers=workers)(*a, **kw) if streamed else None
        served.append(lines is not None)
        return lines

    limit = pe.PLAIN_MAX_BYTES
    out, err = io.StringIO(), io.StringIO()
    pe.trec_eval_lines_streamed, pe.PLAIN_MAX_BYTES = spy, -1
    try:
        with redirect_stdout(out), redirect_stderr(err):
            rc = main(["eval", *argv])
    finally:
        pe.trec_eval_lines_streamed, pe.PLAIN_MAX_BYTES = real, limit
    return rc, out.getvalue(), err.getvalue(), any(served)


def _same(argv: list[str], served: bool | None = True, workers: int = 1) -> str:
    full = _cli(argv, streamed=False)
    fast = _cli(argv, streamed=True, workers=workers)
    assert not full[3]
    assert fast[:3] == full[:3], f"{argv}: outputs differ"
    if served is not None:
        assert fast[3] is served, f"{argv}: streamed path served={fast[3]}"
    return fast[1]


@pytest.mark.parametrize("name", ["trec_eval", "demo", "simulated", "messy"])
def test_streamed_path_prints_what_the_full_path_prints(datasets, name):  # noqa: F811  (the fixture)
    qrels, runs = datasets[name]
    # the messy files may be left to the full path (e.g. a file a reader refuses): the bytes are equal anyway
    served = None if name == "messy" else True
    for flags in FLAGS:
        _same([*flags, str(qrels), *map(str, runs)], served=served)


def test_reference_output_through_the_streamed_path(trec_eval_dir):
    for flags, expected in REFERENCE:
        rc, out, _, served = _cli([*flags, str(trec_eval_dir / "qrels.test"), str(trec_eval_dir / "results.test")],
                                  streamed=True)
        assert (rc, served) == (0, True)
        assert out == (trec_eval_dir / expected).read_text()


def test_unsorted_runs_ties_and_non_ascii_ids(tmp_path):
    """Lines out of order, scores tied across documents (trec_eval breaks ties by document id, strcmp
    order, here with multi-byte ids), a judged document equal to -c's stand-in id."""
    q = tmp_path / "q.txt"
    q.write_text("1 0 é-b 1\n1 0 a 2\n1 0 zz 0\n2 0 x 1\n2 0 ü 1\n3 0 y 1\n", encoding="utf-8")
    r1 = tmp_path / "r1.txt"
    r1.write_text("2 Q0 ü 1 0.5 A\n1 Q0 a 3 0.5 A\n1 Q0 é-b 1 0.5 A\n1 Q0 zz 2 0.9 A\n2 Q0 x 2 0.5 A\n"
                  "1 Q0 é-a 4 0.5 A\n", encoding="utf-8")
    r2 = tmp_path / "r2.txt"
    r2.write_text("1 Q0 no_relevant_docs_retrieved 1 1 B\n1 Q0 a 2 0.5 B\n3 Q0 y 1 2 B\n", encoding="utf-8")
    for flags in ([], ["-q", "-m", "all_trec"], ["-c", "-q"], ["-c", "-m", "all_trec"], ["-M", "2", "-q"],
                  ["-J", "-q"], ["-l", "2", "-q"]):
        _same([*flags, str(q), str(r1), str(r2)])


@pytest.mark.parametrize("case", sorted(BAD))
def test_inputs_the_streamed_path_leaves_get_the_full_paths_messages(tmp_path, case):
    qtext, rtext = BAD[case]
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_bytes(qtext.encode("latin-1") if "\xff" in qtext else qtext.encode("utf-8"))
    r.write_bytes(rtext.encode("latin-1") if "\xff" in rtext else rtext.encode("utf-8"))
    for flags in ([], ["-q", "-m", "all_trec"], ["-c"]):
        _same([*flags, str(q), str(r)], served=None)


def test_two_runs_with_one_tag_and_worker_processes(tmp_path):
    """Two worker processes give the same bytes; two files with one tag get the full path's error."""
    q, r1, r2 = tmp_path / "q.txt", tmp_path / "r1.txt", tmp_path / "r2.txt"
    q.write_text("T1 0 d1 1\nT1 0 d2 0\nT2 0 d1 2\nT2 0 d3 1\n")
    r1.write_text("T1 Q0 d1 1 3.5 r1\nT1 Q0 d2 2 2.5 r1\nT2 Q0 d1 1 1.5 r1\n")
    r2.write_text("T1 Q0 d2 1 3.5 r2\nT2 Q0 d3 1 1.5 r2\nT2 Q0 d1 2 1.5 r2\n")
    _same(["-q", str(q), str(r1), str(r2)], workers=2)
    r2.write_text(r1.read_text())
    assert _same([str(q), str(r1), str(r2)], served=False) == ""       # the error is on stderr


def test_workers_import_no_pandas(tmp_path):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("T1 0 d1 1\nT1 0 d2 0\n")
    r.write_text("T1 Q0 d1 1 3.5 r1\nT1 Q0 d2 2 2.5 r1\n")
    code = (f"import sys; from engine.evaluation.plain import _stream_one; "
            f"from engine.ranking.ranked import EvalOptions; "
            f"print(_stream_one(({str(q)!r}, {str(r)!r}, ['map'], EvalOptions(), False))[1]); "
            f"print(sorted(m for m in ('pandas', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.splitlines() == [repr([f"{'map':<22}\tall\t1.0000"]), "[]"]


def test_topics_without_judgments_are_left_out_and_noted(tmp_path):
    """A run's topics without judgments: the streamed path leaves them out and gives the full path's
    note (the union over the runs, sorted), not a fallback to the full path."""
    q, r1, r2 = tmp_path / "q.txt", tmp_path / "r1.txt", tmp_path / "r2.txt"
    q.write_text("T1 0 d1 1\nT1 0 d2 0\nT2 0 d1 2\nT2 0 d3 1\n")
    r1.write_text("T1 Q0 d1 1 3.5 r1\nT9 Q0 d2 1 2.5 r1\nT2 Q0 d1 1 1.5 r1\nT10 Q0 d1 1 1 r1\n")
    r2.write_text("T2\tQ0\td3\t1\t3.5\tr2\nT8\tQ0\td1\t1\t1.5\tr2\n")        # tabs: the plain reader
    for flags in ([], ["-q"], ["-c", "-q", "-m", "all_trec"]):
        _same([*flags, str(q), str(r1), str(r2)])
    rc, _, err, served = _cli([str(q), str(r1), str(r2)], streamed=True)
    assert (rc, served) == (0, True)
    assert "note: 3 topic(s) in the runs have no judgments and are not evaluated: T10, T8, T9" in err
