"""Automatic assignment and citation support through the loopback truth endpoint: exact at error 0,
cached and resumable, early stop on a dead endpoint, unparseable answers retried and never guessed."""
from __future__ import annotations

import socket

import pandas as pd
import pytest

from engine.judging.auto import JudgeSettings
from engine.nuggets.auto import auto_assign, auto_support, parse_labels
from engine.nuggets.campaign import agreement, campaign_answers, leaderboard
from engine.nuggets.scores import citation_rows, run_scores, score_table, support_table
from engine.nuggets.simulate import TruthEndpoint, import_truth, simulate_rag, write_rag_campaign
from engine.nuggets.store import current_nuggets, read_assignments, read_support


@pytest.fixture(scope="module")
def sim():
    return simulate_rag(n_runs=4, n_topics=3, nuggets=(3, 5), seed=11)


@pytest.fixture
def camp(tmp_path, sim):
    return write_rag_campaign(sim, tmp_path / "c")


def _settings(url, **kw):
    return JudgeSettings(endpoint=url, model="fake", concurrency=2, retries=kw.pop("retries", 1),
                         backoff=0.01, timeout=5, **kw)


def test_parse_labels_never_guesses():
    assert parse_labels('["support", "not_support"]', 2) == ["support", "not_support"]
    assert parse_labels("thinking [x]\n['partial_support','support']", 2) == ["partial_support", "support"]
    assert parse_labels('["support"]', 2) is None
    assert parse_labels('["support", "maybe"]', 2) is None
    assert parse_labels("support, support", 2) is None


