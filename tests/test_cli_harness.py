"""tests/_cli.py's `cli()`: a command forked from the test server (third-party libraries loaded, nothing of
Cranfield's) prints, exits and reads stdin and relative paths as the same command run as a cold
`python -m cranfield.cli`; a command that does not answer within its timeout is killed."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from _cli import _FORKS, CLI_MODULE, ROOT, cli, demo_copy


def _cold(args, cwd, stdin=None, env=None):
    e = {**os.environ, "PYTHONPATH": str(ROOT), "CRANFIELD_ASSESSOR": "tester", **(env or {})}
    p = subprocess.run([sys.executable, "-m", CLI_MODULE, *map(str, args)], cwd=cwd, env=e, text=True,
                       capture_output=True, input=stdin, timeout=60)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("args, stdin", [
    (["eval", "judgments/qrels.txt", "runs/asterA1.txt", "-m", "map", "-q"], None),   # relative to cwd
    (["status", "."], None),
    (["eval", "judgments/qrels.txt", "no-such-run.txt"], None),                       # an input error: exit 3
    (["no-such-command"], None),                                                      # usage: exit 2
    (["judgments", "add", ".", "--stdin"], "401 D1 1\n"),
])
def test_forked_command_equals_cold_command(tmp_path, args, stdin):
    c = demo_copy(tmp_path / "c")
    if not hasattr(os, "fork"):
        pytest.skip("no fork")
    got = cli(*args, cwd=c, stdin=stdin)
    assert _FORKS.proc is not None and _FORKS.proc.poll() is None       # it went through the server
    want = _cold(args, c, stdin)
    assert (got.rc, got.out, got.err) == want


def test_a_startup_variable_runs_cold_and_a_hang_is_killed(tmp_path, monkeypatch):
    import _cli
    calls = []
    real = _cli.subprocess.run
    monkeypatch.setattr(_cli.subprocess, "run", lambda *a, **k: calls.append(a) or real(*a, **k))
    r = cli("--help", env={"PYTHONIOENCODING": "ascii"})
    assert r.rc == 0 and len(calls) == 1                          # an interpreter start-up setting: a real start
    calls.clear()
    assert cli("--help").rc == 0 and calls == []                  # forked
    t0 = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        cli("status", ROOT / "campaigns" / "demo", timeout=0.001)       # still importing when the time is up
    assert time.monotonic() - t0 < 30
    assert cli("--help").rc == 0                                   # the server serves on
