"""Pilot tests: drive every screen of the TUI through its main keys on the demo campaign."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from engine.evaluation.evaluate import evaluate
from engine import read_qrels, read_runs, summarize
from engine.ranking.ranked import EvalOptions
from tui.app import CranfieldApp
from tui.testing import exported, press, private_copy, run_async, screen_text, settle



ROOT = Path(__file__).resolve().parents[1]
DEMO_SOURCE = ROOT / "campaigns" / "demo"


DEMO = private_copy(DEMO_SOURCE)   # opening writes a run store: never into campaigns/demo


def engine_scores(campaign: Path, measure: str = "map") -> pd.Series:
    """Mean score per run straight from the engine's readers and evaluator (no TUI code)."""
    import yaml
    cfg = yaml.safe_load((campaign / "campaign.yaml").read_text())
    runs = read_runs(sorted((campaign / "runs").iterdir()))
    qrels = pd.concat([read_qrels(p) for p in sorted((campaign / "judgments").iterdir())
                       if p.name != "log.jsonl"], ignore_index=True)
    opt = EvalOptions(rel_level=int(cfg["relevance"]["binary_threshold"]), max_depth=int(cfg["evaluation"]["depth"]))
    long = evaluate(qrels, runs, [measure], options=opt)
    return summarize(long)[measure.replace(".", "_")], long


@pytest.fixture(scope="module")
def engine_map():
    return engine_scores(DEMO, "map")


@pytest.fixture
def demo_copy(tmp_path) -> Path:
    dst = tmp_path / "demo"
    shutil.copytree(DEMO, dst, ignore=shutil.ignore_patterns(".cranfield-cache", "pools", "log.jsonl*"))
    return dst


def table(app, selector: str):
    return app.screen.query_one(selector)


def row(t, i: int) -> list[str]:
    return [str(c) for c in t.get_row_at(i)]


def keys(t) -> list[str]:
    """Column keys of a DataTable or of the leaderboard's FastTable."""
    return list(t.column_keys) if hasattr(t, "column_keys") else [c.value for c in t.columns.keys()]


def column_index(t, key: str) -> int:
    return keys(t).index(key)


