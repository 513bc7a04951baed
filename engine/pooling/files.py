"""A campaign's pool files: pools/pool-NAME.tsv written with its entry in pools/pools.log.jsonl (the
commit point), recovered after a kill, listed and read back."""
from __future__ import annotations

import hashlib
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from ..errors import CranfieldError, FormatError, Problem
from .build import POOL_COLUMNS, Pool
from ..util import fs


def pool_path(root, name: str) -> Path:
    """pools/pool-NAME.tsv of the campaign, confined."""
    from engine.util.confine import campaign_path
    return campaign_path(root, "pools", f"pool-{name}.tsv")


def write_pool(root, name: str, pool: Pool) -> Path:
    """Write pools/pool-NAME.tsv (header + rows) and append the spec to pools/pools.log.jsonl.

    The log entry is the commit point: the table is first written as pools/pool-NAME.tsv.pending,
    then the entry (with the table's sha256) is appended, then the pending file is renamed into
    place. Killed before the entry, the pending file is an orphan `recover_pools` deletes; killed after
    it, `recover_pools` (run by `write_pool` and `pool_log`) finishes the rename.
    """
    from ..util.names import name_problem
    if name_problem(name, "pool name") or any(c in name for c in " \t"):
        raise CranfieldError(name_problem(name, "pool name") or f"pool name {name!r}: use letters, digits, '-' or '_'")
    p = pool_path(root, name)
    pending = p.with_name(p.name + PENDING)
    with _pools_lock(root):          # a concurrent write_pool or recover_pools waits (never sees our pending)
        _recover(root)
        digest = hashlib.sha256()
        with fs.atomic_file(pending, "wb") as fh:     # streamed: the pool's text is never whole in memory
            for piece in pool_bytes(pool.table):
                digest.update(piece)
                fh.write(piece)
        rec = {"op": "pool", "name": name, "file": str(p.relative_to(Path(root))),
               "sha256": digest.hexdigest(),
               "ts": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "documents": int((pool.table["order"] > 0).sum()), "topics": int(pool.table["topic"].nunique()),
               **pool.spec}
        from engine.util.confine import campaign_path
        _append_pool_record(campaign_path(root, "pool_log"), rec)
        fs.rename(pending, p)
    return p


PENDING = ".pending"
CHUNK_ROWS = 500_000          # pool rows formatted and written at a time


def pool_bytes(table: pd.DataFrame) -> Iterator[bytes]:
    """The text of a pool file in pieces: the header line, then the rows `CHUNK_ROWS` at a time, tab
    separated, `prob` as Python's repr (the shortest text that reads back as the same float). The
    same bytes as pandas' `to_csv(sep="\t", index=False)` of the table with `prob` mapped through repr;
    a chunk whose values need csv quoting, hold missing values or are of other types goes through
    exactly that."""
    yield ("\t".join(POOL_COLUMNS) + "\n").encode("utf-8")
    t = table[POOL_COLUMNS]
    for a in range(0, len(t), CHUNK_ROWS):
        chunk = t.iloc[a:a + CHUNK_ROWS]
        data = _rows_arrow(chunk)
        yield data if data is not None else _rows_csv(chunk)


def _rows_csv(chunk: pd.DataFrame) -> bytes:
    t = chunk.copy()
    t["prob"] = t["prob"].map(repr)  # exact round trip
    return t.to_csv(sep="\t", index=False, header=False).encode("utf-8")


