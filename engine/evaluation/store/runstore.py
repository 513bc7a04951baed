"""`RunStore`: one campaign's run store brought up to date (`sync`), checked and repaired, and read by run,
by topic or by topic block."""
from __future__ import annotations

import json
import os
import stat
import time
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ...errors import CranfieldError, FormatError, Problem, Warnings
from . import layout
from .layout import FORMAT, StoreDamaged, _part_name, _rebuild_hint, store_dir
from .lock import _Lock
from .heads import collect as collect_heads
from .ingest import _ingest_job, ingest_file
from .manifest import (_empty_manifest, _manifest_refused, _pack_topics, _source_key, _stat_key, _unpack_topics,
                       _valid_manifest, file_sha256)
from .read import read_parts, to_frame
from ...util import fs

if TYPE_CHECKING:
    import pandas as pd             # imported where a table is made: `eval --campaign` reads parts without it


@dataclass
class SyncReport:
    """What `sync` did: files ingested, reused and removed, with timings."""

    ingested: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    rows: int = 0


class RunStore:
    """The Parquet run store of one campaign directory (see the package docstring, `engine.evaluation.store`)."""

    def __init__(self, root: os.PathLike | str, warnings: Warnings | None = None):
        self.root = Path(root)
        self.dir = store_dir(self.root)
        self.warnings = warnings if warnings is not None else Warnings()
        self._manifest: dict | None = None
        self._index: pd.DataFrame | None = None
        self._verified: set[str] = set()
        self._footers: dict[str, pq.FileMetaData] = {}   # part path -> footer read by check_part

    # ------------------------------------------------------------------ manifest
    @property
    def manifest(self) -> dict:
        if self._manifest is None:
            try:
                from ...formats.safeload import loads_json
                m = loads_json(fs.read_bytes(self.dir / "manifest.json"), str(self.dir / "manifest.json"))
            except (OSError, ValueError):
                m = None
            if m is not None and not _valid_manifest(m):
                self.warnings.add(str(self.dir / "manifest.json"), None, _manifest_refused(m))
                m = None
            self._manifest = m if m is not None else _empty_manifest()
        return self._manifest

    def _write_manifest(self, m: dict) -> None:
        """The commit point: one atomic rename of the whole manifest."""
        from ...util.atomic import atomic_write
        fs.makedirs(self.dir)
        gi = self.dir / ".gitignore"
        if not fs.exists(gi):
            atomic_write(gi, b"*\n")
        atomic_write(self.dir / "manifest.json", json.dumps(m, indent=1).encode("utf-8"))
        self._manifest = m
        layout._step("manifest")

    def _fresh(self, p: Path, e: dict | None) -> tuple[bool, dict | None]:
        """(up to date, entry with refreshed stat) for source `p` against its manifest entry `e`."""
        if e is None:
            return False, None
        try:
            st = p.stat()
        except OSError:
            return False, None
        part_ok = e.get("tag") is None or self._part_size_ok(e)
        if e.get("stat") == _stat_key(st):
            return part_ok, e
        try:
            same = file_sha256(p) == e.get("sha256")   # stat changed: the content hash decides
        except OSError:
            return False, None
        return (same and part_ok), ({**e, "stat": _stat_key(st)} if same else None)

    def _part_size_ok(self, e: dict) -> bool:
        try:
            return os.path.getsize(self.root / e["part"]) == e.get("part_bytes")
        except (OSError, KeyError, TypeError):
            return False

    def stale(self, files: Iterable[os.PathLike | str]) -> list[Path]:
        """The files whose ingested copy is missing, damaged or out of date (by content hash)."""
        have = self.manifest["files"]
        return [Path(f) for f in files if not self._fresh(Path(f), have.get(_source_key(Path(f))))[0]]

    def sync(self, files: list[os.PathLike | str], warnings: Warnings | None = None, workers: int | None = None,
             progress: Callable[[int, int], None] | None = None, executor: Executor | None = None
             ) -> SyncReport:
        """Bring the store up to date with `files` (the campaign's run files, in order): ingest new or
        changed files (one process per core), drop files no longer listed, rewrite the index, then
        commit the manifest. Problems of every file are raised together as one FormatError; warnings
        of every file (also of reused ones) go to `warnings`."""
        t0 = time.perf_counter()
        w = warnings if warnings is not None else Warnings()
        files = [Path(f) for f in files]
        keys = {p: _source_key(p) for p in files}       # (each resolved once: a thousand runs, many looks)
        rep = SyncReport()
        with _Lock(self.dir / ".lock"):
            self._manifest = None
            m = self.manifest
            for x in self.warnings:
                w.add(x.path, x.line, x.message)
            self.warnings = Warnings()
            todo: list[Path] = []
            reuse: dict[str, dict] = {}
            for p in files:
                key = keys[p]
                e = m["files"].get(key)
                ok, e2 = self._fresh(p, e)
                if ok:
                    reuse[key] = e2
                    continue
                if e is not None and e2 is not None and e.get("tag") is not None:
                    w.add(str(self.root / e["part"]), None, f"run store part of {p} is missing or damaged; "
                                                            f"re-ingested from the run file")
                todo.append(p)
            results: dict[str, dict] = {}
            if todo:
                pend = self.dir / "runs" / ".pending"
                jobs = [(str(p), str(pend / fs.temp_name(f"{i}.parquet"))) for i, p in enumerate(todo)]   # unpredictable
                results = self._ingest(jobs, workers, progress, executor)
            problems: list[Problem] = []
            hints: list[str] = []
            new_files: dict[str, dict] = {}
            seen_tag: dict[str, str] = {}
            for p in files:
                key = keys[p]
                fresh = str(p) in results
                if fresh:
                    r = dict(results[str(p)])
                    tmp_part = Path(r.pop("tmp_part"))
                    if "problems" in r:
                        problems.extend(Problem(*x) for x in r["problems"])
                        if r.get("hint") and r["hint"] not in hints:
                            hints.append(r["hint"])
                        continue
                    e = _pack_topics(r)
                elif key in reuse:
                    e = dict(reuse[key])
                else:
                    continue
                for x in e.get("warnings", []):
                    w.add(*x)
                tag = e.get("tag")
                if tag is not None and tag in seen_tag:
                    problems.append(Problem(str(p), None, f"run tag {tag!r} is also the tag of {seen_tag[tag]}"))
                    if "every run needs a distinct tag" not in " ".join(hints):
                        hints.append("every run needs a distinct tag; edit the 6th column of one file")
                    continue
                if tag is not None:
                    seen_tag[tag] = str(p)
                    if fresh:
                        final = _part_name(self.root, tag, e["sha256"])
                        fs.rename(tmp_part, final)
                        layout._step("rename")
                        e["part"] = str(final.relative_to(self.root))
                (rep.ingested if fresh else rep.reused).append(str(p))
                new_files[key] = e
            listed = set(keys.values())
            rep.removed = [k for k in m["files"] if k not in new_files and k not in listed]
            order = [keys[p] for p in files if keys[p] in new_files]
            new_m = {"format": FORMAT, "files": {k: new_files[k] for k in order}, "index_sha256": None}
            if (rep.ingested or rep.removed or problems or new_m["files"] != m["files"]
                    or not self._index_ok(m)):
                new_m["index_sha256"] = self._write_index(new_m)
                self._write_manifest(new_m)          # the commit point
            self._collect_garbage()
            self._index = None
            self._verified = set()
            if problems:
                raise FormatError(problems, hint="; ".join(hints) or None)
        rep.rows = int(sum(e.get("rows", 0) for e in self.manifest["files"].values()))
        rep.seconds = time.perf_counter() - t0
        return rep

    def _collect_garbage(self) -> None:
        """Remove part files (and leftovers of killed writes) that the committed manifest does not name."""
        keep = {str(self.root / e["part"]) for e in self.manifest["files"].values() if e.get("part")}
        if not fs.is_dir(self.dir / "runs"):
            return
        # regular files and links (a link, planted or swapped in, is itself garbage)
        layout.sweep(self.dir / "runs", keep, lambda mode: stat.S_ISREG(mode) or stat.S_ISLNK(mode), step="unlink")
        collect_heads(self.dir, self.manifest)
        for f in fs.glob(self.dir, ".*.tmp*"):
            try:
                fs.unlink(f, missing_ok=False)
            except OSError:
                pass

    def _ingest(self, jobs: list[tuple[str, str]], workers: int | None, progress, executor) -> dict[str, dict]:
        """ingest_file over (source, temporary part) jobs: in this process for small inputs, else on
        `executor` or one process per core."""
        from ...util.parallel import map_tasks
        big = sum(os.path.getsize(p) if os.path.exists(p) else 0 for p, _ in jobs) > 64 * 2**20
        res = map_tasks(_ingest_job, jobs, workers if big else 1, executor, progress)
        return {src: {**r, "tmp_part": part} for (src, part), r in zip(jobs, res)}

    @staticmethod
    def _index_table(m: dict) -> pa.Table:
        runs, topics, rows, rgs = [], [], [], []
        for e in m["files"].values():
            if e.get("tag") is None:
                continue
            try:
                t, r, g = _unpack_topics(e)
            except (ValueError, TypeError, KeyError):
                raise StoreDamaged(f"the run store's manifest is damaged (the topics of run {e['tag']!r}); "
                                   f"run `cranfield ingest --rebuild` on the campaign to ingest every run file "
                                   f"again") from None
            runs.append(np.full(len(t), e["tag"], dtype=object))
            topics.append(np.asarray(t, dtype=object))
            rows.append(r)
            rgs.append(g)
        cat = (lambda xs, dt: np.concatenate(xs) if xs else np.zeros(0, dt))
        return pa.table({"run": pa.array(cat(runs, object), pa.string()),
                         "topic": pa.array(cat(topics, object), pa.string()),
                         "rows": pa.array(cat(rows, np.int64)), "row_group": pa.array(cat(rgs, np.int32))})

    def _write_index(self, m: dict) -> str:
        """Write index.parquet for manifest `m` (before the manifest); returns its sha256."""
        with fs.atomic_proc_path(self.dir / "index.parquet") as tmp:
            pq.write_table(self._index_table(m), tmp)
        layout._step("index")
        return file_sha256(self.dir / "index.parquet")

    def _index_ok(self, m: dict) -> bool:
        try:
            return m.get("index_sha256") is not None and file_sha256(self.dir / "index.parquet") == m["index_sha256"]
        except OSError:
            return False

    # ------------------------------------------------------------------ reading
    @property
    def index(self) -> pd.DataFrame:
        """run, topic, rows, row_group for every run and topic in the store (rebuilt from the manifest
        when index.parquet does not match its recorded hash)."""
        if self._index is None:
            m = self.manifest
            if self._index_ok(m):
                try:
                    with fs.proc_path(self.dir / "index.parquet") as name:
                        self._index = pq.read_table(name).to_pandas()
                except (OSError, pa.ArrowException):
                    self._index = None
            if self._index is None:
                self._index = self._index_table(m).to_pandas()
        return self._index

    @property
    def runs(self) -> list[str]:
        """Run tags in the order of the source files."""
        return [e["tag"] for e in self.manifest["files"].values() if e.get("tag") is not None]

    def _entry(self, run: str) -> tuple[str, dict]:
        m = self.manifest
        by_tag = self.__dict__.get("_by_tag")
        if by_tag is None or by_tag[0] is not m:       # tag -> source key, once per manifest (not per call)
            keys: dict = {}
            for k, e in m["files"].items():
                keys.setdefault(e.get("tag"), k)
            by_tag = self._by_tag = (m, keys)
        k = by_tag[1].get(run)
        if k is not None:
            return k, m["files"][k]
        raise CranfieldError(f"run {run!r} is not in the store of {self.root}")

    def check_part(self, run: str) -> str | None:
        """What is wrong with `run`'s part (size, footer, tag, source hash, rows), or None."""
        _, e = self._entry(run)
        path = self.root / e["part"]
        try:
            if os.path.getsize(path) != e.get("part_bytes"):
                return "its size differs from the manifest (truncated or replaced)"
            with fs.proc_path(path) as name:
                md = pq.ParquetFile(name).metadata
        except OSError as exc:
            return f"it cannot be read ({exc.strerror or exc})"
        except (pa.ArrowException, ValueError) as exc:
            return f"it is not a valid Parquet file ({str(exc).splitlines()[0][:80]})"
        kv = md.metadata or {}
        if kv.get(b"cranfield.run", b"").decode("utf-8", "replace") != run:
            return f"it holds run {kv.get(b'cranfield.run', b'?').decode('utf-8', 'replace')!r}, not {run!r}"
        if kv.get(b"cranfield.sha256", b"").decode("ascii", "replace") != e.get("sha256"):
            return "it was made from other content than the manifest's run file"
        if md.num_rows != e.get("rows"):
            return f"it holds {md.num_rows} rows, the manifest {e.get('rows')}"
        self._footers[str(path)] = md                  # the checked footer, reused by reads
        return None

    def _repair(self, run: str, why: str) -> None:
        """Re-ingest `run` from its run file (when that file still holds the content the manifest
        recorded), with a warning; else raise StoreDamaged naming the part and --rebuild."""
        key, e = self._entry(run)
        part = self.root / e["part"]
        self._footers.pop(str(part), None)
        src = Path(key)
        try:
            same = src.is_file() and file_sha256(src) == e.get("sha256")
        except OSError:
            same = False
        if not same:
            raise StoreDamaged(f"{part}: run store part of run {run!r} is damaged ({why}) and its run file "
                               f"{src} has changed or is gone; {_rebuild_hint(self.root)}")
        with _Lock(self.dir / ".lock"):
            tmp = self.dir / "runs" / ".pending" / fs.temp_name("repair.parquet")
            r = ingest_file(str(src), str(tmp))
            if "problems" in r or r.get("tag") != run or r.get("sha256") != e.get("sha256"):
                raise StoreDamaged(f"{part}: run store part of run {run!r} is damaged ({why}) and could not be "
                                   f"re-ingested from {src}; {_rebuild_hint(self.root)}")
            final = _part_name(self.root, run, r["sha256"])
            fs.rename(tmp, final)
            m = json.loads(json.dumps(self.manifest))
            m["files"][key] = _pack_topics({**e, **{k: v for k, v in r.items() if k != "warnings"},
                                            "part": str(final.relative_to(self.root))})
            m["index_sha256"] = self._write_index(m)
            self._write_manifest(m)
            self._collect_garbage()
        self._index = None
        self.warnings.add(str(part), None, f"run store part of run {run!r} was damaged ({why}); re-ingested "
                                           f"from {src}")

    def part(self, run: str) -> Path:
        """The verified part of `run` (re-ingested when damaged, see `check_part`)."""
        if run not in self._verified:
            why = self.check_part(run)
            if why is not None:
                self._repair(run, why)
                why = self.check_part(run)
                if why is not None:
                    _, e = self._entry(run)
                    raise StoreDamaged(f"{self.root / e['part']}: run store part of run {run!r}: {why}; "
                                       f"{_rebuild_hint(self.root)}")
            self._verified.add(run)
        _, e = self._entry(run)
        return self.root / e["part"]

    @property
    def rows(self) -> int:
        return int(sum(e.get("rows", 0) for e in self.manifest["files"].values()))

    @property
    def largest_run_rows(self) -> int:
        """Rows of the store's largest run (0 for an empty store)."""
        return int(max((e.get("rows", 0) for e in self.manifest["files"].values()), default=0))

    def topics(self) -> list[str]:
        """Every topic any run retrieved for, in byte order."""
        return sorted(set(self.index["topic"].tolist()), key=lambda s: s.encode("utf-8"))

    def read(self, runs: list[str] | None = None, topics: Iterable[str] | None = None,
             columns: list[str] | None = None, max_pos: int | None = None) -> pa.Table:
        """Rows of `runs` (default all, in store order) for `topics` (default all), as one Arrow table
        (`read_parts`); within a run, rows are in trec_eval order. `max_pos` keeps the first `max_pos`
        documents of each ranking."""
        try:
            return self._read(runs, topics, columns, max_pos)
        except StoreDamaged as exc:           # a damaged page: re-ingest that run once, then read again
            run = getattr(exc, "run", None)
            if run is None:
                raise
            self._repair(run, "a page failed its checksum")
            return self._read(runs, topics, columns, max_pos)

    def _read(self, runs, topics, columns, max_pos) -> pa.Table:
        run_list = self.runs if runs is None else list(runs)
        if topics is None:
            return read_parts([(r, str(self.part(r)), None) for r in run_list], None, columns, max_pos,
                              use_threads=True, footers=self._footers)
        tset = sorted(set(map(str, topics)), key=lambda s: s.encode("utf-8"))
        ix = self.index
        ix = ix[ix["topic"].isin(tset)]
        rg_of = ix.groupby("run", sort=False)["row_group"].apply(lambda s: tuple(sorted(set(s.tolist())))).to_dict()
        return read_parts([(r, str(self.part(r)), rg_of.get(r, ())) for r in run_list], tset, columns, max_pos,
                          use_threads=True, footers=self._footers)

    def frame(self, runs: list[str] | None = None, topics: Iterable[str] | None = None,
              max_pos: int | None = None) -> pd.DataFrame:
        """Like `read`, as the run table of `formats.read_runs`: run, topic, doc (categorical), rank,
        score."""
        return to_frame(self.read(runs, topics, columns=["topic", "doc", "rank", "score"], max_pos=max_pos))

    def topic_blocks(self, topics: list[str], max_rows: int, runs: list[str] | None = None,
                     cap: int | None = None) -> list[list[str]]:
        """`topics` (in the given order) cut into consecutive blocks of at most ~`max_rows` run rows
        (counting at most `cap` rows per ranking when given). Each cut falls, within the last half of
        a block, where the fewest runs have a row group holding topics on both sides of it (a row group
        read by two blocks is read twice)."""
        ix = self.index
        if runs is not None:
            ix = ix[ix["run"].isin(set(runs))]
        rows = ix["rows"] if cap is None else np.minimum(ix["rows"], cap)
        per = rows.groupby(ix["topic"]).sum()
        counts = per.reindex(topics).fillna(0).to_numpy(np.int64)
        n = len(topics)
        # straddle[i]: row groups holding a topic before position i and one at or after it
        at = ix["topic"].map({t: i for i, t in enumerate(topics)})
        held = ix.assign(at=at)[at.notna()].groupby(["run", "row_group"], sort=False)["at"].agg(["min", "max"])
        diff = np.zeros(n + 2, np.int64)
        np.add.at(diff, held["min"].to_numpy(np.int64) + 1, 1)
        np.add.at(diff, held["max"].to_numpy(np.int64) + 1, -1)
        straddle = np.cumsum(diff)[: n + 1]
        before = np.concatenate(([0], np.cumsum(counts)))            # rows of topics[:i]
        blocks: list[list[str]] = []
        start = 0
        for i in range(n):
            while i > start and before[i + 1] - before[start] > max_rows:   # (topics[j:i + 1] may still be)
                # cut at j in (start, i]: rows of the block >= max_rows / 2, fewest row groups split, latest
                lo = start + 1 + int(np.searchsorted(before[start + 1:i + 1] - before[start], max_rows / 2))
                lo = min(lo, i)
                j = lo + int(np.flatnonzero(straddle[lo:i + 1] == straddle[lo:i + 1].min())[-1])
                blocks.append(list(topics[start:j]))
                start = j
        if start < n:
            blocks.append(list(topics[start:]))
        return blocks


