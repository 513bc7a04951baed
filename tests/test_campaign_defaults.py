"""Campaign defaults in one place (issue 35): the schema (engine.campaign.config). `cranfield init` writes
a campaign.yaml generated from it that validates to exactly the schema's defaults; the `Campaign`
accessors, the judging sessions and the TUI's judging desk read the judging and pool settings with those
defaults."""
from __future__ import annotations

import pytest
import yaml
from _cli import cli

from engine.campaign.campaign import load_campaign
from engine.campaign.config import (
    SCHEMA,
    read_config,
    section_defaults,
    validate_config,
)
from engine.errors import FormatError


def test_init_writes_the_schema_defaults(tmp_path):
    r = cli("init", tmp_path / "c", "--name", "Track: \"2026\" #1")
    assert r.rc == 0, r.text
    cfg = read_config(tmp_path / "c" / "campaign.yaml")            # validates
    assert cfg == validate_config({"name": "Track: \"2026\" #1"})
    # every section with defaults is written out (the optional ones commented out), not left to the reader
    text = (tmp_path / "c" / "campaign.yaml").read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    for key, node in SCHEMA["keys"].items():
        if node["kind"] != "any" and "default" in node:
            assert key in raw or f"\n# {key}:" in text, key
    assert raw["relevance"]["scale"] == SCHEMA["keys"]["relevance"]["keys"]["scale"]["default"]
    uncommented = yaml.safe_load(text.replace("\n# judging:", "\njudging:").replace("\n#   ", "\n  "))
    assert uncommented["judging"]["lease_seconds"] == section_defaults("judging")["lease_seconds"]


def test_judging_section_checked_with_file_and_line(tmp_path):
    p = tmp_path / "campaign.yaml"
    p.write_text("name: x\njudging:\n  double_fraction: 2\n  lease_secs: 10\n")
    with pytest.raises(FormatError) as e:
        read_config(p)
    msg = str(e.value)
    assert "campaign.yaml:3: judging.double_fraction: must be <= 1" in msg
    assert "campaign.yaml:4: judging.lease_secs: unknown key (did you mean lease_seconds?)" in msg


def test_accessors_and_every_reader_agree(tmp_path):
    from engine.judging.sessions import DEFAULT_LEASE_SECONDS, judging_config
    assert cli("init", tmp_path / "c", in_process=True).rc == 0
    camp = load_campaign(tmp_path / "c")
    want = section_defaults("judging")
    assert camp.judging() == want and judging_config({}) == judging_config(camp.config) == {
        **want, "lease_seconds": float(want["lease_seconds"]), "double_fraction": float(want["double_fraction"])}
    assert DEFAULT_LEASE_SECONDS == want["lease_seconds"]
    assert camp.pool() == section_defaults("pool") == {"strategy": "depth", "depth": 100}
    assert camp.conflict_rule() == section_defaults("judgments")["conflict_rule"]
    y = tmp_path / "c" / "campaign.yaml"
    y.write_text(y.read_text() + "judging:\n  random_order: true\n  guidelines: g.md\npool: {depth: 20}\n")
    camp = load_campaign(tmp_path / "c")
    assert camp.judging()["random_order"] is True and camp.judging()["guidelines"] == "g.md"
    assert camp.pool() == {"strategy": "depth", "depth": 20}


def test_tui_judging_desk_uses_the_campaign(tmp_path):
    import tui.model as model_mod
    from tui.source import open_campaign
    assert cli("init", tmp_path / "c", in_process=True).rc == 0
    y = tmp_path / "c" / "campaign.yaml"
    y.write_text(y.read_text().replace("  conflict_rule: last", "  conflict_rule: max")
                 + "judging: {lease_seconds: 60}\n")
    model_mod._OPENED.clear()
    desk = model_mod.CampaignModel(open_campaign(tmp_path / "c")).judging
    assert desk.config()["lease_seconds"] == 60.0 and desk.conflict_rule() == "max"
    assert desk.config(fallback=True) == judging_defaults()


def judging_defaults() -> dict:
    from engine.judging.sessions import judging_config
    return judging_config({})