def _rows_arrow(chunk: pd.DataFrame) -> bytes | None:
    """`_rows_csv` of a chunk, vectorized in Arrow; None when the chunk is not plain (see pool_bytes)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    cols = []
    for c in POOL_COLUMNS:
        s = chunk[c]
        kind = getattr(s.dtype, "kind", "O")
        if c == "prob":
            if kind != "f":
                return None
            cols.append(float_text(s.to_numpy(np.float64)))
        elif c in ("stratum", "order"):
            if kind not in "iu":
                return None
            cols.append(pc.cast(pa.array(s.to_numpy()), pa.string()))
        else:
            try:
                arr = pa.array(s.array if isinstance(s.dtype, pd.StringDtype) else s.to_numpy(object))
            except (pa.ArrowException, TypeError, ValueError):
                return None
            if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
                return None
            arr = arr.cast(pa.string())
            if isinstance(arr, pa.ChunkedArray):
                arr = arr.combine_chunks()
            if arr.null_count or _quoted(arr):
                return None          # csv would quote it: the reference writer handles it
            cols.append(arr)
    cols[-1] = pc.binary_join_element_wise(cols[-1], "", "\n")      # each line's end, on the shortest column
    lines = pc.binary_join_element_wise(*cols, "\t")
    if isinstance(lines, pa.ChunkedArray):
        lines = lines.combine_chunks()
    if lines.null_count:
        return None
    off = np.frombuffer(lines.buffers()[1], np.int32, len(lines) + 1, lines.offset * 4)
    return lines.buffers()[2][int(off[0]):int(off[-1])].to_pybytes()


_QUOTED = np.zeros(256, bool)
_QUOTED[[9, 10, 13, 34]] = True       # tab, newline, carriage return, double quote: csv quotes the value


def _quoted(arr) -> bool:
    """Whether any value of a string array holds a byte csv would quote (its text bytes scanned at once)."""
    if not len(arr):
        return False
    off = np.frombuffer(arr.buffers()[1], np.int32, len(arr) + 1, arr.offset * 4)
    data = np.frombuffer(arr.buffers()[2], np.uint8, int(off[-1]) - int(off[0]), int(off[0])) \
        if arr.buffers()[2] is not None else np.zeros(0, np.uint8)
    return bool(_QUOTED[data].any())


def float_text(x: np.ndarray):
    """repr() of every float, as an Arrow string array. Arrow's shortest round-trip digits are
    Python's; only the notation differs: whole numbers (Arrow "1", Python "1.0") get ".0", and values
    below 1e-4 or from 1e9 (where either writes an exponent) or not finite go through numpy's repr
    (the same text as Python's)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    x = np.asarray(x, np.float64)
    out = pc.cast(pa.array(x), pa.string())
    whole = np.isfinite(x) & (x == np.trunc(x)) & (np.abs(x) < 1e9)
    if whole.any():
        out = pc.if_else(pa.array(whole), pc.binary_join_element_wise(out, ".0", ""), out)
    odd = ~np.isfinite(x) | ((np.abs(x) < 1e-4) & (x != 0)) | ((np.abs(x) >= 1e9) & np.isfinite(x))
    if odd.any():
        out = pc.replace_with_mask(out, pa.array(odd), pa.array(x[odd].astype(str).tolist(), pa.string()))
    return out


def _file_sha256(path) -> str:
    h = hashlib.sha256()
    with fs.open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _append_pool_record(path: Path, rec: dict) -> None:
    from ..judgments.log import append_records
    append_records(path, [rec])


@contextmanager
def _pools_lock(root):
    """An exclusive lock on pools/ (fcntl on pools/.lock) for writing a pool or recovering one."""
    from engine.util.confine import campaign_path
    with fs.lock(campaign_path(root, "pools") / ".lock"):
        yield


def recover_pools(root) -> None:
    """Bring pools/ back to a state where every pool file has its log entry (see `write_pool`)."""
    from engine.util.confine import campaign_path
    pdir = campaign_path(root, "pools")
    if not fs.is_dir(pdir) or not fs.glob(pdir, "pool-*.tsv" + PENDING):
        return
    with _pools_lock(root):
        _recover(root)


def _recover(root) -> None:
    """recover_pools under the pools lock: a pending file whose sha256 is its file's latest log entry
    is renamed into place; any other is an orphan of a killed build and removed."""
    from engine.util.confine import campaign_path
    pdir = campaign_path(root, "pools")
    pending = fs.glob(pdir, "pool-*.tsv" + PENDING)
    if not pending:
        return
    last: dict[str, str] = {}
    for r in _read_log(pdir / "pools.log.jsonl"):
        if isinstance(r, dict) and isinstance(r.get("file"), str):
            last[r["file"]] = r.get("sha256")
    for q in pending:
        final = q.with_name(q.name[: -len(PENDING)])
        if last.get(str(final.relative_to(Path(root)))) == _file_sha256(q):
            fs.rename(q, final)       # committed by its log entry: finish the rename
        else:
            fs.unlink(q)              # never committed: the pool was not built


def list_pools(root) -> list[Path]:
    """The pool files in pools/, oldest first (by modification time, then name), after `recover_pools`,
    so a build killed after its log entry counts and an uncommitted one does not."""
    recover_pools(root)
    from engine.util.confine import campaign_files
    return sorted(campaign_files(root, "pools", "pool-*.tsv"), key=lambda p: (fs.stat(p).st_mtime, p.name))


def read_pool(path) -> pd.DataFrame:
    """Read a pool TSV written by `write_pool` (after `recover_pools`, when it lies in a pools/ folder,
    so a build killed after its log entry is finished before the file is read)."""
    p = Path(path)
    if p.parent.name == "pools":
        from engine.util.confine import confine
        confine(p.parent.parent, p)
        recover_pools(p.parent.parent)
    try:
        with fs.open(p, "rb") as fh:
            df = pd.read_csv(fh, sep="\t", dtype={"topic": str, "doc": str, "method": str}, keep_default_na=False)
    except FileNotFoundError:
        raise FormatError(Problem(str(p), None, "pool file not found"),
                          hint="build one with `cranfield pool CAMPAIGN --strategy ... --name NAME`") from None
    missing = [c for c in POOL_COLUMNS if c not in df.columns]
    if missing:
        raise FormatError(Problem(str(p), 1, f"pool header lacks column(s) {', '.join(missing)}"),
                          hint="the header reads: " + "\t".join(POOL_COLUMNS))
    try:
        df["stratum"] = df["stratum"].astype(np.int64)
        df["order"] = df["order"].astype(np.int64)
        df["prob"] = df["prob"].astype(np.float64)
    except (ValueError, TypeError) as exc:
        raise FormatError(Problem(str(p), None, f"stratum/order must be integers and prob a number ({exc})")) from None
    return df[POOL_COLUMNS]


def pool_log(root) -> list[dict]:
    """The pools log records (one per pool built)."""
    recover_pools(root)
    from engine.util.confine import campaign_path
    return _read_log(campaign_path(root, "pool_log"))


def _read_log(p: Path) -> list[dict]:
    if not fs.exists(p):
        return []
    out = []
    for line in fs.read_text(p, encoding="utf-8").splitlines():
        try:
            from ..formats.safeload import loads_json
            out.append(loads_json(line, str(p)))
        except ValueError:
            continue
    return out
