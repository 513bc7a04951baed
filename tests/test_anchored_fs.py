"""Issue 34, item 1: engine.util.fs, the one anchored open. A campaign folder or file swapped to a
symbolic link (before or during a use) is refused, never followed, for every kind of access: read,
append, atomic write, lock, mkdir, SQLite and Parquet. Temporary names are unpredictable and created
O_EXCL; an append re-checks, under its lock, that the name still holds the file it locked."""
from __future__ import annotations

import errno
import hashlib
import os
import threading
import time
from pathlib import Path

import pytest

from engine.errors import FormatError
from engine.util import fs

CANARY = "CANARY-outside-text-7f3a\n"


def _tree(p: Path) -> dict[str, str]:
    return {str(q.relative_to(p)): (hashlib.sha256(q.read_bytes()).hexdigest() if q.is_file() and not q.is_symlink()
                                    else "link" if q.is_symlink() else "dir")
            for q in sorted(p.rglob("*"))}


@pytest.fixture
def camp(tmp_path: Path):
    """A registered campaign c (judgments/log.jsonl, docs/, runs/) and an outside folder o with a canary."""
    c = tmp_path / "c"
    o = tmp_path / "o"
    for d in ("judgments", "docs", "runs", "store"):
        (c / d).mkdir(parents=True)
    (c / "judgments" / "log.jsonl").write_text('{"a": 1}\n')
    o.mkdir()
    for name in ("log.jsonl", "secret.txt", "docs.sqlite", "part.parquet", ".lock", "x.lock"):
        (o / name).write_text(CANARY)
    fs.register(c)
    return c, o


def _swap_to_link(p: Path, target: Path) -> None:
    """Replace the file or folder p by a symbolic link to target (the original kept beside it)."""
    p.rename(p.with_name(p.name + ".orig"))
    p.symlink_to(target)


def test_campaign_roots_register_the_campaign(tmp_path):
    from engine.util.confine import campaign_path
    c = tmp_path / "fresh"
    (c / "runs").mkdir(parents=True)
    assert fs.anchor_of(c / "runs" / "a.txt") is None
    campaign_path(c, "runs")
    assert fs.anchor_of(c / "runs" / "a.txt") == str(c)
    assert fs.anchor_of(tmp_path / "elsewhere.txt") is None


@pytest.mark.parametrize("what", ["read", "append", "atomic", "lock", "mkdir", "sqlite", "parquet", "list",
                                  "unlink", "open-w"])
def test_folder_swapped_to_link_is_refused(camp, what):
    c, o = camp
    before = _tree(o)
    _swap_to_link(c / "judgments", o)
    target = c / "judgments" / {"sqlite": "docs.sqlite", "parquet": "part.parquet", "lock": ".lock"}.get(
        what, "log.jsonl")
    ops = {
        "read": lambda: fs.read_text(target),
        "append": lambda: fs.append(target, b"appended\n"),
        "atomic": lambda: fs.atomic_write(target, b"replaced\n"),
        "lock": lambda: fs.lock(target).__enter__(),
        "mkdir": lambda: fs.makedirs(c / "judgments" / "sub" / "deeper"),
        "sqlite": lambda: fs.sqlite_connect(target, create=True).execute("create table t(a)"),
        "parquet": lambda: fs.proc_path(target).__enter__(),
        "list": lambda: fs.listdir(c / "judgments"),
        "unlink": lambda: fs.unlink(target),
        "open-w": lambda: fs.open(target, "a").write("x"),
    }
    with pytest.raises(FormatError) as err:
        ops[what]()
    msg = str(err.value)
    assert "judgments" in msg and "symbolic link" in msg and "refused, nothing read or written" in msg
    assert CANARY.strip() not in msg
    assert _tree(o) == before


