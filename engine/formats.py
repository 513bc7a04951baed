"""Readers and writers for TREC runs and judgment files (plain or .gz).

Formats: TREC run (`topic Q0 doc rank score tag`), qrels (`topic iter doc grade`), prels
(`topic doc grade method probability`, TREC Million Query), sample_eval qrels
(`topic iter doc stratum grade`). Topics live in `engine.topics`.

Every reader either returns a clean columnar table or raises `FormatError` naming each malformed
line as ``file:line: what is wrong``. Duplicates are resolved by a stated rule and reported through
a `Warnings` collector, never dropped silently. Parsing runs on pandas' C tokenizer; only a file
that the fast path rejects is re-read line by line to locate every problem.
"""
from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Callable

import numpy as np

from ._lazy import LazyPattern, lazy_module
from .errors import FormatError, Problem, Warnings
from .ranking import ranked_rows
from .grammar import (GRADE_MAX, GRADE_MIN, all_finite, check_grade_bounds, find_nul, float_column, int_column,
                      parse_float, parse_int, strict_int_column, token_matrix)

pd = lazy_module("pandas")      # the plain readers (small clean files) never import it

PathLike = str | os.PathLike

RUN_COLUMNS = ["run", "topic", "doc", "rank", "score"]
QRELS_COLUMNS = ["topic", "doc", "grade"]
JUDGMENT_EXTRA = {"stratum": "int64", "prob": "float64", "method": "str"}
CONFLICT_RULES = ("last", "max", "majority")

_COMMENT_RE = LazyPattern(rb"(?m)^[ \t]*#[^\n]*")
_BINARY_SNIFF = 8192


def read_bytes(path: PathLike, raw: bytes | None = None) -> bytes:
    """Whole file content, transparently gunzipped when the name ends in .gz or the magic says so
    (`raw`: the file's bytes when already read)."""
    p = Path(path)
    try:
        data = p.read_bytes() if raw is None else raw
    except FileNotFoundError:
        raise FormatError(Problem(str(path), None, "file not found"),
                          hint="check the path; runs and judgments may be plain text or .gz") from None
    except IsADirectoryError:
        raise FormatError(Problem(str(path), None, "is a directory, expected a file")) from None
    except PermissionError:
        raise FormatError(Problem(str(path), None, "permission denied"),
                          hint="make the file readable (chmod +r)") from None
    if data[:2] == b"\x1f\x8b":
        import gzip
        import zlib
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise FormatError(Problem(str(path), None, f"corrupt gzip data ({exc})"),
                              hint="re-compress the file or use the uncompressed version") from None
    elif p.suffix == ".gz" and data:
        raise FormatError(Problem(str(path), None, "name ends in .gz but the content is not gzip data"),
                          hint="rename the file without .gz or compress it with gzip")
    if data[:3] == b"\xef\xbb\xbf":  # a UTF-8 byte order mark would become part of the first topic id
        data = data[3:]
    return data


def check_text(path: str, data: bytes) -> None:
    """Raise if `data` holds a NUL byte anywhere (binary data): a wrong file, not a malformed line."""
    find_nul(path, data)


def write_text(path: PathLike, text: str) -> None:
    """Write text atomically (temp file + rename), gzip-compressed when the name ends in .gz."""
    from .atomic import atomic_write
    p = Path(path)
    data = text.encode("utf-8")
    if p.suffix == ".gz":
        import gzip
        data = gzip.compress(data, compresslevel=6, mtime=0)
    atomic_write(p, data)


# --------------------------------------------------------------------------- generic table reader

class _Col:
    """A column spec: name, kind (str/int/float) and what a valid value is (for messages)."""

    def __init__(self, name: str, kind: str, what: str):
        self.name, self.kind, self.what = name, kind, what


def _convert(kind: str, token: str):
    if kind == "str":
        return token
    if kind == "int":
        return parse_int(token)
    if kind == "float":
        return parse_float(token)
    raise AssertionError(kind)


