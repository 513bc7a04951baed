"""Helpers for driving the app in tests and scripts (pilot)."""
from __future__ import annotations

from .capture import screen_text

__all__ = ["BackgroundError", "check_errors", "settle", "press", "screen_text"]


class BackgroundError(AssertionError):
    """A test helper saw background work fail (a worker error) or an error notification."""


def check_errors(app, *, errors_ok: bool = False) -> None:
    """Raise BackgroundError for a worker that failed (an unexplained exception: `app.worker_failures`)
    or, unless `errors_ok`, an error notification, since the last check on this app."""
    failures = getattr(app, "worker_failures", [])
    notices = getattr(app, "notices", [])
    seen_f, seen_n = getattr(app, "_checked_upto", (0, 0))
    seen_n = min(seen_n, len(notices))             # the app keeps its last 1000 notices
    new_failures, new_errors = failures[seen_f:], [n for n in notices[seen_n:] if n.severity == "error"]
    app._checked_upto = (len(failures), len(notices))
    if new_failures:
        exc = new_failures[0]
        raise BackgroundError(f"background work failed: {type(exc).__name__}: {exc}") from exc
    if new_errors and not errors_ok:
        raise BackgroundError("error notification: " + "; ".join(f"{n.title}: {n.message}" for n in new_errors)
                              + " (settle(..., errors_ok=True) when the test expects it)")


async def _wait(app) -> None:
    from textual.worker import WorkerCancelled
    try:
        await app.workers.wait_for_complete()       # the campaign's load or evaluation and the screens' jobs
    except WorkerCancelled:
        pass


async def settle(pilot, rounds: int = 3, *, errors_ok: bool = False) -> None:
    """Wait until every worker is done and the screen has redrawn; raise BackgroundError when background
    work failed or (unless `errors_ok`) an error notification was shown meanwhile."""
    app = pilot.app
    for _ in range(rounds):
        await _wait(app)
        await pilot.pause()
    await _wait(app)
    await pilot.pause()
    check_errors(app, errors_ok=errors_ok)


async def press(pilot, *keys: str, errors_ok: bool = False) -> None:
    """Press keys one by one, settling after each (see `settle`)."""
    for k in keys:
        await pilot.press(k)
        await settle(pilot, 1, errors_ok=errors_ok)


async def write_pool(pilot, depth: int):
    """On the pool screen: build a depth pool of `depth` and write it; returns the screen's preview table."""
    from textual.widgets import Input
    await press(pilot, "p")
    pilot.app.screen.query_one("#pool-depth", Input).value = str(depth)
    await press(pilot, "b")
    await settle(pilot)
    await press(pilot, "w")
    return pilot.app.screen.frame


def exported(folder, stem: str, suffix: str) -> list:
    """The files `e` wrote for table `stem` with `suffix` (csv, md, tex, about.json): named
    STEM_SOURCE_NNNj_STAMP[-N].SUFFIX (engine.formats.about), oldest name first."""
    import re
    from engine.util import fs
    pat = re.compile(re.escape(stem) + r"_[A-Za-z0-9.-]+_\d+j_\d{8}T\d{6}Z(-\d+)?\." + re.escape(suffix) + "$")
    return sorted((p for p in fs.glob(folder) if pat.match(p.name)),
                  key=lambda p: (len(p.name), p.name))


def deepen_demo_pool(campaign, depth: int = 60):
    """Set the demo copy's campaign.yaml pool depth (50, all judged) to `depth`: documents left to judge."""
    from pathlib import Path
    from engine.util import fs
    cfg = Path(campaign) / "campaign.yaml"
    text = fs.read_text(cfg)
    old = "\npool:\n  strategy: depth\n  depth: 50\n"
    if old not in text:
        raise ValueError(f"{cfg}: no depth-50 pool section to deepen")
    fs.atomic_write(cfg, text.replace(old, f"\npool:\n  strategy: depth\n  depth: {depth}\n"))


