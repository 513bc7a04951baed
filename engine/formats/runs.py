"""TREC run files: `read_run`, `read_runs` (many files, multi-core Arrow path), `write_run`."""
from __future__ import annotations

import os
import numpy as np

from ..util.lazy import lazy_module
from ..errors import FormatError, Problem, Warnings
from ..ranking.join import ranked_rows
from .grammar import all_finite
from .files import PathLike, _Col, read_bytes, read_table, str_series, write_text

pd = lazy_module("pandas")      # the plain readers (small clean files) never import it


RUN_COLUMNS = ["run", "topic", "doc", "rank", "score"]


RUN_COLS = [_Col("topic", "str", "a topic id"), _Col("q0", "str", "the literal Q0"),
            _Col("doc", "str", "a document id"), _Col("rank", "int", "an integer"),
            _Col("score", "float", "a number"), _Col("tag", "str", "a run tag")]


RUN_LABEL = "topic Q0 doc rank score tag"


def read_run(path: PathLike, warnings: Warnings | None = None, name: str | None = None,
             data: bytes | None = None) -> pd.DataFrame:
    """Read one TREC run file into columns run, topic, doc, rank, score (+ line, the source line).

    Rules applied: the run is named by the tag of its first line (or `name`); lines whose tag differs
    are reported and evaluated as part of this run; a document retrieved twice for the same topic
    keeps its first line and the repeat is reported. An empty file is reported and yields no rows.
    """
    a = read_run_arrays(path, warnings if warnings is not None else Warnings(), name, data)
    if a is None:
        return _empty_run()
    return _run_frame([a])


def read_run_arrays(path: PathLike, w: Warnings, name: str | None = None,
                     data: bytes | None = None) -> dict | None:
    """One run file as column arrays (topic strings shared per topic); None when the file is empty."""
    spath = str(path)
    df = read_table(path, RUN_COLS, RUN_LABEL, data=data, extra_ok=True)
    if "extra_fields" in df.attrs:
        warn_extra_fields(w, spath, *df.attrs["extra_fields"])
    if len(df) == 0:
        w.add(spath, None, "run file is empty (holds no results); it is left out of the evaluation")
        return None
    line = df["line"].to_numpy(np.int64)
    tags = df["tag"].to_numpy(object)
    tag = name or str(tags[0])
    if name is None:
        other = tags != tags[0]
        if other.any():
            i = int(np.flatnonzero(other)[0])
            w.add(spath, int(line[i]),
                  f"run tag changes from {tag!r} to {tags[i]!r} ({int(other.sum())} lines have another tag "
                  f"than line {int(line[0])}); rule: the whole file is evaluated as run {tag!r} — "
                  f"split the file if it holds several runs")
    ct, ut = pd.factorize(df["topic"].to_numpy(object))
    ut = np.asarray(ut, dtype=object)
    doc = df["doc"].to_numpy(object)
    cd, ud = pd.factorize(doc)
    key = ct.astype(np.int64) * (len(ud) + 1) + cd
    rank = df["rank"].to_numpy(np.int64)
    score = df["score"].to_numpy(np.float64)
    dup = pd.Series(key).duplicated(keep="first").to_numpy()
    if dup.any():
        first_line = pd.Series(line[~dup], index=key[~dup])
        idx = np.flatnonzero(dup)
        warn_repeated_docs(w, [(spath, int(line[i]), doc[i], ut[ct[i]], int(first_line[key[i]])) for i in idx[:50]],
                           len(idx) - len(idx[:50]), spath)
        keep = ~dup
        ct, doc, rank, score, line = ct[keep], doc[keep], rank[keep], score[keep], line[keep]
    return {"run": tag, "topic": ut[ct], "doc": doc, "rank": rank, "score": score, "line": line}


def warn_extra_fields(w: Warnings, path: str, first: int, count: int) -> None:
    """One warning for run lines with fields after the tag, which trec_eval ignores (so do we)."""
    w.add(path, first, f"{count} line(s) have fields after the run tag (first here); rule: as trec_eval, "
                       f"the extra fields are ignored")


def warn_repeated_docs(w: Warnings, shown: list[tuple], more: int, more_path: str | None) -> None:
    """Report documents retrieved twice for a topic: `shown` = (path, line, doc, topic, first line) per
    repeat reported one by one, `more` further repeats counted on `more_path`. The rule: the first
    occurrence is kept."""
    for path, line, doc, topic, first in shown:
        w.add(path, line, f"document {doc} retrieved twice for topic {topic} (first at line {first}); "
                          f"rule: the first occurrence is kept, this one is ignored")
    if more > 0:
        w.add(more_path, None, f"{more} more repeated documents ignored by the same rule")


