"""`eval --campaign` on a campaign of answer runs only (TREC RAG: no retrieval runs, no qrels) says which
commands evaluate answer runs, instead of only "no topics with both results and judgments"."""
from __future__ import annotations

from _cli import cli


def test_eval_on_answer_runs_names_the_nugget_commands(tmp_path):
    camp = tmp_path / "rag"
    made = cli("simulate", "--rag", "--out", camp, "--runs", "3", "--topics", "4", "--seed", "1")
    assert made.rc == 0, made.text
    assert list((camp / "answers").glob("*.jsonl")) and not (camp / "runs").exists()
    for extra in ((), ("-m", "map", "--format", "csv"), ("-m", "nDCG@10")):   # trec text, table, named measures
        r = cli("eval", "--campaign", camp, *extra)
        assert r.rc == 3, r.text
        assert "Traceback" not in r.text
        assert "3 answer runs and no retrieval runs" in r.err, r.err
        assert f"cranfield nuggets scores {camp}" in r.err, r.err
        assert "cranfield nuggets auto" in r.err and "cranfield nuggets assign" in r.err, r.err


def test_eval_without_answer_runs_keeps_the_plain_message(tmp_path):
    camp = tmp_path / "empty"
    (camp / "runs").mkdir(parents=True)
    (camp / "campaign.yaml").write_text("name: empty\n")
    r = cli("eval", "--campaign", camp)
    assert r.rc != 0 and "Traceback" not in r.text
    assert "nuggets" not in r.err, r.err