def _slow_parse(path: str, text: bytes, cols: list[_Col], label: str, extra_ok: bool = False,
                extra: list | None = None) -> tuple[list[list], list[int]]:
    """Line-by-line validation; collects every problem and raises if there is any. With `extra_ok`,
    fields after the last column are ignored (as trec_eval does on run lines); the lines that have
    them are appended to `extra`."""
    problems: list[Problem] = []
    rows: list[list] = []
    lines: list[int] = []
    n = len(cols)
    for lineno, raw in enumerate(text.split(b"\n"), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith(b"#"):
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(Problem(path, lineno, "is not valid UTF-8 text (binary or wrongly encoded)"))
            continue
        if "\x00" in line:
            problems.append(Problem(path, lineno, "contains binary data (NUL byte)"))
            continue
        toks = [t.decode("utf-8") for t in raw.split()]    # C isspace bytes only, as trec_eval and the
        if extra_ok and len(toks) > n:                     # fast path split (str.split also splits U+001C..)
            if extra is not None:
                extra.append(lineno)
            toks = toks[:n]
        if len(toks) != n:
            problems.append(Problem(path, lineno,
                                    f"expected {n} fields ({label}), found {len(toks)}: {line.strip()[:80]!r}"))
            continue
        row = []
        ok = True
        for c, t in zip(cols, toks):
            try:
                row.append(_convert(c.kind, t))
            except ValueError as exc:
                problems.append(Problem(path, lineno, f"{c.name} {t!r} is out of range (beyond a 64-bit "
                                                      f"integer)" if str(exc) == "out of range" else
                                        f"{c.name} must be {c.what}, found {t!r}"))
                ok = False
                break
        if ok:
            rows.append(row)
            lines.append(lineno)
    if problems:
        raise FormatError(problems, hint=f"each line must read: {label}")
    return rows, lines


_PD_DTYPE = {"str": object, "int": "int64", "float": "float64"}


def _empty_table(cols: list[_Col]) -> pd.DataFrame:
    return pd.DataFrame({**{c.name: pd.Series([], dtype=_PD_DTYPE[c.kind]) for c in cols},
                         "line": pd.Series([], dtype="int64")})


def read_table(path: PathLike, cols: list[_Col], label: str,
               data: bytes | None = None, extra_ok: bool = False) -> pd.DataFrame:
    """Parse a whitespace-separated file into a DataFrame with a `line` column (1-based line numbers).

    String columns come back as object arrays of str. Fast path: pandas' C tokenizer, integers
    checked against the strict grammar (`engine.grammar`), floats finite, exactly len(cols) fields per
    line. Any irregularity falls back to the validating line-by-line parser, which names every
    malformed line. An empty file gives an empty table (callers decide whether that is an error).
    With `extra_ok` (run files), fields after the last column are ignored; `df.attrs["extra_fields"]`
    is then (first such line, number of such lines).
    """
    spath = str(path)
    text = read_bytes(path) if data is None else data
    check_text(spath, text)
    if b"#" in text:
        text = _COMMENT_RE.sub(b"", text)  # keep line numbering: comment lines become blank
    if not text.strip():
        return _empty_table(cols)
    names = [c.name for c in cols]
    dtypes = {c.name: _PD_DTYPE[c.kind] for c in cols}
    read_types = {c.name: (object if c.kind == "int" else _PD_DTYPE[c.kind]) for c in cols}
    try:
        if b"\x0b" in text or b"\x0c" in text:
            raise ValueError("VT/FF separate fields in C (isspace) but not in pandas' tokenizer")
        df = pd.read_csv(io.BytesIO(text), sep=r"\s+", header=None, names=names,
                         dtype=read_types, skip_blank_lines=True, engine="c",
                         na_filter=False, quoting=3, encoding="utf-8")
    except Exception:
        df = None
    if df is not None and not (isinstance(df.index, pd.RangeIndex) and df.index.start == 0):
        df = None   # more fields than columns: pandas moved the leading ones into the index
    if df is not None:
        for c in cols:
            if c.kind == "int":
                v = strict_int_column(df[c.name].to_numpy(object))
                if v is None:
                    df = None
                    break
                df[c.name] = v
            elif c.kind == "float" and not all_finite(df[c.name].to_numpy(np.float64)):
                df = None
                break
    if df is not None:
        n_lines = text.count(b"\n") + (0 if text.endswith(b"\n") else 1)
        if len(df) == n_lines:
            line = np.arange(1, n_lines + 1, dtype=np.int64)   # no blank line: row i is line i+1
        else:
            line = _content_line_numbers(text)
        if len(df) != len(line):
            df = None
        elif cols[-1].kind == "str" and (df[cols[-1].name] == "").any():
            df = None   # a line with too few fields leaves the last column empty
        else:
            df["line"] = line
    if df is None:
        extra: list[int] = []
        rows, lines = _slow_parse(spath, text, cols, label, extra_ok, extra)
        df = pd.DataFrame({c.name: pd.Series([r[i] for r in rows], dtype=dtypes[c.name])
                           for i, c in enumerate(cols)})
        df["line"] = np.asarray(lines, dtype=np.int64)
        if extra:
            df.attrs["extra_fields"] = (extra[0], len(extra))
    return df


def _content_line_numbers(text: bytes) -> np.ndarray:
    """1-based numbers of the lines that hold something other than white space."""
    arr = np.frombuffer(text, dtype=np.uint8)
    nl = np.flatnonzero(arr == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [len(arr)]))
    content = (arr != 32) & (arr != 9) & (arr != 13) & (arr != 10)
    csum = np.concatenate(([0], np.cumsum(content)))
    has = csum[ends] - csum[starts] > 0
    return (np.flatnonzero(has) + 1).astype(np.int64)


