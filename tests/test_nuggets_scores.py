"""Nugget scores equal nuggetizer's own scoring code (test-only oracle) on randomized assignments;
weighted score and citation support against hand-computed values."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.errors import Warnings
from engine.nuggets.answers import Answer, Sentence
from engine.nuggets.scores import (LABELS, answer_scores, citation_rows, run_scores, score_table,
                                   support_table)


def _random_campaign(rng):
    nug, asg, ans = [], [], []
    for t in range(12):
        k = int(rng.integers(1, 15))
        imp = rng.choice(["vital", "okay"], size=k, p=[0.4, 0.6])
        if t == 0:
            imp[:] = "okay"           # no vital nugget: the vital scores are 0 in nuggetizer
        for j in range(k):
            nug.append((f"t{t}", f"n{j}", imp[j]))
        for r in range(5):
            if rng.random() < 0.1:
                continue              # this run did not answer the topic
            ans.append((f"r{r}", f"t{t}"))
            for j in range(k):
                asg.append((f"r{r}", f"t{t}", f"n{j}", LABELS[int(rng.integers(0, 3))]))
    return (pd.DataFrame(nug, columns=["topic", "nugget", "importance"]),
            pd.DataFrame(asg, columns=["run", "topic", "nugget", "label"]),
            pd.DataFrame(ans, columns=["run", "topic"]))


@pytest.mark.parametrize("seed", range(5))
def test_equal_to_nuggetizer_on_random_assignments(seed):
    metrics = pytest.importorskip("nuggetizer.core.metrics")
    rng = np.random.default_rng(seed)
    nug, asg, ans = _random_campaign(rng)
    table = score_table(nug, asg, ans)
    assert len(table) == len(ans)
    imp = {(t, n): i for t, n, i in nug.itertuples(index=False)}
    for run, g in asg.groupby("run"):
        records = []
        for topic, h in g.groupby("topic"):
            recs = [{"text": n, "importance": imp[(topic, n)], "assignment": lab}
                    for n, lab in zip(h["nugget"], h["label"])]
            records.append({"qid": topic, "nuggets": recs})
            ref = metrics.calculate_nugget_scores(topic, recs)
            row = table[(table["run"] == run) & (table["topic"] == topic)].iloc[0]
            mine = answer_scores([r["importance"] for r in recs], [r["assignment"] for r in recs])
            for m in ("strict_vital", "strict_all", "vital", "all"):
                assert row[m] == pytest.approx(getattr(ref, f"{m}_score"), abs=1e-12)
                assert mine[m] == pytest.approx(getattr(ref, f"{m}_score"), abs=1e-12)
        glob = metrics.calculate_global_metrics(records)
        rs = run_scores(table).set_index("run").loc[run]
        for m in ("strict_vital", "strict_all", "vital", "all"):
            assert rs[m] == pytest.approx(glob[f"{m}_score"], abs=1e-12)


def test_hand_computed_weighted_and_all_scores():
    # vital: support, partial, not ; okay: support, partial
    imp = ["vital", "vital", "vital", "okay", "okay"]
    lab = ["support", "partial_support", "not_support", "support", "partial_support"]
    s = answer_scores(imp, lab)
    assert s["strict_vital"] == pytest.approx(1 / 3)
    assert s["vital"] == pytest.approx(1.5 / 3)
    assert s["strict_all"] == pytest.approx(2 / 5)
    assert s["all"] == pytest.approx(3 / 5)
    # weighted = (1 + .5 + 0 + .5*(1 + .5)) / (3 + .5*2) = 2.25 / 4
    assert s["weighted"] == pytest.approx(0.5625)
    # strict weighted = (1 + .5*1) / 4
    assert s["strict_weighted"] == pytest.approx(0.375)
    assert answer_scores([], [])["weighted"] == 0.0


def test_missing_assignment_and_missing_answer():
    nug = pd.DataFrame([("t1", "a", "vital"), ("t1", "b", "okay"), ("t2", "c", "vital")],
                       columns=["topic", "nugget", "importance"])
    asg = pd.DataFrame([("r", "t1", "a", "support"), ("r", "t2", "c", "support")],
                       columns=["run", "topic", "nugget", "label"])
    ans = pd.DataFrame([("r", "t1"), ("r", "t2"), ("r", "t3")], columns=["run", "topic"])
    w = Warnings()
    t = score_table(nug, asg, ans, w)
    assert t.set_index("topic").loc["t1", "all"] == pytest.approx(0.5)
    assert t.set_index("topic").loc["t1", "unassigned"] == 1
    msgs = " ".join(str(x) for x in w)
    assert "1 (answer, nugget) pair(s) have no assignment" in msgs and "no nuggets" in msgs
    # over topics t1, t2, t4 (r did not answer t4: 0 there): all = (0.5 + 1 + 0) / 3
    rs = run_scores(t, topics=["t1", "t2", "t4"]).set_index("run")
    assert rs.loc["r", "all"] == pytest.approx(0.5)


def test_hand_computed_citation_support():
    a = Answer("r", "t", ["d1", "d2", "d3"],
               [Sentence("s0", (0, 1)), Sentence("s1", (2,)), Sentence("s2", ()), Sentence("s3", (1,))])
    cit = citation_rows([a])
    assert len(cit) == 5
    lab = pd.DataFrame([("r", "t", 0, "d1", "support"), ("r", "t", 0, "d2", "partial_support"),
                        ("r", "t", 1, "d3", "not_support"), ("r", "t", 3, "d2", "partial_support")],
                       columns=["run", "topic", "sentence", "doc", "label"])
    row = support_table(cit, lab).iloc[0]
    # precision: (1 + .5 + 0 + .5) / 4 citations; recall: (max(1,.5) + 0 + 0 + .5) / 4 sentences
    assert row["support_precision"] == pytest.approx(0.5)
    assert row["support_recall"] == pytest.approx(0.375)
    assert row["citations"] == 4 and row["sentences"] == 4
    w = Warnings()
    row = support_table(cit, lab.iloc[:2], w).iloc[0]
    assert row["support_precision"] == pytest.approx(1.5 / 4) and row["unlabelled"] == 2
    assert "2 citation(s) have no support label" in str(list(w)[0])
