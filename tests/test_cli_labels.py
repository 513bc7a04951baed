"""CLI output says what it did: `cost --average-times` no longer labels its times '(medians)';
`judgments predict --help` names the files it writes (it named predicted-CLASSIFIER.txt and .json)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from cranfield.cli import main
from tui.testing import private_copy

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"


def test_cost_labels_the_times_it_used(capsys):
    assert main(["cost", "--queries", "100", "--per-query", "32", "--average-times"]) == 0
    avg = capsys.readouterr().out
    assert main(["cost", "--queries", "100", "--per-query", "32"]) == 0
    med = capsys.readouterr().out
    assert "15.33 assessor hours" in avg and "averaged over judging targets" in avg and "median" not in avg
    assert "17.11 assessor hours" in med and "median time per judgment by judging target" in med


def test_predict_help_names_the_files_predict_writes(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["judgments", "predict", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    camp = private_copy(DEMO, tmp_path / "demo")
    assert main(["judgments", "predict", str(camp)]) == 0
    written = sorted(p.name for p in (camp / "judgments" / "sources").iterdir())
    assert written == ["predicted-kld.meta.json", "predicted-kld.probs.tsv", "predicted-kld.qrels"]
    for suffix in (".qrels", ".meta.json", ".probs.tsv"):
        assert f"NAME{suffix}" in help_text.replace("sources/NAME", "NAME")
    assert not re.search(r"\.txt\b", help_text)
