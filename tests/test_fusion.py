"""Fusion pools (RRF / RBP take@N) on a hand-computed example; fused runs are valid runs `cranfield eval` reads."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from engine.pooling.rank_fusion import doc_weights, fuse
from engine.pooling import build_pool


def _runs():
    # topic 1: A ranks x y z ; B ranks y w x  (scores decreasing = rank order)
    rows = [("A", "1", d, 3.0 - i) for i, d in enumerate("xyz")] + [("B", "1", d, 3.0 - i) for i, d in enumerate("ywx")]
    return pd.DataFrame(rows, columns=["run", "topic", "doc", "score"])


def test_rrf_take_n_hand_computed():
    # k = 60: x = 1/61 + 1/63, y = 1/62 + 1/61, w = 1/62, z = 1/63 -> order y, x, w, z
    w = doc_weights(_runs(), "rrf", k=60).set_index("doc")["weight"]
    assert w["x"] == pytest.approx(1 / 61 + 1 / 63)
    assert w["y"] == pytest.approx(1 / 62 + 1 / 61)
    pool = build_pool(_runs(), "rrf", 2, depth=10)
    t = pool.table
    assert list(t["doc"]) == ["y", "x"] and list(t["order"]) == [1, 2] and set(t["method"]) == {"rrf"}
    assert list(build_pool(_runs(), "rrf", 3, depth=10).table["doc"]) == ["y", "x", "w"]


def test_rbp_take_n_hand_computed():
    # p = 0.5: x = .5 + .125, y = .25 + .5, w = .25, z = .125 -> order y, x, w
    w = doc_weights(_runs(), "rbp", p=0.5).set_index("doc")["weight"]
    assert w.to_dict() == pytest.approx({"x": 0.625, "y": 0.75, "w": 0.25, "z": 0.125})
    t = build_pool(_runs(), "rbp", 3, depth=10, p=0.5).table
    assert list(t["doc"]) == ["y", "x", "w"]


def test_fusion_methods_hand_computed():
    r = _runs()
    rrf = fuse(r, "rrf").set_index("doc")["score"]
    assert list(rrf.index) == ["y", "x", "w", "z"]
    # min-max per run/topic: A x 1, y .5, z 0 ; B y 1, w .5, x 0
    cs = fuse(r, "combsum").set_index("doc")["score"]
    assert cs.to_dict() == pytest.approx({"x": 1.0, "y": 1.5, "w": 0.5, "z": 0.0})
    mnz = fuse(r, "combmnz").set_index("doc")["score"]
    assert mnz.to_dict() == pytest.approx({"x": 2.0, "y": 3.0, "w": 0.5, "z": 0.0})


def test_fuse_command_writes_a_run_eval_reads(tmp_path: Path):
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "fused.txt"
    env_cmd = [sys.executable, "-m", "cranfield.cli"]
    demo = root / "campaigns" / "demo"
    r = subprocess.run(env_cmd + ["fuse", "--campaign", str(demo), "--run", "asterA1", "--run", "cedarA1",
                                  "--method", "combmnz", "--depth", "50", "-o", str(out)],
                       capture_output=True, text=True, cwd=root, timeout=120)
    assert r.returncode == 0, r.stderr
    qrels = sorted((demo / "judgments").glob("*"))[0]
    e = subprocess.run(env_cmd + ["eval", "-m", "map", str(qrels), str(out)], capture_output=True, text=True,
                       cwd=root, timeout=120)
    assert e.returncode == 0, e.stderr
    line = [ln.split() for ln in e.stdout.splitlines() if ln.startswith("map")][0]
    assert line[1] == "all" and 0 < float(line[2]) <= 1
    lines = out.read_text().splitlines()
    assert all(ln.split()[5] == "fused-combmnz" for ln in lines)
    assert max(int(ln.split()[3]) for ln in lines) == 50
