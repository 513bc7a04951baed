"""Issue 34 item 6: resource limits (memory, file size, an ASCII terminal) and lone surrogates give one
clear message, never a traceback. Each case is a separate process with the limit set in preexec_fn."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import CLI_MODULE, ROOT, Result, assert_clean_refusal, cli, demo_copy


def _limited(args, limit: int, which: int, env: dict | None = None, timeout: float = 120) -> Result:
    def pre():
        resource.setrlimit(which, (limit, limit))
    # no bytecode written: a .pyc cut short by the file-size limit would break every later process
    e = {**os.environ, "PYTHONPATH": str(ROOT), "CRANFIELD_ASSESSOR": "tester", "PYTHONDONTWRITEBYTECODE": "1",
         **(env or {})}
    p = subprocess.run([sys.executable, "-m", CLI_MODULE, *map(str, args)], env=e, text=True,
                       capture_output=True, timeout=timeout, preexec_fn=pre)
    return Result(p.returncode, p.stdout, p.stderr)


def _big_run(path: Path, topics: int = 50, per: int = 10000) -> Path:
    with open(path, "w") as f:
        f.writelines("".join(f"{t} Q0 d{t}-{i} {i + 1} {1000000 - i} big\n" for i in range(per)) for t in range(topics))
    return path


def _qrels(path: Path, topics: int = 50) -> Path:
    path.write_text("".join(f"{t} 0 d{t}-{i} 1\n" for t in range(topics) for i in range(0, 400, 3)))
    return path


# Where the limit bites depends on the machine (cores: OpenBLAS and jemalloc arenas; libraries' versions):
# below the interpreter's own needs Python cannot start, above the command's needs it fits, and in between
# Arrow's C++ allocator may abort the process (SIGABRT, out of Python's reach). The limits are tried from
# low to high until one fails inside Python; every failure inside Python must be the one clean message.
LIMITS_MB = (150, 200, 250, 300, 350, 400, 450)


def _scan(args_list, check) -> tuple[int, int]:
    failed = aborted = 0
    for mb in LIMITS_MB:
        for args in args_list:
            r = _limited(args, mb * 10**6, resource.RLIMIT_AS)
            if r.rc > 0:
                failed += 1
                check(r)
            aborted += r.rc < 0
        if failed:
            break
    return failed, aborted


@pytest.mark.parametrize("quiet", [False, True])
def test_out_of_memory_in_eval_is_one_message(tmp_path, quiet):
    run, q = _big_run(tmp_path / "r.txt"), _qrels(tmp_path / "q.qrels")

    def check(r):
        assert_clean_refusal(r, "out of memory", "cranfield ingest", "eval --campaign")
        assert "r.txt" in r.err and r.err.count("\n") <= 3, r.err
    failed, aborted = _scan([["eval", q, run, "-m", "map", *(["-q"] if quiet else [])]], check)
    assert failed, f"no memory limit in {LIMITS_MB} MB made eval fail inside Python ({aborted} aborted)"


def test_out_of_memory_in_ingest_is_one_message(tmp_path):
    c = tmp_path / "c"
    assert cli("init", c).rc == 0
    _big_run(c / "runs" / "big.txt")
    _qrels(c / "judgments" / "q.qrels")
    failed, aborted = _scan([["ingest", c], ["eval", "--campaign", c, "-m", "map"]],
                            lambda r: assert_clean_refusal(r, "out of memory"))
    assert failed, f"no memory limit in {LIMITS_MB} MB made ingest fail inside Python ({aborted} aborted)"


@pytest.mark.parametrize("args", [["report", "{c}", "--out", "{o}/rep"],
                                  ["pool", "{c}", "--strategy", "depth", "--depth", "50", "--name", "zz"],
                                  ["submit", "{c}", "{o}/sub.txt"]])
def test_a_file_size_limit_names_the_file_being_written(tmp_path, args):
    c = demo_copy(tmp_path / "c")
    o = tmp_path / "o"
    o.mkdir()
    (o / "sub.txt").write_text((c / "runs" / "asterA1.txt").read_text().replace("asterA1", "newrunx"))
    r = _limited([a.format(c=c, o=o) for a in args], 3000, resource.RLIMIT_FSIZE)
    assert_clean_refusal(r, "written")
    assert "cannot be read" not in r.text
    assert "size" in r.text or "full" in r.text


def test_docs_import_on_a_full_disk_is_one_message(tmp_path):
    c = demo_copy(tmp_path / "c")
    docs = tmp_path / "more.jsonl"
    docs.write_text("".join(json.dumps({"id": f"X{i}", "title": "t", "text": "word " * 200}) + "\n"
                            for i in range(2000)))
    r = _limited(["docs", "import", c, docs], 200_000, resource.RLIMIT_FSIZE)
    assert_clean_refusal(r)
    assert "ROLLBACK" not in r.text and "docs" in r.text


def test_an_ascii_terminal_shows_non_ascii_topic_ids_escaped(tmp_path):
    q = tmp_path / "q.qrels"
    q.write_text("é1 0 d1 1\n検2 0 d2 1\n")
    run = tmp_path / "r.txt"
    run.write_text("é1 Q0 d1 1 1.0 r\n検2 Q0 d2 1 1.0 r\n")
    r = cli("eval", q, run, "-m", "map", "-q", env={"PYTHONIOENCODING": "ascii"})
    assert r.rc == 0 and "Traceback" not in r.text, r.text
    assert "\\xe91" in r.out and "\\u691c2" in r.out


def test_lone_surrogates_in_answers_are_refused_by_check_and_submit(tmp_path):
    d = tmp_path / "rag"
    assert cli("simulate", "--rag", "--out", d, "--runs", "2", "--topics", "2", "--no-nuggets",
               "--seed", "5").rc == 0
    src = sorted((d / "answers").glob("*.jsonl"))[0].read_text().splitlines()
    first = json.loads(src[0])
    rid = "new01"
    text = json.dumps(first).replace(json.dumps(first.get("run_id", first.get("metadata", {}).get("run_id"))),
                                     json.dumps(rid), 1)
    obj = json.loads(text)
    obj["answer"][0]["text"] = "fine \ud800 text"
    f = tmp_path / "s.jsonl"
    f.write_text(json.dumps(obj) + "\n")        # ensure_ascii: the lone surrogate is the escape \ud800
    assert "\\ud800" in f.read_text()
    for args in (["nuggets", "check", f], ["submit", d, f]):
        r = cli(*args)
        assert_clean_refusal(r, "surrogate")
    assert not (d / "answers" / f"{rid}.jsonl").exists()
