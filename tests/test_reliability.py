"""Issue 14: strict input, limits, confinement, clean OS errors, checked judgments, a self-checking store."""
from __future__ import annotations

import errno
import gzip
import os
import random
import time

import pytest

from engine.evaluation.store import layout as store_mod
from cranfield.cli import main
from engine.errors import CranfieldError, FormatError, Warnings
from engine.formats.qrels import read_qrels
from engine.formats.runs import read_run
from engine.evaluation.store import RunStore, store_dir


def put(path, text, mode="w"):
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    return path


RUN = "".join(f"{t} Q0 d{t}-{i} {i + 1} {10 - i}.5 r\n" for t in (1, 2) for i in range(5))


# ----------------------------------------------------------------------------- grammar

@pytest.mark.parametrize("line,where", [
    ("1 0 d1 1e2\n", "grade"), ("1 0 d1 1_0\n", "grade"), ("1 0 d1 \u0661\n", "grade"),
    ("1 0 d1 2147483648\n", "outside"), ("1 0 d1 -2147483649\n", "outside"), ("1 0 d1 01e5\n", "grade"),
    ("0 1 0 d1 1\n", "expected 4 fields")])
def test_qrels_grammar_refusals_name_the_line(tmp_path, line, where):
    f = put(tmp_path / "q.qrels", "1 0 d0 1\n" + line)
    with pytest.raises(FormatError) as e:
        read_qrels(f)
    assert f"{f}:2" in str(e.value) and where in str(e.value)


@pytest.mark.parametrize("score", ["inf", "1e400", "nan", "Infinity", "0x10"])
def test_run_scores_must_be_finite_decimals(tmp_path, score):
    f = put(tmp_path / "r.txt", RUN + f"3 Q0 x 1 {score} r\n")
    with pytest.raises(FormatError) as e:
        read_run(f)
    assert f"{f}:11" in str(e.value)


def test_nul_after_first_8k_is_refused(tmp_path):
    body = RUN * 200
    f = put(tmp_path / "r.txt", body.encode() + b"3 Q0 x\x00 1 1.0 r\n")
    with pytest.raises(FormatError, match=r":2001: binary data"):
        read_run(f)


def test_corrupt_gzip_member_is_a_format_error(tmp_path):
    data = bytearray(gzip.compress(RUN.encode() * 50))
    data[30:40] = b"\xff" * 10
    f = put(tmp_path / "r.txt.gz", bytes(data))
    with pytest.raises(FormatError, match="corrupt gzip"):
        read_run(f)


def test_run_extra_fields_ignored_with_one_warning_same_numbers(tmp_path):
    import pytrec_eval
    plain = put(tmp_path / "a.txt", RUN)
    extra = put(tmp_path / "b.txt", "".join(ln + " extra more\n" if i % 2 else ln + "\n"
                                           for i, ln in enumerate(RUN.splitlines())))
    w = Warnings()
    a, b = read_run(plain), read_run(extra, w)
    assert len(w) == 1 and f"{extra}:2" in str(w.items[0]) and "5 line(s)" in str(w.items[0])
    assert a[["topic", "doc", "score"]].equals(b[["topic", "doc", "score"]])
    qrels = {"1": {"d1-0": 1, "d1-3": 2}, "2": {"d2-4": 1}}
    run = {t: {d: float(s) for d, s in zip(g["doc"], g["score"])} for t, g in b.groupby("topic")}
    ref = {t: {d: float(s) for d, s in zip(g["doc"], g["score"])} for t, g in a.groupby("topic")}
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg"})
    assert ev.evaluate(run) == ev.evaluate(ref)


# ----------------------------------------------------------------------------- limits and confinement

def _campaign(tmp_path, extra=""):
    root = tmp_path / "c"
    assert main(["init", str(root)]) == 0
    put(root / "runs" / "r.txt", RUN)
    put(root / "judgments" / "q.qrels", "1 0 d1-0 1\n2 0 d2-1 2\n")
    if extra:
        with open(root / "campaign.yaml", "a") as fh:
            fh.write(extra)
    return root