def _run_frame(parts: list[dict]) -> pd.DataFrame:
    """Concatenate per-file arrays into the run table (object columns, run strings shared per run)."""
    tags = np.asarray([p["run"] for p in parts], dtype=object)
    lens = [len(p["doc"]) for p in parts]
    cat = (lambda k: parts[0][k] if len(parts) == 1 else np.concatenate([p[k] for p in parts]))
    return pd.DataFrame({"run": str_series(np.repeat(tags, lens)), "topic": str_series(cat("topic")),
                         "doc": str_series(cat("doc")), "rank": cat("rank"), "score": cat("score"),
                         "line": cat("line")}, copy=False)  # fresh arrays: no need to consolidate copies


def _empty_run() -> pd.DataFrame:
    return pd.DataFrame({"run": pd.Series([], dtype=object), "topic": pd.Series([], dtype=object),
                         "doc": pd.Series([], dtype=object), "rank": pd.Series([], dtype="int64"),
                         "score": pd.Series([], dtype="float64"), "line": pd.Series([], dtype="int64")})


def _clean_for_arrow(data: bytes) -> bool:
    """No tab, CR, VT, FF, NUL or comment (one-byte memchr scans). Double, leading or trailing spaces
    need no scan: they make an extra column, which Arrow rejects, or, with a field missing, an empty
    field, which `arrow_run` refuses after parsing. Blank lines are caught by the row count."""
    return (len(data) > 0 and b"\t" not in data and b"\r" not in data and b"#" not in data
            and b"\x0b" not in data and b"\x0c" not in data and b"\x00" not in data)