@run_async
async def test_leaderboard_top_run_and_score_equal_engine(engine_map, tmp_path):
    means, _ = engine_map
    app = CranfieldApp(DEMO, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        t = table(app, "#lb")
        assert t.row_count == len(means) == 12
        top = row(t, 0)
        best = means.sort_values(ascending=False, kind="mergesort")
        assert top[2] == best.index[0]
        mi = column_index(t, "map")
        assert top[mi].startswith(f"{best.iloc[0]:.4f}±")
        # every row's mean equals the engine's, in descending order
        shown = [float(row(t, i)[mi].split("±")[0]) for i in range(t.row_count)]
        assert shown == sorted(shown, reverse=True)
        for i in range(t.row_count):
            r = row(t, i)
            assert float(r[mi].split("±")[0]) == pytest.approx(means[r[2]], abs=5e-5)
        # the 95% half-width is the t interval of the per-topic values
        _, long = engine_map
        v = long[(long["run"] == best.index[0]) & (long["measure"] == "map")]["value"].to_numpy()
        half = stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
        assert top[mi].endswith(f"{half:.3f}".lstrip("0"))
        assert "Demo track" in screen_text(app)


@run_async
async def test_leaderboard_sort_filter_marker_and_export(engine_map, tmp_path):
    means, long = engine_map
    app = CranfieldApp(DEMO, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        t = table(app, "#lb")
        scr = app.screen
        # significance marker on row 2: paired t-test of runs 1 and 2 on map
        a, b = row(t, 0)[2], row(t, 1)[2]
        va = long[(long["run"] == a)].sort_values("topic")["value"].to_numpy()
        vb = long[(long["run"] == b)].sort_values("topic")["value"].to_numpy()
        p = stats.ttest_rel(va, vb).pvalue
        assert (row(t, 1)[1] == "≈") == (p >= 0.05)
        # 3 = map column, already the sort key: one key reverses it
        await press(pilot, "3")
        assert row(t, 0)[2] == means.idxmin()
        assert scr.descending is False
        # 1 sorts by run name
        await press(pilot, "1")
        assert [row(t, i)[2] for i in range(t.row_count)] == sorted(means.index)
        # s moves the sort to the next column (group), r reverses
        await press(pilot, "s")
        assert scr.sort_key == "group"
        await press(pilot, "r")
        groups = [row(t, i)[3] for i in range(t.row_count)]
        assert groups == sorted(groups, reverse=True)
        # filter: manual runs only
        manual = [r for r, m in app.model.run_meta["type"].items() if m == "manual"]
        await press(pilot, "f")
        opts = app.screen.options
        idx = [i for i, (label, _) in enumerate(opts) if label == "manual runs"][0]
        await press(pilot, *(["down"] * idx), "enter")
        assert sorted(row(t, i)[2] for i in range(t.row_count)) == sorted(manual)
        assert "manual runs" in screen_text(app)
        # export: one key writes CSV, Markdown and LaTeX
        await press(pilot, "e")
        csv = pd.read_csv(exported(tmp_path, "leaderboard", "csv")[0])
        assert sorted(csv["run"]) == sorted(manual)
        md = exported(tmp_path, "leaderboard", "md")[0].read_text()
        assert md.split("\n\n", 1)[1].startswith("| position | letter | run |")
        assert "\\begin{tabular}" in exported(tmp_path, "leaderboard", "tex")[0].read_text()


@run_async
async def test_choose_measures_reevaluates(tmp_path):
    app = CranfieldApp(DEMO, export_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "a")
        # the list starts with the current measures, all selected: deselect the first (map)
        await press(pilot, "space", "enter")
        await settle(pilot)
        assert app.measures == ["P.10", "ndcg_cut.10", "bpref"]
        t = table(app, "#lb")
        assert keys(t)[5] == "P_10"
        assert app.screen.sort_key == "P_10"
        # an unknown measure becomes a notification, the app keeps running
        app.set_measures(["nosuchmeasure"])
        await settle(pilot, errors_ok=True)
        assert app.measures == ["P.10", "ndcg_cut.10", "bpref"]
        assert any("nosuchmeasure" in n.message for n in app.notices)


@run_async
async def test_run_and_topic_drilldown_contributions(engine_map, tmp_path):
    means, long = engine_map
    app = CranfieldApp(DEMO, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "enter")
        best = means.idxmax()
        assert type(app.screen).__name__ == "RunScreen" and app.screen.run == best
        rt = table(app, "#run-table")
        first_topic = row(rt, 0)[0]
        v = long[(long["run"] == best) & (long["topic"] == first_topic)]["value"].iloc[0]
        assert row(rt, 0)[1].strip().endswith(f"{v:.3f}"[1:])
        await press(pilot, "enter")
        scr = app.screen
        assert type(scr).__name__ == "TopicScreen" and scr.single and scr.topic == first_topic
        # per-document AP contributions add up to the run's AP on the topic
        contrib = scr.frame["contribution"].to_numpy()
        assert np.nansum(contrib) == pytest.approx(v, abs=1e-9)
        # the list is the run's ranking in trec_eval order (score desc, doc id desc)
        run = read_runs([DEMO / "runs" / f"{best}.txt"])
        r = run[run["topic"] == first_topic].sort_values(["score", "doc"], ascending=[False, False])
        assert list(scr.frame["doc"][:10]) == list(r["doc"][:10])
        await press(pilot, "t")          # side by side
        assert not scr.single
        tt = table(app, "#topic-table")
        assert keys(tt)[1] == best
        await press(pilot, "right_square_bracket")
        assert scr.topic != first_topic
        await press(pilot, "t", "n")
        assert scr.single and scr.run != best
        await press(pilot, "escape", "escape")
        assert type(app.screen).__name__ == "LeaderboardScreen"


@run_async
async def test_matrix_sort_filter_open(engine_map, tmp_path):
    _, long = engine_map
    app = CranfieldApp(DEMO, export_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "m")
        t = table(app, "#mx")
        topic_means = long.groupby("topic")["value"].mean()
        assert t.row_count == len(topic_means)
        # heat cells carry a shade glyph (readable without colour)
        cell = str(t.get_row_at(0)[4])
        assert cell[0] in " ░▒▓█"
        # cursor to the 'mean' column, s sorts (descending first): easiest topic on top
        await press(pilot, "right", "right", "right", "s")
        assert row(t, 0)[0] == topic_means.idxmax()
        await press(pilot, "r")
        assert row(t, 0)[0] == topic_means.idxmin()
        hardest = topic_means.idxmin()
        # / filters topics
        await press(pilot, "slash")
        await pilot.press(*hardest)
        await press(pilot, "enter")
        assert t.row_count == 1 and row(t, 0)[0] == hardest
        await press(pilot, "enter")
        assert type(app.screen).__name__ == "TopicScreen" and app.screen.topic == hardest


@run_async
async def test_home_screen_facts_and_warnings(tmp_path, demo_copy):
    # a malformed run line is reported as file:line on the home screen
    bad = demo_copy / "runs" / "asterA1.txt"
    lines = bad.read_text().splitlines()
    lines.insert(3, lines[1])  # a document retrieved twice: a located warning
    bad.write_text("\n".join(lines) + "\n")
    app = CranfieldApp(demo_copy, export_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        q = read_qrels(demo_copy / "judgments" / "qrels.txt")
        assert "12 runs" in text and "20 topics" in text
        assert f"{int((q['grade'] >= 0).sum())} judged" in text
        assert "asterA1.txt:4" in text
        t = table(app, "#home-progress")
        assert t.row_count == 20
        await press(pilot, "e")
        assert exported(tmp_path, "pool-progress", "csv")


@run_async
async def test_help_and_palette_list_every_action(tmp_path):
    app = CranfieldApp(DEMO, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "question_mark")
        assert type(app.screen).__name__ == "HelpScreen"
        text = screen_text(app)
        assert "Sort next" in text and "Filter" in text
        await press(pilot, "escape")
        assert type(app.screen).__name__ == "LeaderboardScreen"
        titles = {c.title for c in app.get_system_commands(app.screen)}
        for want in ("Sort next", "Reverse", "Filter", "Measures", "Export", "Home", "Matrix", "Pool",
                     "Judge", "Stability", "Cost", "Help", "Quit", "Reload campaign"):
            assert want in titles, want
        # palette commands run the action on the right screen
        cmd = [c for c in app.get_system_commands(app.screen) if c.title == "Sort next"][0]
        before = app.screen.sort_key
        await cmd.callback()
        await settle(pilot)
        assert app.screen.sort_key != before


@run_async
async def test_pool_builder_and_judging(tmp_path, demo_copy):
    import engine.judging.workflow as judging
    from engine.pooling import read_pool
    app = CranfieldApp(demo_copy, export_dir=tmp_path, assessor="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "p")
        app.screen.query_one("#pool-depth").value = "60"
        app.screen.query_one("#pool-name").value = "d60"
        await press(pilot, "b")
        t = table(app, "#pool-table")
        assert t.row_count == 20
        frame = app.screen.frame
        assert (frame["new"] > 0).any() and frame["hours"].sum() > 0
        assert "h of assessor time" in screen_text(app)
        await press(pilot, "w")
        pool = read_pool(demo_copy / "pools" / "pool-d60.tsv")
        assert len(pool) == frame["to_judge"].sum()
        # judging follows the newest pool
        await press(pilot, "j")
        scr = app.screen
        first = scr.doc
        assert first is not None and first in set(pool["doc"])
        assert "document " + first in screen_text(app)
        await press(pilot, "1")
        log = judging.read_log(judging.log_path(demo_copy))
        assert list(log[["doc", "grade", "assessor", "op"]].iloc[0]) == [first, 1, "ann", "judge"]
        assert log["seconds"].iloc[0] >= 0
        second = scr.doc
        assert second != first
        await press(pilot, "s")
        assert scr.doc not in (first, second)
        await press(pilot, "u")
        log = judging.read_log(judging.log_path(demo_copy))
        assert list(log["op"]) == ["judge", "undo"]
        assert scr.doc == first
        # a judgment by a second assessor (another process) is not offered again
        other = judging.next_documents(app.model.runs, app.model.judging.judged(), scr.topic, "depth", k=3,
                                       pool=scr.pool_table)
        judging.record_judgment(demo_copy, scr.topic, other[1], 0, "bob", 3.0)
        await press(pilot, "2")
        assert scr.doc != other[1]
        await press(pilot, "ctrl+r")
        await settle(pilot)
        q = app.model.qrels
        assert int(q[(q["topic"] == scr.topic) & (q["doc"] == first)]["grade"].iloc[0]) == 2


@run_async
async def test_stability_screen_matches_engine(tmp_path):
    from engine.stability.gtheory import d_study, g_study
    app = CranfieldApp(DEMO, export_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "v")
        s = app.model.scores
        g = g_study(pd.DataFrame(np.nan_to_num(s.matrix["map"].T), index=s.topics, columns=s.runs))
        d = d_study(g)
        text = screen_text(app)
        assert f"Phi={d.phi:.3f}" in text
        await press(pilot, "d")
        assert app.screen.tables["pairs"].shape[0] == 66
        assert "pairs significant" in screen_text(app)
        await press(pilot, "2")
        assert app.screen.query_one("#st-tabs").active == "tab-plot"
        await press(pilot, "plus")
        assert app.screen.target == 0.96


@run_async
async def test_cost_screen_plans(tmp_path):
    app = CranfieldApp(DEMO, export_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "c")
        t = table(app, "#cost-designs")
        assert [row(t, i)[0] for i in range(t.row_count)] == ["8", "16", "32", "64", "128"]
        assert "cheapest" in screen_text(app)
        # editable target: a stricter tau target needs at least as many hours
        before = app.screen.result.designs["hours_tau_mean"].to_numpy()
        app.screen.query_one("#cost-tau").value = "0.95"
        app.screen.query_one("#cost-tau").focus()
        await press(pilot, "enter")
        after = app.screen.result.designs["hours_tau_mean"].to_numpy()
        ok = np.isfinite(before) & np.isfinite(after)
        assert (after[ok] >= before[ok]).all()
        await press(pilot, "3")
        assert "judgments made so far" in screen_text(app)


@run_async
async def test_picker_for_a_folder_of_campaigns(tmp_path):
    for name in ("alpha", "beta"):
        shutil.copytree(DEMO, tmp_path / name)
    app = CranfieldApp(tmp_path, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert type(app.screen).__name__ == "PickerScreen"
        assert "2 campaigns" in screen_text(app)
        await press(pilot, "down", "enter")
        await settle(pilot)
        assert app.model is not None and app.model.root == tmp_path / "beta"


def test_cli_routes_to_the_tui(monkeypatch, tmp_path):
    import tui.app
    from cranfield.cli import main
    from engine.errors import CranfieldError
    real_run_app = tui.app.run_app
    with pytest.raises(CranfieldError, match="no such directory"):
        real_run_app(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CranfieldError, match="holds no campaign"):
        real_run_app(tmp_path / "empty")
    seen = []
    monkeypatch.setattr(tui.app, "run_app", lambda target, **kw: seen.append((Path(target), kw)) or 0)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert main([]) == 0
    assert main([str(DEMO)]) == 0
    assert main(["tui", str(DEMO), "--measures", "map,P.10", "--assessor", "ann"]) == 0
    user = tmp_path / "data" / "cranfield" / "demo"             # no argument: the user's copy of the demo
    assert [p for p, _ in seen] == [user, DEMO, DEMO] and (user / "campaign.yaml").is_file()
    assert seen[2][1] == {"measures": ["map", "P.10"], "assessor": "ann"}


@run_async
async def test_campaign_without_judgments_can_be_judged(tmp_path, demo_copy):
    (demo_copy / "judgments" / "qrels.txt").unlink()
    app = CranfieldApp(demo_copy, export_dir=tmp_path, assessor="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.status == "ready" and app.model.scores is None
        assert any("no judgments yet" in n.message for n in app.notices)
        assert "0 judged" in screen_text(app)
        await press(pilot, "l")          # needs scores: says so instead of failing
        assert "no judgments yet: build a pool (p) and judge it (j); the scores follow" in screen_text(app)
        await press(pilot, "j")
        doc = app.screen.doc
        # the campaign's depth-50 strategy offers the best-ranked document of the pooled runs first
        assert doc is not None and f"document {doc}" in screen_text(app)
        await press(pilot, "2", "ctrl+r")
        await settle(pilot)
        assert app.model.scores is not None
        q = app.model.qrels
        assert list(q[["doc", "grade"]].itertuples(index=False, name=None)) == [(doc, 2)]


@run_async
async def test_measure_picker_on_matrix_stability_cost(tmp_path):
    # `a` opens the measure list on each of these screens; choosing the second entry (P_10, after map)
    # switches the screen's measure and redraws it
    app = CranfieldApp(DEMO, export_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        for key in ("m", "v", "c"):
            await press(pilot, key)
            await settle(pilot)
            before = app.screen.measure
            await press(pilot, "a", "down", "enter")
            await settle(pilot)
            assert app.screen.measure != before, key
            assert app.screen.measure in app.model.scores.measures, key


@run_async
async def test_cost_screen_shows_what_the_judgments_allow(tmp_path):
    """The designs tab says, as `cost --plan` does (PlanResult.availability_lines), how many documents each
    topic has judged and which j exceed that: here topic 401 keeps 20 judgments, fewer than j = 32."""
    camp = private_copy(DEMO, tmp_path / "demo")
    f = camp / "judgments" / "qrels.txt"
    lines = f.read_text().splitlines()
    keep = [ln for ln in lines if not ln.startswith("401 ")] + [ln for ln in lines if ln.startswith("401 ")][:20]
    f.write_text("\n".join(keep) + "\n")
    app = CranfieldApp(camp, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "c")
        await settle(pilot)
        res = app.screen.result
        expected = res.availability_lines()
        d = res.designs.set_index("j")
        assert [int(d.loc[j, "topics_below_j"]) for j in (8, 16, 32, 64, 128)] == [0, 0, 1, 1, 1]
        assert expected[0].startswith("judged documents per topic: 20-") and len(expected) == 4
        assert expected[1].startswith("j = 32: 1 of 20 topics have fewer than 32 judged documents")
        shown = str(app.screen.query_one("#cost-avail").render())
        assert shown.splitlines() == expected
        avail = app.screen.query_one("#cost-avail")
        assert avail.region.height >= len(expected) and avail.region.bottom <= 22   # visible at 80x24


def test_the_first_run_is_never_marked_as_the_same_as_the_one_above():
    """The leaderboard's ≈ says "not different from the run above": the top run has none (p NaN, not ≈);
    identical runs below it (no test: NaN) are ≈."""
    from tui.model import CampaignModel
    model = CampaignModel.load(DEMO)
    model.evaluate(["map"])
    board = model.leaderboard()
    assert np.isnan(board["p_above"].iloc[0]) and not board["same_as_above"].iloc[0]
    rest = board.iloc[1:]
    assert (rest["same_as_above"] == ~(rest["p_above"] < 0.05)).all()
