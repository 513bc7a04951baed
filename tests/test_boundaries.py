"""Issue 26: writes that cannot be lost, bounded reads, and the listed bad inputs (each a test that
failed on the code before the fix)."""
from __future__ import annotations

import errno
import gzip
import multiprocessing
import os
import threading
import time
from pathlib import Path

import pytest

from _cli import assert_clean_refusal, cli, demo_copy


# ----------------------------------------------------------------------------- writes that cannot be lost

def test_append_waiting_on_a_log_that_repair_replaces_lands_in_the_new_log(tmp_path, monkeypatch):
    """repair --apply swaps in a new log while a writer waits for the old file's lock: the writer must
    append to the new log (re-check after locking), not to the replaced file."""
    import engine.util.atomic as atomic
    from engine.judgments.repair import apply_repair, plan_repair
    from engine.judgments.log import append_records, judgment_record, read_log
    log = tmp_path / "judgments" / "log.jsonl"
    append_records(log, [judgment_record("1", "a", 1, "x")])
    with open(log, "ab") as fh:
        fh.write(b"{not json}\n")                       # something to repair
    plan = plan_repair(log)
    real = atomic.atomic_write
    started = {}

    def slow_swap(path, data):
        t = threading.Thread(target=lambda: append_records(log, [judgment_record("1", "b", 2, "y")]))
        t.start()
        started["t"] = t
        time.sleep(0.3)                                  # the writer now waits on the old file's lock
        real(path, data)

    monkeypatch.setattr(atomic, "atomic_write", slow_swap)
    apply_repair(plan)
    started["t"].join(10)
    assert read_log(log)["doc"].tolist() == ["a", "b"]


def _submit_slowly(root: str, run: str, q) -> None:
    import engine.campaign.campaign as campaign
    real = campaign.read_config

    def slow(*a, **k):
        out = real(*a, **k)
        time.sleep(0.4)
        return out
    campaign.read_config = slow
    try:
        from engine.campaign.intake import submit
        submit(root, [run], group="G", manual=True)
        q.put("accepted")
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        q.put(repr(exc))


def test_concurrent_submits_both_recorded(tmp_path):
    c = demo_copy(tmp_path / "c")
    runs = []
    for tag in ("newA", "newB"):
        p = tmp_path / f"{tag}.txt"
        p.write_text((c / "runs" / "asterA1.txt").read_text().replace("asterA1", tag))
        runs.append(str(p))
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    ps = [ctx.Process(target=_submit_slowly, args=(str(c), r, q)) for r in runs]
    for p in ps:
        p.start()
    for p in ps:
        p.join(60)
    assert sorted(q.get(timeout=5) for _ in ps) == ["accepted", "accepted"]
    from engine.campaign.campaign import load_campaign
    cfg = load_campaign(c).config["runs"]
    assert cfg["newA"]["type"] == "manual" and cfg["newB"]["type"] == "manual"
    assert cfg["newA"]["group"] == "G" and cfg["newB"]["group"] == "G"


def test_full_disk_during_an_append_leaves_the_log_as_it_was_and_names_it(tmp_path, monkeypatch):
    import engine.judgments.log as jl
    from engine.util.atomic import os_error_message
    from engine.judgments.log import append_records, judgment_record
    log = tmp_path / "log.jsonl"
    append_records(log, [judgment_record("1", "a", 1, "x")])
    before = log.read_bytes()
    real = os.write

    def half_then_full(fd, data):
        if len(data) > 10:
            real(fd, bytes(data[:10]))
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(jl.os, "write", half_then_full)
    with pytest.raises(OSError) as ei:
        append_records(log, [judgment_record("1", "b", 1, "x")])
    monkeypatch.setattr(jl.os, "write", real)
    assert log.read_bytes() == before
    msg = os_error_message(ei.value)
    assert str(log) in msg and "(unknown file)" not in msg


def test_full_disk_message_does_not_claim_nothing_was_left_when_unknown():
    from engine.util.atomic import os_error_message
    msg = os_error_message(OSError(errno.ENOSPC, "No space left on device"))
    assert "nothing was left half-written" not in msg and "(unknown file)" not in msg


# ----------------------------------------------------------------------------- bounded reads