def _raise_rows(spath: str, df: pd.DataFrame, bad: np.ndarray, message: Callable[[pd.Series], str],
                hint: str) -> None:
    """Raise a FormatError naming every row where `bad` is True."""
    if not bad.any():
        return
    sub = df[bad]
    problems = [Problem(spath, int(r["line"]), message(r)) for _, r in sub.head(200).iterrows()]
    if len(sub) > 200:
        problems.append(Problem(spath, None, f"{len(sub) - 200} more lines with the same problem"))
    raise FormatError(problems, hint=hint)


def str_series(values) -> pd.Series:
    return pd.Series(values, dtype=object, copy=False)


# --------------------------------------------------------------------------- runs

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


# Fast path for clean run files (single spaces, no tab, CR or comment): Arrow's CSV reader, string
# columns returned as Categoricals with byte-order sorted categories. Anything Arrow rejects, or whose
# row count differs from its line count, goes through the validating reader, so messages are the same.

def _clean_for_arrow(data: bytes) -> bool:
    """No tab, CR, VT, FF, NUL or comment (one-byte memchr scans). Double, leading or trailing spaces
    need no scan: they make an extra column, which Arrow rejects, or, with a field missing, an empty
    field, which `arrow_run` refuses after parsing. Blank lines are caught by the row count."""
    return (len(data) > 0 and b"\t" not in data and b"\r" not in data and b"#" not in data
            and b"\x0b" not in data and b"\x0c" not in data and b"\x00" not in data)


