"""trec_eval's own quicktest commands, each run as `python -m cranfield.cli eval ...` in a fresh process and
compared line for line with trec_eval 10.0's outputs (tests/data/reference/trec_eval, PROVENANCE.md).

A fresh process loads only the measures it is asked for (and what they declare they use), so this catches
a measure that works only when another test already loaded its dependencies in the same interpreter.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import shared_path

ROOT = Path(__file__).resolve().parents[1]

# (flags and files, as trec_eval's test/ directory runs them; the reference output)
QUICKTEST = [
    (["qrels.test", "results.test"], "out.test"),
    (["-m", "all_trec", "qrels.test", "results.test"], "out.test.a"),
    (["-m", "all_trec", "-q", "qrels.test", "results.test"], "out.test.aq"),
    (["-q", "-m", "all_trec", "-Z", "zscores_file", "qrels.test", "results.test"], "out.test.aqZ"),
    (["-m", "all_prefs", "-q", "-R", "prefs", "prefs.test", "prefs.results.test"], "out.test.prefs"),
    (["-m", "all_prefs", "-q", "-R", "qrels_prefs", "qrels.test", "results.test"], "out.test.qrels_prefs"),
    (["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.123", "results.test"], "out.test.qrels_jg"),
]


def cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    """`python -m cranfield.cli ARGV` in a fresh interpreter."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "cranfield.cli", *argv], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120, check=False)


@pytest.mark.parametrize("argv,expected", QUICKTEST, ids=[c[1] for c in QUICKTEST])
def test_quicktest_in_a_fresh_process(argv, expected):
    ref = shared_path("trec_eval")
    res = cli("eval", *argv, cwd=ref)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    got = res.stdout.splitlines()
    want = (ref / expected).read_text().splitlines()
    missing = [ln for ln in want if ln not in got]
    assert got == want, f"{len(missing)} reference lines differ, first: {missing[:5]}"
    assert len(want) >= 30


def test_prefs_nickname_is_trec_evals():
    """trec_eval's `prefs` nickname (measures.c's prefs_off_name): out.test.prefs's lines of its members."""
    ref = shared_path("trec_eval")
    members = ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
               "prefs_simp", "prefs_pair", "prefs_avgjg")
    res = cli("eval", "-m", "prefs", "-q", "-R", "prefs", "prefs.test", "prefs.results.test", cwd=ref)
    assert res.returncode == 0, res.stderr[-2000:]
    want = [ln for ln in (ref / "out.test.prefs").read_text().splitlines() if ln.split("\t")[0].rstrip() in members]
    assert res.stdout.splitlines() == want and len(want) > 100
