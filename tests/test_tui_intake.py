"""Running the campaign from the TUI (issues 16 and 17): submitting a run (accepted, refused with file:line,
escape), fusing runs (the file equals `cranfield fuse`'s and evaluates), and the judgments the leaderboard's
scores use (spec in the title, fill@10 per run equal to `cranfield holes`, switching the spec).

Every test works on a copy of campaigns/demo (or a small campaign) in tmp_path."""
from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path

import pandas as pd
import pytest
from textual.widgets import Input

from engine.evaluation.evaluate import evaluate
from engine import read_qrels, read_runs, summarize
from engine.campaign.campaign import load_campaign
from cranfield.cli import main
from engine.ranking.ranked import EvalOptions
from engine.judgments.sources import hole_filling, import_source
from tui.app import CranfieldApp
from tui.testing import press, private_copy, run_async, screen_text, settle

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "campaigns" / "demo"


def copy_demo(dst: Path) -> Path:
    return private_copy(DEMO, dst, skip=("pools", "log.jsonl*"))


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def demo_map(camp: Path, run_file: Path) -> float:
    """map of one run file against the campaign's qrels, straight from the engine (no TUI code)."""
    opt = EvalOptions(rel_level=1, max_depth=100)
    long = evaluate(read_qrels(camp / "judgments" / "qrels.txt"), read_runs([run_file]), ["map"], options=opt)
    return float(summarize(long)["map"].iloc[0])


def lb_cell(app, run: str, key: str) -> str:
    t = app.screen.query_one("#lb")
    i = app.screen._row_runs.index(run)
    return t.get_row_at(i)[t.column_keys.index(key)]


async def open_submit(pilot, where: str, path: str) -> None:
    await press(pilot, where, "i")
    assert type(pilot.app.screen).__name__ == "SubmitScreen"
    pilot.app.screen.query_one("#submit-path", Input).value = path
    await press(pilot, "enter")
    await settle(pilot)


# ---------------------------------------------------------------------------- submission

@run_async
async def test_submit_accepts_a_run_and_the_leaderboard_shows_it(tmp_path):
    camp = copy_demo(tmp_path / "demo")
    src = tmp_path / "mine.txt"
    body = (camp / "runs" / "asterA1.txt").read_text().replace(" asterA1\n", " newrun1\n")
    src.write_text("# ir_metadata: {software: bm25}\n" + body)
    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_submit(pilot, "l", str(src))
        scr = app.screen
        assert scr.result.accepted and scr.result.tags == ["newrun1"]
        lines = scr.result.lines
        assert lines[0].startswith(f"accepted: {src} -> run newrun1 (2000 lines, 20 topics, sha256 ")
        assert lines[1].startswith("  runs.newrun1: group newrun1, type automatic, pooled True, "
                                   "file runs/newrun1.txt, submitted ")
        assert "  header: # ir_metadata: {software: bm25}" in lines
        assert "accepted: " in screen_text(app)
        # copied with its metadata, and the campaign reloaded: the leaderboard lists the new run
        assert (camp / "runs" / "newrun1.txt").read_bytes() == src.read_bytes()
        meta = load_campaign(camp).config["runs"]["newrun1"]
        assert meta["group"] == "newrun1" and meta["checksum"].startswith("sha256:")
        await press(pilot, "escape")
        await settle(pilot)
        assert type(app.screen).__name__ == "LeaderboardScreen"
        assert len(app.model.scores.runs) == 13 and "newrun1" in app.screen._row_runs
        # the same ranking as asterA1: the same map, equal to the engine's
        want = demo_map(camp, camp / "runs" / "asterA1.txt")
        assert lb_cell(app, "newrun1", "map").startswith(f"{want:.4f}±")
        assert lb_cell(app, "asterA1", "map").startswith(f"{want:.4f}±")


@run_async
async def test_submit_refuses_a_bad_run_with_file_line_and_copies_nothing(tmp_path):
    camp = copy_demo(tmp_path / "demo")
    before_runs, before_cfg = snapshot(camp / "runs"), (camp / "campaign.yaml").read_bytes()
    src = tmp_path / "bad.txt"
    lines = (camp / "runs" / "asterA1.txt").read_text().replace(" asterA1\n", " badrun\n").splitlines()
    lines[2] = "401 Q0 D401-72 3 14.061410"                 # line 3: five columns
    lines[4] = "401 Q0 D401-158 5 13.599724 badrun"         # line 5: a document repeated (first at line 1)
    src.write_text("\n".join(lines) + "\n")
    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_submit(pilot, "h", str(src))
        res = app.screen.result
        assert not res.accepted and res.tags == []
        assert f"{src}:3: expected 6 columns (topic Q0 doc rank score tag), found 5" in res.lines
        assert f"{src}:5: topic 401: document D401-158 repeated (first at line 1)" in res.lines
        assert "refused (nothing copied):" in screen_text(app)
        # escape leaves: Home again, and its keys work
        await press(pilot, "escape")
        assert type(app.screen).__name__ == "HomeScreen"
        await press(pilot, "l")
        assert type(app.screen).__name__ == "LeaderboardScreen" and len(app.model.scores.runs) == 12
    assert snapshot(camp / "runs") == before_runs and (camp / "campaign.yaml").read_bytes() == before_cfg