def _arrow_table(data: bytes):
    """A clean run file parsed by Arrow (6 columns per line enforced; the Q0 column, which trec_eval
    ignores, is not converted; `data` is read in place, in 4 MB blocks: 7% faster than the default 1 MB)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = ["topic", "q0", "doc", "rank", "score", "tag"]
    types = {"topic": pa.string(), "q0": pa.string(), "doc": pa.string(), "rank": pa.int64(),
             "score": pa.float64(), "tag": pa.string()}
    return pacsv.read_csv(pa.BufferReader(pa.py_buffer(data)),
                          read_options=pacsv.ReadOptions(column_names=names, use_threads=False,
                                                         block_size=4 << 20),
                          parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                                                           ignore_empty_lines=False),
                          convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                               quoted_strings_can_be_null=False,
                                                               include_columns=names))


def sorted_categorical(chunked) -> pd.Categorical:
    """An Arrow string column as a Categorical with lexically (byte-order) sorted categories."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = chunked.combine_chunks() if isinstance(chunked, pa.ChunkedArray) else chunked
    de = arr.dictionary_encode()
    dic = de.dictionary
    order = pc.array_sort_indices(dic).to_numpy()
    rank = np.empty(len(order), np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    codes = rank[de.indices.to_numpy()]
    cats = np.asarray(dic.take(pa.array(order)).to_numpy(zero_copy_only=False), dtype=object)
    return pd.Categorical.from_codes(codes, categories=pd.Index(cats, dtype=object), validate=False)


def run_heads(values) -> np.ndarray:
    """First row of each run of equal values of an Arrow array or chunked array (topic ids in run
    files come topic by topic)."""
    import pyarrow.compute as pc
    from ..util.arrowbuf import arrow_numpy

    n = len(values)
    if n < 2:
        return np.zeros(n, np.int64)
    # the changes as Arrow indices (no bitmap unpacked, no pandas imported by a conversion)
    change = arrow_numpy(pc.indices_nonzero(pc.not_equal(values.slice(1), values.slice(0, n - 1))))
    heads = np.empty(len(change) + 1, np.int64)
    heads[0] = 0
    np.add(change, 1, out=heads[1:], casting="unsafe")
    return heads


def grouped_categorical(chunked) -> pd.Categorical:
    """Like sorted_categorical for a column made of long runs of equal values (topic ids in run
    files): only the first value of each run of equal values is hashed."""
    import pyarrow as pa

    arr = chunked.combine_chunks() if isinstance(chunked, pa.ChunkedArray) else chunked
    n = len(arr)
    if n == 0:
        return sorted_categorical(arr)
    heads = run_heads(arr)
    cat = sorted_categorical(arr.take(pa.array(heads)))
    codes = np.repeat(np.asarray(cat.codes), np.diff(np.append(heads, n)))
    return pd.Categorical.from_codes(codes, dtype=cat.dtype, validate=False)


def _duplicate_rows(run_c: np.ndarray, topic_c: np.ndarray, doc_c: np.ndarray, n_topics: int,
                    n_docs: int) -> np.ndarray:
    """Rows whose (run, topic, doc) occurred before. Rows of a run are contiguous (one file each):
    per run, a scatter/gather in one reusable (topic, doc) table finds whether anything repeats;
    only then the hash-based check runs."""
    n = len(doc_c)
    if n == 0:
        return np.zeros(0, bool)
    size = n_topics * n_docs
    if size > 50_000_000:
        key = (run_c.astype(np.int64) * n_topics + topic_c) * n_docs + doc_c
        return pd.Series(key).duplicated(keep="first").to_numpy()
    buf = np.full(size, -1, dtype=np.int32)
    starts = np.flatnonzero(np.concatenate(([True], run_c[1:] != run_c[:-1])))
    ends = np.append(starts[1:], n)
    any_dup = False
    for a, b in zip(starts, ends):
        k = topic_c[a:b].astype(np.int64) * n_docs + doc_c[a:b]
        buf[k] = np.arange(b - a, dtype=np.int32)          # a repeated key keeps its last row
        if not np.array_equal(buf[k], np.arange(b - a, dtype=np.int32)):
            any_dup = True
        buf[k] = -1
        if any_dup:
            break
    if not any_dup:
        return np.zeros(n, bool)
    key = (run_c.astype(np.int64) * n_topics + topic_c) * n_docs + doc_c
    return pd.Series(key).duplicated(keep="first").to_numpy()


def arrow_run(p: PathLike, data: bytes):
    """(tag, table) when a run file is clean and Arrow parses it whole with one tag, else None."""
    import pyarrow.compute as pc
    if not _clean_for_arrow(data):
        return None
    try:
        tab = _arrow_table(data)
    except Exception:  # malformed: the validating reader reports it
        return None
    # blank lines are errors for Arrow here (ignore_empty_lines=False), so rows are lines 1..n
    if len(tab) == 0 or tab.column("score").null_count or tab.column("rank").null_count:
        return None
    # an empty field (two spaces, or a space at either end, with one field missing) is a short line
    if any(pc.min(pc.binary_length(tab.column(c))).as_py() == 0 for c in ("topic", "q0", "doc", "tag")):
        return None
    from ..util.arrowbuf import arrow_numpy
    if not all_finite(arrow_numpy(tab.column("score"))):
        return None   # inf / 1e400: the validating reader names the line
    tags = tab.column("tag")
    first = tags[0]                      # an Arrow scalar (a Python one would import pandas into pyarrow)
    tag = first.as_py()
    if not pc.all(pc.equal(tags, first)).as_py():
        return None  # the validating reader words the warning
    return tag, tab


def _arrow_frame(items: list[tuple[str, str, object]], w: Warnings) -> pd.DataFrame:
    """The run table of clean files parsed by Arrow, with categorical run/topic/doc columns."""
    import pyarrow as pa
    lens = [len(t) for _, _, t in items]
    big = pa.concat_tables([t for _, _, t in items])
    topic = grouped_categorical(big.column("topic"))
    doc = sorted_categorical(big.column("doc"))
    run_names = [tag for _, tag, _ in items]
    run = pd.Categorical.from_codes(np.repeat(np.arange(len(run_names), dtype=np.int32), lens),
                                    categories=pd.Index(run_names, dtype=object), validate=False)
    line = np.concatenate([np.arange(1, n + 1, dtype=np.int64) for n in lens])
    df = pd.DataFrame({"run": run, "topic": topic, "doc": doc, "rank": big.column("rank").to_numpy(),
                       "score": big.column("score").to_numpy(), "line": line}, copy=False)
    dup = _duplicate_rows(np.asarray(run.codes), np.asarray(topic.codes), np.asarray(doc.codes),
                          len(topic.categories), len(doc.categories))
    if dup.any():
        path_of = {tag: p for p, tag, _ in items}
        key = pd.Series(list(zip(df["run"].astype(object), df["topic"].astype(object), df["doc"].astype(object))))
        first_line = dict(zip(key[~dup], df["line"][~dup]))
        idx = np.flatnonzero(dup)
        shown = [(path_of[r["run"]], int(r["line"]), r["doc"], r["topic"], int(first_line[key[i]]))
                 for i, r in ((i, df.iloc[i]) for i in idx[:50])]
        warn_repeated_docs(w, shown, len(idx) - len(shown),
                           path_of[df.iloc[idx[50]]["run"]] if len(idx) > 50 else None)
        df = df[~dup].reset_index(drop=True)
    return df


def read_runs(paths: list[PathLike], warnings: Warnings | None = None) -> pd.DataFrame:
    """Read several run files into one table; two files with the same tag are an error (rename one).

    Every file is parsed and every problem of every file is reported together. When every file is
    clean, run/topic/doc come back as Categoricals (byte-order categories) from the Arrow fast path.
    """
    w = warnings if warnings is not None else Warnings()
    items: list[tuple[str, object]] = []   # ("arrow", (path, tag, table)) or ("slow", dict)
    seen: dict[str, str] = {}
    problems: list[Problem] = []
    hints: list[str] = []
    blobs: list[tuple[PathLike, bytes | None]] = []
    for p in paths:
        try:
            blobs.append((p, read_bytes(p)))
        except FormatError as exc:
            problems.extend(exc.problems)
            if exc.hint and exc.hint not in hints:
                hints.append(exc.hint)
            blobs.append((p, None))
    # Arrow releases the GIL while parsing: clean files are parsed on all cores (Python threads, each
    # parse single-threaded, so no Arrow thread pool outlives the call)
    fast_of = (lambda pd_: arrow_run(pd_[0], pd_[1]) if pd_[1] is not None else None)
    if len(blobs) > 1 and (os.cpu_count() or 1) > 1:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=min(os.cpu_count() or 1, 8)) as ex:
            fasts = list(ex.map(fast_of, blobs))
    else:
        fasts = [fast_of(b) for b in blobs]
    for (p, data), fast in zip(blobs, fasts):
        if data is None:
            continue
        try:
            if fast is not None:
                tag, first_line = fast[0], 1
                item = ("arrow", (str(p), fast[0], fast[1]))
            else:
                a = read_run_arrays(p, w, data=data)
                if a is None:
                    continue
                tag, first_line = a["run"], int(a["line"][0])
                item = ("slow", a)
        except FormatError as exc:
            problems.extend(exc.problems)
            if exc.hint and exc.hint not in hints:
                hints.append(exc.hint)
            continue
        if tag in seen:
            problems.append(Problem(str(p), first_line, f"run tag {tag!r} is also the tag of {seen[tag]}"))
            if "every run needs a distinct tag" not in " ".join(hints):
                hints.append("every run needs a distinct tag; edit the 6th column of one file")
            continue
        seen[tag] = str(p)
        items.append(item)
    if problems:
        raise FormatError(problems, hint="; ".join(hints) or None)
    if not items:
        return _empty_run()
    if all(kind == "arrow" for kind, _ in items):
        return _arrow_frame([it for _, it in items], w)
    parts = []
    for kind, it in items:
        if kind == "slow":
            parts.append(it)
            continue
        p, tag, tab = it
        df = _arrow_frame([(p, tag, tab)], w)
        parts.append({"run": tag, "topic": df["topic"].to_numpy(object), "doc": df["doc"].to_numpy(object),
                      "rank": df["rank"].to_numpy(np.int64), "score": df["score"].to_numpy(np.float64),
                      "line": df["line"].to_numpy(np.int64)})
    return _run_frame(parts)