def test_exact_endpoint_reproduces_truth_and_resumes(camp, sim):
    answers = campaign_answers(camp)
    nug = current_nuggets(camp)
    with TruthEndpoint(camp, error=0.0) as ep:
        res = auto_assign(camp, "auto", _settings(ep.url), answers, nug, batch=2)
        assert ep.unknown == 0
        assert res.labelled == res.items == len(sim.truth) and not res.failed and res.stopped is None
        calls = ep.calls
        assert calls == res.calls == sum(-(-len(g) // 2) for _, g in sim.truth.groupby(["run", "topic"]))
        again = auto_assign(camp, "auto", _settings(ep.url), answers, nug, batch=2)
        assert again.already == res.items and again.calls == 0 and ep.calls == calls
        other = auto_assign(camp, "auto2", _settings(ep.url), answers, nug, batch=2)
        assert other.from_cache == res.items and ep.calls == calls
    got = read_assignments(camp, "auto").merge(sim.truth, on=["run", "topic", "nugget"])
    assert len(got) == len(sim.truth) and (got["label_x"] == got["label_y"]).all()
    import_truth(camp, "truth")
    a = agreement(camp, "truth", "auto")
    assert a.kappa == pytest.approx(1.0) and a.tau == pytest.approx(1.0) and a.pairs == len(sim.truth)
    board = leaderboard(camp, "auto").set_index("run")
    true = run_scores(score_table(sim.nuggets, sim.truth, pd.DataFrame(
        [(x.run, x.topic) for x in sim.answers], columns=["run", "topic"])), sorted(set(sim.nuggets["topic"])))
    for m in ("all", "strict_vital", "weighted"):
        assert board[m].to_dict() == pytest.approx(true.set_index("run")[m].to_dict())


def test_noisy_endpoint_changes_labels_at_its_rate(camp, sim):
    with TruthEndpoint(camp, error=0.5, seed=3) as ep:
        auto_assign(camp, "noisy", _settings(ep.url), campaign_answers(camp), current_nuggets(camp))
    got = read_assignments(camp, "noisy").merge(sim.truth, on=["run", "topic", "nugget"])
    wrong = float((got["label_x"] != got["label_y"]).mean())
    assert 0.3 < wrong < 0.7


def test_citation_support_from_endpoint(camp, sim):
    answers = campaign_answers(camp)
    with TruthEndpoint(camp, error=0.0) as ep:
        res = auto_support(camp, "auto", _settings(ep.url), answers, sim.passages)
    assert res.labelled == res.items == len(sim.support) and ep.unknown == 0
    mine = support_table(citation_rows(answers), read_support(camp, "auto"))
    true = support_table(citation_rows(answers), sim.support)
    assert mine["support_precision"].tolist() == pytest.approx(true["support_precision"].tolist())
    board = leaderboard(camp, "auto", support_source="auto")
    assert {"support_precision", "support_recall"} <= set(board.columns)


def test_dead_endpoint_stops_early(camp):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                                   # nothing listens there
    res = auto_assign(camp, "dead", _settings(f"http://127.0.0.1:{port}/v1", retries=0),
                      campaign_answers(camp), current_nuggets(camp), stop_after=2)
    assert res.stopped and "seems down" in res.stopped
    assert res.labelled == 0 and len(res.failed) < res.items
    assert read_assignments(camp, "dead").empty
    errs = (camp / "nuggets" / "assign" / "dead.errors.jsonl").read_text().splitlines()
    assert errs and "request failed" in errs[0]


def test_unparseable_answer_retried_then_failed(camp, monkeypatch):
    from engine.util.modelclient import ModelClient
    monkeypatch.setattr(ModelClient, "request", lambda self, body, until: ("I think it is supported", 0, 0))
    res = auto_assign(camp, "bad", _settings("http://127.0.0.1:9/v1", retries=1),
                      campaign_answers(camp)[:1], current_nuggets(camp))
    assert res.unparsed == 2 * len(res.failed) and res.labelled == 0 and res.stopped is None
    assert read_assignments(camp, "bad").empty


def test_twenty_runs_thirty_topics_ten_percent_error_ranks_runs(tmp_path):
    root = write_rag_campaign(simulate_rag(20, 30, seed=7), tmp_path / "big")
    import_truth(root, "truth")
    with TruthEndpoint(root, error=0.1, seed=7) as ep:
        s = JudgeSettings(endpoint=ep.url, model="t", concurrency=4, retries=1, backoff=0.01, timeout=30)
        res = auto_assign(root, "auto", s, campaign_answers(root), current_nuggets(root))
    assert res.labelled == res.items == 5520 and res.calls == 800
    a = agreement(root, "truth", "auto")
    assert a.runs == 20 and a.pairs == 5520
    assert a.tau >= 0.9                      # 0.979 with seed 7
    assert 0.75 < a.kappa < 0.9              # 10% of labels changed: accuracy about 0.9
    assert a.accuracy == pytest.approx(0.9, abs=0.015)
    per = a.per_topic
    assert len(per) == 30 and per["pairs"].sum() == 5520
    assert per["kappa"].is_monotonic_increasing
    # the pooled accuracy is the pair-weighted mean of the per-topic accuracies
    assert (per["accuracy"] * per["pairs"]).sum() / 5520 == pytest.approx(a.accuracy)
    from sklearn.metrics import cohen_kappa_score
    both = read_assignments(root, "truth").merge(read_assignments(root, "auto"), on=["run", "topic", "nugget"])
    assert a.kappa == pytest.approx(cohen_kappa_score(both["label_x"], both["label_y"]))
    for t0 in (per["topic"].iat[0], per["topic"].iat[-1]):
        g = both[both["topic"] == t0]
        k = per.set_index("topic").loc[t0, "kappa"]
        assert k == pytest.approx(cohen_kappa_score(g["label_x"], g["label_y"]))


def test_interrupted_run_resumes_without_duplicates(camp, sim, monkeypatch):
    from engine.nuggets.store import read_records, _check_assign, assign_path
    from engine.util.modelclient import ModelClient, ReplyError
    real = ModelClient.request
    calls = {"n": 0}

    def dying(self, body, until):
        calls["n"] += 1
        if calls["n"] > 3:
            raise ReplyError("ConnectionRefusedError: [Errno 111] Connection refused")
        return real(self, body, until)

    answers, nug = campaign_answers(camp), current_nuggets(camp)
    with TruthEndpoint(camp, error=0.0) as ep:
        monkeypatch.setattr(ModelClient, "request", dying)
        first = auto_assign(camp, "auto", _settings(ep.url, retries=0), answers, nug, batch=2, stop_after=1)
        assert first.stopped and 0 < first.labelled < first.items
        monkeypatch.setattr(ModelClient, "request", real)
        second = auto_assign(camp, "auto", _settings(ep.url), answers, nug, batch=2)
    assert second.already == first.labelled and second.labelled == first.items - first.labelled
    recs = [r for r in read_records(assign_path(camp, "auto"), _check_assign) if r["op"] == "assign"]
    assert len(recs) == first.items == len({(r["run"], r["topic"], r["nugget"]) for r in recs})
    got = read_assignments(camp, "auto").merge(sim.truth, on=["run", "topic", "nugget"])
    assert (got["label_x"] == got["label_y"]).all()