@run_async
async def test_submit_escape_leaves_the_input_and_a_missing_file_is_refused(tmp_path):
    camp = copy_demo(tmp_path / "demo")
    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "i", "l", "h")              # typed into the path, not screen switches
        inp = app.screen.query_one("#submit-path", Input)
        assert type(app.screen).__name__ == "SubmitScreen" and inp.value == "lh"
        await press(pilot, "enter")
        assert app.screen.result.lines == ["lh: no such run file"]
        await press(pilot, "escape", "m")
        assert type(app.screen).__name__ == "MatrixScreen"
    assert sorted(p.name for p in (camp / "runs").iterdir()) == sorted(p.name for p in (DEMO / "runs").iterdir())


# ---------------------------------------------------------------------------- fusion

def rrf_by_hand(runs: pd.DataFrame, k: float = 60.0) -> pd.DataFrame:
    """RRF scores per (topic, doc) computed here: rank = position by score desc, doc id desc per run and topic."""
    r = runs.assign(run=runs["run"].astype(str), topic=runs["topic"].astype(str), doc=runs["doc"].astype(str))
    r = r.sort_values(["run", "topic", "score", "doc"], ascending=[True, True, False, False])
    r["pos"] = r.groupby(["run", "topic"]).cumcount() + 1
    r["w"] = 1.0 / (k + r["pos"])
    return r.groupby(["topic", "doc"])["w"].sum().rename("score").reset_index()


@run_async
async def test_fuse_marked_runs_writes_the_cli_run_that_evaluates_and_submits(tmp_path):
    camp = copy_demo(tmp_path / "demo")
    out = tmp_path / "exports"
    app = CranfieldApp(camp, export_dir=out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "space", "space")            # marks rows 1 and 2
        a, b = app.screen._row_runs[:2]
        assert app.screen.marked == [a, b] and app.screen.query_one("#lb").get_row_at(0)[0] == "*1"
        await press(pilot, "u")
        assert type(app.screen).__name__ == "FuseScreen" and app.screen.runs == [a, b]
        await press(pilot, "s")                                # nothing fused yet: says so
        assert app.notices[-1].message.startswith("fuse first")
        await press(pilot, "enter")                            # the first method: rrf
        await settle(pilot)
        path = (out / "fused-rrf.txt").resolve()
        assert app.screen.path == path
        assert f"wrote {path}: rrf of 2 runs ({a}, {b}), 20 topics, 2000 lines, tag fused-rrf" in \
            app.notices[-1].message
        # the same bytes as `cranfield fuse` at the campaign's depth
        cli = tmp_path / "cli.txt"
        with redirect_stdout(io.StringIO()):
            assert main(["fuse", "--campaign", str(camp), "--run", a, "--run", b, "--method", "rrf",
                         "--depth", "100", "--tag", "fused-rrf", "-o", str(cli)]) == 0
        assert path.read_bytes() == cli.read_bytes()
        # a valid run: read back, its top documents are those of RRF computed by hand
        fused = read_runs([path])
        hand = rrf_by_hand(read_runs([camp / "runs" / f"{a}.txt", camp / "runs" / f"{b}.txt"]))
        for topic in ("401", "410"):
            h = hand[hand["topic"] == topic].sort_values(["score", "doc"], ascending=[False, False]).head(10)
            f = fused[fused["topic"].astype(str) == topic].sort_values("rank").head(10)
            assert list(f["doc"].astype(str)) == list(h["doc"])
            assert f["score"].to_numpy() == pytest.approx(h["score"].to_numpy(), abs=1e-12)
        want = demo_map(camp, path)
        # s submits it; the leaderboard shows it with the engine's score
        await press(pilot, "s")
        assert type(app.screen).__name__ == "SubmitScreen"
        assert app.screen.query_one("#submit-path", Input).value == str(path)
        await press(pilot, "enter")
        await settle(pilot)
        assert app.screen.result.accepted and app.screen.result.tags == ["fused-rrf"]
        await press(pilot, "escape", "escape")
        await settle(pilot)
        assert type(app.screen).__name__ == "LeaderboardScreen"
        assert lb_cell(app, "fused-rrf", "map").startswith(f"{want:.4f}±")


