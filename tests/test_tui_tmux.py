"""A scripted terminal session: `cranfield` in a real 80x24 tmux pane, driven with send-keys.

Opens the demo campaign, sorts the leaderboard, opens a topic and quits cleanly (exit status 0).
Needs the tmux binary (CI: apt-get install tmux); skipped with that reason when it is absent.
"""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (CI: apt-get install -y tmux)")


def cranfield_cmd() -> str:
    """`cranfield` when installed, else the same entry point through the interpreter running the tests."""
    exe = shutil.which("cranfield")
    return shlex.quote(exe) if exe else f"{shlex.quote(sys.executable)} -m cranfield.cli"


class Pane:
    def __init__(self, tmp: Path, env: dict[str, str] | None = None):
        self.sock = f"cranfield-test-{uuid.uuid4().hex[:8]}"
        self.rc_file = tmp / "rc"
        env = {"XDG_DATA_HOME": str(tmp / "data"), **(env or {})}     # `cranfield` makes its demo copy here
        envs = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        inner = (f"cd {shlex.quote(str(ROOT))} && env TERM=xterm-256color {envs} {cranfield_cmd()}; "
                 f"echo $? > {shlex.quote(str(self.rc_file))}")
        self.tmux("new-session", "-d", "-s", "cf", "-x", "80", "-y", "24", f"sh -c {shlex.quote(inner)}")

    def tmux(self, *args: str) -> str:
        return subprocess.run([TMUX, "-L", self.sock, *args], capture_output=True, text=True, check=False).stdout

    def text(self, escapes: bool = False) -> str:
        return self.tmux("capture-pane", "-p", *(["-e"] if escapes else []), "-t", "cf")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "cf", *keys)

    def wait_for(self, needle: str, timeout: float = 40.0) -> str:
        """The pane once it shows `needle` and has stopped changing (a redraw can take two frames)."""
        end = time.monotonic() + timeout
        text, last = "", None
        while time.monotonic() < end:
            text = self.text()
            if needle in text and text == last:
                return text
            last = text if needle in text else None
            time.sleep(0.25)
        raise AssertionError(f"{needle!r} did not appear within {timeout}s; the pane shows:\n{text}")

    def exit_status(self, timeout: float = 20.0) -> int:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.rc_file.exists() and self.rc_file.read_text().strip():
                return int(self.rc_file.read_text())
            time.sleep(0.2)
        raise AssertionError(f"cranfield did not exit; the pane shows:\n{self.text()}")

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.sock, "kill-server"], capture_output=True, check=False)


def _worst_run_by_map() -> str:
    import pandas as pd
    import yaml

    from engine.evaluation.evaluate import evaluate
    from engine import read_qrels, read_runs, summarize
    from engine.ranking.ranked import EvalOptions
    demo = ROOT / "campaigns" / "demo"
    cfg = yaml.safe_load((demo / "campaign.yaml").read_text())
    runs = read_runs(sorted((demo / "runs").iterdir()))
    qrels = pd.concat([read_qrels(p) for p in sorted((demo / "judgments").iterdir()) if p.name != "log.jsonl"])
    opt = EvalOptions(rel_level=int(cfg["relevance"]["binary_threshold"]), max_depth=int(cfg["evaluation"]["depth"]))
    return str(summarize(evaluate(qrels, runs, ["map"], options=opt))["map"].idxmin())


def test_tmux_session_sorts_opens_topic_and_quits(tmp_path):
    worst = _worst_run_by_map()
    pane = Pane(tmp_path)
    try:
        pane.wait_for("Demo track")
        pane.wait_for("topic  judged/target")           # home screen, evaluated
        pane.keys("l")
        before = pane.wait_for("3:map▼")                 # leaderboard sorted by map, best first
        assert "1:run" in before
        pane.keys("3")                                   # one key: sort by column 3 again = reverse
        after = pane.wait_for("3:map▲")
        first_row = [ln for ln in after.splitlines() if ln.strip().startswith("1 ")][0]
        assert worst in first_row, after
        pane.keys("m")
        pane.wait_for("topic▲")
        pane.keys("Enter")                               # open the topic under the cursor
        topic = pane.wait_for("Topic 401")
        assert "R=" in topic
        pane.keys("q")
        assert pane.exit_status() == 0
    finally:
        pane.close()


def test_tmux_no_color_matrix_keeps_shades(tmp_path):
    """With NO_COLOR the heat map has no colour codes but its shade glyphs still carry the levels."""
    pane = Pane(tmp_path, env={"NO_COLOR": "1"})
    try:
        pane.wait_for("topic  judged/target")
        pane.keys("m")
        text = pane.wait_for("topic▲")
        assert sum(text.count(g) for g in "░▒▓█") > 20
        raw = pane.text(escapes=True)
        # Textual renders NO_COLOR as greyscale: only grey-ramp or black/white codes remain
        grey = set(range(232, 256)) | {0, 7, 8, 15, 16, 231}
        palette = {int(n) for n in re.findall(r"[34]8;5;(\d+)", raw)}
        assert palette and palette <= grey, sorted(palette - grey)
        for r, g, b in re.findall(r"[34]8;2;(\d+);(\d+);(\d+)", raw):
            assert r == g == b
        pane.keys("q")
        assert pane.exit_status() == 0
    finally:
        pane.close()
