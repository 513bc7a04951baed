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


def test_pool_says_how_many_documents_are_new(tmp_path, capsys):
    """`cranfield pool` said how many documents to judge, not how many of them nobody judged yet."""
    import yaml
    from engine import read_qrels, read_runs
    camp = private_copy(DEMO, tmp_path / "demo")
    cfg = yaml.safe_load((camp / "campaign.yaml").read_text())
    pooled = [r for r, m in cfg["runs"].items() if m.get("pooled", True)]
    runs = read_runs(sorted((camp / "runs").iterdir()))
    runs = runs[runs["run"].astype(str).isin(pooled)]
    # by hand: the top 60 of each pooled run by trec_eval's order (score desc, doc desc), per topic
    r = runs.assign(topic=runs["topic"].astype(str), doc=runs["doc"].astype(str), run=runs["run"].astype(str))
    r = r.sort_values(["run", "topic", "score", "doc"], ascending=[True, True, False, False])
    top = r[r.groupby(["run", "topic"]).cumcount() < 60]
    pool = set(zip(top["topic"], top["doc"]))
    q = read_qrels(camp / "judgments" / "qrels.txt")
    judged = set(zip(q.loc[q["grade"] >= 0, "topic"].astype(str), q.loc[q["grade"] >= 0, "doc"].astype(str)))
    capsys.readouterr()
    assert main(["pool", str(camp), "--strategy", "depth", "--depth", "60", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"{len(pool)} documents to judge, {len(pool - judged)} of them new (not judged yet)" in out
    assert len(pool - judged) > 0


def test_status_shows_no_unjudged_column_of_zeros_beside_pool_left(tmp_path, capsys):
    """`status` showed an `unjudged` column (qrels lines with grade -1) that was 0 on every topic while
    `pool left` was 21-33: the column is left out when the judgments hold no such line."""
    camp = private_copy(DEMO, tmp_path / "demo")
    assert main(["pool", str(camp), "--strategy", "depth", "--depth", "60"]) == 0
    capsys.readouterr()
    assert main(["status", str(camp)]) == 0
    out = capsys.readouterr().out
    head = [ln for ln in out.splitlines() if ln.startswith("topic ")][0]
    assert head.split()[-1] == "left" and "unj" not in head and "pooled but not judged" not in out
    # with grade -1 lines (TREC's pooled-but-unjudged), the column is there and counts them
    q = camp / "judgments" / "qrels.txt"
    q.write_text(q.read_text() + "401 0 D401-extra1 -1\n401 0 D401-extra2 -1\n")
    assert main(["status", str(camp)]) == 0
    out = capsys.readouterr().out
    assert "2 pooled but not judged" in out


def test_ci_says_why_an_interval_has_no_width_and_uses_the_better_variance(tmp_path, capsys):
    """On complete judgments `ci` printed [x, x] intervals without a word; its default variance was the one
    whose coverage the README gives as 70-79% (now the bias-corrected jackknife, 90-97%)."""
    camp = private_copy(DEMO, tmp_path / "demo")
    assert main(["ci", "--campaign", str(camp)]) == 0
    out = capsys.readouterr().out
    assert "(infAP variance: jackknife_bc)" in out and "bias" in out.splitlines()[0]
    assert "note: 12 run(s) with an interval of zero width" in out and "nothing is sampled" in out
    assert main(["ci", "--campaign", str(camp), "-m", "statAP"]) == 0     # statAP keeps its own variance
    assert "(statAP variance: its own estimator)" in capsys.readouterr().out


def test_stability_tables_fit_the_terminal(tmp_path, capsys, monkeypatch):
    """`stability poolbias` printed 126-250-character lines; wide tables now come in blocks of columns
    within $COLUMNS, each led by the row's name."""
    monkeypatch.setenv("COLUMNS", "80")
    camp = private_copy(DEMO, tmp_path / "demo")
    assert main(["stability", "poolbias", "--campaign", str(camp), "--quiet"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    blocks = out.split("\n\n")
    assert len(blocks) >= 2 and all("measure" in b.splitlines()[0 if i else 1] for i, b in enumerate(blocks))
    heads = " ".join(b.splitlines()[0 if i else 1] for i, b in enumerate(blocks)).split()
    for col in ("n_left_out", "mean_abs_rank_change", "max_down", "share_significant"):
        assert heads.count(col) == 1                          # every column once, none cut
    rows = [ln.split()[0] for b in blocks for ln in b.splitlines()[(1 if b is not blocks[0] else 2):]]
    assert sorted(set(rows)) == sorted(rows[: len(rows) // len(blocks)])   # each block lists the same measures