def test_a_fifo_as_a_run_is_refused_without_blocking(tmp_path):
    c = demo_copy(tmp_path / "c")
    os.mkfifo(c / "runs" / "pipe.txt")
    for args in (["eval", "--campaign", c], ["check", c / "runs" / "pipe.txt"],
                 ["eval", c / "judgments" / "qrels.txt", c / "runs" / "pipe.txt"]):
        r = cli(*args, timeout=30)
        assert_clean_refusal(r, "pipe.txt", "not a regular file")


@pytest.mark.parametrize("dev", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_a_run_is_refused_without_reading(tmp_path, dev):
    r = cli("eval", Path(__file__).resolve().parents[1] / "campaigns/demo/judgments/qrels.txt", dev, timeout=30)
    assert_clean_refusal(r, dev, "not a regular file")


def test_a_gzip_bomb_is_refused_and_the_limit_can_be_raised(tmp_path):
    bomb = tmp_path / "run.txt.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as fh:
        for _ in range(64):
            fh.write(b"\n" * (1 << 20))                   # 64 MB of newlines, ~65 KB compressed
    qrels = Path(__file__).resolve().parents[1] / "campaigns/demo/judgments/qrels.txt"
    t0 = time.monotonic()
    r = cli("eval", qrels, bomb, timeout=60)
    assert time.monotonic() - t0 < 20
    assert_clean_refusal(r, "run.txt.gz", "decompresses to more than 16,777,216 bytes", "--max-read")
    small = tmp_path / "small.txt.gz"                     # 17 MB of newlines: refused, then read when raised
    small.write_bytes(gzip.compress(b"\n" * (17 << 20), 9))
    assert_clean_refusal(cli("eval", qrels, small, in_process=True), "decompresses")
    r = cli("eval", "--max-read", "1G", qrels, small, timeout=60, in_process=True)
    assert "decompress" not in r.text and "Traceback" not in r.text and "run file is empty" in r.text


def test_a_file_over_the_size_limit_is_refused_with_the_flag_named(tmp_path):
    qrels = Path(__file__).resolve().parents[1] / "campaigns/demo/judgments/qrels.txt"
    run = Path(__file__).resolve().parents[1] / "campaigns/demo/runs/asterA1.txt"
    r = cli("eval", "--max-read", "10K", qrels, run)
    assert_clean_refusal(r, "qrels.txt", "over the read limit of 10,240 bytes", "--max-read")
    r = cli("eval", "--max-read", "lots", qrels, run, in_process=True)
    assert r.rc == 2 and "--max-read 'lots'" in r.err
    r = cli("eval", "--max-read", "10M", "-m", "map", qrels, run, in_process=True)
    assert r.rc == 0 and "map" in r.out


# ----------------------------------------------------------------------------- listed cases

def test_five_field_judgments_are_refused_unless_read_as_sample(tmp_path):
    root = Path(__file__).resolve().parents[1] / "campaigns/demo"
    q5 = tmp_path / "q5.txt"
    q5.write_text("".join(ln + " 7\n" for ln in (root / "judgments/qrels.txt").read_text().splitlines()))
    run = root / "runs/asterA1.txt"
    for extra in ([], ["--strict-trec-eval"]):
        r = cli("eval", *extra, "-m", "map", q5, run, in_process=True)
        assert_clean_refusal(r, "q5.txt:1", "5 fields", "--judgments-format sample")
    r = cli("eval", "--judgments-format", "sample", "-m", "infAP", q5, run, in_process=True)
    assert r.rc == 0, r.text


def test_undo_with_nothing_to_undo_is_refused(tmp_path):
    c = demo_copy(tmp_path / "c")
    r = cli("judgments", "undo", c, "401", "D401-1")
    assert_clean_refusal(r, "nothing to undo")
    assert not (c / "judgments" / "log.jsonl").exists() or "undo" not in (c / "judgments/log.jsonl").read_text()


def test_negative_pool_depth_is_refused_as_such(tmp_path):
    c = demo_copy(tmp_path / "c")
    r = cli("pool", c, "--strategy", "depth", "--depth", "-3", "--dry-run")
    assert_clean_refusal(r, "--depth")
    assert "no run results" not in r.text


def test_negative_query_count_is_refused():
    r = cli("cost", "--queries", "-5", "--per-query", "100")
    assert_clean_refusal(r, "--queries")


def test_a_doc_id_of_invalid_utf8_is_refused(tmp_path):
    c = demo_copy(tmp_path / "c")
    import subprocess
    import sys
    from _cli import CLI_MODULE, ROOT
    p = subprocess.run([sys.executable, "-m", CLI_MODULE, "judgments", "add", str(c), "401", b"D\xff\xfe", "1"],
                       capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT), "CRANFIELD_ASSESSOR": "t"})
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode == 3 and "Traceback" not in err and "UTF-8" in err, err


