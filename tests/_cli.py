"""Run the `cranfield` command line in a subprocess (the one place naming the CLI module).

Each `cli(...)` is a separate process running `python -m cranfield.cli ARGS` as a user's shell does. To
spare ~0.65 s of CPU per command (the interpreter and numpy/pandas/pyarrow/yaml starting, ~600 commands a
run), the process is forked from a per-test-process server that has imported those third-party libraries
and nothing of Cranfield's (checked at its start): the command then imports the CLI and every engine
module itself, in a process no test has touched, as `python -m` does. A command whose environment changes
what an interpreter reads at start-up (PYTHON*, locale) runs as a real `python -m` instead, and
CRANFIELD_TEST_COLD=1 runs every command that way."""
from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI_MODULE = "cranfield.cli"
DEMO = ROOT / "campaigns" / "demo"


@dataclass
class Result:
    rc: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def cli(*args, cwd=None, timeout: float = 60, env: dict | None = None, stdin: str | None = None,
        in_process: bool = False) -> Result:
    """`cranfield ARGS` in a subprocess with this checkout's packages first on the path (`in_process`:
    through the CLI's main() in this process, faster; an escaping exception is reported as a traceback)."""
    if in_process:
        return _in_process([str(a) for a in args], env or {})
    base = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "CRANFIELD_ASSESSOR": "tester"}
    e = {**base, **(env or {})}
    argv = [str(a) for a in args]
    if _FORKS.usable(e, base):
        return _FORKS.run(argv, cwd, e, timeout, stdin)
    p = subprocess.run([sys.executable, "-m", CLI_MODULE, *argv], cwd=cwd, env=e, text=True,
                       capture_output=True, timeout=timeout, input=stdin)
    return Result(p.returncode, p.stdout, p.stderr)


# The server: third-party libraries loaded, then per request a fork that becomes `python -m cranfield.cli`.
_SERVER = r"""
import json, os, runpy, sys, traceback
import numpy, pandas, pyarrow, pyarrow.compute, pyarrow.csv, pyarrow.parquet, yaml
ours = sorted(m for m in sys.modules if m.split(".")[0] in ("cranfield", "engine", "tui"))
print(json.dumps(ours), flush=True)
for line in sys.stdin:
    argv, cwd, env, fin, fout, ferr = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            for fd, path, flags in ((0, fin, os.O_RDONLY), (1, fout, os.O_WRONLY | os.O_TRUNC),
                                    (2, ferr, os.O_WRONLY | os.O_TRUNC)):
                os.dup2(os.open(path, flags), fd)
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(env)
            sys.path[0] = os.getcwd()                 # as `python -m` puts the working folder first
            sys.argv = [sys.argv[0], *argv]
            sys.stdin = open(0, closefd=False, encoding=sys.stdin.encoding, errors=sys.stdin.errors)
            rc = 0
            try:
                runpy.run_module("cranfield.cli", run_name="__main__", alter_sys=True)
            except SystemExit as exc:
                code = exc.code
                if code is None or isinstance(code, int):
                    rc = code or 0
                else:
                    print(code, file=sys.stderr)
                    rc = 1
            except BaseException:
                traceback.print_exc()
                rc = 1
            import threading
            threading._shutdown()                     # as the interpreter does at exit: threads, then atexit
            import atexit
            atexit._run_exitfuncs()
            for f in (sys.stdout, sys.stderr):
                try:
                    f.flush()
                except Exception:
                    pass
        except BaseException:
            rc = 120
        os._exit(rc)
    print(json.dumps(pid), flush=True)
    print(json.dumps(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])), flush=True)
"""

# read as an interpreter or a library the server loads starts: other values run a real `python -m`
_STARTUP = ("PYTHON", "LC_", "LANG", "ARROW_", "OMP_", "OPENBLAS_", "MKL_", "NUMEXPR_", "MALLOC_", "MIMALLOC_",
            "JE_", "TZ", "PANDAS_", "NUMPY_")