def run_async(fn):
    """Run an async test body with asyncio (no async pytest plugin is needed)."""
    import asyncio
    import functools
    import inspect

    @functools.wraps(fn)
    def wrapper(*args, **kw):
        return asyncio.run(fn(*args, **kw))
    wrapper.__signature__ = inspect.signature(fn)
    return wrapper


def private_copy(campaign, dst=None, skip: tuple = ()):
    """A copy of `campaign` (without its cache, its run store and the names in `skip`) in `dst`, else in a temporary folder removed at exit:
    tests open the copy, so the campaign itself (e.g. campaigns/demo) is never written."""
    import atexit
    import shutil
    import tempfile
    from pathlib import Path
    if dst is None:
        tmp = Path(tempfile.mkdtemp(prefix="cranfield-copy-"))
        atexit.register(shutil.rmtree, tmp, True)
        dst = tmp / Path(campaign).name
    shutil.copytree(campaign, dst, ignore=shutil.ignore_patterns(".cranfield-cache", ".cranfield-store", "exports", *skip))
    return Path(dst)


# ---------------------------------------------------------------------------------------------- key storm
STORM_EXTRA_KEYS = ("enter", "escape", "tab", "shift+tab", "up", "down", "left", "right", "pageup", "pagedown",
                    "home", "end", "space")
"""Keys pressed on every screen besides its own bindings and the app's."""
STORM_TYPED = "abjklmpqrsxz0123456789./-_ "
"""Characters typed into a focused text input (screen keys such as q and l among them)."""
QUIT_ACTIONS = frozenset({"quit", "quit_picker", "help_quit"})
_EXCEPTION_NAME = None


def keys_of(cls) -> list[str]:
    """Every key bound by the class (and its bases), except those that quit."""
    from .screens.help import all_bindings
    keys: list[str] = []
    for b in all_bindings(cls):
        if b.action in QUIT_ACTIONS:
            continue
        for k in b.key.split(","):
            k = k.strip()
            if k and k not in keys:
                keys.append(k)
    return keys


def names_exception(message: str) -> bool:
    """The message names a Python exception (TypeError, Traceback, ...): an error the app did not explain."""
    import builtins
    import re
    global _EXCEPTION_NAME
    if _EXCEPTION_NAME is None:
        names = [n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)]
        _EXCEPTION_NAME = re.compile(r"\b(?:Traceback|" + "|".join(sorted(names, key=len, reverse=True))
                                     + r"|[A-Z]\w*(?:Error|Exception))\b")
    return bool(_EXCEPTION_NAME.search(message)) and "CranfieldError" not in message


def storm_keys(app) -> list[str]:
    """The keys a storm may press now: the current screen's bindings, the app's, STORM_EXTRA_KEYS."""
    keys = keys_of(type(app.screen)) + [k for k in keys_of(type(app)) if k not in ("ctrl+p",)]
    return list(dict.fromkeys(keys + list(STORM_EXTRA_KEYS)))


async def _bounded_settle(pilot, budget: float) -> None:
    """Let the screen redraw; wait for the app's load and the screen's workers at most `budget` seconds."""
    import asyncio
    import time
    app = pilot.app
    end = time.perf_counter() + budget
    await pilot.pause()
    while time.perf_counter() < end and any(w.is_running for w in app.workers):
        await asyncio.sleep(0.02)
    await pilot.pause()


