"""trec_eval's -R prefs / qrels_prefs / qrels_jg, -Z, parameter parsing and --strict-trec-eval."""
from __future__ import annotations

from pathlib import Path


from conftest import shared_path
from cranfield.cli import main


def ref(name: str) -> Path:
    """A trec_eval conformance file (tests/data/reference/trec_eval)."""
    return shared_path("trec_eval", name)


def run_cli(capsys, *argv) -> tuple[int, list[str], str]:
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out.splitlines(), out.err


def expected(name: str, skip=()) -> list[str]:
    return [ln for ln in ref(name).read_text().splitlines() if ln.split("\t")[0].rstrip() not in skip]


def test_prefs_reproduces_out_test_prefs(capsys):
    rc, lines, _ = run_cli(capsys, "eval", "-m", "all_prefs", "-q", "-R", "prefs", ref("prefs.test"),
                           ref("prefs.results.test"))
    assert rc == 0
    assert lines == expected("out.test.prefs")


def test_qrels_prefs_reproduces_out_test_qrels_prefs(capsys):
    rc, lines, _ = run_cli(capsys, "eval", "-m", "all_prefs", "-q", "-R", "qrels_prefs", ref("qrels.test"),
                           ref("results.test"))
    assert rc == 0
    assert lines == expected("out.test.qrels_prefs")


def test_qrels_jg_reproduces_out_test_qrels_jg(capsys):
    rc, lines, _ = run_cli(capsys, "eval", "-m", "qrels_jg", "-q", "-R", "qrels_jg", ref("qrels.123"),
                           ref("results.test"))
    assert rc == 0
    assert lines == expected("out.test.qrels_jg")


def test_zscores_reproduce_out_test_aqZ(capsys):
    rc, lines, _ = run_cli(capsys, "eval", "-q", "-m", "all_trec", "-Z", ref("zscores_file"), ref("qrels.test"),
                           ref("results.test"))
    assert rc == 0
    assert lines == expected("out.test.aqZ")


def test_prefs_hand_case(tmp_path, capsys):
    # one group, two subgroups joined transitively: a > b (jsg 0), b > c (jsg 1) => a > c as well
    (tmp_path / "p").write_text("1 g 0 a 2\n1 g 0 b 1\n1 g 1 b 3\n1 g 1 c 0\n")
    (tmp_path / "r").write_text("1 Q0 c 1 3 r\n1 Q0 a 2 2 r\n")          # c above a; b not retrieved
    rc, lines, _ = run_cli(capsys, "eval", "-m", "prefs_num_prefs_poss", "-m", "prefs_num_prefs_ful",
                           "-m", "prefs_simp_ret", "-m", "prefs_simp_imp", "-R", "prefs", tmp_path / "p", tmp_path / "r")
    v = {ln.split("\t")[0].strip(): ln.split("\t")[2] for ln in lines}
    # prefs: a>b (imp, fulfilled), b>c (imp, not), a>c (ret, not) -> 3 possible, 1 fulfilled
    assert v["prefs_num_prefs_poss"] == "3" and v["prefs_num_prefs_ful"] == "1"
    assert v["prefs_simp_ret"] == "0.0000" and v["prefs_simp_imp"] == f"{1 / 3:.4f}"