def test_yaml_alias_bomb_and_depth_refused_fast(tmp_path, capsys):
    root = _campaign(tmp_path)
    lines = ["name: bomb", 'a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    put(root / "campaign.yaml", "\n".join(lines) + "\n")
    t0 = time.perf_counter()
    assert main(["check", str(root)]) == 3
    assert time.perf_counter() - t0 < 5 and "expands to more than" in capsys.readouterr().err
    put(root / "campaign.yaml", "name: x\nk: " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["check", str(root)]) == 3 and "nesting deeper" in capsys.readouterr().err


def test_yaml_depth_limit_is_cranfields_own_and_skips_quotes_and_comments(tmp_path):
    """The limit is checked on the text before the parser (whose own limit and wording vary by version)."""
    from engine.formats.safeload import MAX_DEPTH, safe_yaml
    deep = "k: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n"
    with pytest.raises(FormatError, match=r"c.yaml:2: nesting deeper than 64 levels"):
        safe_yaml("name: x\n" + deep, "c.yaml")
    ok = "k: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"   # with the top mapping: 64
    assert safe_yaml(ok, "c.yaml")["k"] is not None
    quoted = "a: '" + "[" * 200 + "'\nb: \"" + "{" * 200 + "\"\n# " + "[" * 200 + "\nc: 1\n"
    assert safe_yaml(quoted, "c.yaml") == {"a": "[" * 200, "b": "{" * 200, "c": 1}


def test_deep_json_log_line_is_an_error_with_its_line(tmp_path):
    from engine.judgments.log import read_judgment_log
    f = put(tmp_path / "log.jsonl", '{"topic": "1", "doc": "a", "grade": 1}\n' + "[" * 100000 + "]" * 100000 + "\n")
    with pytest.raises(FormatError, match=r"log.jsonl:2: is not valid JSON \(nested deeper"):
        read_judgment_log(f)


def test_outside_paths_refused_without_printing_content(tmp_path, capsys, monkeypatch):
    secret = put(tmp_path / "secret" / "passwd", "root:x:0:0:SECRET-CONTENT\n")
    rel = os.path.relpath(secret, tmp_path / "c")
    root = _campaign(tmp_path, f"runs:\n  evil:\n    file: {rel}\n")
    import re
    text = re.sub(r"(?m)^runs: \{\}.*\n", "", (root / "campaign.yaml").read_text())
    put(root / "campaign.yaml", text)
    assert main(["eval", "--campaign", str(root)]) == 3
    err = capsys.readouterr().err
    assert "outside the campaign directory" in err and "SECRET" not in err
    put(root / "campaign.yaml", text.split("runs:\n  evil")[0])
    os.symlink(secret, root / "runs" / "link.txt")
    assert main(["eval", "--campaign", str(root)]) == 3
    err = capsys.readouterr().err
    assert "symbolic link" in err and "SECRET" not in err
    # campaign.yaml alone cannot allow an outside root; the person running the command can
    with open(root / "campaign.yaml", "a") as fh:
        fh.write(f"allow_outside: [{secret.parent}]\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "noconfig"))
    monkeypatch.delenv("CRANFIELD_ALLOW_OUTSIDE", raising=False)
    assert main(["check", str(root)]) == 3 and "symbolic link" in capsys.readouterr().err
    monkeypatch.setenv("CRANFIELD_ALLOW_OUTSIDE", str(secret.parent))
    assert main(["check", str(root)]) == 3
    err = capsys.readouterr().err
    assert "link.txt:1: not valid here (content not shown" in err and "SECRET" not in err


# ----------------------------------------------------------------------------- OS errors

def test_disk_full_during_add_is_one_message(tmp_path, capsys, monkeypatch):
    root = _campaign(tmp_path)
    from engine.judgments import log as judgment_log

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device", str(root / "judgments" / "log.jsonl"))
    monkeypatch.setattr(judgment_log, "_write_all", full)
    assert main(["judgments", "add", str(root), "1", "d1-1", "1", "--assessor", "ann"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "log.jsonl" in err and "disk is full" in err and "Traceback" not in err


def test_atomic_write_leaves_nothing_behind(tmp_path):
    from engine.util.atomic import atomic_path
    target = put(tmp_path / "f.txt", "old")
    with pytest.raises(OSError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


# ----------------------------------------------------------------------------- judgments

def test_judgments_checked_before_written(tmp_path, capsys):
    root = _campaign(tmp_path)
    log = root / "judgments" / "log.jsonl"
    base = ["judgments", "add", str(root)]
    for args, msg in ((["1", "d", "7"], "not on the campaign's scale"), (["99", "d", "1"], "--new-topic"),
                      (["1", "d", "1", "--seconds", "-1"], "finite"), (["1", "d", "1", "--seconds", "nan"], "finite"),
                      (["1", "d", "1e2"], "must be an integer")):
        assert main(base + args + ["--assessor", "ann"]) == 3, args
        assert msg in capsys.readouterr().err
    assert main(base + ["1", "d", "1", "--assessor", ""]) == 3
    assert not log.exists()
    assert main(base + ["99", "d", "1", "--assessor", "ann", "--new-topic"]) == 0
    # a complete last line without its newline is kept (the newline is added)
    with open(log, "a") as fh:
        fh.write('{"topic": "1", "doc": "e", "grade": 2, "assessor": "bob", "op": "judge"}')
    assert main(base + ["1", "f", "1", "--assessor", "ann"]) == 0
    docs = [ln for ln in log.read_text().splitlines()]
    assert len(docs) == 3 and '"doc": "e"' in docs[1] and not (root / "judgments" / "log.jsonl.torn").exists()


def test_check_reports_and_repair_fixes_a_damaged_log(tmp_path, capsys):
    root = _campaign(tmp_path)
    log = put(root / "judgments" / "log.jsonl",
              '{"topic": "1", "doc": "a", "grade": 1, "assessor": "x"}\n'
              '{"topic": "1", "doc": "b", "grade": 1, "seconds": -1}\n'
              '{"topic": "2", "doc": "c", "grade": 2, "assessor": "x"}\n{"topic": "2", "do')
    assert main(["check", str(root)]) == 3 and "log.jsonl:2" in capsys.readouterr().err
    before = log.read_bytes()
    assert main(["judgments", "repair", str(root)]) == 1
    out = capsys.readouterr().out
    assert "log.jsonl:2" in out and "log.jsonl:4" in out and log.read_bytes() == before   # shown, not done
    assert main(["judgments", "repair", str(root), "--apply"]) == 0
    assert main(["check", str(root)]) == 0
    kept = log.read_text().splitlines()
    rejected = (root / "judgments" / "log.jsonl.rejected").read_text().splitlines()
    assert len(kept) == 2 and len(rejected) == 2          # nothing lost: 4 lines in, 4 lines out


# ----------------------------------------------------------------------------- the store

def _runs(tmp_path):
    a = put(tmp_path / "runs" / "a.txt", "".join(f"1 Q0 d{i} {i + 1} {9 - i} a\n" for i in range(5)))
    b = put(tmp_path / "runs" / "b.txt", "".join(f"1 Q0 e{i} {i + 1} {5 - i} b\n" for i in range(3)))
    return [a, b]


def _docs(st):
    t = st.read()
    return sorted(zip(t.column("run").to_pylist(), t.column("doc").to_pylist(), t.column("score").to_pylist()))


def _truth(files):
    out = []
    for f in files:
        df = read_run(f)
        out += list(zip(df["run"], df["doc"], df["score"]))
    return sorted(out)


def test_store_swapped_parts_truncation_same_size_edit(tmp_path):
    files = _runs(tmp_path)
    RunStore(tmp_path).sync(files)
    st = RunStore(tmp_path)
    pa_, pb = st.part("a"), st.part("b")
    da, db = pa_.read_bytes(), pb.read_bytes()
    pa_.write_bytes(db)
    pb.write_bytes(da)
    w = Warnings()
    st = RunStore(tmp_path, warnings=w)
    assert _docs(st) == _truth(files) and any("re-ingested" in str(x) for x in w)
    # truncated part and index
    p = RunStore(tmp_path).part("a")
    p.write_bytes(p.read_bytes()[:50])
    (store_dir(tmp_path) / "index.parquet").write_bytes(b"PAR1")
    st = RunStore(tmp_path)
    assert _docs(st) == _truth(files) and len(st.index) == 2
    # same size, same mtime, new content
    stt = files[0].stat()
    files[0].write_text(files[0].read_text().replace(" 9 a", " 7 a"))
    os.utime(files[0], ns=(stt.st_atime_ns, stt.st_mtime_ns))
    assert files[0].stat().st_size == stt.st_size
    st = RunStore(tmp_path)
    st.sync(files)
    assert _docs(st) == _truth(files)


def test_store_damaged_part_without_source_is_refused(tmp_path):
    files = _runs(tmp_path)
    RunStore(tmp_path).sync(files)
    p = RunStore(tmp_path).part("b")
    p.write_bytes(p.read_bytes()[:60])
    files[1].write_text("1 Q0 z 1 1 b\n")
    with pytest.raises(CranfieldError, match=r"part.*--rebuild"):
        RunStore(tmp_path).read()


class Kill(BaseException):
    pass


def _sync_killed_at(root, files, k, monkeypatch):
    n = {"i": 0}

    def step(label):
        n["i"] += 1
        if n["i"] == k:
            raise Kill(label)
    monkeypatch.setattr(store_mod, "_step", step)
    try:
        RunStore(root).sync(files)
        done = True
    except Kill:
        done = False
    monkeypatch.setattr(store_mod, "_step", lambda label: None)
    return done


def test_store_kill_between_any_two_writes_and_100_random_kills(tmp_path, monkeypatch):
    files = _runs(tmp_path)
    c = put(tmp_path / "runs" / "c.txt", "2 Q0 f1 1 1.5 c\n")
    rng = random.Random(14)
    kills = 0
    for trial in range(100):
        # a random change, then a sync killed after a random write (1..6), then a normal sync
        f = rng.choice(files + [c])
        tag = {files[0]: "a", files[1]: "b", c: "c"}[f]
        put(f, "".join(f"{rng.randint(1, 3)} Q0 x{trial}-{i} {i + 1} {rng.random():.4f} {tag}\n" for i in range(4)))
        listed = files + ([c] if rng.random() < 0.7 else [])
        if not _sync_killed_at(tmp_path, listed, rng.randint(1, 6), monkeypatch):
            kills += 1
        st = RunStore(tmp_path)
        st.sync(listed)
        assert _docs(RunStore(tmp_path)) == _truth(listed), trial
    assert kills >= 40
    leftovers = [p for p in store_dir(tmp_path).rglob("*") if p.is_file() and ".pending" in str(p)]
    assert not leftovers