def write_run(path: PathLike, run: pd.DataFrame, tag: str | None = None) -> None:
    """Write a run as `topic Q0 doc rank score tag`, ranks renumbered 1.. in trec_eval order per topic
    (score descending, ties by document id descending). Scores keep full precision (repr)."""
    rows, ranks = ranked_rows(pd.DataFrame({"run": np.zeros(len(run), np.int64), "topic": run["topic"].to_numpy(),
                                            "doc": run["doc"].to_numpy(), "score": run["score"].to_numpy()}),
                              by_name=True)
    df = run.iloc[rows]
    t = tag if tag is not None else df["run"].astype(str)
    out = pd.DataFrame({"topic": df["topic"], "q0": "Q0", "doc": df["doc"], "rank": ranks,
                        "score": df["score"].map(repr), "tag": t})
    write_text(path, out.to_csv(sep=" ", header=False, index=False))


def warn_unknown_topics(runs: pd.DataFrame, topics, warnings: Warnings, source: str = "runs") -> list[str]:
    """Warn once per run about topics it has results for that are not in `topics`; returns them all."""
    known = set(map(str, topics))
    if not known or len(runs) == 0:
        return []
    tcodes, tu = pd.factorize(runs["topic"].to_numpy(object))
    unknown_codes = np.flatnonzero(~pd.Series(np.asarray(tu, dtype=object)).astype(str).isin(known).to_numpy())
    if len(unknown_codes) == 0:
        return []
    sub = runs[np.isin(tcodes, unknown_codes)]
    bad = sub[["run", "topic"]].drop_duplicates()
    for run, grp in bad.groupby("run", sort=False):
        ts = sorted(grp["topic"].astype(str))
        warnings.add(source, None, f"run {run} has results for {len(ts)} topic(s) not in the topics file: "
                                   f"{', '.join(ts[:10])}{' ...' if len(ts) > 10 else ''}")
    return sorted(set(bad["topic"].astype(str)))

