"""Shared fixtures: paths to the reference data kept in tests/data/reference (provenance in its PROVENANCE.md)."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "tests" / "data" / "reference"


def shared_path(*parts: str) -> Path:
    """A file of the reference data in tests/data/reference (a missing file fails the test)."""
    p = REFERENCE.joinpath(*parts)
    assert p.exists(), f"reference data {p} is missing from the repository"
    return p


@pytest.fixture
def trec_eval_dir() -> Path:
    return shared_path("trec_eval")


DEMO_SOURCE = ROOT / "campaigns" / "demo"
DEMO_CACHES = (".cranfield-cache", ".cranfield-store")


def tree_hash(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder` by relative path (the engine's caches left out)."""
    import hashlib
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*"))
            if p.is_file() and not set(p.relative_to(folder).parts) & set(DEMO_CACHES)}


@pytest.fixture(scope="session", autouse=True)
def bundled_demo_is_never_written():
    """No test may edit campaigns/demo (tests open copies): its files hash the same after the session."""
    before = tree_hash(DEMO_SOURCE)
    yield
    after = tree_hash(DEMO_SOURCE)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert not changed, f"tests wrote into campaigns/demo: {', '.join(changed[:10])}"
