"""Reproduce trec_eval 10.0's own test outputs line for line."""
from __future__ import annotations

import pytest

from engine.cli import main

CASES = [
    ([], "out.test"),
    (["-m", "all_trec"], "out.test.a"),
    (["-m", "all_trec", "-q"], "out.test.aq"),
]


@pytest.mark.parametrize("flags,expected", CASES, ids=[c[1] for c in CASES])
def test_reproduces_reference_output(trec_eval_dir, capsys, flags, expected):
    rc = main(["eval", *flags, str(trec_eval_dir / "qrels.test"), str(trec_eval_dir / "results.test")])
    assert rc == 0
    got = capsys.readouterr().out.splitlines()
    want = (trec_eval_dir / expected).read_text().splitlines()
    missing = [ln for ln in want if ln not in got]
    assert got == want, f"{len(missing)} reference lines differ, first: {missing[:5]}"
