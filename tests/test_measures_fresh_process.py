"""Every registered measure asked alone, and every nickname, computes in a fresh process
(`python -m cranfield.cli eval -q -m NAME ...`) the values it computes in this one, where every measure is
loaded: a measure must declare what it is built on (Measure.uses), not find it loaded by someone else.

Data: trec_eval's qrels.test / results.test; its prefs files for the -R prefs measures; qrels.123 for the
-R qrels_jg ones; prels and sample_eval files derived from qrels.test for the sampling estimators.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import shared_path

from cranfield.cli import main
from engine.measures import load_all
from engine.measures.registry import NICKNAMES

ROOT = Path(__file__).resolve().parents[1]
REF = shared_path("trec_eval")
VARIANTS = ["map@cond", "P@cond", "gd_ndcg@5", "gd_err@10"]     # derived on first use (registry.VARIANT_HOOKS)
PRELS = {"statAP", "statAP_bc", "statAP_ratio", "statAP_var", "statP", "statP_file", "statRprec",
         "statRprec_round", "statR"}
SAMPLE = {"xinfAP", "infNDCG"}


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> dict[str, Path]:
    """A prels file (Million Query: method 0, 1 or 2, inclusion probabilities) and a sample_eval file (two
    strata, some pooled documents not sampled) holding qrels.test's judgments."""
    d = tmp_path_factory.mktemp("sampled")
    prels, sample = [], []
    for i, line in enumerate((REF / "qrels.test").read_text().splitlines()):
        topic, _, doc, grade = line.split()
        prels.append(f"{topic} {doc} {grade} {i % 3} {(1.0, 0.5, 0.25, 0.75)[i % 4]}")
        g = "-1" if grade == "0" and i % 3 == 0 else grade
        sample.append(f"{topic} 0 {doc} {1 + i % 2} {g}")
    (d / "judgments.prels").write_text("\n".join(prels) + "\n")
    (d / "judgments.sample").write_text("\n".join(sample) + "\n")
    return {"prels": d / "judgments.prels", "sample": d / "judgments.sample"}


def _args(name: str, sampled: dict[str, Path]) -> list[str]:
    """`cranfield eval` arguments that evaluate measure or nickname `name` on suitable data."""
    if name.startswith("prefs_") or name in ("all_prefs", "prefs"):
        return ["-R", "prefs", str(REF / "prefs.test"), str(REF / "prefs.results.test")]
    if name.endswith("_avgjg") or name == "qrels_jg":
        return ["-R", "qrels_jg", str(REF / "qrels.123"), str(REF / "results.test")]
    if name in PRELS:
        return [str(sampled["prels"]), str(REF / "results.test")]
    if name in SAMPLE:
        return [str(sampled["sample"]), str(REF / "results.test")]
    return [str(REF / "qrels.test"), str(REF / "results.test")]


def _names() -> list[str]:
    return sorted(load_all()) + VARIANTS + sorted(NICKNAMES)


@pytest.mark.parametrize("name", _names())
def test_measure_alone_in_a_fresh_process(name, sampled, capsys):
    argv = ["eval", "-q", "-m", name, *_args(name, sampled)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run([sys.executable, "-m", "cranfield.cli", *argv], capture_output=True, text=True, env=env,
                         timeout=120, check=False)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    load_all()
    assert main(argv) == 0
    here = capsys.readouterr().out
    assert res.stdout == here
    if name not in NICKNAMES:
        assert here.startswith(name), here[:200]           # its values, not an empty output
