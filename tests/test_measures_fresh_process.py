"""Every registered measure asked alone, and every nickname, computes in a fresh process the values it computes
in this one, where every measure is loaded: a measure must declare what it is built on (Measure.uses), not find
it loaded by someone else. The fresh processes are forked from one server that has loaded the command line,
numpy and the evaluation code but no measure module (`engine.measures.m_*`), and run `cranfield eval -q -m NAME
...` as the program does (main() reading sys.argv); the first measure also runs as `python -m cranfield.cli`.

Data: trec_eval's qrels.test / results.test; its prefs files for the -R prefs measures; qrels.123 for the
-R qrels_jg ones; prels and sample_eval files derived from qrels.test for the sampling estimators.
"""
from __future__ import annotations

import json
import os
import select
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


SERVER = r"""
import json, os, sys, traceback
import numpy
import cranfield.cli.cmd_eval, engine.evaluation.evaluate, engine.evaluation.plain, engine.formats.detect
import engine.formats.sampled, engine.measures.registry, engine.ranking.build
from cranfield.cli import main
loaded = [m for m in sys.modules if m.startswith("engine.measures.m_")]
print(json.dumps(loaded), flush=True)
for line in sys.stdin:
    argv, out, err = json.loads(line)
    pid = os.fork()
    if pid == 0:                                   # the child: the command as the program runs it
        for fd, path in ((1, out), (2, err)):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
        sys.argv = ["cranfield", *argv]
        try:
            rc = main()
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            traceback.print_exc()
            rc = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(int(rc or 0))
    print(json.dumps(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])), flush=True)
"""


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """run(argv) -> (exit status, stdout, stderr) of `cranfield ARGV` in a process forked from the server."""
    d = tmp_path_factory.mktemp("fresh")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=env)
    assert json.loads(server.stdout.readline()) == []       # no measure module before the first command

    def run(argv: list[str]) -> tuple[int, str, str]:
        server.stdin.write(json.dumps([argv, str(d / "out"), str(d / "err")]) + "\n")
        server.stdin.flush()
        if not select.select([server.stdout], [], [], 120)[0]:       # one line per command, nothing read ahead
            server.kill()
            pytest.fail(f"cranfield {' '.join(argv)}: no answer in 120 s")
        rc = json.loads(server.stdout.readline())
        return rc, (d / "out").read_text(), (d / "err").read_text()
    yield run
    server.stdin.close()
    server.wait(timeout=60)


@pytest.mark.parametrize("name", ["map", "all_trec"])
def test_a_measure_alone_as_the_program(name, sampled, fresh):
    """`python -m cranfield.cli eval -q -m NAME` itself prints what a forked run prints."""
    argv = ["eval", "-q", "-m", name, *_args(name, sampled)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run([sys.executable, "-m", "cranfield.cli", *argv], capture_output=True, text=True, env=env,
                         timeout=120, check=False)
    assert res.returncode == 0 and res.stderr == "", res.stderr[-2000:]
    assert res.stdout.startswith(("map ", "num_ret ")) and fresh(argv) == (0, res.stdout, "")


@pytest.mark.parametrize("name", _names())
def test_measure_alone_in_a_fresh_process(name, sampled, fresh, capsys):
    argv = ["eval", "-q", "-m", name, *_args(name, sampled)]
    rc, out, err = fresh(argv)
    assert rc == 0 and "Traceback" not in err, err[-2000:]
    load_all()
    assert main(argv) == 0
    here = capsys.readouterr().out
    assert out == here
    if name not in NICKNAMES:
        assert here.startswith(name), here[:200]           # its values, not an empty output
