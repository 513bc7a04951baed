"""Nugget creation through the endpoint (iterative windows, importance, cache replay, provenance)."""
from __future__ import annotations


from engine.judging.auto import JudgeSettings
from engine.nuggets.create import create_nuggets, parse_importance, parse_nugget_list
from engine.nuggets.simulate import TruthEndpoint, simulate_rag, write_rag_campaign
from engine.nuggets.store import current_nuggets


def test_parsers_never_guess():
    assert parse_nugget_list('Here: ["a fact", "another"]', 5) == ["a fact", "another"]
    assert parse_nugget_list('["a", ""]', 5) is None
    assert parse_nugget_list('["a", "b", "c"]', 2) is None
    assert parse_nugget_list("a fact; another", 5) is None
    assert parse_importance('["vital", "okay"]', 2) == ["vital", "okay"]
    assert parse_importance('["vital", "high"]', 2) is None


def test_creation_recovers_true_nuggets_and_replays_from_cache(tmp_path):
    sim = simulate_rag(3, 3, nuggets=(4, 7), seed=2)
    root = write_rag_campaign(sim, tmp_path / "c", with_nuggets=False)
    passages = {t: [x for d, x in sim.passages.items() if d.startswith(f"{t}-")] for t in sim.topics["topic"]}
    queries = dict(zip(sim.topics["topic"], sim.topics["title"]))
    with TruthEndpoint(root, error=0.0) as ep:
        s = JudgeSettings(endpoint=ep.url, model="fake", concurrency=2, retries=1, backoff=0.01, timeout=5)
        res = create_nuggets(root, s, passages, queries, window=3, batch=4)
        assert not res.failed and res.from_cache == 0
        # 8 passages in windows of 3: 3 creation calls per topic, then ceil(k / 4) importance calls
        assert res.calls == sum(3 + -(-len(g) // 4) for _, g in sim.nuggets.groupby("topic"))
        got = current_nuggets(root)
        for t, g in sim.nuggets.groupby("topic"):
            mine = got[got["topic"] == t]
            assert dict(zip(mine["text"], mine["importance"])) == dict(zip(g["text"], g["importance"]))
        assert set(got["provenance"]) == {"llm"} and set(got["model"]) == {"fake"}
        assert set(got["prompt_version"]) == {"nugget-create-v2"}
        again = create_nuggets(root, s, passages, queries, window=3, batch=4)
        assert sorted(again.skipped) == sorted(passages) and again.calls == 0
        calls = ep.calls
        replay = create_nuggets(root, s, passages, queries, window=3, batch=4, redo=True)
        assert replay.calls == 0 and ep.calls == calls and replay.from_cache == res.calls


def test_dead_endpoint_fails_topics_without_nuggets(tmp_path):
    sim = simulate_rag(2, 2, nuggets=(3, 3), seed=1)
    root = write_rag_campaign(sim, tmp_path / "c", with_nuggets=False)
    s = JudgeSettings(endpoint="http://127.0.0.1:9/v1", model="m", retries=0, backoff=0.01, timeout=2)
    res = create_nuggets(root, s, {"q1": ["a passage"]}, {})
    assert res.failed and res.failed[0][0] == "q1" and "request failed" in res.failed[0][1]
    assert current_nuggets(root).empty


def test_create_through_cli_from_cited_passages(tmp_path, capsys):
    from cranfield.cli import main
    d = tmp_path / "rag"
    assert main(["simulate", "--rag", "--out", str(d), "--runs", "4", "--topics", "2", "--no-nuggets",
                 "--wrong-citation", "0", "--seed", "3"]) == 0
    with TruthEndpoint(d, error=0.0) as ep:
        assert main(["nuggets", "create", str(d), "--endpoint", ep.url, "--model", "fake", "--backoff", "0.01"]) == 0
    out = capsys.readouterr().out
    got = current_nuggets(d)
    assert f"{len(got)} nuggets for 2 topic(s)" in out
    # only nuggets some run cited a carrying passage for can be found: a subset of the truth
    import pandas as pd
    truth = pd.read_csv(d / "truth" / "nuggets.tsv", sep="\t")
    assert 0 < len(got) <= len(truth) and set(got["text"]) <= set(truth["text"])
