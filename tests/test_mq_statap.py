"""The Million Query statAP rules (engine.formats.mq, docs/million-query.md), hand-computed on a small prels file."""
from __future__ import annotations

import math

import pytest

from cranfield.cli import main

PRELS = """\
1 a 1 0 1
1 b 1 2 0.5
1 c 1 1 0.4
1 d 0 1 0.5
2 e 1 0 1
2 f 0 0 1
3 g 0 1 0.5
3 h 0 2 0.3
4 i 1 2 0.2
4 j 0 4 0.5
"""
RUN = """\
1 Q0 a 1 4 r
1 Q0 d 2 3 r
1 Q0 c 3 2 r
1 Q0 x 4 1 r
2 Q0 e 1 2 r
3 Q0 g 1 2 r
4 Q0 y 1 2 r
4 Q0 i 2 1 r
"""


@pytest.fixture
def files(tmp_path):
    (tmp_path / "mq.prels").write_text(PRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path / "mq.prels", tmp_path / "run"


def table(capsys, *argv) -> tuple[dict, str]:
    assert main([str(a) for a in argv]) == 0
    out = capsys.readouterr()
    v = {}
    for ln in out.out.splitlines():
        name, topic, value = (s.strip() for s in ln.split("\t"))
        v[(name, topic)] = float(value)
    return v, out.err


def test_reference_statap_rules(files, capsys):
    prels, run = files
    v, err = table(capsys, "eval", "-q", "-m", "statAP", "-m", "statRprec", "-m", "statP.2,3", "-m", "statR",
                   "-m", "statAP_ratio", "-m", "statRprec_round", prels, run)
    # topic 1, reference probabilities: a 1 (method 0), b 1 (method 2, file 0.5), c 0.4 (method 1) -> R_hat 4.5
    # a at 1: PC 1, weight 1; c at 3: PC (1 + 1)/3, weight 2.5 -> statAP = (1 + 5/3) / 4.5 = 16/27
    assert v[("statAP", "1")] == pytest.approx(16 / 27, abs=1e-4)
    # R-prec: relevant weight in the top round(4.5) = 5 is 1 + 2.5, divided by the unrounded 4.5
    assert v[("statRprec", "1")] == pytest.approx(3.5 / 4.5, abs=1e-4)
    assert v[("statP_2", "1")] == pytest.approx(0.5, abs=1e-4)
    assert v[("statP_3", "1")] == pytest.approx(3.5 / 3, abs=1e-4)
    assert v[("statR", "1")] == pytest.approx(4.5, abs=1e-4)
    # the file's probabilities for every method (explicit variants): R_hat = 1 + 2 + 2.5 = 5.5
    assert v[("statAP_ratio", "1")] == pytest.approx((1 + 5 / 3) / 5.5, abs=1e-4)
    assert v[("statRprec_round", "1")] == pytest.approx(3.5 / 6, abs=1e-4)       # round(5.5) = 6
    # topic 2: judged by MTC only; topic 3: R_hat = 0 -> not evaluated
    for t in ("2", "3"):
        assert math.isnan(v[("statAP", t)]) and math.isnan(v[("statRprec", t)])
    # topic 4: i (method 2) at rank 2 with probability 1: statAP = (1/2) / 1
    assert v[("statAP", "4")] == pytest.approx(0.5, abs=1e-4)
    # statMAP: mean over the valid topics 1 and 4 only
    assert v[("statAP", "all")] == pytest.approx((16 / 27 + 0.5) / 2, abs=1e-4)
    assert v[("statRprec", "all")] == pytest.approx((3.5 / 4.5 + 0.0) / 2, abs=1e-4)


def test_unknown_method_is_warned_with_file_line(files, capsys):
    prels, run = files
    _, err = table(capsys, "eval", "-m", "statAP", prels, run)
    assert f"{prels}:10: 1 prels row(s) with selection method 4" in err


def test_statrprec_cutoff_rule_of_the_script(tmp_path, capsys):
    # statAP_MQ_eval v3: R_hat = 1/0.4 = 2.5, round(2.5) = 3. A list reaching rank 3 gives the weight in
    # the top 3 over 3; a shorter list gives its whole weight over the unrounded 2.5.
    (tmp_path / "p").write_text("1 a 1 1 0.4\n1 b 0 1 0.5\n2 a 1 1 0.4\n2 b 0 1 0.5\n")
    (tmp_path / "r").write_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 x 3 1 r\n2 Q0 a 1 3 r\n2 Q0 b 2 2 r\n")
    v, _ = table(capsys, "eval", "-q", "-m", "statRprec", tmp_path / "p", tmp_path / "r")
    assert v[("statRprec", "1")] == pytest.approx(2.5 / 3, abs=1e-4)
    assert v[("statRprec", "2")] == pytest.approx(2.5 / 2.5, abs=1e-4)


def test_method_4_counts_as_statap_judged_other_methods_do_not(tmp_path, capsys):
    # statAP_MQ_eval v3 counts methods 1, 2 and 4 as statAP ("NEU") judged; a topic with MTC (0) and
    # method 3 only is not evaluated
    (tmp_path / "p").write_text("1 a 1 0 1\n1 b 0 4 0.5\n2 a 1 0 1\n2 b 0 3 0.5\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2 r\n2 Q0 a 1 2 r\n")
    v, err = table(capsys, "eval", "-q", "-m", "statAP", tmp_path / "p", tmp_path / "r")
    assert v[("statAP", "1")] == pytest.approx(1.0) and math.isnan(v[("statAP", "2")])
    assert "2 prels row(s) with selection method 3, 4" in err
