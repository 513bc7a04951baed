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
        r = cli("eval", "--campaign", camp, *extra, in_process=bool(extra))      # the first as a process
        assert r.rc == 3, r.text
        assert "Traceback" not in r.text
        assert "3 answer runs and no retrieval runs" in r.err, r.err
        assert f"cranfield nuggets scores {camp}" in r.err, r.err
        assert "cranfield nuggets auto" in r.err and "cranfield nuggets assign" in r.err, r.err


def test_retrieval_runs_without_judgments_keep_the_plain_message(tmp_path):
    """Answer runs beside a retrieval run: the retrieval run is what eval scores, so no nugget hint."""
    camp = tmp_path / "rag"
    assert cli("simulate", "--rag", "--out", camp, "--runs", "2", "--topics", "3", "--seed", "1", in_process=True).rc == 0
    (camp / "runs").mkdir()
    (camp / "runs" / "bm25.txt").write_text("".join(f"{t} Q0 d{t}-{i} {i + 1} {9 - i} bm25\n"
                                                    for t in ("q1", "q2") for i in range(3)))
    r = cli("eval", "--campaign", camp)
    assert r.rc == 3 and "Traceback" not in r.text, r.text
    assert "cranfield: no topics with both results and judgments\n" in r.err and "nuggets" not in r.err, r.err
