"""Run batches evaluated in threads give exactly the table of one pass (values, order, dtypes)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import engine
from engine.errors import FormatError

E = sys.modules["engine.evaluation.evaluate"]
DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"
MEASURES = ["official", "ndcg_cut.10", "bpref", "infAP", "relstring"]


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    assert np.array_equal(a["value"].to_numpy(), b["value"].to_numpy(), equal_nan=True)
    for c in ("run", "topic", "measure"):
        assert a[c].astype(str).tolist() == b[c].astype(str).tolist(), c
    assert list(a["run"].cat.categories) == list(b["run"].cat.categories)
    pd.testing.assert_frame_equal(engine.summarize(a), engine.summarize(b))


def test_evaluate_files_matches_one_pass():
    qrels = DEMO / "judgments" / "qrels.txt"
    files = sorted((DEMO / "runs").glob("*.txt"))
    one = E.to_long(E.compute(engine.read_qrels(qrels), engine.read_runs(files), MEASURES))
    for workers in (2, 3, 5):
        _same(one, engine.evaluate_files(qrels, files, MEASURES, workers=workers))


def test_evaluate_batches_match_one_pass(monkeypatch):
    qrels = engine.read_qrels(DEMO / "judgments" / "qrels.txt")
    runs = engine.read_runs(sorted((DEMO / "runs").glob("*.txt")))
    one = E.to_long(E.compute(qrels, runs, MEASURES, engine.EvalOptions(complete=True)))
    monkeypatch.setattr(E, "PARALLEL_MIN_ROWS", 1)
    assert len(E.run_batches(runs, workers=3)) == 3
    _same(one, engine.evaluate(qrels, runs, MEASURES, complete=True))


def test_evaluate_files_reports_every_bad_file(tmp_path):
    good = sorted((DEMO / "runs").glob("*.txt"))[:3]
    bad1, bad2 = tmp_path / "b1.txt", tmp_path / "b2.txt"
    bad1.write_text("401 Q0 d1 1 x run1\n")
    bad2.write_text("401 Q0 d1 1\n")
    with pytest.raises(FormatError) as err:
        engine.evaluate_files(DEMO / "judgments" / "qrels.txt", [good[0], bad1, good[1], good[2], bad2],
                              ["map"], workers=2)
    text = str(err.value)
    assert f"{bad1}:1: score must be a number" in text and f"{bad2}:1:" in text
