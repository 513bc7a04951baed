"""Reading run parts: rows of runs and topics as one Arrow table (`read_parts`), as a pandas run table
(`to_frame`), footers parsed once per process."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ...ranking.join import dict_codes
from .layout import SCHEMA, StoreDamaged
from ...util import fs

if TYPE_CHECKING:
    import pandas as pd             # imported where a table is made: `eval --campaign` reads parts without it


_FOOTERS: dict[tuple, pq.FileMetaData] = {}


def _footer(path: str) -> pq.FileMetaData:
    """A part's footer, parsed once per process while the file stays the same (size, mtime, inode): a
    block worker reads the same parts for every topic block."""
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns, st.st_ino)
    md = _FOOTERS.get(key)
    if md is None:
        if len(_FOOTERS) >= 1024:
            _FOOTERS.clear()
        with fs.proc_path(path) as name:
            md = _FOOTERS[key] = pq.read_metadata(name)
    return md


def read_parts(parts, topics: list[str] | None = None, columns: list[str] | None = None,
               max_pos: int | None = None, use_threads: bool = False, footers: dict | None = None) -> pa.Table:
    """Rows of run parts [(run, part path, row groups, or None for all)] as one Arrow table: a `run`
    dictionary column first, `topic` dictionary-encoded; only `topics` when given and the first
    `max_pos` documents of each ranking. A run with no row groups to read is left out. `footers`: part
    path -> its footer (FileMetaData) already read and checked."""
    cols = columns or ["topic", "doc", "score", "rank", "pos"]
    read_cols = list(dict.fromkeys(cols + (["topic"] if topics is not None else [])
                                   + (["pos"] if max_pos is not None else [])))
    tlist = list(topics) if topics is not None else None
    todo = [(run, path, rgs) for run, path, rgs in parts if rgs is None or rgs]
    cores = os.cpu_count() or 1
    many = use_threads and len(todo) > 1 and cores > 1      # parts read side by side, one thread each

    def load(job) -> pa.Table:
        run, path, rgs = job
        try:
            md = (footers or {}).get(str(path)) or _footer(str(path))
            with fs.proc_path(path) as name:
                pf = pq.ParquetFile(name, metadata=md, read_dictionary=["topic"], page_checksum_verification=True)
                inner = use_threads and not many
                t = (pf.read(columns=read_cols, use_threads=inner) if rgs is None
                     else pf.read_row_groups(list(rgs), columns=read_cols, use_threads=inner))
        except (OSError, pa.ArrowException, ValueError) as exc:
            err = StoreDamaged(f"{path}: run store part of run {run!r} cannot be read "
                               f"({str(exc).splitlines()[0][:100]}); run `cranfield ingest --rebuild` on the "
                               f"campaign to ingest every run file again")
            err.run = run
            raise err from None
        mask = np.ones(len(t), bool)
        if tlist is not None:
            mask &= dict_codes(t.column("topic"), tlist) >= 0
        if max_pos is not None:
            mask &= t.column("pos").to_numpy() <= max_pos
        if not mask.all():
            t = t.filter(pa.array(mask))
        return t.select(cols)

    if many:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(min(cores, len(todo))) as ex:
            tables = list(ex.map(load, todo))
    else:
        tables = [load(j) for j in todo]
    names = [(run, len(t)) for (run, _, _), t in zip(todo, tables)]
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
    import pandas as pd

    from ...formats.runs import grouped_categorical, sorted_categorical
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
