"""Shared fixtures: paths to the reference data kept in tests/data/reference (provenance in its PROVENANCE.md)."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "tests" / "data" / "reference"


def _share_bytecode() -> None:
    """The tests' subprocesses (every `cranfield` command run as users run it) reuse compiled modules: where
    PYTHONDONTWRITEBYTECODE is set, each would recompile Cranfield (~0.2 s of CPU a process). The compiled
    files go to a private temp folder of this session (PYTHONPYCACHEPREFIX), never into the tree."""
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
        prefix = tempfile.mkdtemp(prefix="cranfield-test-pyc-")
        os.environ["PYTHONPYCACHEPREFIX"] = prefix          # inherited by xdist workers and every subprocess
        del os.environ["PYTHONDONTWRITEBYTECODE"]
        atexit.register(shutil.rmtree, prefix, True)


_share_bytecode()

PILOT_IDLE_WINDOW = 0.005
"""Seconds of each window in which Textual's pilot looks for the app to be idle (textual._wait; 0.02 in
Textual): each `pilot.press` waits for two idle windows and each `pilot.pause` for one, so the TUI tests
spent a third of their time asleep (test_tui_keys, _key_storm, _pilot, _polish with -n 0: 357 s wall at 178 s
of CPU, now 234 s at 164 s). The idle test keeps Textual's ratio (under
1/20 of the window's time spent on the CPU), so it is as strict as before; `settle` still waits for every
worker explicitly."""


def _quicker_pilot() -> None:
    """The idle window above; and the apps the tests create in this process (not the `cranfield`
    processes they start) with Textual's animations off (its "none" level): each `pilot.press` waits for
    every animation to finish (a scroll glides ~0.1 s), so a storm's presses were 80% waiting. Scrolls and
    the like land at once on the value they would glide to; what is drawn after is the same."""
    import textual._wait as wait
    import textual.constants as constants
    wait.SLEEP_GRANULARITY = PILOT_IDLE_WINDOW
    wait.SLEEP_IDLE = PILOT_IDLE_WINDOW / 20
    constants.TEXTUAL_ANIMATIONS = "none"


_quicker_pilot()


def shared_path(*parts: str) -> Path:
    """A file of the reference data in tests/data/reference (a missing file fails the test)."""
    p = REFERENCE.joinpath(*parts)
    assert p.exists(), f"reference data {p} is missing from the repository"
    return p


SLOW_FIRST = ("test_tui_keys", "test_store", "test_serve", "test_tui_80x24", "test_kills", "test_serve_day",
              "test_swap_race", "test_autojudge_interchange", "test_estimators_unbiased", "test_tui_day",
              "test_one_evaluation", "test_call_shapes", "test_measures_fresh_process", "test_temp_names",
              "test_wheel", "test_tui_follow", "test_tui_pilot", "test_tui_key_storm")
"""Test files started first under xdist, longest first (the slowest files of a whole-suite --durations run,
2026-11-28): a long test started last would leave the other core idle at the end of the run."""


def _shared_fixture_module(item) -> str | None:
    """The test file's name when `item` uses a module-, class- or session-scoped fixture defined in that
    file (its expensive set-up, built once per process that runs the file), else None."""
    module = item.nodeid.split("::", 1)[0]
    info = getattr(item, "_fixtureinfo", None)             # test functions only (not doctests)
    for defs in (info.name2fixturedefs.values() if info else ()):
        for d in defs:
            if d.scope != "function" and d.baseid.split("::", 1)[0] == module:
                return Path(module).stem
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under xdist (`--dist loadgroup`): the tests of a file that share a module-scoped set-up run in one
    worker (otherwise each worker builds it: the swap-race templates, the wheel, the evaluated stores), and
    the long files in SLOW_FIRST start first. A file's tests stay together and in their order."""
    by_file: dict[str, list] = {}
    for it in items:
        by_file.setdefault(it.nodeid.split("::", 1)[0], []).append(it)
    rank = {Path(f).stem: i for i, f in enumerate(SLOW_FIRST)}
    order = sorted(by_file, key=lambda f: rank.get(Path(f).stem, len(rank)))     # stable: the rest as collected
    items[:] = [it for f in order for it in by_file[f]]
    for it in items:
        group = _shared_fixture_module(it)
        if group:
            it.add_marker(pytest.mark.xdist_group(group))


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
