"""Judge cards (issue 38, item 3): the statistics against test-only oracles (krippendorff, scikit-learn,
statsmodels, scipy), hand-computed rates, the cluster bootstrap recomputed independently, the small-sample
caution, cost from an automatic judge's records, and `cranfield judgments card` as a process."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from _cli import cli

from engine.judgments.agreement import alpha_from_confusion, confusion, krippendorff_alpha
from engine.judgments.judge_card import (agreement_intervals, binarize, clopper_pearson, error_rates,
    ranking_agreement, topic_confusions, wilson)

HAND = np.array([[10, 2, 0], [3, 8, 1], [0, 2, 4]])


def test_alpha_from_confusion_matches_krippendorff_every_level():
    import krippendorff
    rng = np.random.default_rng(11)
    for _ in range(30):
        k = int(rng.integers(2, 6))
        n = int(rng.integers(4, 150))
        a = rng.integers(0, k, n)
        b = np.where(rng.random(n) < rng.random(), rng.integers(0, k, n), a)
        if len(set(a) | set(b)) < 2:
            continue
        vals = sorted(set(a) | set(b))
        m = confusion(a, b, vals)
        for level in ("nominal", "ordinal", "interval"):
            want = krippendorff.alpha(reliability_data=np.vstack([a, b]).astype(float), level_of_measurement=level)
            assert alpha_from_confusion(m, level, vals) == pytest.approx(want, abs=1e-10), level
            assert krippendorff_alpha(a, b, level) == pytest.approx(want, abs=1e-10)
    assert np.isnan(alpha_from_confusion(np.array([[5, 0], [0, 0]])))      # one value: undefined


def test_wilson_and_exact_intervals_match_statsmodels():
    from statsmodels.stats.proportion import proportion_confint
    for k, n in ((0, 10), (3, 10), (10, 10), (17, 223), (1, 1)):
        assert wilson(k, n) == pytest.approx(proportion_confint(k, n, 0.05, "wilson"), abs=1e-12)
        assert clopper_pearson(k, n) == pytest.approx(proportion_confint(k, n, 0.05, "beta"), abs=1e-12)
    assert all(np.isnan(wilson(0, 0))) and all(np.isnan(clopper_pearson(0, 0)))


def test_error_rates_by_grade_by_hand():
    # rows: people's grade 0, 1, 2; relevant = grade >= 1. Grade 0: 2 of 12 called relevant (FP);
    # grade 1: 3 of 12 called 0 (FN), 1 graded higher; grade 2: 0 of 6 called 0, 2 graded lower
    r = error_rates(HAND, [0, 1, 2], 1).set_index("gold")
    assert r.loc["0", "error"] == "false positive" and r.loc["0", "rate"] == pytest.approx(2 / 12)
    assert r.loc["1", "error"] == "false negative" and r.loc["1", "rate"] == pytest.approx(3 / 12)
    assert r.loc["1", "higher"] == pytest.approx(1 / 12) and r.loc["1", "lower_grade"] == pytest.approx(3 / 12)
    assert r.loc["2", "rate"] == 0.0 and r.loc["2", "lower_grade"] == pytest.approx(2 / 6)
    assert r.loc["all <1", "rate"] == pytest.approx(2 / 12)
    assert r.loc["all >=1", "rate"] == pytest.approx(3 / 18) and r.loc["all >=1", "n"] == 18
    assert (r.loc["0", "lower"], r.loc["0", "upper"]) == pytest.approx(wilson(2, 12))
    assert (binarize(HAND, [0, 1, 2], 1) == np.array([[10, 2], [3, 15]])).all()


def _shared(seed=3, topics=12, per=15, k=3, noise=0.3):
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(topics):
        a = rng.integers(0, k, per)
        b = np.where(rng.random(per) < noise, rng.integers(0, k, per), a)
        rows += [{"topic": f"t{t}", "doc": f"d{t}-{i}", "a": int(x), "b": int(y)} for i, (x, y) in enumerate(zip(a, b))]
    return pd.DataFrame(rows)


def test_agreement_values_and_topic_bootstrap_recomputed_independently():
    from sklearn.metrics import cohen_kappa_score
    from engine.stability.discrim import bootstrap_counts
    sh = _shared()
    topics, per = topic_confusions(sh, [0, 1, 2])
    got = agreement_intervals(per, [0, 1, 2], 1, n_boot=200, seed=5).set_index("statistic")
    assert got.loc["kappa", "value"] == pytest.approx(cohen_kappa_score(sh["a"], sh["b"]), abs=1e-12)
    assert got.loc["kappa_linear", "value"] == pytest.approx(cohen_kappa_score(sh["a"], sh["b"], weights="linear"))
    assert got.loc["binary_kappa", "value"] == pytest.approx(cohen_kappa_score(sh["a"] >= 1, sh["b"] >= 1))
    # the cluster bootstrap: draw the same topic counts, rebuild each resample's documents, score with sklearn
    c = bootstrap_counts(len(topics), 200, np.random.default_rng(5))
    groups = {t: g for t, g in sh.groupby("topic")}
    reps = []
    for row in c:
        docs = pd.concat([groups[t] for t, n in zip(topics, row) for _ in range(int(n))])
        reps.append(cohen_kappa_score(docs["a"], docs["b"]))
    assert (got.loc["kappa", "lower"], got.loc["kappa", "upper"]) == pytest.approx(
        (np.quantile(reps, 0.025), np.quantile(reps, 0.975)), abs=1e-12)
    one = agreement_intervals(per[:1], [0, 1, 2], 1, n_boot=200)
    assert one["lower"].isna().all() and one["value"].notna().all()


def test_ranking_agreement_against_scipy_and_its_reasons():
    from scipy.stats import kendalltau
    from engine.stability.matrix import tau_ap
    rng = np.random.default_rng(2)
    g = rng.random((30, 14))
    s = g + rng.normal(0, 0.15, g.shape)
    r = ranking_agreement(g, s, n_boot=300).set_index("statistic")
    hm, sm = g.mean(0), s.mean(0)
    assert r.loc["tau", "value"] == pytest.approx(kendalltau(hm, sm).statistic, abs=1e-12)
    assert r.loc["tau_ap", "value"] == pytest.approx(tau_ap(hm, sm), abs=1e-12)
    top = np.argsort(-hm)[:10]
    assert r.loc["tau@10", "value"] == pytest.approx(kendalltau(hm[top], sm[top]).statistic, abs=1e-12)
    assert (r["lower"] <= r["value"]).all() and (r["value"] <= r["upper"]).all()
    assert r["reason"].isna().all()
    few = ranking_agreement(g[:, :2], s[:, :2]).set_index("statistic")
    assert few["value"].isna().all() and few.loc["tau", "reason"] == "only 2 run(s); a rank correlation needs at least 3"
    tied = ranking_agreement(np.ones((5, 4)), s[:5, :4])
    assert tied["value"].isna().all() and "all tied" in tied["reason"].iat[0]
    small = ranking_agreement(g[:4], s[:4], n_boot=50).set_index("statistic")
    assert "only 4 topics judged by both" in small.loc["tau", "reason"]
    assert small.loc["tau@10", "reason"].startswith("all 10 runs") is False      # 14 runs: tau@10 is a true top 10


# ---------------------------------------------------------------------------- campaign and command line

@pytest.fixture(scope="module")
def camp_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("card") / "camp"
    r = cli("simulate", "--out", d, "--runs", "6", "--topics", "30", "--depth", "30", "--pool-depth", "10",
            "--judge", "noisy", "--judge-error", "0.25", "--seed", "7", timeout=120)
    assert r.rc == 0, r.text
    return d


def test_card_agrees_with_agreement_and_ppi_topic_values(camp_dir):
    from engine.campaign.campaign import load_campaign
    from engine.judgments.agreement import label_agreement
    from engine.judgments.judge_card import judge_card
    from engine.judgments.sources import source_judgments
    camp = load_campaign(camp_dir)
    card = judge_card(camp, "judge-noisy", n_boot=100)
    la = label_agreement(source_judgments(camp, "human"), source_judgments(camp, "judge-noisy"), ("human", "j"),
                         sorted(camp.scale()), camp.binary_threshold())
    a = card.agreement.set_index("statistic")["value"]
    assert a["kappa"] == pytest.approx(la.graded["kappa_unweighted"], abs=1e-12)
    assert a["kappa_linear"] == pytest.approx(la.graded["kappa_linear"], abs=1e-12)
    assert a["alpha_ordinal"] == pytest.approx(la.graded["alpha_ordinal"], abs=1e-12)
    assert a["binary_kappa"] == pytest.approx(la.binary["kappa_unweighted"], abs=1e-12)
    m = card.confusion.pivot(index="gold", columns="source", values="count").to_numpy()
    assert (m == la.graded["confusion"]).all() and card.n_shared == la.graded["n"]
    assert card.cautions == [] and card.runs == 6 and card.ranking_topics == 30


def test_small_sample_caution_and_cli_card_process(camp_dir, tmp_path):
    import shutil
    from engine.formats.qrels import read_qrels, write_qrels
    d = tmp_path / "few"
    shutil.copytree(camp_dir, d)
    q = read_qrels(d / "judgments" / "qrels.txt")
    write_qrels(d / "judgments" / "qrels.txt", q.head(3))      # people judged 3 documents
    r = cli("judgments", "card", d, "--format", "json", "--boot", "50", timeout=120)
    assert r.rc == 0, r.text
    card = json.loads(r.out)[0]
    assert card["n_shared"] == 3
    assert "only 3 shared documents; not to be trusted (kappa and alpha need at least 30)" in card["cautions"]
    t = cli("judgments", "card", d, "--boot", "50", timeout=120)
    assert "Caution: only 3 shared documents; not to be trusted" in t.out
    agr = cli("agreement", d, timeout=120)
    assert "caution: only 3 shared documents; not to be trusted" in agr.out
    # the full campaign: the process prints what the library computes
    from engine.campaign.campaign import load_campaign
    from engine.judgments.judge_card import judge_card
    full = cli("judgments", "card", camp_dir, "--format", "json", "--boot", "100", "--seed", "3", timeout=120)
    assert full.rc == 0, full.text
    got = json.loads(full.out)[0]
    want = judge_card(load_campaign(camp_dir), "judge-noisy", n_boot=100, seed=3).to_dict()
    for key in ("agreement", "ranking", "rates"):
        for x, y in zip(got[key], want[key]):
            for c, v in y.items():
                if isinstance(v, float):
                    assert x[c] == pytest.approx(v, abs=1e-12), (key, c)
    md = cli("judgments", "card", camp_dir, "--format", "md", "--boot", "20", timeout=120)
    assert md.out.startswith("## Judge card: judge-noisy") and "| kappa |" in md.out
    bad = cli("judgments", "card", camp_dir, "--source", "nope", timeout=60)
    assert bad.rc != 0 and "unknown judgment source 'nope'" in bad.err and "Traceback" not in bad.err


def test_cost_from_an_automatic_judges_records(tmp_path):
    from test_autojudge import FakeLLM
    from engine.campaign.campaign import load_campaign
    from engine.judging.auto import JudgeSettings, pooled_pairs, run_auto_judge
    from engine.judgments.judge_card import judge_card, source_cost
    from engine.simulation.campaigns import simulate, write_campaign
    d = write_campaign(simulate(n_runs=3, n_topics=4, depth=8, seed=3), tmp_path / "c", pool_depth=5, docs=True)
    camp = load_campaign(d)
    pairs = pooled_pairs(camp, depth=3)
    with FakeLLM() as srv:
        run_auto_judge(camp, "llm", JudgeSettings(srv.url, "fake-1", backoff=0.01, grade_map={3: 2}), pairs)
        calls = len(srv.calls)
    card = judge_card(load_campaign(d), "llm", n_boot=20)
    c = card.cost
    assert c["judgments"] == len(pairs) and c["calls"] == len(pairs) and c["from_cache"] == 0
    assert c["prompt_tokens"] == 100 * calls and c["completion_tokens"] == 5 * calls
    assert c["timed"] == len(pairs) and c["seconds"] >= 0
    assert card.kind == "auto" and card.model == "fake-1"
    # a log written before tokens were recorded: said, not zero
    old = pd.DataFrame({"op": ["judge"], "seconds": [1.5]})
    assert "tokens not recorded" in source_cost(old, "auto")["note"]
    people = source_cost(pd.DataFrame({"op": ["judge", "judge"], "seconds": [10.0, None]}), "human",
                         seconds_per_judgment=13.0, cost_source="table")
    assert people["seconds"] == 10.0 and people["timed"] == 1 and people["model_hours"] == pytest.approx(26 / 3600)


def test_tui_agreement_screen_shows_the_card(camp_dir):
    from tui.app import CranfieldApp
    from tui.testing import press, run_async, settle

    @run_async
    async def go():
        app = CranfieldApp(camp_dir)
        async with app.run_test(size=(100, 40)) as pilot:
            await settle(pilot)
            await press(pilot, "k")
            await settle(pilot)
            scr = app.screen
            assert (scr.a, scr.b) == ("human", "judge-noisy")
            for _ in range(100):
                text = str(scr.query_one("#agr-text").render())
                if "Judge card" in text:
                    break
                await pilot.pause(0.1)
            assert "Judge card: judge-noisy (simulated, model noisy judge, error 0.25) against human" in text
            assert "False positives and negatives by the people's grade" in text and "tau@10" in text
            assert text.index("documents judged by both") < text.index("Judge card")
    go()


def test_report_page_of_judge_cards_as_a_process(camp_dir, tmp_path):
    out = tmp_path / "reports"
    r = cli("report", camp_dir, "--out", out, timeout=180)
    assert r.rc == 0, r.text
    md = (out / "judges.md").read_text()
    assert md.startswith("# Judge cards: ") and "## Judge card: judge-noisy" in md and "| tau_ap |" in md
    from engine.campaign.campaign import load_campaign
    from engine.judgments.judge_card import judge_card
    kappa = judge_card(load_campaign(camp_dir), "judge-noisy").agreement.set_index("statistic").loc["kappa", "value"]
    assert f"| kappa | {kappa:.3f} |" in md
    assert "Judge card: judge-noisy" in (out / "judges.html").read_text()
    assert "[judges](judges.md)" in (out / "index.md").read_text()
    assert 'href="judges.html"' in (out / "index.html").read_text()
