"""Readers and writers for TREC runs and qrels (plain or .gz).

Every reader either returns a clean columnar table or raises `FormatError` naming each malformed
line as ``file:line: what is wrong``. Duplicates are resolved by a stated rule and reported through
a `Warnings` collector, never dropped silently.
"""
from __future__ import annotations

import gzip
import io
import os
import re
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .errors import FormatError, Problem, Warnings

PathLike = str | os.PathLike

RUN_COLUMNS = ["run", "topic", "doc", "rank", "score"]
QRELS_COLUMNS = ["topic", "doc", "grade"]

_COMMENT_RE = re.compile(rb"(?m)^[ \t]*#[^\n]*")


def read_bytes(path: PathLike) -> bytes:
    """Whole file content, transparently gunzipped when the name ends in .gz or the magic says so."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise FormatError(Problem(str(path), None, "file not found"),
                          hint="check the path; runs and judgments may be plain text or .gz") from None
    except IsADirectoryError:
        raise FormatError(Problem(str(path), None, "is a directory, expected a file")) from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise FormatError(Problem(str(path), None, f"corrupt gzip data ({exc})")) from None
    return data


def write_text(path: PathLike, text: str) -> None:
    """Write text atomically (temp file + rename), gzip-compressed when the name ends in .gz."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp{os.getpid()}")
    data = text.encode("utf-8")
    if p.suffix == ".gz":
        data = gzip.compress(data, compresslevel=6, mtime=0)
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, p)


# --------------------------------------------------------------------------- generic table reader

class _Col:
    """A column spec: name, converter for the slow validating path, pandas dtype for the fast path."""

    def __init__(self, name: str, kind: str, what: str):
        self.name, self.kind, self.what = name, kind, what


def _convert(kind: str, token: str):
    if kind == "str":
        return token
    if kind == "int":
        return int(token)
    if kind == "float":
        v = float(token)
        if v != v:  # NaN
            raise ValueError("NaN")
        return v
    raise AssertionError(kind)


def _slow_parse(path: str, text: bytes, cols: list[_Col], label: str,
                alt_ncols: tuple[int, ...] = ()) -> tuple[list[list], list[int]]:
    """Line-by-line validation; collects every problem and raises if there is any."""
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
            problems.append(Problem(path, lineno, "is not valid UTF-8 text"))
            continue
        toks = line.split()
        if len(toks) != n:
            problems.append(Problem(path, lineno,
                                    f"expected {n} fields ({label}), found {len(toks)}: {line.strip()[:80]!r}"))
            continue
        row = []
        ok = True
        for c, t in zip(cols, toks):
            try:
                row.append(_convert(c.kind, t))
            except ValueError:
                problems.append(Problem(path, lineno, f"{c.name} must be {c.what}, found {t!r}"))
                ok = False
                break
        if ok:
            rows.append(row)
            lines.append(lineno)
    if problems:
        raise FormatError(problems, hint=f"each line must read: {label}")
    return rows, lines


def read_table(path: PathLike, cols: list[_Col], label: str,
               data: bytes | None = None) -> pd.DataFrame:
    """Parse a whitespace-separated file into a DataFrame with a `line` column (1-based line numbers).

    Fast path: pandas' C tokenizer with strict dtypes. Any irregularity falls back to the validating
    line-by-line parser, which names every malformed line.
    """
    spath = str(path)
    text = read_bytes(path) if data is None else data
    if b"#" in text:
        text = _COMMENT_RE.sub(b"", text)  # keep line numbering: comment lines become blank
    names = [c.name for c in cols]
    dtypes = {c.name: {"str": str, "int": "int64", "float": "float64"}[c.kind] for c in cols}
    df = None
    if text.strip():
        try:
            df = pd.read_csv(io.BytesIO(text), sep=r"\s+", header=None, names=names,
                             dtype=dtypes, skip_blank_lines=True, engine="c",
                             na_filter=False, quoting=3, encoding="utf-8")
        except Exception:
            df = None
        if df is not None:
            nlines = _count_content_lines(text)
            if len(df) != nlines or any(df[c.name].isna().any() for c in cols if c.kind == "float"):
                df = None
            elif any((df[c.name] == "").any() for c in cols if c.kind == "str"):
                df = None
    else:
        return pd.DataFrame({**{c.name: pd.Series([], dtype=dtypes[c.name]) for c in cols},
                             "line": pd.Series([], dtype="int64")})
    if df is None:
        rows, lines = _slow_parse(spath, text, cols, label)
        df = pd.DataFrame(rows, columns=names)
        for c in cols:
            df[c.name] = df[c.name].astype(dtypes[c.name])
        df["line"] = np.asarray(lines, dtype=np.int64)
        return df
    df["line"] = _content_line_numbers(text)
    return df


