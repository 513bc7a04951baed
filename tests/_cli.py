"""Run the `cranfield` command line in a subprocess (the one place naming the CLI module)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
    e = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
         "CRANFIELD_ASSESSOR": "tester", **(env or {})}
    p = subprocess.run([sys.executable, "-m", CLI_MODULE, *map(str, args)], cwd=cwd, env=e, text=True,
                       capture_output=True, timeout=timeout, input=stdin)
    return Result(p.returncode, p.stdout, p.stderr)


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