def _arrow_table(data: bytes):
    """A clean run file parsed by Arrow (6 columns per line enforced; the Q0 column, which trec_eval
    ignores, is not converted)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = ["topic", "q0", "doc", "rank", "score", "tag"]
    types = {"topic": pa.string(), "q0": pa.string(), "doc": pa.string(), "rank": pa.int64(),
             "score": pa.float64(), "tag": pa.string()}
    return pacsv.read_csv(io.BytesIO(data),
                          read_options=pacsv.ReadOptions(column_names=names, use_threads=False),
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


def grouped_categorical(chunked) -> pd.Categorical:
    """Like sorted_categorical for a column made of long runs of equal values (topic ids in run
    files): only the first value of each run of equal values is hashed."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = chunked.combine_chunks() if isinstance(chunked, pa.ChunkedArray) else chunked
    n = len(arr)
    if n == 0:
        return sorted_categorical(arr)
    change = np.ones(n, bool)
    change[1:] = pc.not_equal(arr.slice(1), arr.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    heads = np.flatnonzero(change)
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
    if not all_finite(tab.column("score").to_numpy()):
        return None   # inf / 1e400: the validating reader names the line
    tags = tab.column("tag")
    tag = tags[0].as_py()
    if not pc.all(pc.equal(tags, tag)).as_py():
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


# --------------------------------------------------------------------------- judgments

QRELS_COLS = [_Col("topic", "str", "a topic id"), _Col("iter", "str", "an iteration field (usually 0)"),
              _Col("doc", "str", "a document id"), _Col("grade", "int", "an integer relevance grade")]
QRELS_LABEL = "topic iter doc grade"

PRELS_COLS = [_Col("topic", "str", "a topic id"), _Col("doc", "str", "a document id"),
              _Col("grade", "int", "an integer relevance grade"),
              _Col("method", "str", "a selection method (e.g. 0 MTC, 1 statAP, 2 both)"),
              _Col("prob", "float", "an inclusion probability in (0, 1]")]
PRELS_LABEL = "topic doc grade method probability"

SAMPLE_COLS = [_Col("topic", "str", "a topic id"), _Col("iter", "str", "an iteration field (usually 0)"),
               _Col("doc", "str", "a document id"), _Col("stratum", "int", "an integer stratum number"),
               _Col("grade", "int", "an integer grade (-1 = pooled, not sampled)")]
SAMPLE_LABEL = "topic iter doc stratum grade"


def rule_text(rule: str) -> str:
    return {"last": "the last judgment wins", "max": "the highest grade wins",
            "majority": "the most frequent grade wins (ties: the latest of the tied grades)"}[rule]


def resolve_duplicate_judgments(df: pd.DataFrame, spath: str, w: Warnings,
                                rule: str = "last") -> pd.DataFrame:
    """Resolve a document judged more than once for a topic (rows in file/log order).

    rule 'last': the later row wins (a re-judgment); 'max': the highest grade wins; 'majority': the most
    frequent grade wins, ties going to the latest of the tied grades. Negative grades (pooled, not
    judged) never override a real judgment. Identical repeats are folded and counted; differing ones
    are reported. Extra columns (stratum, prob, method) keep the latest known value.
    """
    if rule not in CONFLICT_RULES:
        raise FormatError(Problem(spath, None, f"unknown conflict rule {rule!r}"),
                          hint=f"use one of: {', '.join(CONFLICT_RULES)}")
    if len(df) == 0:
        return df
    topic = df["topic"].to_numpy(object)
    doc = df["doc"].to_numpy(object)
    ct, ut = pd.factorize(topic)
    cd, ud = pd.factorize(doc)
    key = ct.astype(np.int64) * (len(ud) + 1) + cd
    dup_any = pd.Series(key).duplicated(keep=False).to_numpy()
    if not dup_any.any():
        return df
    d = df[dup_any]
    dk = key[dup_any]
    grades = d["grade"].to_numpy(np.int64)
    n_distinct = pd.Series(grades).groupby(dk).nunique()
    conflicting = n_distinct[n_distinct > 1].index
    n_same = int((pd.Series(dk).value_counts() - 1)[n_distinct[n_distinct == 1].index].sum())
    has_line = "line" in d.columns
    for i, k in enumerate(conflicting[:50]):
        rows = d[dk == k]
        if has_line:
            where = ", ".join(f"line {int(l)}: {int(g)}" for l, g in zip(rows["line"], rows["grade"]))
        else:
            where = ", ".join(str(int(g)) for g in rows["grade"])
        line = int(rows["line"].iat[-1]) if has_line else None
        w.add(spath, line, f"document {rows['doc'].iat[0]} judged differently for topic {rows['topic'].iat[0]} "
                           f"({where}); rule '{rule}': {rule_text(rule)}")
    if len(conflicting) > 50:
        w.add(spath, None, f"{len(conflicting) - 50} more conflicting judgments resolved by rule '{rule}'")
    if n_same:
        w.add(spath, None, f"{n_same} repeated identical judgment lines folded into one")
    return _resolve(df, key, rule)


def _resolve(df: pd.DataFrame, key: np.ndarray, rule: str) -> pd.DataFrame:
    """One row per key: grade chosen by `rule`, extra columns from the latest row where known."""
    n = len(df)
    pos = np.arange(n)
    grade = df["grade"].to_numpy(np.int64)
    real = grade >= 0
    # rank of each row among its key's candidates: real judgments beat negative grades
    if rule == "last":
        score = np.stack([real.astype(np.int64), pos])
    elif rule == "max":
        score = np.stack([real.astype(np.int64), grade, pos])
    else:  # majority: count of the (key, grade) pair, then recency of that grade
        kg = pd.MultiIndex.from_arrays([key, grade])
        cnt = pd.Series(1, index=kg).groupby(level=[0, 1]).transform("size").to_numpy()
        last_pos = pd.Series(pos, index=kg).groupby(level=[0, 1]).transform("max").to_numpy()
        score = np.stack([real.astype(np.int64), cnt, last_pos, pos])
    # np.lexsort's primary key is the last one: sort by key, then real, ..., pos; the last row per key wins
    order = np.lexsort(tuple(score[::-1]) + (key,))
    ks = key[order]
    last_of_key = np.concatenate((ks[1:] != ks[:-1], [True]))
    winners = np.sort(order[last_of_key])
    out = df.iloc[winners].copy()
    for col in ("stratum", "prob", "method"):
        if col in df.columns:
            s = df[col]
            known = s.notna()
            if col == "method":
                known = known & (s.astype(str) != "")
            latest = pd.Series(s.to_numpy()[known.to_numpy()],
                               index=key[known.to_numpy()]).groupby(level=0).last()
            got = pd.Series(key[winners]).map(latest)
            vals = np.where(got.notna().to_numpy(), got.to_numpy(), out[col].to_numpy())
            out[col] = pd.Series(vals, index=out.index).astype(s.dtype)
    return out


def _judgment_table(df: pd.DataFrame, extra: tuple[str, ...] = ()) -> pd.DataFrame:
    out = {"topic": str_series(df["topic"].to_numpy(object)), "doc": str_series(df["doc"].to_numpy(object)),
           "grade": df["grade"].to_numpy(np.int64)}
    for c in extra:
        if c == "stratum":
            out[c] = df[c].to_numpy(np.int64)
        elif c == "prob":
            out[c] = df[c].to_numpy(np.float64)
        else:
            out[c] = str_series(df[c].astype(str).to_numpy(object))
    out["line"] = df["line"].to_numpy(np.int64)
    return pd.DataFrame(out, copy=False)


def _require_rows(spath: str, df: pd.DataFrame, label: str) -> None:
    if len(df) == 0:
        raise FormatError(Problem(spath, None, "file is empty (holds no judgments)"),
                          hint=f"a judgment line reads: {label}")


def read_qrels(path: PathLike, warnings: Warnings | None = None, rule: str = "last",
               data: bytes | None = None) -> pd.DataFrame:
    """Read TREC qrels (`topic iter doc grade`) into topic, doc, grade (+ line).

    Grades may be graded or negative (pooled, not judged). Repeated judgments resolve by `rule`.
    """
    w = warnings if warnings is not None else Warnings()
    spath = str(path)
    df = read_table(path, QRELS_COLS, QRELS_LABEL, data=data)
    _require_rows(spath, df, QRELS_LABEL)
    check_grade_bounds(spath, df["grade"].to_numpy(np.int64), df["line"].to_numpy(np.int64))
    df = resolve_duplicate_judgments(df, spath, w, rule)
    return _judgment_table(df)


def read_prels(path: PathLike, warnings: Warnings | None = None, rule: str = "last",
               data: bytes | None = None) -> pd.DataFrame:
    """Read Million Query prels (`topic doc grade method probability`) into topic, doc, grade, method,
    prob (+ line). The probability must lie in (0, 1]."""
    w = warnings if warnings is not None else Warnings()
    spath = str(path)
    df = read_table(path, PRELS_COLS, PRELS_LABEL, data=data)
    _require_rows(spath, df, PRELS_LABEL)
    check_grade_bounds(spath, df["grade"].to_numpy(np.int64), df["line"].to_numpy(np.int64))
    p = df["prob"].to_numpy(np.float64)
    _raise_rows(spath, df, ~((p > 0) & (p <= 1)),
                lambda r: f"probability must be in (0, 1], found {r['prob']!r}",
                hint="the 5th field is the document's inclusion probability (1 when selected with certainty)")
    df = resolve_duplicate_judgments(df, spath, w, rule)
    from .mq import warn_unknown_methods
    warn_unknown_methods(spath, df, w)
    return _judgment_table(df, ("method", "prob"))


def read_sample(path: PathLike, warnings: Warnings | None = None, rule: str = "last",
                data: bytes | None = None) -> pd.DataFrame:
    """Read sample_eval qrels (`topic iter doc stratum grade`; grade -1 = pooled, not sampled) into
    topic, doc, grade, stratum, prob (+ line).

    prob is each stratum's sampling rate, sampled / pooled documents of that (topic, stratum), the
    inclusion probability of every document in the stratum. A stratum with no sampled document is
    reported (its prob is 0).
    """
    w = warnings if warnings is not None else Warnings()
    spath = str(path)
    df = read_table(path, SAMPLE_COLS, SAMPLE_LABEL, data=data)
    _require_rows(spath, df, SAMPLE_LABEL)
    check_grade_bounds(spath, df["grade"].to_numpy(np.int64), df["line"].to_numpy(np.int64))
    _raise_rows(spath, df, df["grade"].to_numpy(np.int64) < -1,
                lambda r: f"grade {int(r['grade'])} is not allowed (-1 = pooled, not sampled; 0.. = judged)",
                hint="sample_eval grades are -1 or a judgment >= 0")
    df = resolve_duplicate_judgments(df, spath, w, rule)
    df = df.copy()
    df["prob"] = stratum_probabilities(df["topic"], df["stratum"], df["grade"])
    empty = df[df["prob"] == 0].drop_duplicates(["topic", "stratum"])
    for _, r in empty.head(20).iterrows():
        w.add(spath, int(r["line"]), f"stratum {int(r['stratum'])} of topic {r['topic']} has no sampled "
                                     f"document (all grades -1); its inclusion probability is 0")
    return _judgment_table(df, ("stratum", "prob"))


def stratum_probabilities(topic: pd.Series, stratum: pd.Series, grade: pd.Series) -> np.ndarray:
    """Per row: sampled (grade >= 0) / pooled documents of its (topic, stratum)."""
    key = pd.MultiIndex.from_arrays([np.asarray(topic, dtype=object), np.asarray(stratum, dtype=np.int64)])
    sampled = pd.Series((np.asarray(grade) >= 0).astype(np.float64), index=key)
    return sampled.groupby(level=[0, 1]).transform("mean").to_numpy(np.float64)


def write_qrels(path: PathLike, qrels: pd.DataFrame) -> None:
    """Write `topic 0 doc grade` lines sorted by topic then doc."""
    df = qrels.sort_values(["topic", "doc"], kind="mergesort")
    out = pd.DataFrame({"topic": df["topic"], "iter": 0, "doc": df["doc"], "grade": df["grade"].astype(int)})
    write_text(path, out.to_csv(sep=" ", header=False, index=False))


def write_prels(path: PathLike, prels: pd.DataFrame) -> None:
    """Write `topic doc grade method probability` lines (method defaults to 0, prob to 1)."""
    df = prels.sort_values(["topic", "doc"], kind="mergesort")
    method = df["method"].astype(str) if "method" in df else "0"
    prob = df["prob"].map(repr) if "prob" in df else "1"
    out = pd.DataFrame({"topic": df["topic"], "doc": df["doc"], "grade": df["grade"].astype(int),
                        "method": method, "prob": prob})
    write_text(path, out.to_csv(sep=" ", header=False, index=False))


def write_sample(path: PathLike, sample: pd.DataFrame) -> None:
    """Write sample_eval qrels `topic 0 doc stratum grade` (grade -1: pooled, not sampled)."""
    df = sample.sort_values(["topic", "stratum", "doc"], kind="mergesort")
    out = pd.DataFrame({"topic": df["topic"], "iter": 0, "doc": df["doc"],
                        "stratum": df["stratum"].astype(int), "grade": df["grade"].astype(int)})
    write_text(path, out.to_csv(sep=" ", header=False, index=False))


# --------------------------------------------------------------------------- format detection

JUDGMENT_READERS: dict[str, Callable] = {"qrels": read_qrels, "prels": read_prels, "sample": read_sample}
JUDGMENT_SUFFIXES = {".qrels": "qrels", ".prels": "prels", ".sample": "sample"}


def _base_suffix(path: PathLike) -> str:
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).suffix