@pytest.mark.parametrize("what", ["read", "append", "lock", "sqlite", "parquet"])
def test_final_file_swapped_to_link_is_refused(camp, what):
    c, o = camp
    before = _tree(o)
    name = {"sqlite": "docs.sqlite", "parquet": "part.parquet", "lock": "x.lock"}.get(what, "log.jsonl")
    p = c / "judgments" / name
    if p.exists():
        p.unlink()
    p.symlink_to(o / name)
    ops = {
        "read": lambda: fs.read_bytes(p),
        "append": lambda: fs.append(p, b"appended\n"),
        "lock": lambda: fs.lock(p).__enter__(),
        "sqlite": lambda: fs.sqlite_connect(p),
        "parquet": lambda: fs.proc_path(p).__enter__(),
    }
    with pytest.raises(FormatError):
        ops[what]()
    assert _tree(o) == before


def test_atomic_write_replaces_a_link_never_its_target(camp):
    c, o = camp
    before = _tree(o)
    p = c / "judgments" / "log.jsonl"
    p.unlink()
    p.symlink_to(o / "log.jsonl")
    fs.atomic_write(p, b"new\n")
    assert not p.is_symlink() and p.read_bytes() == b"new\n"
    assert _tree(o) == before


def test_links_inside_the_campaign_and_into_a_granted_root_are_followed(camp, tmp_path, monkeypatch):
    c, o = camp
    (c / "data").mkdir()
    (c / "data" / "r.txt").write_text("inside\n")
    (c / "runs" / "r.txt").symlink_to(Path("..") / "data" / "r.txt")
    (c / "linked").symlink_to(c / "data")
    assert fs.read_text(c / "runs" / "r.txt") == "inside\n"
    assert fs.read_text(c / "linked" / "r.txt") == "inside\n"
    fs.append(c / "linked" / "r.txt", b"more\n")
    assert (c / "data" / "r.txt").read_text() == "inside\nmore\n"
    (c / "runs" / "s.txt").symlink_to(o / "secret.txt")
    with pytest.raises(FormatError):
        fs.read_text(c / "runs" / "s.txt")
    monkeypatch.setenv("CRANFIELD_ALLOW_OUTSIDE", str(o))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "noconfig"))
    assert fs.read_text(c / "runs" / "s.txt") == CANARY
    from engine.errors import OUTSIDE_FILES
    assert str(c / "runs" / "s.txt") in OUTSIDE_FILES


def test_a_link_loop_is_refused(camp):
    c, _ = camp
    (c / "runs" / "a").symlink_to("b")
    (c / "runs" / "b").symlink_to("a")
    with pytest.raises(FormatError, match="too many symbolic links"):
        fs.read_text(c / "runs" / "a")


def test_a_path_outside_every_root_is_the_persons_own(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "real.txt").write_text("x\n")
    (mine / "link.txt").symlink_to(mine / "real.txt")
    assert fs.anchor_of(mine / "link.txt") is None
    assert fs.read_text(mine / "link.txt") == "x\n"        # the person's own link: followed as named
    fs.atomic_write(mine / "out" / "o.txt", "written\n")
    assert (mine / "out" / "o.txt").read_text() == "written\n"


def test_temp_names_are_unpredictable_and_exclusive(camp, monkeypatch):
    c, o = camp
    before = _tree(o)
    cfg = c / "campaign.yaml"
    cfg.write_text("name: c\n")
    for i in range(1000):              # every name the old scheme would use next, and a few near it
        (c / f".campaign.yaml.tmp{os.getpid() + i}").symlink_to(o / "secret.txt")
        (c / f".campaign.yaml.{i:024x}.tmp").symlink_to(o / "secret.txt")
    names = {fs.temp_name("campaign.yaml") for _ in range(200)}
    assert len(names) == 200
    for _ in range(20):
        fs.atomic_write(cfg, b"name: c2\n")
    assert cfg.read_bytes() == b"name: c2\n" and not cfg.is_symlink()
    assert _tree(o) == before
    # a planted link at the very name drawn: O_EXCL refuses it, a new name is drawn, nothing followed
    drawn = iter(["planted"] * 3 + ["fresh"])
    monkeypatch.setattr("engine.util.fs.write._token", lambda: next(drawn))
    (c / ".campaign.yaml.planted.tmp").symlink_to(o / "secret.txt")
    fs.atomic_write(cfg, b"name: c3\n")
    assert cfg.read_bytes() == b"name: c3\n"
    assert (c / ".campaign.yaml.planted.tmp").is_symlink()
    assert _tree(o) == before
    monkeypatch.setattr("engine.util.fs.write._token", lambda: "planted")
    with pytest.raises(OSError) as err:
        fs.atomic_write(cfg, b"name: c4\n")
    assert err.value.errno == errno.EEXIST and err.value.filename == str(cfg)
    assert cfg.read_bytes() == b"name: c3\n" and _tree(o) == before


