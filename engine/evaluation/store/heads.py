"""Heads of a run store's parts: per run, the first `HEAD_ROWS` rows of each ranking in a file of their own.

A pool reads only the top of each ranking (depth 100 of 1,000 at Million-Query size), but a part's
row group holds whole rankings, so reading the top from the part decodes every row. A head holds
the same rows (same columns, same order) cut at `HEAD_ROWS` per ranking, in row groups of
`HEAD_GROUP_ROWS` rows or so cut at topic starts, and is written beside the part while it is ingested:

    heads/run=<tag>/head-<sha>.parquet   (sha: the run file's content hash, as the part's name)

It is an index of the part, never the truth: a reader uses it only when its footer names the
manifest's run, content hash and head depth and its row groups hold exactly the rows the manifest's
topic counts say (`head_plan`); else, and in stores ingested before heads existed, the part is read
as before. Heads the manifest no longer names are removed with the store's garbage (`collect`).
"""
from __future__ import annotations

import contextvars
import os
import stat
import urllib.parse
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .layout import _ENCODING, COMPRESSION, SCHEMA, sweep
from ...util import fs

HEAD_ROWS = 100               # rows kept per ranking (the usual pool depth); deeper reads use the part
HEAD_GROUP_ROWS = 16_384      # rows per head row group (whole topics): ~160 rankings of 100 at MQ size
HEADS_DIR = "heads"

_DEST: contextvars.ContextVar[str | None] = contextvars.ContextVar("cranfield_head_dest", default=None)
_OPEN: contextvars.ContextVar[list | None] = contextvars.ContextVar("cranfield_heads_open", default=None)


def head_name(store_dir: Path, tag: str, sha: str) -> Path:
    """Where the head of `tag`'s part made from content `sha` lives (content-addressed like the part)."""
    return store_dir / HEADS_DIR / f"run={urllib.parse.quote(tag, safe='')}" / f"head-{sha[:24]}.parquet"


@contextmanager
def writing(part: os.PathLike | str) -> Iterator[None]:
    """While ingesting into `part` (a pending part of a store, `<store>/runs/.pending/<name>`), part
    writers also write its head; for a part outside a store nothing more is written. A head still open
    when the block ends (the part failed) is removed."""
    p = Path(part)
    store = p.parents[2] if len(p.parents) > 2 and p.parent.name == ".pending" and p.parent.parent.name == "runs" \
        else None
    token = _DEST.set(str(store) if store is not None else None)
    opened = _OPEN.set([])
    try:
        yield
    finally:
        for w in list(_OPEN.get() or ()):
            w.abort()
        _OPEN.reset(opened)
        _DEST.reset(token)


def groups(sizes: np.ndarray, group_rows: int | None = None, filled: int = 0) -> np.ndarray:
    """Row group of each topic of head sizes `sizes` (in part order): a group is closed at the first topic
    start once it holds `group_rows` rows or more (the part writer's rule). `filled`: rows already in the
    open group, which the first topics continue (group 0)."""
    group_rows = HEAD_GROUP_ROWS if group_rows is None else group_rows
    out = np.zeros(len(sizes), np.int64)
    g, acc = 0, filled
    for i, n in enumerate(np.asarray(sizes, np.int64).tolist()):
        if acc >= group_rows:
            g, acc = g + 1, 0
        out[i] = g
        acc += n
    return out