def detect_judgment_kind(path: PathLike, data: bytes | None = None) -> str:
    """'qrels', 'prels' or 'sample': by suffix (.qrels/.prels/.sample), else by the first data lines."""
    kind = JUDGMENT_SUFFIXES.get(_base_suffix(path))
    if kind:
        return kind
    text = (read_bytes(path) if data is None else data)[:65536]
    lines = [ln.split() for ln in text.splitlines()[:200] if ln.strip() and not ln.lstrip().startswith(b"#")]
    if not lines:
        return "qrels"
    n = max(set(len(t) for t in lines), key=[len(t) for t in lines].count)
    if n != 5:
        return "qrels"
    five = [t for t in lines if len(t) == 5]
    # only the documented layouts: prels = field 3 an integer grade, field 5 a probability in (0, 1];
    # sample = field 2 an iteration marker (0/Q0), fields 4 and 5 integers. Anything else is read as
    # qrels, whose reader refuses the fifth field (never a shifted reading).
    if all(_is_int(t[2]) and _is_prob(t[4]) for t in five) and \
            any(b"." in t[4] or b"e" in t[4].lower() for t in five):
        return "prels"
    if all(_is_int(t[3]) and _is_int(t[4]) for t in five) and len({t[1] for t in five}) == 1 \
            and len({t[2] for t in five}) > 1:
        return "sample"
    if all(_is_int(t[2]) and _is_prob(t[4]) for t in five):
        return "prels"
    return "qrels"