def test_a_long_name_gets_a_short_temp_name(camp):
    c, _ = camp
    long = c / "runs" / ("r" * 250 + ".txt")
    fs.atomic_write(long, b"x\n")
    assert long.read_bytes() == b"x\n"
    assert sorted(p.name for p in (c / "runs").iterdir()) == [long.name]


def test_append_rechecks_the_name_after_locking(camp):
    """A log renamed away (and a new one put in its place) after the writer opened it but before it
    wrote: the writer, once it holds the lock, finds the name holds another file and writes there."""
    import fcntl
    c, _ = camp
    log = c / "judgments" / "log.jsonl"
    fd = os.open(log, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)          # the writer below opens the log, then waits for this lock
    t = threading.Thread(target=fs.append, args=(log, b'{"b": 2}\n'))
    t.start()
    time.sleep(0.3)
    os.rename(log, log.with_name("log.old"))
    log.write_text('{"new": 1}\n')
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    t.join(10)
    assert log.read_text() == '{"new": 1}\n{"b": 2}\n'
    assert log.with_name("log.old").read_text() == '{"a": 1}\n'


def test_sqlite_and_parquet_through_the_anchor(camp):
    import pyarrow as pa
    import pyarrow.parquet as pq
    c, _ = camp
    db = c / "docs" / "docs.sqlite"
    conn = fs.sqlite_connect(db, create=True, isolation_level=None)
    conn.execute("create table t(a)")
    conn.execute("insert into t values (42)")
    conn.close()
    conn = fs.sqlite_connect(db)
    assert conn.execute("select a from t").fetchall() == [(42,)]
    conn.close()
    part = c / "store" / "p.parquet"
    with fs.atomic_file(part) as fh:
        pq.write_table(pa.table({"x": [1, 2, 3]}), fh)
    with fs.proc_path(part) as name:
        assert pq.read_table(name).column("x").to_pylist() == [1, 2, 3]
    with fs.open(part, "rb") as fh:
        assert pq.read_table(fh).column("x").to_pylist() == [1, 2, 3]


def test_a_swap_loop_never_reaches_outside(camp):
    """A thread swaps judgments/ between the folder and a link to the outside folder while appends,
    reads and atomic writes run: nothing outside changes, no outside text is read, every acknowledged
    append is in the campaign."""
    c, o = camp
    before = _tree(o)
    j = c / "judgments"
    real = c / "judgments.real"
    stop = threading.Event()

    def swapper():
        while not stop.is_set():
            try:
                j.rename(real)
                j.symlink_to(o)
                time.sleep(0.0005)
                j.unlink()
                real.rename(j)
            except OSError:
                pass

    t = threading.Thread(target=swapper)
    t.start()
    acked = []
    try:
        for i in range(300):
            line = f'{{"n": {i}}}\n'.encode()
            try:
                fs.append(j / "log.jsonl", line)
                acked.append(line)
            except (FormatError, OSError):
                pass
            try:
                assert CANARY not in fs.read_text(j / "log.jsonl")
            except (FormatError, OSError):
                pass
            try:
                fs.atomic_write(j / "secret.txt", b"mine\n")
            except (FormatError, OSError):
                pass
    finally:
        stop.set()
        t.join()
    assert _tree(o) == before
    # an append that met the folder renamed away made a new judgments/: still in the campaign
    data = b"".join(q.read_bytes() for q in c.rglob("log.jsonl") if q.is_file() and not q.is_symlink()
                    and q.resolve().is_relative_to(c.resolve()))
    assert acked and all(line in data for line in acked)