def _count_content_lines(text: bytes) -> int:
    return len(_content_line_numbers(text))


def _content_line_numbers(text: bytes) -> np.ndarray:
    """1-based numbers of the lines that hold something other than white space."""
    arr = np.frombuffer(text, dtype=np.uint8)
    nl = np.flatnonzero(arr == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [len(arr)]))
    # a line has content if it has any byte that is not space/tab/CR
    content = (arr != 32) & (arr != 9) & (arr != 13) & (arr != 10)
    csum = np.concatenate(([0], np.cumsum(content)))
    has = csum[ends] - csum[starts] > 0
    return (np.flatnonzero(has) + 1).astype(np.int64)


# --------------------------------------------------------------------------- runs

RUN_COLS = [_Col("topic", "str", "a topic id"), _Col("q0", "str", "the literal Q0"),
            _Col("doc", "str", "a document id"), _Col("rank", "int", "an integer rank"),
            _Col("score", "float", "a number"), _Col("tag", "str", "a run tag")]
RUN_LABEL = "topic Q0 doc rank score tag"


def read_run(path: PathLike, warnings: Warnings | None = None, name: str | None = None,
             data: bytes | None = None) -> pd.DataFrame:
    """Read one TREC run file into columns run, topic, doc, rank, score.

    Rules applied: the run is named by the tag of its first line (or `name`); a document retrieved
    twice for the same topic keeps its first line and the repeat is reported.
    """
    w = warnings if warnings is not None else Warnings()
    spath = str(path)
    df = read_table(path, RUN_COLS, RUN_LABEL, data=data)
    if len(df) == 0:
        w.add(spath, None, "run file holds no results")
        tag = name or Path(spath).name.split(".")[0]
        return _empty_run(tag)
    tag = name or str(df["tag"].iat[0])
    if name is None:
        other = df["tag"] != tag
        if other.any():
            first = int(df["line"][other.to_numpy()].iat[0])
            w.add(spath, first, f"run tag {df['tag'][other.to_numpy()].iat[0]!r} differs from the first "
                                f"line's tag {tag!r}; all lines are evaluated as run {tag!r}")
    dup = df.duplicated(["topic", "doc"], keep="first").to_numpy()
    if dup.any():
        firsts = df.drop_duplicates(["topic", "doc"], keep="first").set_index(["topic", "doc"])["line"]
        for _, r in df[dup].head(50).iterrows():
            w.add(spath, int(r["line"]), f"document {r['doc']} retrieved twice for topic {r['topic']} "
                                         f"(first at line {int(firsts[(r['topic'], r['doc'])])}); "
                                         f"rule: the first occurrence is kept, this one is ignored")
        if dup.sum() > 50:
            w.add(spath, None, f"{int(dup.sum()) - 50} more duplicate documents ignored by the same rule")
        df = df[~dup]
    out = pd.DataFrame({"run": tag, "topic": df["topic"].to_numpy(), "doc": df["doc"].to_numpy(),
                        "rank": df["rank"].to_numpy(), "score": df["score"].to_numpy(),
                        "line": df["line"].to_numpy()})
    return out


def _empty_run(tag: str) -> pd.DataFrame:
    return pd.DataFrame({"run": pd.Series([], dtype=object), "topic": pd.Series([], dtype=object),
                         "doc": pd.Series([], dtype=object), "rank": pd.Series([], dtype="int64"),
                         "score": pd.Series([], dtype="float64"), "line": pd.Series([], dtype="int64")})


def read_runs(paths: list[PathLike], warnings: Warnings | None = None) -> pd.DataFrame:
    """Read several run files; two files with the same tag are an error (rename one)."""
    w = warnings if warnings is not None else Warnings()
    frames = []
    seen: dict[str, str] = {}
    for p in paths:
        df = read_run(p, w)
        if len(df):
            tag = str(df["run"].iat[0])
            if tag in seen:
                raise FormatError(Problem(str(p), 1, f"run tag {tag!r} is also the tag of {seen[tag]}"),
                                  hint="every run needs a distinct tag; edit the 6th column of one file")
            seen[tag] = str(p)
        frames.append(df)
    if not frames:
        return _empty_run("")
    return pd.concat(frames, ignore_index=True)