@run_async
async def test_fuse_top3_with_combmnz(tmp_path):
    camp = copy_demo(tmp_path / "demo")
    out = tmp_path / "exports"
    app = CranfieldApp(camp, export_dir=out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "space", "u")                 # one mark is not enough: the top 3
        top3 = app.model.leaderboard().head(3)["run"].tolist()
        assert app.screen.runs == top3 and "top 3 by map" in screen_text(app)
        ol = app.screen.query_one("#fuse-method")
        methods = [ol.get_option_at_index(i).id for i in range(ol.option_count)]
        assert methods == ["rrf", "combsum", "combmnz"]
        await press(pilot, "down", "down", "enter")
        await settle(pilot)
        cli = tmp_path / "cli.txt"
        with redirect_stdout(io.StringIO()):
            assert main(["fuse", "--campaign", str(camp), *sum((["--run", r] for r in top3), []),
                         "--method", "combmnz", "--depth", "100", "-o", str(cli), "--tag", "fused-combmnz"]) == 0
        assert (out / "fused-combmnz.txt").read_bytes() == cli.read_bytes()
        with redirect_stdout(io.StringIO()):
            assert main(["eval", str(camp / "judgments" / "qrels.txt"), str(out / "fused-combmnz.txt")]) == 0


# ---------------------------------------------------------------------------- judgments in use

def tiny(tmp_path: Path) -> Path:
    """test_sources' hand-checked campaign: official judges d1 d2 d4 d6; the llm source fills d3 d5 d7 d8."""
    d = tmp_path / "c"
    (d / "runs").mkdir(parents=True)
    (d / "judgments").mkdir()
    (d / "topics").mkdir()
    (d / "campaign.yaml").write_text("name: tiny\nrelevance:\n  binary_threshold: 1\nevaluation:\n"
                                     "  measures: [P.5]\n")
    (d / "topics" / "topics.tsv").write_text("1\tfirst topic\n")
    (d / "runs" / "A.txt").write_text("".join(f"1 Q0 d{i} {i} {10 - i} A\n" for i in range(1, 6)))
    (d / "runs" / "B.txt").write_text("".join(f"1 Q0 d{i} {i - 5} {20 - i} B\n" for i in range(6, 11)))
    (d / "judgments" / "qrels.txt").write_text("1 0 d1 1\n1 0 d2 0\n1 0 d4 1\n1 0 d6 1\n")
    src = tmp_path / "llm.qrels"
    src.write_text("1 0 d1 0\n1 0 d3 1\n1 0 d5 0\n1 0 d7 1\n1 0 d8 1\n")
    import_source(d, src, "llm", kind="auto", model="m")
    return d


async def choose_judgments(pilot, spec: str) -> None:
    await press(pilot, "J")
    opts = [v for _, v in pilot.app.screen.options]
    here = pilot.app.screen.query_one("#choice").highlighted or 0      # the picker opens on the current source
    step = opts.index(spec) - here
    await press(pilot, *(["down" if step > 0 else "up"] * abs(step)), "enter")
    await settle(pilot)


