"""Participant reports: one HTML and one Markdown page per run plus an index; best/median/worst equal those of
the evaluation table; the HTML has no external reference."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from engine.campaign.campaign import load_campaign
from cranfield.cli import main
from engine.campaign.participant import build_reports

DEMO = Path(__file__).resolve().parents[1] / "campaigns" / "demo"


def test_report_command_pages_and_values(tmp_path: Path):
    out = tmp_path / "rep"
    assert main(["report", str(DEMO), "--out", str(out)]) == 0
    camp = load_campaign(DEMO)
    tags = camp.run_meta()["run"].tolist()
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"{t}.html" for t in tags] + [f"{t}.md" for t in tags] + ["index.html", "index.md"])
    table = camp.evaluate(camp.measures())
    m = table[table["measure"] == "map"].pivot_table(index="topic", columns="run", values="value", observed=True)
    page = (out / "deltaA2.html").read_text()
    assert not re.search(r"https?://", page) and "<svg" in page and "<script" not in page
    assert not re.search(r"(src|href)=\"(?!index\.html|[A-Za-z0-9_.+-]+\.html)", page)
    # per-topic best/median/worst of the Markdown page equal the evaluation table's
    md = (out / "deltaA2.md").read_text()
    sec = md.split("## Per topic: map")[1].split("## ")[0]
    rows = [ln.split("|")[1:-1] for ln in sec.splitlines() if re.match(r"\| \d", ln)]
    assert len(rows) == len(m)
    for cells in rows:
        t = cells[0].strip()
        run, best, med, worst = (float(c) for c in cells[1:5])
        assert run == pytest.approx(m.loc[t, "deltaA2"], abs=5e-5)
        assert best == pytest.approx(m.loc[t].max(), abs=5e-5)
        assert med == pytest.approx(float(np.median(m.loc[t])), abs=5e-5)
        assert worst == pytest.approx(m.loc[t].min(), abs=5e-5)
    idx = (out / "index.html").read_text()
    assert all(f'href="{t}.html"' for t in tags) and not re.search(r"https?://", idx)

    class P(HTMLParser):
        tags: list = []

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
    p = P()
    p.feed(page)
    assert p.tags.count("svg") == 1 + len(camp.measures())


def test_pooled_reference_and_position():
    camp = load_campaign(DEMO)
    reps = {r.run: r for r in build_reports(camp, measures=["map"], against="pooled")}
    table = camp.evaluate(["map"])
    pooled = camp.run_meta().query("pooled")["run"].tolist()
    m = table.pivot_table(index="topic", columns="run", values="value", observed=True)
    bmw = reps["asterA3"].per_topic["map"].set_index("topic")
    np.testing.assert_allclose(bmw["best"], m[pooled].max(axis=1).loc[bmw.index])
    np.testing.assert_allclose(bmw["median"], m[pooled].median(axis=1).loc[bmw.index])
    means = m.mean().sort_values(ascending=False)
    assert reps[means.index[0]].positions["map"] == (1, 12)
    assert reps[means.index[4]].positions["map"] == (5, 12)
    assert len(reps["cedarA1"].curve) == 11 and reps["cedarA1"].curve[0] >= reps["cedarA1"].curve[-1]
