"""The campaign's columnar run store: run files ingested once into Parquet, read by run or by topic.

Layout, under `<campaign>/.cranfield-store/` (Hive partitioning, readable by pyarrow.dataset, Dask,
DuckDB or Spark as it is):

    runs/run=<tag>/part-<key>.parquet   one file per run: topic, doc, score, rank, pos
    index.parquet                       run, topic, rows, row_group (one line per run and topic)
    manifest.json                       per source file: size, mtime_ns, tag, part, rows, warnings

Rows of a part are in trec_eval order: topic ascending (byte order), score descending, ties by
document id descending; `pos` is the 1-based position in that order (what measures use), `rank`
the file's own rank column. A row group holds whole topics (`ROW_GROUP_ROWS` rows or so), so one topic
or a block of topics is read without touching the rest. A source file is ingested again only when its
size or modification time changed; problems are reported as the text readers report them
(file:line: what is wrong) and nothing is recorded for a file with problems.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
import urllib.parse
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .errors import CranfieldError, FormatError, Problem, Warnings

STORE_DIR = ".cranfield-store"
FORMAT = 1
ROW_GROUP_ROWS = 32_768       # rows per Parquet row group (whole topics); topic blocks: blocks.BLOCK_ROWS
COMPRESSION = "zstd"
SCHEMA = pa.schema([("topic", pa.string()), ("doc", pa.string()), ("score", pa.float64()),
                    ("rank", pa.int64()), ("pos", pa.int32())])


def store_dir(root: os.PathLike | str) -> Path:
    return Path(root) / STORE_DIR


# --------------------------------------------------------------------------- ingest one file

def _order(tab: pa.Table) -> np.ndarray | None:
    """Row order topic asc, score desc, doc desc (byte order); None when the rows already are."""
    n = len(tab)
    if n < 2:
        return None
    t, s, d = tab.column("topic"), tab.column("score"), tab.column("doc")
    a = lambda c: c.slice(0, n - 1)      # noqa: E731
    b = lambda c: c.slice(1)             # noqa: E731
    if pc.all(pc.less_equal(a(t), b(t))).as_py():
        same_t = pc.equal(a(t), b(t))
        if pc.all(pc.or_(pc.invert(same_t), pc.greater_equal(a(s), b(s)))).as_py():
            tie = pc.and_(same_t, pc.equal(a(s), b(s)))
            if not pc.any(tie).as_py() or pc.all(pc.or_(pc.invert(tie), pc.greater(a(d), b(d)))).as_py():
                return None
    idx = pc.sort_indices(tab, sort_keys=[("topic", "ascending"), ("score", "descending"),
                                          ("doc", "descending")])
    return idx.to_numpy()


def _positions(topic: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(pos, starts): 1-based position within each run of equal topics, and the runs' first rows."""
    n = len(topic)
    if n == 0:
        return np.zeros(0, np.int32), np.zeros(0, np.int64)
    change = np.ones(n, bool)
    if n > 1:
        change[1:] = pc.not_equal(topic.slice(1), topic.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(change)
    lens = np.diff(np.append(starts, n))
    pos = (np.arange(n) - np.repeat(starts, lens) + 1).astype(np.int32)
    return pos, starts


def _parse(path: str, w: Warnings) -> tuple[str, pa.Table] | None:
    """(tag, table of topic, doc, score, rank, line) in file order, duplicates dropped and reported."""
    from .formats import arrow_run, read_run_arrays, read_bytes

    data = read_bytes(path)
    fast = arrow_run(path, data)
    if fast is None:
        a = read_run_arrays(path, w, data=data)           # the validating reader: raises FormatError
        if a is None:
            return None
        tab = pa.table({"topic": pa.array(a["topic"], pa.string()), "doc": pa.array(a["doc"], pa.string()),
                        "score": pa.array(a["score"], pa.float64()), "rank": pa.array(a["rank"], pa.int64()),
                        "line": pa.array(a["line"], pa.int64())})
        return str(a["run"]), tab
    tag, t = fast
    del data
    tab = pa.table({"topic": t.column("topic"), "doc": t.column("doc"), "score": t.column("score"),
                    "rank": t.column("rank"), "line": pa.array(np.arange(1, len(t) + 1, dtype=np.int64))})
    dup = _duplicates(tab)
    if dup is not None:
        from .formats import warn_repeated_docs
        idx = np.flatnonzero(dup)
        first = _first_lines(tab, idx[:50])
        lines, docs, topics = tab.column("line").to_numpy(), tab.column("doc"), tab.column("topic")
        shown = []
        for i in idx[:50]:
            t, d = topics[int(i)].as_py(), docs[int(i)].as_py()
            shown.append((path, int(lines[i]), d, t, first.get((t, d), "?")))
        warn_repeated_docs(w, shown, len(idx) - len(shown), path)
        tab = tab.filter(pa.array(~dup))
    return tag, tab


def _duplicates(tab: pa.Table) -> np.ndarray | None:
    """Rows whose (topic, doc) occurred on an earlier line, or None when there are none: a stable
    sort by (topic, doc) puts repeats right after their first occurrence."""
    n = len(tab)
    if n < 2:
        return None
    tcode = pc.dictionary_encode(tab.column("topic")).combine_chunks().indices
    doc = tab.column("doc")
    idx = pc.sort_indices(pa.table({"t": tcode, "d": doc}), sort_keys=[("t", "ascending"), ("d", "ascending")])
    ts, ds = tcode.take(idx), doc.take(idx)
    same = pc.and_(pc.equal(ts.slice(1), ts.slice(0, n - 1)), pc.equal(ds.slice(1), ds.slice(0, n - 1)))
    if not pc.any(same).as_py():
        return None
    dup = np.zeros(n, bool)
    dup[idx.to_numpy()[1:][same.to_numpy(zero_copy_only=False)]] = True
    return dup


def _first_lines(tab: pa.Table, idx: np.ndarray) -> dict:
    """(topic, doc) -> line of its first occurrence, for the repeated rows `idx`."""
    want = {(tab.column("topic")[int(i)].as_py(), tab.column("doc")[int(i)].as_py()) for i in idx}
    docs = pa.array(sorted({d for _, d in want}), pa.string())
    m = pc.is_in(tab.column("doc"), value_set=docs).to_numpy(zero_copy_only=False)
    out: dict = {}
    sub = tab.filter(pa.array(m))
    for t, d, ln in zip(sub.column("topic").to_pylist(), sub.column("doc").to_pylist(),
                        sub.column("line").to_pylist()):
        if (t, d) in want and (t, d) not in out:
            out[(t, d)] = ln
    return out


def ingest_file(path: str, part: str, group_rows: int = ROW_GROUP_ROWS) -> dict:
    """Parse one run file and write it as a Parquet part in trec_eval order. Returns its manifest entry
    (tag, rows, topics, warnings, seconds) or {"problems": [...], "hint": ...} when the file is bad."""
    t0 = time.perf_counter()
    w = Warnings()
    try:
        parsed = _parse(path, w)
    except FormatError as exc:
        return {"problems": [(p.path, p.line, p.message) for p in exc.problems], "hint": exc.hint}
    if parsed is None:
        return {"tag": None, "rows": 0, "warnings": [(p.path, p.line, p.message) for p in w]}
    tag, tab = parsed
    order = _order(tab)
    if order is not None:
        tab = tab.take(pa.array(order))
    pos, starts = _positions(tab.column("topic"))
    out = pa.table({"topic": tab.column("topic"), "doc": tab.column("doc"), "score": tab.column("score"),
                    "rank": tab.column("rank"), "pos": pa.array(pos)}, schema=SCHEMA)
    del tab
    n = len(out)
    bounds = [0]
    for s in starts:                                   # cut row groups at topic starts
        if s - bounds[-1] >= group_rows:
            bounds.append(int(s))
    bounds.append(n)
    Path(part).parent.mkdir(parents=True, exist_ok=True)
    tmp = f"{part}.tmp{os.getpid()}"
    meta = {b"cranfield.run": tag.encode("utf-8"), b"cranfield.source": str(path).encode("utf-8")}
    with pq.ParquetWriter(tmp, SCHEMA.with_metadata(meta), compression=COMPRESSION,
                          use_dictionary=["topic", "rank", "pos"], write_statistics=["topic"]) as wr:
        for a, b in zip(bounds[:-1], bounds[1:]):
            if b > a:
                wr.write_table(out.slice(a, b - a), row_group_size=b - a)
    os.replace(tmp, part)
    # per-topic rows and row group, for the index
    tstart = np.asarray(starts, np.int64)
    topics = out.column("topic").take(pa.array(tstart)).to_pylist() if n else []
    rows = np.diff(np.append(tstart, n)).tolist()
    rg = (np.searchsorted(np.asarray(bounds[1:]), tstart, side="right")).tolist()
    return {"tag": tag, "rows": int(n), "topics": topics, "topic_rows": rows, "topic_rg": rg,
            "warnings": [(p.path, p.line, p.message) for p in w], "seconds": round(time.perf_counter() - t0, 3)}


def _ingest_job(job: tuple[str, str]) -> dict:
    return ingest_file(*job)


# --------------------------------------------------------------------------- the store

@dataclass
class SyncReport:
    """What `sync` did: files ingested, reused and removed, with timings."""

    ingested: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    rows: int = 0


def _source_key(path: Path) -> str:
    return str(path.resolve())


def _part_name(root: Path, src: Path, tag: str) -> Path:
    h = hashlib.sha1(_source_key(src).encode("utf-8")).hexdigest()[:10]
    return store_dir(root) / "runs" / f"run={urllib.parse.quote(tag, safe='')}" / f"part-{h}.parquet"


class _Lock:
    """An exclusive lock on the store (fcntl), so two processes never ingest at the same time."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = None

    def __enter__(self):
        import fcntl
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        import fcntl
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


class RunStore:
    """The Parquet run store of one campaign directory (see the module docstring)."""

    def __init__(self, root: os.PathLike | str):
        self.root = Path(root)
        self.dir = store_dir(self.root)
        self._manifest: dict | None = None
        self._index: pd.DataFrame | None = None

    # ------------------------------------------------------------------ manifest
    @property
    def manifest(self) -> dict:
        if self._manifest is None:
            try:
                m = json.loads((self.dir / "manifest.json").read_text())
                self._manifest = m if m.get("format") == FORMAT else {"format": FORMAT, "files": {}}
            except (OSError, ValueError):
                self._manifest = {"format": FORMAT, "files": {}}
        return self._manifest

    def _write_manifest(self, m: dict) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        gi = self.dir / ".gitignore"
        if not gi.exists():
            gi.write_text("*\n")
        tmp = self.dir / f".manifest.json.tmp{os.getpid()}"
        tmp.write_text(json.dumps(m, indent=1))
        os.replace(tmp, self.dir / "manifest.json")
        self._manifest = m

    def stale(self, files: Iterable[os.PathLike | str]) -> list[Path]:
        """The files whose ingested copy is missing or out of date."""
        out = []
        have = self.manifest["files"]
        for f in files:
            p = Path(f)
            e = have.get(_source_key(p))
            try:
                st = p.stat()
            except OSError:
                out.append(p)
                continue
            if (e is None or e.get("size") != st.st_size or e.get("mtime_ns") != st.st_mtime_ns
                    or (e.get("part") and not (self.root / e["part"]).is_file())):
                out.append(p)
        return out

    def sync(self, files: list[os.PathLike | str], warnings: Warnings | None = None, workers: int | None = None,
             progress: Callable[[int, int], None] | None = None, executor: Executor | None = None
             ) -> SyncReport:
        """Bring the store up to date with `files` (the campaign's run files, in order): ingest new or
        changed files (one process per core), drop files no longer listed, rewrite the index.
        Problems of every file are raised together as one FormatError; warnings of every file (also
        of reused ones) go to `warnings`."""
        t0 = time.perf_counter()
        w = warnings if warnings is not None else Warnings()
        files = [Path(f) for f in files]
        rep = SyncReport()
        with _Lock(self.dir / ".lock"):
            self._manifest = None
            m = self.manifest
            todo = self.stale(files)
            results: dict[str, dict] = {}
            if todo:
                jobs = [(str(p), str(_part_name(self.root, p, f"pending-{i}"))) for i, p in enumerate(todo)]
                results = self._ingest(jobs, workers, progress, executor)
            problems: list[Problem] = []
            hints: list[str] = []
            new_files: dict[str, dict] = {}
            seen_tag: dict[str, str] = {}
            for p in files:
                key = _source_key(p)
                fresh = str(p) in results
                if fresh:
                    r = dict(results[str(p)])
                    tmp_part = Path(r.pop("tmp_part"))
                    if "problems" in r:
                        problems.extend(Problem(*x) for x in r["problems"])
                        if r.get("hint") and r["hint"] not in hints:
                            hints.append(r["hint"])
                        continue
                    st = p.stat()
                    e = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, **r}
                else:
                    e = dict(m["files"][key])
                for x in e.get("warnings", []):
                    w.add(*x)
                tag = e.get("tag")
                if tag is not None and tag in seen_tag:
                    problems.append(Problem(str(p), None, f"run tag {tag!r} is also the tag of {seen_tag[tag]}"))
                    if "every run needs a distinct tag" not in " ".join(hints):
                        hints.append("every run needs a distinct tag; edit the 6th column of one file")
                    if fresh and tmp_part.exists():
                        tmp_part.unlink()
                        _rmdir_empty(tmp_part.parent)
                    continue
                if tag is not None:
                    seen_tag[tag] = str(p)
                    if fresh:
                        final = _part_name(self.root, p, tag)
                        final.parent.mkdir(parents=True, exist_ok=True)
                        os.replace(tmp_part, final)
                        _rmdir_empty(tmp_part.parent)
                        e["part"] = str(final.relative_to(self.root))
                (rep.ingested if fresh else rep.reused).append(str(p))
                new_files[key] = e
            # drop parts no longer referenced (files removed, changed tags, failed files)
            keep_parts = {e.get("part") for e in new_files.values() if e.get("part")}
            listed = {_source_key(p) for p in files}
            for key, e in m["files"].items():
                if e.get("part") and e["part"] not in keep_parts:
                    try:
                        (self.root / e["part"]).unlink()
                        _rmdir_empty((self.root / e["part"]).parent)
                    except OSError:
                        pass
                if key not in new_files and key not in listed:
                    rep.removed.append(key)
            if problems:
                self._write_manifest({"format": FORMAT, "files": new_files})
                self._write_index()
                self._index = None
                raise FormatError(problems, hint="; ".join(hints) or None)
            order = [_source_key(p) for p in files if _source_key(p) in new_files]
            self._write_manifest({"format": FORMAT, "files": {k: new_files[k] for k in order}})
            if rep.ingested or rep.removed or not (self.dir / "index.parquet").is_file():
                self._write_index()
        self._index = None
        rep.rows = int(sum(e.get("rows", 0) for e in self.manifest["files"].values()))
        rep.seconds = time.perf_counter() - t0
        return rep

    def _ingest(self, jobs: list[tuple[str, str]], workers: int | None, progress, executor) -> dict[str, dict]:
        """ingest_file over (source, temporary part) jobs: in this process for small inputs, else on
        `executor` or one process per core."""
        from .parallel import map_tasks
        big = sum(os.path.getsize(p) if os.path.exists(p) else 0 for p, _ in jobs) > 64 * 2**20
        res = map_tasks(_ingest_job, jobs, workers if big else 1, executor, progress)
        return {src: {**r, "tmp_part": part} for (src, part), r in zip(jobs, res)}

    def _write_index(self) -> None:
        runs, topics, rows, rgs = [], [], [], []
        for e in self.manifest["files"].values():
            if e.get("tag") is None:
                continue
            k = len(e["topics"])
            runs.append(np.full(k, e["tag"], dtype=object))
            topics.append(np.asarray(e["topics"], dtype=object))
            rows.append(np.asarray(e["topic_rows"], np.int64))
            rgs.append(np.asarray(e["topic_rg"], np.int32))
        cat = (lambda xs, dt: np.concatenate(xs) if xs else np.zeros(0, dt))
        t = pa.table({"run": pa.array(cat(runs, object), pa.string()), "topic": pa.array(cat(topics, object), pa.string()),
                      "rows": pa.array(cat(rows, np.int64)), "row_group": pa.array(cat(rgs, np.int32))})
        tmp = self.dir / f".index.parquet.tmp{os.getpid()}"
        pq.write_table(t, tmp)
        os.replace(tmp, self.dir / "index.parquet")

    # ------------------------------------------------------------------ reading
    @property
    def index(self) -> pd.DataFrame:
        """run, topic, rows, row_group for every run and topic in the store."""
        if self._index is None:
            try:
                self._index = pq.read_table(self.dir / "index.parquet").to_pandas()
            except OSError:
                self._index = pd.DataFrame({"run": [], "topic": [], "rows": [], "row_group": []})
        return self._index

    @property
    def runs(self) -> list[str]:
        """Run tags in the order of the source files."""
        return [e["tag"] for e in self.manifest["files"].values() if e.get("tag") is not None]

    def part(self, run: str) -> Path:
        for e in self.manifest["files"].values():
            if e.get("tag") == run:
                return self.root / e["part"]
        raise CranfieldError(f"run {run!r} is not in the store of {self.root}")

    @property
    def rows(self) -> int:
        return int(sum(e.get("rows", 0) for e in self.manifest["files"].values()))

    def topics(self) -> list[str]:
        """Every topic any run retrieved for, in byte order."""
        return sorted(set(self.index["topic"].tolist()), key=lambda s: s.encode("utf-8"))

    def read(self, runs: list[str] | None = None, topics: Iterable[str] | None = None,
             columns: list[str] | None = None, max_pos: int | None = None) -> pa.Table:
        """Rows of `runs` (default all, in store order) for `topics` (default all), as one Arrow table
        (`read_parts`); within a run, rows are in trec_eval order. `max_pos` keeps the first `max_pos`
        documents of each ranking."""
        run_list = self.runs if runs is None else list(runs)
        if topics is None:
            return read_parts([(r, str(self.part(r)), None) for r in run_list], None, columns, max_pos,
                              use_threads=True)
        tset = sorted(set(map(str, topics)), key=lambda s: s.encode("utf-8"))
        ix = self.index
        ix = ix[ix["topic"].isin(tset)]
        rg_of = ix.groupby("run", sort=False)["row_group"].apply(lambda s: tuple(sorted(set(s.tolist())))).to_dict()
        return read_parts([(r, str(self.part(r)), rg_of.get(r, ())) for r in run_list], tset, columns, max_pos,
                          use_threads=True)

    def frame(self, runs: list[str] | None = None, topics: Iterable[str] | None = None,
              max_pos: int | None = None) -> pd.DataFrame:
        """Like `read`, as the run table of `formats.read_runs`: run, topic, doc (categorical), rank,
        score."""
        return to_frame(self.read(runs, topics, columns=["topic", "doc", "rank", "score"], max_pos=max_pos))

    def topic_blocks(self, topics: list[str], max_rows: int, runs: list[str] | None = None,
                     cap: int | None = None) -> list[list[str]]:
        """`topics` (in the given order) cut into consecutive blocks of at most ~`max_rows` run rows
        (counting at most `cap` rows per ranking when given)."""
        ix = self.index
        if runs is not None:
            ix = ix[ix["run"].isin(set(runs))]
        rows = ix["rows"] if cap is None else np.minimum(ix["rows"], cap)
        per = rows.groupby(ix["topic"]).sum()
        counts = per.reindex(topics).fillna(0).to_numpy(np.int64)
        blocks, cur, acc = [], [], 0
        for t, c in zip(topics, counts):
            if cur and acc + c > max_rows:
                blocks.append(cur)
                cur, acc = [], 0
            cur.append(t)
            acc += int(c)
        if cur:
            blocks.append(cur)
        return blocks


def dict_codes(col, values: list[str]) -> np.ndarray:
    """Per row of a (chunked, possibly dictionary-encoded) string column: its index in `values`, -1 if
    absent. Dictionary chunks are looked up once per distinct value."""
    vs = pa.array(values, pa.string())
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    out = []
    for ch in chunks:
        if pa.types.is_dictionary(ch.type):
            lut = pc.fill_null(pc.index_in(ch.dictionary, value_set=vs), -1).to_numpy()
            out.append(lut[ch.indices.to_numpy()])
        else:
            out.append(pc.fill_null(pc.index_in(ch, value_set=vs), -1).to_numpy())
    return np.concatenate(out) if out else np.zeros(0, np.int32)


def read_parts(parts, topics: list[str] | None = None, columns: list[str] | None = None,
               max_pos: int | None = None, use_threads: bool = False) -> pa.Table:
    """Rows of run parts [(run, part path, row groups, or None for all)] as one Arrow table: a `run`
    dictionary column first, `topic` dictionary-encoded; only `topics` when given and the first
    `max_pos` documents of each ranking. A run with no row groups to read is left out."""
    cols = columns or ["topic", "doc", "score", "rank", "pos"]
    read_cols = list(dict.fromkeys(cols + (["topic"] if topics is not None else [])
                                   + (["pos"] if max_pos is not None else [])))
    tlist = list(topics) if topics is not None else None
    tables, names = [], []
    for run, path, rgs in parts:
        if rgs is not None and not rgs:
            continue
        pf = pq.ParquetFile(path, read_dictionary=["topic"])
        t = (pf.read(columns=read_cols, use_threads=use_threads) if rgs is None
             else pf.read_row_groups(list(rgs), columns=read_cols, use_threads=use_threads))
        mask = np.ones(len(t), bool)
        if tlist is not None:
            mask &= dict_codes(t.column("topic"), tlist) >= 0
        if max_pos is not None:
            mask &= t.column("pos").to_numpy() <= max_pos
        if not mask.all():
            t = t.filter(pa.array(mask))
        tables.append(t.select(cols))
        names.append((run, len(t)))
    if not tables:
        return pa.schema([("run", pa.dictionary(pa.int32(), pa.string()))]
                         + [SCHEMA.field(c) for c in cols]).empty_table()
    tab = pa.concat_tables(tables, promote_options="permissive")
    codes = np.repeat(np.arange(len(names), dtype=np.int32), [n for _, n in names])
    run_col = pa.DictionaryArray.from_arrays(pa.array(codes), pa.array([r for r, _ in names], pa.string()))
    return tab.add_column(0, "run", run_col)


def to_frame(tab: pa.Table) -> pd.DataFrame:
    """An Arrow run table as a pandas run table: run categorical (store order), topic and doc
    categorical with byte-ordered categories (as formats.read_runs gives), other columns as arrays."""
    from .formats import grouped_categorical, sorted_categorical
    data = {}
    for name in tab.column_names:
        col = tab.column(name)
        if name == "run":
            arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
            if not pa.types.is_dictionary(arr.type):
                arr = pc.dictionary_encode(arr)
            cats = pd.Index(np.asarray(arr.dictionary.to_pylist(), dtype=object), dtype=object)
            codes = arr.indices.to_numpy(zero_copy_only=False).astype(np.int32) if len(arr) else np.zeros(0, np.int32)
            data[name] = pd.Categorical.from_codes(codes, categories=cats, validate=False)
        elif name in ("topic", "doc"):
            if pa.types.is_dictionary(col.type):
                col = col.cast(pa.string())
            data[name] = (grouped_categorical if name == "topic" else sorted_categorical)(col)
        else:
            data[name] = col.to_numpy()
    return pd.DataFrame(data, copy=False)


def _rmdir_empty(d: Path) -> None:
    try:
        d.rmdir()
    except OSError:
        pass