def test_a_directory_named_as_a_run_file_says_so(tmp_path):
    c = demo_copy(tmp_path / "c")
    cfg = c / "campaign.yaml"
    cfg.write_text(cfg.read_text().replace("file: runs/asterA1.txt", "file: runs"))
    r = cli("eval", "--campaign", c, in_process=True)
    assert_clean_refusal(r, "runs.asterA1.file", "is a directory")


def test_two_runs_naming_one_file_are_refused_with_both_names(tmp_path):
    c = demo_copy(tmp_path / "c")
    cfg = c / "campaign.yaml"
    cfg.write_text(cfg.read_text().replace("file: runs/asterA2.txt", "file: runs/asterA1.txt"))
    r = cli("eval", "--campaign", c, in_process=True)
    assert_clean_refusal(r, "asterA1", "asterA2", "runs/asterA1.txt")
    assert "categories must be unique" not in r.text


def test_a_non_ascii_tag_is_refused_saying_ascii(tmp_path):
    c = demo_copy(tmp_path / "c")
    p = tmp_path / "t.txt"
    p.write_text((c / "runs" / "asterA1.txt").read_text().replace("asterA1", "tëst"))
    r = cli("submit", c, p)
    assert_clean_refusal(r, "ASCII")


def test_report_file_names_never_collide(tmp_path):
    from engine.campaign.participant import write_reports
    from engine.campaign.campaign import load_campaign
    c = demo_copy(tmp_path / "c")
    for old, new in (("asterA1", "index"), ("asterA2", "a<b"), ("asterA3", "a>b")):
        cfg = c / "campaign.yaml"
        cfg.write_text(cfg.read_text().replace(f"  {old}:", f"  '{new}':").replace(f"runs/{old}.txt", f"runs/{old}.txt"))
        f = c / "runs" / f"{old}.txt"
        f.write_text(f.read_text().replace(old, new))
    camp = load_campaign(c)
    out = tmp_path / "out"
    write_reports(camp, out, runs=["index", "a<b", "a>b", "asterM4"], measures=["map"])
    html = sorted(p.name for p in out.glob("*.html"))
    assert len(html) == 5, html                          # four run pages and the index
    index = (out / "index.html").read_text()
    for run in ("index", "a&lt;b", "a&gt;b", "asterM4"):
        assert run in index


def test_latex_escapes_a_backslash_as_textbackslash():
    import pandas as pd
    from engine.formats.text_tables import format_table
    tex = format_table(pd.DataFrame({"run": ["a\\b", "50%_x{}"]}), "latex")
    assert "a\\textbackslash{}b" in tex and "50\\%\\_x\\{\\}" in tex
    assert "\\textbackslash\\{" not in tex


def test_a_missing_docno_in_a_dataframe_is_refused():
    import pandas as pd
    import cranfield
    qrels = {"q1": {"d1": 1}}
    run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", None], "score": [2.0, 1.0]})
    with pytest.raises(cranfield.CranfieldError, match="doc"):
        cranfield.evaluate(qrels, run, ["P.2"])


