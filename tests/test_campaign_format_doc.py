"""docs/campaign-format.md is generated from campaign.yaml's schema (engine.campaign.schema_doc) and says
everything the schema accepts."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from engine.campaign import schema_doc
from engine.campaign.config import SCHEMA, validate_config

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "campaign-format.md"
TOP_KEYS = ["name", "description", "relevance", "evaluation", "judgments", "runs", "topics", "pool", "cost",
            "submission", "sources", "judging", "answers", "allow_outside"]


def test_committed_doc_is_the_generators_output():
    assert DOC.read_text() == schema_doc.render(), \
        "docs/campaign-format.md is stale: python -m engine.campaign.schema_doc > docs/campaign-format.md"


def test_every_key_of_the_schema_has_a_row():
    text = DOC.read_text()
    listed = re.findall(r"^\| `([^`]+)` \|", text, flags=re.MULTILINE)
    top = [k for k in listed if "." not in k]
    assert top == list(SCHEMA["keys"]) == TOP_KEYS          # all 14, in the schema's order
    assert {"relevance.scale.GRADE.gain", "runs.TAG.group", "topics.targets", "answers.max_words"} <= set(listed)
    rows = {r[0].strip("`"): r for r in schema_doc.rows()}
    assert rows["name"][2] == "required" and rows["evaluation.depth"][2] == "`1000`"
    assert rows["judgments.conflict_rule"][1] == "one of `last`, `max`, `majority`"
    assert rows["topics.targets"][1] == "mapping: topic id -> integer >= 1"
    assert all(r[3] for r in rows.values()), [k for k, r in rows.items() if not r[3]]   # every key says what it is


def test_the_example_is_a_valid_campaign_yaml():
    example = re.search(r"```yaml\n(.*?)```", DOC.read_text(), flags=re.DOTALL).group(1)
    data = yaml.safe_load(example)
    assert list(data) == TOP_KEYS                # the example shows every top-level key
    cfg = validate_config(data)                  # and the schema accepts it
    assert cfg["relevance"]["scale"][2]["gain"] == 3 and cfg["evaluation"]["depth"] == 1000


def test_the_module_writes_the_doc_as_a_process():
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-m", "engine.campaign.schema_doc"], check=False, cwd=ROOT, capture_output=True,
                       text=True, timeout=60, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    assert p.stdout == DOC.read_text()