def _is_int(tok: bytes) -> bool:
    try:
        parse_int(tok.decode("ascii"))
        return True
    except (ValueError, UnicodeDecodeError):
        return False


def _is_prob(tok: bytes) -> bool:
    try:
        return 0 < parse_float(tok.decode("ascii")) <= 1
    except (ValueError, UnicodeDecodeError):
        return False


def read_judgments(path: PathLike, warnings: Warnings | None = None, rule: str = "last",
                   kind: str | None = None) -> pd.DataFrame:
    """Read any judgment file (qrels, prels or sample_eval), detected by suffix or content."""
    data = read_bytes(path)
    kind = kind or detect_judgment_kind(path, data)
    if kind not in JUDGMENT_READERS:
        raise FormatError(Problem(str(path), None, f"unknown judgment format {kind!r}"),
                          hint=f"use one of: {', '.join(JUDGMENT_READERS)}")
    return JUDGMENT_READERS[kind](path, warnings, rule=rule, data=data)


def write_judgments(path: PathLike, table: pd.DataFrame, kind: str | None = None) -> None:
    """Write a judgment table as qrels, prels or sample_eval (by `kind`, else by suffix, else qrels)."""
    kind = kind or JUDGMENT_SUFFIXES.get(_base_suffix(path), "qrels")
    {"qrels": write_qrels, "prels": write_prels, "sample": write_sample}[kind](path, table)


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