def test_prefs_avgjg_rnonrel_hand_cases(tmp_path, capsys):
    (tmp_path / "p").write_text(
        "1 g 0 r1 1\n1 g 0 n1 0\n1 g 0 n2 0\n1 g 0 n3 0\n"       # one subgroup (classes), N = 3 > R = 1
        "2 g 0 r1 2\n2 g 0 r2 1\n2 g 0 n1 0\n"                   # N = 1 <= R = 2
        "3 g 0 r1 1\n3 g 0 n1 0\n3 g 1 r1 1\n3 g 1 n2 0\n")      # two subgroups (array), N = 2 > R = 1
    (tmp_path / "r").write_text("1 Q0 r1 1 3 r\n1 Q0 n2 2 2 r\n1 Q0 n1 3 1 r\n"
                                "2 Q0 r2 1 3 r\n2 Q0 n1 2 2 r\n2 Q0 r1 3 1 r\n"
                                "3 Q0 n1 1 3 r\n3 Q0 r1 2 2 r\n3 Q0 n2 3 1 r\n")
    rc, lines, _ = run_cli(capsys, "eval", "-q", "-m", "prefs_avgjg_Rnonrel", "-m", "prefs_avgjg_Rnonrel_ret",
                           "-m", "prefs_avgjg", "-R", "prefs", tmp_path / "p", tmp_path / "r")
    v = {(ln.split("\t")[0].strip(), ln.split("\t")[1]): ln.split("\t")[2] for ln in lines}
    # 1: the first R = 1 non-relevant in rank order (n2) is kept; trec_eval pairs it with every document of
    # the group, the non-relevant class included: only r1 > n2 is fulfilled, 1 of 4 (retrieved only: 1 of 3)
    assert v[("prefs_avgjg_Rnonrel", "1")] == "0.2500" and v[("prefs_avgjg_Rnonrel_ret", "1")] == f"{1 / 3:.4f}"
    # 2: r2 > n1 fulfilled, r1 > r2 and r1 > n1 not: (1 + R_ret (R - N)) / (3 + R (R - N)) = 3/5
    assert v[("prefs_avgjg_Rnonrel", "2")] == "0.6000" and v[("prefs_avgjg_Rnonrel_ret", "2")] == "0.6000"
    # 3: keeps n1 (ranked first), drops n2: r1 > n1 not fulfilled -> 0 (prefs_avgjg counts r1 > n2 too)
    assert v[("prefs_avgjg_Rnonrel", "3")] == "0.0000" and v[("prefs_avgjg", "3")] == "0.5000"
    assert v[("prefs_avgjg_Rnonrel_ret", "3")] == "0.0000"


def test_cutoff_parsed_as_trec_eval_and_first_parameters_win(tmp_path, capsys):
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n")
    rc, lines, _ = run_cli(capsys, "eval", "-m", "P.23.4", "-m", "P.5", tmp_path / "q", tmp_path / "r")
    assert lines == ["P_23                  \tall\t0.0435"]          # 23.4 is 23 (atol); P.5 ignored
    rc, lines, _ = run_cli(capsys, "eval", "-m", "P", "-m", "P.2", tmp_path / "q", tmp_path / "r")
    assert lines == ["P_2                   \tall\t0.5000"]          # a bare name does not override


def test_strict_trec_eval_exit_codes(tmp_path, capsys):
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n")
    (tmp_path / "dup").write_text("1 Q0 a 1 2 r\n1 Q0 a 2 1 r\n")
    (tmp_path / "miss").write_text("2 Q0 a 1 2 r\n")                   # judged topic 1 has no results
    (tmp_path / "extra").write_text("1 Q0 a 1 2 r\n2 Q0 a 1 2 r\n")   # run topic 2 is not judged: ignored
    (tmp_path / "bad").write_text("1 Q0 a 1 2 r\n1 Q0 b 2 x r\n")
    q = tmp_path / "q"
    assert run_cli(capsys, "eval", "--strict-trec-eval", q, tmp_path / "dup")[0] == 4
    assert run_cli(capsys, "eval", "--strict-trec-eval", q, tmp_path / "miss")[0] == 4
    assert run_cli(capsys, "eval", "--strict-trec-eval", "-c", q, tmp_path / "miss")[0] == 0
    assert run_cli(capsys, "eval", "--strict-trec-eval", q, tmp_path / "extra")[0] == 0
    assert run_cli(capsys, "eval", "--strict-trec-eval", q, tmp_path / "bad")[0] == 3
    assert run_cli(capsys, "eval", "--strict-trec-eval", tmp_path / "bad", tmp_path / "dup")[0] == 2
    # without the switch: documented leniency
    assert run_cli(capsys, "eval", q, tmp_path / "dup")[0] == 0
    assert run_cli(capsys, "eval", q, tmp_path / "extra")[0] == 0


def test_malformed_auxiliary_files_name_file_and_line(tmp_path, capsys):
    (tmp_path / "p").write_text("1 g 0 a x\n1 g\n")
    (tmp_path / "r").write_text("1 Q0 a 1 2 r\n")
    (tmp_path / "z").write_text("1 map 0.5\n")
    (tmp_path / "q").write_text("1 0 a 1\n")
    rc, _, err = run_cli(capsys, "eval", "-R", "prefs", tmp_path / "p", tmp_path / "r")
    assert rc == 3
    assert f"{tmp_path / 'p'}:1: rel_level 'x' is not a number" in err
    assert f"{tmp_path / 'p'}:2: expected 5 fields" in err and "Traceback" not in err
    rc, _, err = run_cli(capsys, "eval", "-Z", tmp_path / "z", tmp_path / "q", tmp_path / "r")
    assert rc == 3 and f"{tmp_path / 'z'}:1: expected 4 fields 'topic measure mean sd'" in err
