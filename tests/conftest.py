"""Shared fixtures: paths to ../shared reference data (tests skip when it is absent)."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def shared_path(*parts: str) -> Path:
    """A file under ../shared/data, or skip the test with the reason."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"reference data {p} is not present (../shared is beside the checkout in CI)")
    return p


@pytest.fixture
def trec_eval_dir() -> Path:
    return shared_path("trec_eval")