def test_diversity_duplicates_resolve_as_ndeval_with_a_warning(tmp_path):
    """ndeval 4.5 (qrelPopulateResultList): a (topic, subtopic, doc) judged twice takes its last line, and
    every relevant line counts in nrelSub. Hand-computed: dA {1}, dB {2} (its subtopic-1 judgment is
    overwritten by 0), nrelSub = [2, 1]; run dB, dA: MAP-IA = (1/2 / 2 + 1 / 1) / 2 = 0.625,
    P-IA@5 = (1/5 + 1/5) / 2 = 0.2, alpha-DCG@5 = (1 + 1/log2 3) / 2 / (1 + 0.5/log2 3 + ...)."""
    import math
    q = tmp_path / "q.txt"
    q.write_text("1 1 dA 1\n1 2 dB 1\n1 1 dB 1\n1 1 dB 0\n")
    r = tmp_path / "r.txt"
    r.write_text("1 Q0 dB 1 2.0 x\n1 Q0 dA 2 1.0 x\n")
    res = cli("eval", "-R", "diversity", q, r, in_process=True)
    assert res.rc == 0, res.text
    assert "judged more than once with different grades" in res.err and "last line" in res.err
    head, row = res.out.splitlines()[:2]
    vals = dict(zip(head.split(","), row.split(",")))
    assert float(vals["MAP-IA"]) == pytest.approx(0.625, abs=1e-6)
    assert float(vals["P-IA@5"]) == pytest.approx(0.2, abs=1e-6)
    best = sum(0.5 ** i / math.log2(i + 2) for i in range(5))
    assert float(vals["alpha-DCG@5"]) == pytest.approx((1 + 1 / math.log2(3)) / 2 / best, abs=1e-6)


def test_zscores_missing_entry_and_zero_sd_print_trec_evals_missing_value(tmp_path):
    """trec_eval's convert_zscores.c: a (topic, measure) not in the -Z file, or sd 0 with a value other than
    the mean, becomes MISSING_ZSCORE_VALUE (-1000000); sd 0 at the mean gives 0."""
    q = tmp_path / "q.qrels"
    q.write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n3 0 e 1\n")
    r = tmp_path / "r.txt"
    r.write_text("1 Q0 a 1 2.0 x\n1 Q0 b 2 1.0 x\n2 Q0 d 1 1.0 x\n3 Q0 e 1 1.0 x\n")
    z = tmp_path / "z.txt"
    z.write_text("1 P_1 0.5 0.25\n2 P_1 0.5 0\n3 P_1 1.0 0\n")   # topic 1: (1-0.5)/0.25; 2: 0 != 0.5; 3: at the mean
    res = cli("eval", "-q", "-Z", z, "-m", "P.1", q, r, in_process=True)
    assert res.rc == 0, res.text
    got = {ln.split("\t")[1]: float(ln.split("\t")[2]) for ln in res.out.splitlines() if ln.startswith("ZP_1")}
    assert got == {"1": 2.0, "2": -1000000.0, "3": 0.0, "all": pytest.approx((2.0 - 1000000.0 + 0.0) / 3)}
    z.write_text("1 P_1 0.5 0.25\n")                                # topics 2 and 3 missing
    res = cli("eval", "-q", "-Z", z, "-m", "P.1", q, r, in_process=True)
    got = {ln.split("\t")[1]: float(ln.split("\t")[2]) for ln in res.out.splitlines() if ln.startswith("ZP_1")}
    assert got["2"] == got["3"] == -1000000.0


def test_a_run_tag_shared_by_files_of_two_batches_names_both_files(tmp_path):
    from engine.errors import FormatError
    from engine.evaluation.evaluate import evaluate_files
    demo = Path(__file__).resolve().parents[1] / "campaigns/demo"
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    for p in (a, b):
        p.write_text((demo / "runs/asterA1.txt").read_text())
    with pytest.raises(FormatError) as e:
        evaluate_files(demo / "judgments/qrels.txt", [a, demo / "runs/asterA2.txt", b], ["map"], workers=2)
    assert str(e.value).startswith(f"{b}: run tag 'asterA1' is also the tag of {a}")


