"""Snapshot tests (pytest-textual-snapshot): every screen at 80x24 and 120x40 on the demo campaign.

After an intended change of a screen, or when campaigns/demo is regenerated, refresh with
`python3 -m pytest tests/test_tui_snapshots.py --snapshot-update` and review the SVGs.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tui.app import CranfieldApp
from tui.testing import press, private_copy, settle

ROOT = Path(__file__).resolve().parents[1]
DEMO_SOURCE = ROOT / "campaigns" / "demo"


DEMO = private_copy(DEMO_SOURCE)   # opening writes a run store: never into campaigns/demo

# screen -> keys pressed after loading
SCREENS = {
    "home": [],
    "leaderboard": ["l"],
    "run": ["l", "enter"],
    "matrix": ["m"],
    "topic": ["m", "enter"],
    "pool": ["p", "b"],
    "judge": ["j"],
    "stability": ["v"],
    "cost": ["c"],
    "measures-picker": ["l", "a", "n", "d", "c", "g"],     # typed "ndcg": the 150 measures filtered
}


@pytest.fixture(scope="module")
def judge_campaign(tmp_path_factory) -> Path:
    """A copy of the demo whose pool strategy reaches deeper than its judgments (work to do)."""
    dst = tmp_path_factory.mktemp("snap") / "demo"
    shutil.copytree(DEMO, dst, ignore=shutil.ignore_patterns(".cranfield-cache", "pools", "log.jsonl*"))
    cfg = (dst / "campaign.yaml").read_text()
    assert "\npool:\n  strategy: depth\n  depth: 50\n" in cfg
    (dst / "campaign.yaml").write_text(cfg.replace("\npool:\n  strategy: depth\n  depth: 50\n",
                                                   "\npool:\n  strategy: depth\n  depth: 60\n"))
    return dst


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen_snapshot(snap_compare, screen, size, judge_campaign, tmp_path):
    target = judge_campaign if screen == "judge" else DEMO
    app = CranfieldApp(target, export_dir=tmp_path, assessor="snap")

    async def run_before(pilot) -> None:
        await settle(pilot)
        await press(pilot, *SCREENS[screen])
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
