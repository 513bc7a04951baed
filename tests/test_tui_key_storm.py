"""Key storm: seeded random key sequences over every screen and modal (each screen's keys, the app's,
Enter/Escape/Tab/arrows, typed text in inputs) on the demo, an empty campaign, a campaign with a malformed
run, the demo while its load runs and a simulated RAG campaign (the nugget screens), at 80x24 and
120x40: no crash, no error notice naming a Python exception. `benchmarks/key_storm.py --seeds N` runs many more seeds; a failing seed replays with
tui.testing.run_storm(campaign, seed, keys, size)."""
from __future__ import annotations

import asyncio

import pytest

from tui.app import CranfieldApp
from tui.testing import names_exception, run_storm, storm_campaign

SEED = 20261126
KEYS = 30
SIZES = [(80, 24), (120, 40)]


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("kind", ["demo", "empty", "malformed", "loading", "rag"])
def test_key_storm(tmp_path, kind, size):
    camp = storm_campaign("demo" if kind == "loading" else kind, tmp_path / kind)
    start = ("N", "enter") if kind == "rag" else ()          # begin on the Assign screen (mode N)
    r = asyncio.run(run_storm(camp, SEED + size[0], KEYS, size, slow_load=kind == "loading", settle_budget=0.5,
                              start=start))
    assert r["crash"] is None, f"keys {r['keys']}\n{r['crash']}"
    assert not r["exception_notices"], r["exception_notices"]
    assert len(r["keys"]) == KEYS
    assert len({s for s, _ in r["keys"]}) >= 3          # it moved between screens
    if kind == "rag":
        assert r["keys"][0][0] == "AssignModeScreen"


def test_the_storm_reports_a_crash_and_an_exception_notice(tmp_path, monkeypatch):
    """The detector itself: an app key that raises ends the app (reported with its traceback); an error
    notice naming a Python exception is reported, one naming none is not."""
    def boom(self):
        raise ZeroDivisionError("storm detector check")
    monkeypatch.setattr(CranfieldApp, "action_help", boom)
    camp = storm_campaign("demo", tmp_path / "demo")
    r = asyncio.run(run_storm(camp, 1, 60, (80, 24), settle_budget=0.0))
    assert r["crash"] is not None and "ZeroDivisionError: storm detector check" in r["crash"]
    assert r["keys"][-1][1] == "question_mark" and len(r["keys"]) < 60
    assert names_exception("TypeError: expected str, bytes or os.PathLike object, not NoneType")
    assert names_exception("Traceback (most recent call last):")
    assert not names_exception("runs/a.txt:5: expected 6 fields, found 3; fix the line")