class HeadWriter:
    """Writes the first `HEAD_ROWS` rows of each ranking of a part being written (whole topics, in part
    order) as the part's head, a row group at a time as they fill (`groups`' rule), into a temporary file
    renamed to its content-addressed name on `close`; does nothing outside `writing`."""

    def __init__(self, tag: str, source: str):
        self.store = _DEST.get()
        self.tag, self.source = tag, source
        self.pending: list[pa.Table] = []
        self.acc = 0
        self.stack: ExitStack | None = None
        self.wr: pq.ParquetWriter | None = None
        self.staging: Path | None = None

    def _open(self) -> None:
        meta = {b"cranfield.run": self.tag.encode("utf-8"), b"cranfield.source": self.source.encode("utf-8"),
                b"cranfield.head": str(HEAD_ROWS).encode("ascii"),
                b"cranfield.head_group_rows": str(HEAD_GROUP_ROWS).encode("ascii")}
        folder = head_name(Path(self.store), self.tag, "").parent
        fs.makedirs(folder)
        self.staging = folder / f"head-{os.getpid()}-{fs.temp_name('w')[1:-4]}.writing"
        self.stack = ExitStack()
        tmp = self.stack.enter_context(fs.atomic_proc_path(self.staging))
        self.wr = pq.ParquetWriter(tmp, SCHEMA.with_metadata(meta), compression=COMPRESSION, use_dictionary=["topic"],
                                   column_encoding=_ENCODING, write_statistics=["topic"], write_page_checksum=True)
        if _OPEN.get() is not None:
            _OPEN.get().append(self)

    def add(self, out: pa.Table, starts: np.ndarray) -> None:
        """Rows of whole topics (the part's columns; `starts`: the topics' first rows)."""
        if self.store is None or not len(out):
            return
        if self.wr is None:
            self._open()
        head = out.filter(pc.less_equal(out.column("pos"), HEAD_ROWS))
        sizes = np.minimum(np.diff(np.append(starts, len(out))), HEAD_ROWS)
        filled = self.acc
        g = groups(sizes, filled=filled)
        at = np.append(0, np.cumsum(sizes))             # each topic's first head row
        cut = 0
        for i in np.flatnonzero(np.diff(g, prepend=0)).tolist():   # topics opening a group: the open one is full
            self._flush(head.slice(cut, int(at[i]) - cut))
            cut = int(at[i])
        if len(head) > cut:
            self.pending.append(head.slice(cut))
        self.acc = int(sizes[g == g[-1]].sum()) + (filled if g[-1] == 0 else 0)

    def _flush(self, last: pa.Table | None = None) -> None:
        parts = self.pending + ([last] if last is not None and len(last) else [])
        if parts:
            t = pa.concat_tables(parts)
            self.wr.write_table(t, row_group_size=max(len(t), 1))
        self.pending, self.acc = [], 0

    def close(self, sha: str) -> None:
        """Write the last row group and the footer (with the content hash), and commit the head."""
        if self.store is None:
            return
        if self.wr is None:
            self._open()                                # an empty part: an empty head
        self._flush()
        self.wr.add_key_value_metadata({"cranfield.sha256": sha})
        self.wr.close()
        self.wr = None
        self.stack.close()                              # fsync, rename to the staging name
        self.stack = None
        fs.rename(self.staging, head_name(Path(self.store), self.tag, sha))
        if self in (_OPEN.get() or ()):
            _OPEN.get().remove(self)

    def abort(self) -> None:
        """Drop an unfinished head (its temporary file)."""
        if self.stack is not None:
            try:
                if self.wr is not None:
                    self.wr.close()
            except (OSError, pa.ArrowException):
                pass
            try:
                self.stack.__exit__(OSError, OSError("abandoned"), None)   # atomic_file removes its temp file
            except OSError:
                pass
            self.stack = self.wr = None


def _groups_of(md: pq.FileMetaData, tag: str, sha: str, sizes: np.ndarray) -> np.ndarray | None:
    """Each topic's head row group when head footer `md` is `tag`'s of content `sha` with exactly the
    rows `sizes` says, else None."""
    kv = md.metadata or {}
    try:
        group_rows = int(kv.get(b"cranfield.head_group_rows", b"0"))
    except ValueError:
        return None
    if (kv.get(b"cranfield.run", b"").decode("utf-8", "replace") != tag
            or kv.get(b"cranfield.sha256", b"").decode("ascii", "replace") != sha
            or kv.get(b"cranfield.head") != str(HEAD_ROWS).encode("ascii") or group_rows < 1):
        return None
    g = groups(sizes, group_rows)
    want = np.bincount(g, weights=sizes, minlength=md.num_row_groups).astype(np.int64) if len(g) else np.zeros(0)
    have = np.asarray([md.row_group(i).num_rows for i in range(md.num_row_groups)], np.int64)
    return g if len(want) == len(have) and bool((want == have).all()) else None


def head_plan(store, runs: list[str], depth: int) -> dict[str, tuple[str, dict[str, int], pq.FileMetaData]]:
    """Per run of `runs` whose head serves reads `depth` deep: (head path, topic -> head row group,
    its checked footer). Runs left out are read from their parts."""
    if depth > HEAD_ROWS:
        return {}
    ix = store.index
    out = {}
    entries = {e.get("tag"): e for e in store.manifest["files"].values() if e.get("tag") is not None}
    for run, sub in ix[ix["run"].isin(set(runs))].groupby("run", sort=False):
        e = entries.get(run)
        if e is None:
            continue
        path = head_name(store.dir, run, e["sha256"])
        sizes = np.minimum(sub["rows"].to_numpy(np.int64), HEAD_ROWS)
        try:
            with fs.proc_path(path) as name:
                md = pq.read_metadata(name)
        except (OSError, pa.ArrowException, ValueError):
            continue
        g = _groups_of(md, run, e["sha256"], sizes)
        if g is not None:
            out[run] = (str(path), dict(zip(sub["topic"].tolist(), g.tolist())), md)
    return out


def collect(store_dir: Path, manifest: dict) -> None:
    """Remove the heads (and leftovers of killed writes) of parts `manifest` does not name."""
    keep = {str(head_name(store_dir, e["tag"], e["sha256"])) for e in manifest["files"].values()
            if e.get("tag") is not None and e.get("sha256")}
    sweep(store_dir / HEADS_DIR, keep, lambda mode: not stat.S_ISDIR(mode))