@run_async
async def test_judgments_column_by_hand_on_a_small_campaign(tmp_path):
    d = tiny(tmp_path)
    app = CranfieldApp(d, export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        assert "judgments official" in screen_text(app)
        assert "filled@10" not in app.screen.query_one("#lb").column_keys
        assert lb_cell(app, "A", "P_5") == "0.4000" and lb_cell(app, "B", "P_5") == "0.2000"
        await choose_judgments(pilot, "official+llm")
        assert "judgments official+llm" in screen_text(app).replace("\n", " ")
        # A's top 5: d3 and d5 judged by the llm (2/5), P@5 0.4 -> 0.6; B: d7 d8 (2/5), 0.2 -> 0.6
        assert lb_cell(app, "A", "filled@10") == "0.40" and lb_cell(app, "B", "filled@10") == "0.40"
        assert lb_cell(app, "A", "P_5") == "0.6000" and lb_cell(app, "B", "P_5") == "0.6000"


@run_async
async def test_judgments_column_equals_cranfield_holes_and_the_spec_switches(tmp_path):
    camp = copy_demo(tmp_path / "demo")
    # a second source: the demo's complete truth, imported as an automatic judge
    import_source(camp, camp / "truth" / "qrels.txt", "llm", kind="auto", model="sim")
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["holes", str(camp), "--fill", "llm", "-m", "map", "-m", "P.10", "--format", "csv"]) == 0
    cli = pd.read_csv(io.StringIO(buf.getvalue()))
    engine = hole_filling(load_campaign(camp), "llm", ["map"]).set_index("run")
    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l")
        official = app.model.leaderboard().set_index("run")
        await choose_judgments(pilot, "official+llm")
        assert app.model.scores.judgments == "official+llm" and app.judgment_spec == "official+llm"
        board = app.model.leaderboard().set_index("run")
        assert sorted(board.index) == sorted(engine.index)
        for run, r in engine.iterrows():
            # the column's value is the engine's (the function `cranfield holes` uses) and the CLI's
            assert board.loc[run, "filled@10"] == r["filled@10"]
            c = cli[(cli["run"] == run) & (cli["measure"] == "map")].iloc[0]
            assert board.loc[run, "filled@10"] == pytest.approx(c["filled@10"], abs=1e-12)
            assert lb_cell(app, run, "filled@10") == f"{r['filled@10']:.2f}"
            # and the scores are the filled ones
            assert board.loc[run, "map"] == pytest.approx(r["filled_score"], abs=1e-12)
            assert official.loc[run, "map"] == pytest.approx(r["score"], abs=1e-12)
            p10 = cli[(cli["run"] == run) & (cli["measure"] == "P.10")].iloc[0]
            assert board.loc[run, "P_10"] == pytest.approx(p10["filled_score"], abs=1e-12)
        assert (engine["filled@10"] > 0).any()               # some holes were filled
        # the spec survives ctrl+r; switching back restores the official scores and drops the column
        await press(pilot, "ctrl+r")
        await settle(pilot)
        assert app.model.scores.judgments == "official+llm"
        await choose_judgments(pilot, "official")
        assert app.model.scores.judgments == "official" and app.judgment_spec is None
        assert "filled@10" not in app.screen.query_one("#lb").column_keys
        back = app.model.leaderboard().set_index("run")
        assert (back["map"] == official.loc[back.index, "map"]).all()


def test_large_mode_judgments_and_fusion_equal_in_memory(tmp_path, monkeypatch):
    """Streamed over the run store (large mode), fill@10, the scores and a fused run are the in-memory ones."""
    import engine.evaluation.seam
    import tui.model as model_mod
    from tui.model import CampaignModel
    from tui.source import open_campaign
    camp = copy_demo(tmp_path / "demo")
    import_source(camp, camp / "truth" / "qrels.txt", "llm", kind="auto", model="sim")
    model_mod._OPENED.clear()
    small = CampaignModel(open_campaign(camp))
    small.use_judgments("official+llm")
    small.evaluate(["map", "P.10"])
    monkeypatch.setattr(engine.evaluation.seam, "LARGE_ROWS", 10_000)
    large = CampaignModel(open_campaign(camp))
    assert large.large and not small.large
    large.use_judgments("official+llm")
    large.evaluate(["map", "P.10"])
    pd.testing.assert_frame_equal(small.leaderboard(), large.leaderboard())
    assert large.scores.judgments == "official+llm" and (large.scores.filled10 > 0).any()
    runs = small.scores.runs[:3]
    pa, _ = small.fuse_runs(runs, "combsum", tmp_path / "a")
    pb, _ = large.fuse_runs(runs, "combsum", tmp_path / "b")
    assert pa.read_bytes() == pb.read_bytes()


@run_async
async def test_a_fused_run_of_a_manual_run_is_manual_and_not_pooled(tmp_path):
    """The fused run of a manual and an automatic run was recorded as automatic and pooled."""
    camp = copy_demo(tmp_path / "demo")
    app = CranfieldApp(camp, export_dir=tmp_path / "exports")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "l", "space", "down", "space")      # rows 1 and 3
        a, b = app.screen.marked
        types = app.model.run_meta["type"]
        assert (types[a], types[b]) == ("automatic", "manual")
        await press(pilot, "u", "enter")
        await settle(pilot)
        await press(pilot, "s")
        assert app.screen.query_one("#submit-manual").value is True
        await press(pilot, "enter")
        await settle(pilot)
        assert app.screen.result.accepted
        await press(pilot, "escape", "escape")
        await settle(pilot)
        meta = load_campaign(camp).config["runs"]["fused-rrf"]
        assert meta["type"] == "manual" and meta["pooled"] is False
        assert lb_cell(app, "fused-rrf", "flags") == "M·"