def test_rmtree_rglob_and_rename_never_follow_a_link_out(camp):
    c, o = camp
    before = _tree(o)
    (c / "store" / "runs" / "a").mkdir(parents=True)
    (c / "store" / "runs" / "a" / "p.parquet").write_bytes(b"x")
    (c / "store" / "runs" / "out").symlink_to(o)
    assert [p.name for p in fs.rglob(c / "store", "*.parquet")] == ["p.parquet"]   # o's files are not listed
    fs.rmtree(c / "store")
    assert not (c / "store").exists() and _tree(o) == before
    (c / "runs" / "via").symlink_to(o)
    with pytest.raises(FormatError):
        fs.rename(c / "judgments" / "log.jsonl", c / "runs" / "via" / "log.jsonl")
    assert _tree(o) == before and (c / "judgments" / "log.jsonl").is_file()


def test_a_fifo_swapped_in_is_refused_without_blocking(camp):
    c, _ = camp
    p = c / "runs" / "r.txt"
    os.mkfifo(p)
    t0 = time.monotonic()
    with pytest.raises(FormatError, match="not a regular file"):
        fs.read_bytes(p)
    assert time.monotonic() - t0 < 5


def test_planted_temp_names_change_nothing_outside_for_submit_and_pool(tmp_path):
    """Issue 34: links planted at the next thousand temporary names (the old `.NAME.tmp<PID>` scheme,
    and names of the new form) while `submit` rewrites campaign.yaml and `pool` writes a pool table:
    nothing outside changes and neither file becomes a link."""
    import sys
    sys.path.insert(0, str(Path(__file__).parent))
    from _cli import cli, demo_copy
    c = demo_copy(tmp_path / "c")
    o = tmp_path / "o"
    o.mkdir()
    (o / "secret.txt").write_text(CANARY)
    run = (c / "runs" / "asterA1.txt").read_text().replace("asterA1", "newrun")
    (tmp_path / "newrun.txt").write_text(run)
    before = _tree(o)
    names = ["campaign.yaml", "newrun.txt", "pool-p.tsv.pending", "pool-p.tsv"]
    for folder in (c, c / "runs", c / "pools"):
        folder.mkdir(exist_ok=True)
        for name in names:
            for i in range(250):
                (folder / f".{name}.tmp{os.getpid() + i}").symlink_to(o / "secret.txt")
                (folder / f".{name}.{i:024x}.tmp").symlink_to(o / "secret.txt")
    r = cli("submit", c, tmp_path / "newrun.txt")
    assert r.rc == 0, r.text
    r = cli("pool", c, "--strategy", "depth", "--depth", "3", "--name", "p")
    assert r.rc == 0, r.text
    assert _tree(o) == before
    for p in (c / "campaign.yaml", c / "runs" / "newrun.txt", c / "pools" / "pool-p.tsv"):
        assert p.is_file() and not p.is_symlink()
    assert "newrun" in (c / "campaign.yaml").read_text()
    assert CANARY.strip() not in (c / "campaign.yaml").read_text() + r.text


def test_a_root_named_through_a_link_is_the_persons_choice(tmp_path):
    real = tmp_path / "real-campaign"
    (real / "runs").mkdir(parents=True)
    (real / "runs" / "a.txt").write_text("a\n")
    named = tmp_path / "named"
    named.symlink_to(real)
    fs.register(named)
    assert fs.is_dir(named) and fs.is_dir(named / "runs")
    assert fs.read_text(named / "runs" / "a.txt") == "a\n"
    assert fs.listdir(named) == ["runs"]