class _ForkServer:
    """One server per test process, started on first use."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.env: dict[str, str] = {}
        self.dir = ""
        self.busy = threading.Lock()     # one command at a time; a concurrent one (a race test) runs cold

    def usable(self, env: dict[str, str], base: dict[str, str]) -> bool:
        """Whether a command with environment `env` can be forked (the server starts with `base`)."""
        if os.environ.get("CRANFIELD_TEST_COLD") or not hasattr(os, "fork"):
            return False
        if not self.busy.acquire(blocking=False):
            return False
        try:
            return self._ready(env, base)
        finally:
            self.busy.release()

    def _ready(self, env: dict[str, str], base: dict[str, str]) -> bool:
        if self.proc is None or self.proc.poll() is not None:
            self._start(base)
        pick = lambda e: {k: v for k, v in e.items() if k.startswith(_STARTUP)}   # noqa: E731
        return pick(env) == pick(self.env)

    def _start(self, env: dict[str, str]) -> None:
        self.env = dict(env)
        self.dir = tempfile.mkdtemp(prefix="cranfield-forks-")
        atexit.register(shutil.rmtree, self.dir, True)
        # unbuffered bytes: a line read never takes the next one from the pipe (select waits for it)
        self.proc = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     bufsize=0, env=env, cwd=self.dir)
        loaded = json.loads(self.proc.stdout.readline())
        assert loaded == [], f"the fork server loaded Cranfield's own modules: {loaded}"

    def run(self, argv: list[str], cwd, env: dict[str, str], timeout: float, stdin: str | None) -> Result:
        if not self.busy.acquire(blocking=False):
            p = subprocess.run([sys.executable, "-m", CLI_MODULE, *argv], cwd=cwd, env=env, text=True,
                               capture_output=True, timeout=timeout, input=stdin)
            return Result(p.returncode, p.stdout, p.stderr)
        try:
            return self._run(argv, cwd, env, timeout, stdin)
        finally:
            self.busy.release()

    def _run(self, argv: list[str], cwd, env: dict[str, str], timeout: float, stdin: str | None) -> Result:
        d = Path(self.dir)
        fin, fout, ferr = d / "in", d / "out", d / "err"
        fin.write_text(stdin or "")
        fout.write_bytes(b"")
        ferr.write_bytes(b"")
        req = [argv, str(cwd or os.getcwd()), env, str(fin), str(fout), str(ferr)]
        self.proc.stdin.write(json.dumps(req).encode() + b"\n")
        pid = json.loads(self.proc.stdout.readline())
        if not select.select([self.proc.stdout], [], [], timeout)[0]:
            os.kill(pid, signal.SIGKILL)
            self.proc.stdout.readline()
            raise subprocess.TimeoutExpired([sys.executable, "-m", CLI_MODULE, *argv], timeout)
        rc = json.loads(self.proc.stdout.readline())
        return Result(rc, _text(fout), _text(ferr))


def _text(path: Path) -> str:
    """A captured stream as subprocess.run(text=True) gives it (locale encoding, universal newlines)."""
    with open(path, encoding=None) as f:
        return f.read()


_FORKS = _ForkServer()


def _in_process(args: list[str], env: dict) -> Result:
    import contextlib
    import importlib
    import io
    import traceback
    main = importlib.import_module(CLI_MODULE).main
    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in ("CRANFIELD_ASSESSOR", "CRANFIELD_MAX_READ", *env)}
    os.environ.update({"CRANFIELD_ASSESSOR": "tester", **env})
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(args)
            except SystemExit as exc:
                rc = exc.code if isinstance(exc.code, int) else 1
            except BaseException:                 # noqa: BLE001 - what a subprocess would print
                traceback.print_exc()
                rc = 1
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return Result(int(rc or 0), out.getvalue(), err.getvalue())


def demo_copy(dest: Path) -> Path:
    """A private copy of the bundled demo campaign (never edit the demo itself)."""
    shutil.copytree(DEMO, dest)
    return dest


def assert_clean_refusal(r: Result, *words: str) -> None:
    """A non-zero exit with a message (no traceback) containing every one of `words`."""
    assert r.rc not in (0, 1), (r.rc, r.text[-2000:])
    assert "Traceback" not in r.text, r.text[-3000:]
    for w in words:
        assert w in r.text, (w, r.text[-2000:])