# --------------------------------------------------------------------------- plain readers (no pandas)
# `cranfield eval QRELS RUN` on small files starts in a fraction of the time without pandas. These readers
# work on the bytes with numpy (no Python object per field) and read only files the readers above accept
# without a word, to the same values; for any other (a malformed line, a second tag, an empty file, another
# judgment format) they return None and the caller uses the readers above, so every message and rule stays
# theirs. Repeated (topic, document) pairs are the caller's to check (it codes the documents anyway).

_WHITESPACE = np.zeros(256, bool)
_WHITESPACE[[9, 10, 11, 12, 13, 32]] = True       # C isspace = bytes.split(): what the line reader splits on
_OTHER_COMMENT = LazyPattern(rb"(?m)^[ \t\r\x0b\x0c]*#")


class PlainTable:
    """A text's fields located: `chars` its bytes (zero-padded), `starts` / `lens` per line and field."""

    def __init__(self, chars: np.ndarray, starts: np.ndarray, lens: np.ndarray):
        self.chars, self.starts, self.lens = chars, starts, lens

    def __len__(self) -> int:
        return len(self.starts)

    def column(self, k: int) -> np.ndarray:
        """Field k of every line as a byte matrix by position (`grammar.token_matrix`)."""
        return token_matrix(self.chars, self.starts[:, k], self.lens[:, k])

    def same_as_previous(self, k: int) -> np.ndarray:
        """Per line after the first: whether field k equals the previous line's."""
        lens = self.lens[:, k]
        same = lens[1:] == lens[:-1]
        for c in self.column(k):
            same &= c[1:] == c[:-1]
        return same

    def blocks(self, k: int) -> tuple[np.ndarray, list[str]]:
        """Field k in runs of equal values: (first line of each run, its value as text)."""
        heads = np.flatnonzero(np.concatenate(([True], ~self.same_as_previous(k))))
        c = self.chars
        return heads, [c[a:a + n].tobytes().decode("utf-8")
                       for a, n in zip(self.starts[heads, k].tolist(), self.lens[heads, k].tolist())]

    def strings(self, k: int) -> np.ndarray:
        """Field k of every line as a numpy bytes array (compares and sorts as strcmp: no NUL in a text)."""
        m = np.ascontiguousarray(self.column(k).T)
        return m.view(f"S{m.shape[1]}").ravel()


