"""The front door on the command line and in campaigns (issue 27): `cranfield eval`, `table`, `compare`
and `stability significance` take the names the library takes (one request parser), a campaign's
`evaluation.measures` and the TUI's measure picker read them with it too, and identical runs give a NaN
p-value without numpy warnings. Whole-process calls, so kept apart from tests/test_front_door.py."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cranfield
from test_front_door import _random_case

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str) -> subprocess.CompletedProcess:
    """The command line as a user runs it (a whole process)."""
    return subprocess.run([sys.executable, "-m", "cranfield.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def _main(capsys, *args: str) -> tuple[int, str, list]:
    """The command line in process: (exit code, standard output, warnings raised)."""
    import importlib
    import warnings
    main = importlib.import_module("cranfield.cli").main
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        code = main(list(args))
    return code, capsys.readouterr().out, [str(w.message) for w in rec]


# ------------------------------------------------------------------ the command line
def test_cli_eval_accepts_ir_measures_and_trec_style_names(tmp_path):
    qrels, run = _random_case(11)
    run = {t: v for t, v in run.items() if v}
    (tmp_path / "q").write_text("".join(f"{t} 0 {d} {g}\n" for t, v in qrels.items() for d, g in v.items()))
    (tmp_path / "r").write_text("".join(f"{t} Q0 {d} 0 {s} tag\n" for t, v in run.items() for d, s in v.items()))
    p = _cli("eval", "-m", "nDCG@10", "-m", "P_5,10", str(tmp_path / "q"), str(tmp_path / "r"))
    assert p.returncode == 0, p.stderr
    lines = [ln.split() for ln in p.stdout.splitlines()]
    got = {ln[0]: float(ln[2]) for ln in lines}
    df = cranfield.evaluate(str(tmp_path / "q"), str(tmp_path / "r"), ["nDCG@10", "P_5,10"])
    want = cranfield.summarize(df).iloc[0].to_dict()
    assert got == pytest.approx({k: v for k, v in want.items() if k != "run"}, abs=5e-5)


# ------------------------------------------------------------------ campaigns, table, the TUI's picker
def _demo_copy(tmp_path, measures):
    import shutil

    import yaml
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "campaigns" / "demo", dst)
    cfg = yaml.safe_load((dst / "campaign.yaml").read_text())
    cfg["evaluation"]["measures"] = measures
    (dst / "campaign.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return dst


def test_campaign_measures_and_table_take_ir_measures_names(tmp_path, capsys):
    dst = _demo_copy(tmp_path, ["nDCG@10", "AP", "P_5,10"])
    camp = cranfield.load_campaign(dst)
    assert camp.measures() == ["ndcg_cut.10", "map", "P.5,10"]
    named = camp.evaluate(["nDCG@10", "P(rel=2)@10", "P(judged_only=True)@10"])
    plain = camp.evaluate(["ndcg_cut.10"])
    a = named[named["measure"] == "nDCG@10"]["value"].to_numpy()
    assert np.array_equal(a, plain["value"].to_numpy())
    rel2 = camp.evaluate(["P.10"], rel_level=2)
    assert np.array_equal(named[named["measure"] == "P(rel=2)@10"]["value"].to_numpy(), rel2["value"].to_numpy())
    j = camp.evaluate(["P.10"], judged_only=True)
    judged = named[named["measure"] == "P(judged_only=True)@10"]["value"].to_numpy()
    assert np.array_equal(judged, j["value"].to_numpy())
    code, out, _ = _main(capsys, "table", str(dst), "--baseline", "asterA1", "-m", "nDCG@10", "--format", "csv")
    assert code == 0
    from engine.campaign.tables import compare_scores
    assert out == compare_scores(camp.evaluate(["nDCG@10"]), None, "asterA1").to_csv()


def test_campaign_measures_with_options_are_refused_clearly(tmp_path):
    dst = _demo_copy(tmp_path, ["P(rel=2)@10"])
    with pytest.raises(cranfield.CranfieldError, match="implies evaluation options"):
        cranfield.load_campaign(dst).measures()


def test_tui_measure_picker_uses_the_one_parser():
    from tui.model import CampaignModel
    model = CampaignModel.load(ROOT / "campaigns" / "demo")
    ok, bad = model.usable_measures(["nDCG@10", "P_5,10", "P(rel=2)@10", "nDCGG@10"])
    assert ok == ["ndcg_cut.10", "P.5,10"]
    assert "implies evaluation options" in bad[0] and "did you mean" in bad[1]


def test_identical_runs_give_nan_p_without_numpy_warnings_on_the_command_line(tmp_path, capsys):
    """issue 25's item: `table` and `stability significance` printed numpy RuntimeWarnings when a run equals
    the baseline; the p-value is NaN as scipy / pt.Experiment give it."""
    import yaml
    dst = _demo_copy(tmp_path, ["map"])
    lines = (dst / "runs" / "asterA1.txt").read_text().splitlines()
    (dst / "runs" / "twinA1.txt").write_text("".join(" ".join(ln.split()[:5] + ["twinA1"]) + "\n" for ln in lines))
    cfg = yaml.safe_load((dst / "campaign.yaml").read_text())
    cfg["runs"]["twinA1"] = dict(cfg["runs"]["asterA1"], file="runs/twinA1.txt", pooled=False)
    (dst / "campaign.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    out = {}
    for args in (["table", str(dst), "--baseline", "asterA1", "-m", "AP", "--format", "csv"],
                 ["stability", "significance", "--campaign", str(dst), "-m", "map", "--tests", "t,wilcoxon"],
                 ["compare", str(dst), "twinA1", "asterA1", "-m", "AP"]):
        code, out[args[0]], warned = _main(capsys, *args)
        assert code == 0 and warned == [], warned
    import io
    t = pd.read_csv(io.StringIO(out["table"])).set_index("run")
    assert np.isnan(t.loc["twinA1", "AP p"]) and t.loc["twinA1", "AP mark"] != t.loc["twinA1", "AP mark"]
    assert "t test: p = nan" in out["compare"]