def test_a_stored_off_scale_automatic_grade_is_refused_by_check_and_eval(tmp_path):
    """A source log written before the client refused off-scale grades (grade 3 on the demo's 0-2 scale)."""
    import json as _json
    c = demo_copy(tmp_path / "c")
    (c / "judgments" / "sources").mkdir()
    recs = [{"topic": "401", "doc": "D401-1", "grade": 3, "assessor": "llm", "source": "llm", "kind": "auto",
             "model": "m", "prompt_version": "v", "op": "judge"}]
    (c / "judgments" / "sources" / "llm.jsonl").write_text("".join(_json.dumps(r) + "\n" for r in recs))
    for args in (["check", c], ["eval", "--campaign", c, "--judgments", "official+llm"]):
        r = cli(*args, in_process=True)
        assert_clean_refusal(r, "llm.jsonl", "grade(s) [3] are not on the campaign's relevance.scale", "--grade-map 3=2")


def test_docs_import_refuses_a_fifo_and_an_endless_line(tmp_path):
    c = demo_copy(tmp_path / "c")
    os.mkfifo(tmp_path / "pipe.jsonl")
    assert_clean_refusal(cli("docs", "import", c, tmp_path / "pipe.jsonl", timeout=30), "not a regular file")
    long = tmp_path / "long.jsonl"
    long.write_text('{"id": "x", "text": "' + "a" * 30000 + '"}\n')
    assert_clean_refusal(cli("--max-read", "20K", "docs", "import", c, long), "long.jsonl:1", "read limit")
    r = cli("docs", "import", c, long, in_process=True)
    assert r.rc == 0, r.text


def test_report_pages_on_a_full_disk_are_whole_or_absent(tmp_path):
    """A file-size limit stands in for a full disk: the report fails cleanly naming a file; every page
    left is complete (no 0-byte or cut page), no temporary file is left."""
    import resource
    import signal
    import subprocess
    import sys
    from _cli import CLI_MODULE, ROOT

    def small_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (6000, 6000))
    c = demo_copy(tmp_path / "c")
    cli("eval", "--campaign", c, in_process=True)                         # the store and cache exist before the limit
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", CLI_MODULE, "report", str(c), "--out", str(out), "-m", "map"],
                       capture_output=True, text=True, preexec_fn=small_disk,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"})
    assert p.returncode == 3 and "Traceback" not in p.stderr and "File too large" in p.stderr, p.stderr[-800:]
    assert str(out) in p.stderr
    left = list(out.iterdir())
    assert not [f for f in left if f.name.startswith(".")], left
    for f in left:
        text = f.read_text()
        assert text.rstrip().endswith(("</html>", "|")) or f.suffix == ".md", f
        assert f.stat().st_size > 0


# ----------------------------------------------------------------------------- measure parameters out of range

@pytest.mark.parametrize("spec, words", [
    ("P.99999999999999999999", ("cut-off 99999999999999999999 is out of range", "at most 2147483647")),
    ("P@99999999999999999999", ("cut-off 99999999999999999999 is out of range",)),
    ("Q.beta=-1", ("Q: parameter beta must be at least 0",)),
    ("Q.beta=nan", ("not a finite number",)),
    ("ndcgx.b=inf", ("not a finite number",)),
])
def test_measure_parameters_out_of_range_are_refused_everywhere(tmp_path, spec, words):
    """A cut-off beyond a C int was an OverflowError traceback; Q.beta=-1 printed -inf with exit 0. Refused
    by the command line, the library and a campaign.yaml measures list, with the same words."""
    import cranfield
    from engine.measures.registry import MeasureError
    camp = demo_copy(tmp_path / "c")
    run = sorted((camp / "runs").glob("*.txt"))[0]
    assert_clean_refusal(cli("eval", "-m", spec, camp / "judgments" / "qrels.txt", run, in_process=True), *words)
    with pytest.raises(MeasureError, match=words[0].replace("(", r"\(")):
        cranfield.Evaluator({"1": {"a": 1}}, [spec]).evaluate({"1": {"a": 1.0}})
    cfg = camp / "campaign.yaml"
    lines = cfg.read_text().splitlines(keepends=True)
    i = next(i for i, ln in enumerate(lines) if ln.strip() == "measures:")     # evaluation.measures (a list)
    j = i + 1
    while j < len(lines) and lines[j].lstrip().startswith("- "):
        j += 1
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    cfg.write_text("".join(lines[:i] + [f'{indent}measures: ["{spec}"]\n'] + lines[j:]))
    r = cli("check", camp, in_process=True)
    assert_clean_refusal(r, "campaign.yaml", words[0])
