"""ruff, with the rule set of pyproject.toml ([tool.ruff.lint]: pyflakes, syntax errors, bugbear), finds
nothing anywhere in the tree; a planted defect is found (so the check itself works)."""
from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_the_tree_is_ruff_clean():
    done = _ruff(".")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_a_planted_defect_is_found(tmp_path):
    bad = tmp_path / "planted.py"
    bad.write_text("import os\n\ndef f(xs=[]):\n    return undefined_name\n")
    done = _ruff("--config", str(ROOT / "pyproject.toml"), str(bad))
    assert done.returncode == 1
    for code in ("F401", "F821", "B006"):
        assert code in done.stdout, done.stdout