def plain_table(data: bytes, n: int) -> PlainTable | None:
    """The fields of a UTF-8 text whose every line is blank, a comment or exactly `n` fields, split as
    `_slow_parse` splits them (C isspace); None otherwise (NUL, not UTF-8, another field count, no line)."""
    if b"\x00" in data:
        return None
    if b"#" in data:
        data = _COMMENT_RE.sub(b"", data)
        if _OTHER_COMMENT.search(data):                    # a comment after CR/VT/FF: the line reader's case
            return None
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    a = np.frombuffer(data, np.uint8)
    field = np.zeros(len(a) + 2, bool)                    # padded: a field starts after, ends before it
    if _WHITESPACE[a[a < 32]].all():
        np.greater(a, 32, out=field[1:-1])                 # no other control byte: white space is <= 32
    else:
        np.logical_not(_WHITESPACE[a], out=field[1:-1])
    edges = np.flatnonzero(field[1:] != field[:-1])        # where a field starts, where it ends
    starts, ends = edges[0::2], edges[1::2]
    bounds = np.concatenate(([0], np.flatnonzero(a == 10) + 1, [len(a)]))
    per_line = np.diff(np.searchsorted(starts, bounds))
    if not len(starts) or not ((per_line == 0) | (per_line == n)).all():
        return None
    lens = ends - starts
    chars = np.concatenate((a, np.zeros(int(lens.max()), np.uint8)))
    return PlainTable(chars, starts.reshape(-1, n), lens.reshape(-1, n))


def strcmp_codes(strings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct values in strcmp order, per value its index among them) of a numpy bytes array
    (NUL-free): sorted as big-endian 8-byte integers, which order as the bytes do."""
    n, w = len(strings), max(strings.dtype.itemsize, 1)
    b = np.zeros((n, -(-w // 8) * 8), np.uint8)
    b[:, :strings.dtype.itemsize] = strings.view(np.uint8).reshape(n, strings.dtype.itemsize)
    keys = [np.ascontiguousarray(k, np.uint64) for k in b.view(">u8").T]
    order = np.lexsort(keys[::-1]) if len(keys) > 1 else np.argsort(keys[0], kind="stable")
    first = np.zeros(n, bool)
    first[:1] = True
    for k in keys:
        ks = k[order]
        first[1:] |= ks[1:] != ks[:-1]
    codes = np.empty(n, np.int64)
    codes[order] = np.cumsum(first) - 1
    return strings[order[first]], codes


def plain_run(path: PathLike, data: bytes | None = None):
    """A run file `read_runs` reads without a warning, read without pandas: (tag, topic blocks (first
    line, topic), documents (numpy bytes), scores); None when it needs `read_runs`."""
    try:
        data = read_bytes(path) if data is None else data
    except FormatError:
        return None
    t = plain_table(data, len(RUN_COLS))
    if t is None or (len(t) > 1 and not t.same_as_previous(5).all()):
        return None                                        # a malformed file, or a second tag (a warning)
    if int_column(t.column(3), t.lens[:, 3]) is None:
        return None
    scores = float_column(t.column(4), t.lens[:, 4])
    if scores is None:
        return None
    tag = t.chars[t.starts[0, 5]:t.starts[0, 5] + t.lens[0, 5]].tobytes().decode("utf-8")
    return tag, t.blocks(0), t.strings(2), scores


def plain_qrels(path: PathLike, data: bytes | None = None):
    """A qrels file `read_judgments` reads without a warning, read without pandas: (topic blocks (first
    line, topic), documents (numpy bytes), grades); None when it needs `read_judgments`."""
    try:
        data = read_bytes(path) if data is None else data
        if detect_judgment_kind(path, data) != "qrels":
            return None
    except FormatError:
        return None
    t = plain_table(data, len(QRELS_COLS))
    if t is None:
        return None
    grades = int_column(t.column(3), t.lens[:, 3])
    if grades is None or grades.min() < GRADE_MIN or grades.max() > GRADE_MAX:
        return None
    return t.blocks(0), t.strings(2), grades


READERS: dict[str, Callable] = {"run": read_run, "qrels": read_qrels, "prels": read_prels,
                                "sample": read_sample}