async def storm(pilot, seed: int, n_keys: int, *, settle_budget: float = 1.0, on_key=None) -> dict:
    """Press `n_keys` keys chosen with random.Random(seed) among `storm_keys` of the screen showing (typed
    characters while a text input has the focus). Returns {"keys": [(screen, key)], "crash": traceback
    text or None, "exception_notices": [messages naming a Python exception]}."""
    import random
    import traceback
    from textual.widgets import Input, TextArea
    app = pilot.app
    rng = random.Random(seed)
    pressed: list[tuple[str, str]] = []
    crash = None
    seen = len(app.notices)
    bad: list[str] = []
    try:
        for i in range(n_keys):
            if on_key is not None:
                on_key(i)
            typing = isinstance(app.focused, (Input, TextArea))
            key = rng.choice(STORM_TYPED) if typing and rng.random() < 0.7 else rng.choice(storm_keys(app))
            if key == " ":
                key = "space"
            pressed.append((type(app.screen).__name__, key))
            await pilot.press(key)
            await _bounded_settle(pilot, settle_budget if rng.random() < 0.3 else 0.0)
            if app._exception is not None or app.return_code is not None:
                break
            for n in app.notices[seen:]:
                if names_exception(n.message) or names_exception(n.title):
                    bad.append(f"after {pressed[-1]}: {n.title}: {n.message}")
            seen = len(app.notices)
    except Exception:
        crash = traceback.format_exc()
    if app._exception is not None:
        crash = "".join(traceback.format_exception(app._exception))
    elif crash is None and app.return_code is not None:
        crash = f"the app ended (return code {app.return_code}) after {pressed[-1:]}"
    return {"keys": pressed, "crash": crash, "exception_notices": bad}


def storm_campaign(kind: str, dst):
    """A campaign for a storm in folder `dst`: "demo" (a copy of campaigns/demo), "empty" (`cranfield init`),
    "malformed" (the demo with line 5 of one run cut short), "unjudged" (the demo's runs and topics, no
    judgments), "rag" (a small simulated RAG campaign: answer runs and nuggets, no retrieval runs). The loading state is a storm on "demo" with a slow load (`run_storm(slow_load=True)`)."""
    from pathlib import Path
    dst = Path(dst)
    from engine.campaign.demo import bundled_demo
    demo = bundled_demo()
    if kind == "rag":
        from engine.nuggets.simulate import simulate_rag, write_rag_campaign
        return write_rag_campaign(simulate_rag(3, 3, nuggets=(2, 3), seed=11), dst)
    if kind == "empty":                   # `cranfield init`, as a process of its own (the TUI never imports the CLI)
        import os
        import subprocess
        import sys
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(demo.parents[1])] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        subprocess.run([sys.executable, "-m", "cranfield.cli", "init", str(dst)], check=True, env=env,
                       capture_output=True)
        return dst
    camp = private_copy(demo, dst, skip=("pools", "log.jsonl*") + (("judgments", "truth") if kind == "unjudged" else ()))
    from engine.util import fs
    if kind == "unjudged":
        fs.makedirs(camp / "judgments")
    if kind == "malformed":
        f = fs.glob(camp / "runs")[0]
        lines = fs.read_text(f).splitlines()
        lines[4] = "401 Q0 broken-line"
        fs.atomic_write(f, "\n".join(lines) + "\n")
    return camp


async def run_storm(campaign, seed: int, n_keys: int, size=(80, 24), *, slow_load: bool = False,
                    settle_budget: float = 1.0, start: tuple[str, ...] = ()) -> dict:
    """One storm on a fresh app over `campaign` (exports into the campaign); with `slow_load` the
    campaign load waits until half the keys are pressed (keys hit every screen while it loads); `start`:
    keys pressed once the campaign is loaded, before the storm (to begin on a given screen)."""
    import threading
    from .app import CranfieldApp
    from .model import CampaignModel
    gate = threading.Event()
    real = CampaignModel.load.__func__                 # (defined on tui.model.core.ModelCore)
    if slow_load:
        def slow(cls, root):
            gate.wait(120)
            return real(cls, root)
        CampaignModel.load = classmethod(slow)
    app = CranfieldApp(campaign, assessor="storm")
    out = {"keys": [], "crash": None, "exception_notices": []}
    try:
        try:
            async with app.run_test(size=size) as pilot:
                await _bounded_settle(pilot, 0.0 if slow_load else 10.0)
                for key in start:
                    await pilot.press(key)
                    await _bounded_settle(pilot, 1.0)
                out = await storm(pilot, seed, n_keys, settle_budget=settle_budget,
                                  on_key=lambda i: gate.set() if i == n_keys // 2 else None)
                app.cancel_work()
        except Exception:
            import traceback
            out["crash"] = out["crash"] or traceback.format_exc()
    finally:
        gate.set()
        if slow_load:
            del CampaignModel.load                     # the inherited loader again
    return out
