"""The command line's one progress bar: long experiments draw it on a terminal and say what they are doing;
off a terminal (pipes, files, these tests' captured stderr) they write nothing extra."""
from __future__ import annotations

import io
import re
import shutil
import sys
from pathlib import Path

import pytest

from cranfield.cli import main
from cranfield.cli.progress import ProgressBar, progress_bar

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_draws_in_place_and_ends_its_line():
    s = FakeTTY()
    bar = ProgressBar("cost --plan", s, width=60)
    bar(0.0, "evaluating with 8 judgments per topic")
    bar(0.5, "evaluating with 16")
    first = "cost --plan [--------------------]   0% evaluating with 8 judgments per topic"[:59]   # width - 1
    second = "cost --plan [##########----------]  50% evaluating with 16".ljust(59)          # over the first
    assert s.getvalue() == "\r" + first + "\r" + second
    bar(1.0, "done")
    assert s.getvalue().endswith("\rcost --plan [####################] 100% done".ljust(60) + "\n")
    bar.close()                                     # once only
    assert s.getvalue().count("\n") == 1


def test_no_bar_off_a_terminal_or_when_quiet():
    assert progress_bar("x", stream=io.StringIO()) is None
    assert progress_bar("x", quiet=True, stream=FakeTTY()) is None
    assert isinstance(progress_bar("x", stream=FakeTTY()), ProgressBar)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    camp = tmp_path_factory.mktemp("p") / "demo"
    shutil.copytree(DEMO, camp)
    return camp


CASES = {
    "cost --plan": (["cost", "--campaign", "{c}", "--plan", "--js", "8,16", "--trials", "5"],
                    "evaluating with 16 judgments per topic"),
    "stability gstudy": (["stability", "gstudy", "--campaign", "{c}"], "G-study of 12 runs x 20 topics"),
    "stability reduction": (["stability", "reduction", "--campaign", "{c}", "-m", "map", "--levels", "50",
                             "--trials", "2"], "%"),
    "stability significance": (["stability", "significance", "--campaign", "{c}", "--tests", "t"],
                               "pairwise tests of 12 runs"),
    "ingest": (["ingest", "{c}", "--rebuild", "--workers", "1"], "ingested 12/12 files"),
}


@pytest.mark.parametrize("label", list(CASES))
def test_long_commands_show_the_bar_on_a_terminal_only(label, demo, monkeypatch, capsys):
    argv, says = CASES[label]
    argv = [a.replace("{c}", str(demo)) for a in argv]
    assert main(argv) == 0
    quiet_out, quiet_err = capsys.readouterr()
    assert "\r" not in quiet_err and "[#" not in quiet_err and "%]" not in quiet_err
    tty = FakeTTY()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(argv) == 0
    err = tty.getvalue()
    assert f"\r{label} [" in err and says in err and err.endswith("\n")
    seconds = re.compile(r"\d+\.\d+ s\b")              # ingest reports its own time
    assert seconds.sub("", capsys.readouterr().out) == seconds.sub("", quiet_out)   # same results with the bar


def test_training_learn_bar(monkeypatch, capsys, tmp_path):
    argv = ["training", "learn", "--simulate", "--topics", "4", "--runs", "4", "--depth", "30", "--methods",
            "infap", "--percents", "50", "--rankers", "regression", "--folds", "2"]
    assert main(argv) == 0
    assert "..." not in capsys.readouterr().err
    monkeypatch.setenv("COLUMNS", "200")
    tty = FakeTTY()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(argv) == 0
    err = tty.getvalue()
    assert "\rtraining learn [----------" in err and "infap selection at 50%: training regression (2 folds)" in err
    assert "\rtraining learn [####################] 100% done" in err