def write_run(path: PathLike, run: pd.DataFrame, tag: str | None = None) -> None:
    """Write a run as `topic Q0 doc rank score tag`, ranks renumbered 1.. in score order per topic."""
    df = run.sort_values(["topic", "score", "doc"], ascending=[True, False, False], kind="mergesort")
    ranks = df.groupby("topic", sort=False).cumcount() + 1
    t = tag if tag is not None else df["run"].astype(str)
    out = pd.DataFrame({"topic": df["topic"], "q0": "Q0", "doc": df["doc"], "rank": ranks,
                        "score": df["score"].map(lambda s: f"{s:.6f}"), "tag": t})
    write_text(path, out.to_csv(sep=" ", header=False, index=False))


# --------------------------------------------------------------------------- qrels

QRELS_COLS = [_Col("topic", "str", "a topic id"), _Col("iter", "str", "an iteration field (usually 0)"),
              _Col("doc", "str", "a document id"), _Col("grade", "int", "an integer relevance grade")]
QRELS_LABEL = "topic iter doc grade"


def resolve_duplicate_judgments(df: pd.DataFrame, spath: str, w: Warnings,
                                rule: str = "last") -> pd.DataFrame:
    """Resolve a document judged more than once for a topic.

    rule 'last' (default): the later line wins (a re-judgment); 'max': the highest grade wins.
    Identical repeats are folded and counted; differing ones are reported line by line.
    """
    dup_any = df.duplicated(["topic", "doc"], keep=False).to_numpy()
    if not dup_any.any():
        return df
    d = df[dup_any]
    g = d.groupby(["topic", "doc"], sort=False)["grade"].nunique()
    conflicting = set(g[g > 1].index)
    n_same = 0
    reported = 0
    for (topic, doc), grp in d.groupby(["topic", "doc"], sort=False):
        if (topic, doc) in conflicting:
            if reported < 50:
                lines = ", ".join(f"line {int(l)}: {int(gr)}" for l, gr in zip(grp["line"], grp["grade"]))
                w.add(spath, int(grp["line"].iat[-1]),
                      f"document {doc} judged differently for topic {topic} ({lines}); rule '{rule}': "
                      + ("the last line wins" if rule == "last" else "the highest grade wins"))
            reported += 1
        else:
            n_same += len(grp) - 1
    if reported > 50:
        w.add(spath, None, f"{reported - 50} more conflicting judgments resolved by rule '{rule}'")
    if n_same:
        w.add(spath, None, f"{n_same} repeated identical judgment lines folded into one")
    if rule == "max":
        df = df.sort_values("grade", kind="mergesort").drop_duplicates(["topic", "doc"], keep="last")
        return df.sort_values("line", kind="mergesort")
    return df.drop_duplicates(["topic", "doc"], keep="last")


def read_qrels(path: PathLike, warnings: Warnings | None = None, rule: str = "last",
               data: bytes | None = None) -> pd.DataFrame:
    """Read TREC qrels (`topic iter doc grade`); grades may be graded or negative (pooled, not judged)."""
    w = warnings if warnings is not None else Warnings()
    spath = str(path)
    df = read_table(path, QRELS_COLS, QRELS_LABEL, data=data)
    if len(df) == 0:
        raise FormatError(Problem(spath, None, "judgment file holds no judgments"),
                          hint="a qrels line reads: topic iter doc grade")
    df = resolve_duplicate_judgments(df, spath, w, rule)
    return pd.DataFrame({"topic": df["topic"].to_numpy(), "doc": df["doc"].to_numpy(),
                         "grade": df["grade"].to_numpy(np.int64), "line": df["line"].to_numpy()})


def write_qrels(path: PathLike, qrels: pd.DataFrame) -> None:
    """Write `topic 0 doc grade` lines sorted by topic then doc."""
    df = qrels.sort_values(["topic", "doc"], kind="mergesort")
    out = pd.DataFrame({"topic": df["topic"], "iter": 0, "doc": df["doc"], "grade": df["grade"].astype(int)})
    write_text(path, out.to_csv(sep=" ", header=False, index=False))


READERS: dict[str, Callable] = {"run": read_run, "qrels": read_qrels}
