"""Pilot test of the Training screen: saved results, curves, best choice per budget, its keys."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd

from engine.training.report import best_measure, save_result
from tui.app import CranfieldApp
from tui.testing import press, private_copy, screen_text, settle

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"


def _learn() -> pd.DataFrame:
    rows = [("full", 100.0, "ranksvm", 0.80), ("full", 100.0, "ranknet", 0.78)]
    for m, vals in (("infap", (0.70, 0.79)), ("hedge", (0.30, 0.75))):
        for p, v in zip((1.0, 20.0), vals):
            rows += [(m, p, "ranksvm", v), (m, p, "ranknet", v - 0.01)]
    d = pd.DataFrame(rows, columns=["method", "percent", "ranker", "map"])
    d["docs"] = (d["percent"] * 10).astype(int)
    return d


def _sens() -> pd.DataFrame:
    return pd.DataFrame({"level": [1, 1, 100, 100], "measure": ["map", "bpref", "map", "bpref"],
                         "test_map": [0.40, 0.48, 0.55, 0.55]})


def test_training_screen_keys(tmp_path, monkeypatch):
    import tui.screens.training as tr
    monkeypatch.setattr(tr, "QUICK_METHODS", ("depth", "hedge", "letor"))   # keep the background job small
    monkeypatch.setattr(tr, "QUICK_PERCENTS", (5, 20))
    camp = private_copy(DEMO, tmp_path / "demo", skip=("pools", "log.jsonl*"))
    save_result(camp / "training", "learn", _learn())
    save_result(camp / "training", "sensitivity", _sens())
    assert best_measure(_sens())["measure"].tolist() == ["bpref", "map"]   # a tie goes to MAP

    async def body():
        app = CranfieldApp(camp, export_dir=tmp_path)
        async with app.run_test(size=(110, 40)) as pilot:
            await settle(pilot)
            await press(pilot, "g")
            scr = app.screen
            assert type(scr).__name__ == "TrainingScreen"
            text = screen_text(app)
            assert "ranknet" in text and "1% infap 0.690" in text and "20% infap 0.780" in text
            await press(pilot, "n")                      # next ranker
            assert "1% infap 0.700" in screen_text(app)
            await press(pilot, "2")
            assert scr.query_one("#tr-tabs").active == "tab-sens"
            assert "at 1% of the judgments: bpref" in screen_text(app)
            await press(pilot, "3")
            assert "b computes them" in screen_text(app)
            await press(pilot, "b")                      # characterize this campaign's selections
            await settle(pilot)
            sel = pd.read_csv(camp / "training" / "select.tsv", sep="\t")
            assert len(sel) == 6 and set(sel["method"]) == {"depth", "hedge", "letor"}
            assert ((sel["precision"] >= 0) & (sel["precision"] <= 1)).all()
            assert "most precise method per budget" in screen_text(app)
            await press(pilot, "y")
            assert "curve: recall" in screen_text(app)
            await press(pilot, "e")
            assert list(tmp_path.glob("training-select*"))
    asyncio.run(body())
