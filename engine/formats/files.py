"""Reading files safely (bytes, text checks, .gz) and the generic table reader every format's reader uses
(file:line messages, the strict grammar).
"""
from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Callable
import numpy as np

from ..util.lazy import LazyPattern, lazy_module
from ..errors import FormatError, Problem
from .grammar import all_finite, find_nul, parse_float, parse_int, strict_int_column
from ..util import fs

pd = lazy_module("pandas")      # the plain readers (small clean files) never import it


PathLike = str | os.PathLike


_COMMENT_RE = LazyPattern(rb"(?m)^[ \t]*#[^\n]*")


_BINARY_SNIFF = 8192


MAX_READ_ENV = "CRANFIELD_MAX_READ"     # set by `cranfield --max-read SIZE` (any command)
MAX_READ_DEFAULT = 16 << 30             # bytes a reader may hold: a file, or what a .gz decompresses to
GZIP_RATIO = 100                        # without --max-read: a .gz may not grow more than 100-fold ...
GZIP_RATIO_FLOOR = 16 << 20             # ... beyond 16 MB (real run and qrels files compress 3-10 fold)
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """'500M', '2G', '1048576' -> bytes (K, M, G, T are powers of 1024); ValueError when not a size."""
    t = str(text).strip().upper().removesuffix("B").removesuffix("I")
    unit = t[-1:] if t[-1:] in _SIZE_UNITS and t[-1:] else ""
    num = t[:-1] if unit else t
    v = float(num)
    if not (v > 0 and v < float("inf")):
        raise ValueError(text)
    return int(v * _SIZE_UNITS[unit])


def max_read() -> tuple[int, bool]:
    """(the read limit in bytes, True when it was given explicitly: then no ratio check applies)."""
    given = os.environ.get(MAX_READ_ENV)
    if given:
        try:
            return parse_size(given), True
        except ValueError:
            pass
    return MAX_READ_DEFAULT, False


def _too_big(path, what: str) -> FormatError:
    return FormatError(Problem(str(path), None, what),
                       hint="if the file is genuine, raise the limit with --max-read SIZE (e.g. --max-read 64G), "
                            f"or set {MAX_READ_ENV}")


def regular_file(path: PathLike, whole: bool = True) -> os.stat_result:
    """The stat of `path` when it is a regular file (within the read limit when it is read `whole`, not
    streamed); else a FormatError, decided by stat before anything is opened (a FIFO would block,
    /dev/zero never ends)."""
    import stat as st_
    try:
        st = fs.stat(path)
    except FileNotFoundError:
        raise FormatError(Problem(str(path), None, "file not found"),
                          hint="check the path; runs and judgments may be plain text or .gz") from None
    except PermissionError:
        raise FormatError(Problem(str(path), None, "permission denied"),
                          hint="make the file readable (chmod +r)") from None
    except OSError as exc:
        raise FormatError(Problem(str(path), None, f"cannot be read ({exc.strerror or exc})")) from None
    if st_.S_ISDIR(st.st_mode):
        raise FormatError(Problem(str(path), None, "is a directory, expected a file"))
    if not st_.S_ISREG(st.st_mode):
        kind = ("a FIFO (named pipe)" if st_.S_ISFIFO(st.st_mode) else "a device" if st_.S_ISCHR(st.st_mode)
                or st_.S_ISBLK(st.st_mode) else "a socket" if st_.S_ISSOCK(st.st_mode) else "not a file")
        raise FormatError(Problem(str(path), None, f"not a regular file ({kind}); refused without reading"),
                          hint="give a regular file (save the stream to a file first)")
    limit, _ = max_read()
    if whole and st.st_size > limit:
        raise _too_big(path, f"{st.st_size:,} bytes, over the read limit of {limit:,} bytes")
    return st


def _gunzip(path, data: bytes) -> bytes:
    """`data` decompressed in bounded steps: refused once the output passes the limit (or, without
    --max-read, grows more than GZIP_RATIO-fold beyond GZIP_RATIO_FLOOR: a decompression bomb)."""
    import gzip
    limit, explicit = max_read()
    cap = limit if explicit else min(limit, max(GZIP_RATIO_FLOOR, GZIP_RATIO * len(data)))
    out, total = [], 0
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
        while True:
            piece = fh.read(min(1 << 24, cap + 1 - total))
            if not piece:
                break
            total += len(piece)
            if total > cap:
                why = (f"over the read limit of {limit:,} bytes" if cap == limit else
                       f"{cap // max(1, len(data))} times its {len(data):,} compressed bytes (a decompression bomb?)")
                raise _too_big(path, f"decompresses to more than {cap:,} bytes, {why}; refused")
            out.append(piece)
    return b"".join(out)


def read_bytes(path: PathLike, raw: bytes | None = None) -> bytes:
    """Whole file content, transparently gunzipped when the name ends in .gz or the magic says so
    (`raw`: the file's bytes when already read). Only a regular file within the read limit is opened
    (`regular_file`); decompression stops at the limit (`_gunzip`)."""
    p = Path(path)
    try:
        if raw is None:
            regular_file(p)
        data = fs.read_bytes(p) if raw is None else raw
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
            data = _gunzip(path, data)
        except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise FormatError(Problem(str(path), None, f"corrupt gzip data ({exc})"),
                              hint="re-compress the file or use the uncompressed version") from None
    elif p.suffix == ".gz" and data:
        raise FormatError(Problem(str(path), None, "name ends in .gz but the content is not gzip data"),
                          hint="rename the file without .gz or compress it with gzip")
    if data[:3] == b"\xef\xbb\xbf":  # a UTF-8 byte order mark would become part of the first topic id
        data = data[3:]
    return data


def read_head(path: PathLike, n: int = 4096) -> bytes | None:
    """The first `n` bytes of a file (of its content when gzipped), for sniffing a format; None when it
    cannot be read, or is no regular file (a FIFO would block; the reader proper then names the problem)."""
    import gzip
    import zlib
    try:
        regular_file(path, whole=False)
    except FormatError:
        return None
    try:
        with fs.open(path, "rb") as fh:
            data = fh.read(n)
            if data[:2] == b"\x1f\x8b":
                fh.seek(0)
                with gzip.open(fh, "rb") as gz:
                    data = gz.read(n)
    except (OSError, EOFError, zlib.error):     # zlib.error is not an OSError
        return None
    return data


def check_text(path: str, data: bytes) -> None:
    """Raise if `data` holds a NUL byte anywhere (binary data): a wrong file, not a malformed line."""
    find_nul(path, data)


def write_text(path: PathLike, text: str) -> None:
    """Write text atomically (temp file + rename), gzip-compressed when the name ends in .gz."""
    from ..util.atomic import atomic_write
    p = Path(path)
    data = text.encode("utf-8")
    if p.suffix == ".gz":
        import gzip
        data = gzip.compress(data, compresslevel=6, mtime=0)
    atomic_write(p, data)


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
    checked against the strict grammar (`engine.formats.grammar`), floats finite, exactly len(cols) fields per
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

