"""Topic files: TREC `<top>` SGML, TSV (`id<TAB>title[<TAB>description[<TAB>narrative]]`) and JSONL.

`read_topics` returns a table with columns topic, title, description, narrative (str) and line (where
the topic starts). Problems are reported as ``file:line: what is wrong``.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import FormatError, Problem, Warnings
from .files import PathLike, check_text, read_bytes, write_text

TOPIC_COLUMNS = ["topic", "title", "description", "narrative"]
TOPIC_SUFFIXES = (".txt", ".sgml", ".sgm", ".trec", ".tsv", ".jsonl", ".json")

_TAG_RE = re.compile(r"<(/?)(top|num|title|desc|narr)\b[^>]*>", re.I)
_FIELD_PREFIX = {"num": re.compile(r"^\s*Number:\s*", re.I), "title": re.compile(r"^\s*Topic:\s*", re.I),
                 "desc": re.compile(r"^\s*Description:\s*", re.I),
                 "narr": re.compile(r"^\s*Narrative:\s*", re.I)}
_FIELD_COL = {"title": "title", "desc": "description", "narr": "narrative"}
_HEADER_IDS = {"id", "topic", "qid", "query_id", "topic_id", "num"}
_JSON_KEYS = {"topic": ("id", "topic", "qid", "query_id", "topic_id", "num", "number"),
              "title": ("title", "query", "text"),
              "description": ("description", "desc"),
              "narrative": ("narrative", "narr")}


def _clean(text: str) -> str:
    return " ".join(text.split())


def _decode(spath: str, data: bytes) -> str:
    check_text(spath, data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(Problem(spath, line, "is not valid UTF-8 text"),
                          hint="save the topics file as UTF-8") from None


def detect_topic_format(path: PathLike, text: str) -> str:
    """'sgml', 'tsv' or 'jsonl': by suffix (.tsv, .jsonl/.json), else by content."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    suffix = Path(name).suffix
    if suffix == ".tsv":
        return "tsv"
    if suffix in (".jsonl", ".json"):
        return "jsonl"
    head = text[:4096]
    if re.search(r"<top\b", head, re.I):
        return "sgml"
    if head.lstrip().startswith("{"):
        return "jsonl"
    return "tsv"


def _parse_sgml(spath: str, text: str) -> tuple[list[dict], list[Problem]]:
    rows: list[dict] = []
    problems: list[Problem] = []
    last = [0, 1]  # position, its line number (tags are visited in order)

    def line_of(pos: int) -> int:
        last[1] += text.count("\n", last[0], pos)
        last[0] = pos
        return last[1]

    cur: dict | None = None
    field: str | None = None
    field_start = 0
    top_line = 0

    def close_field(end: int) -> None:
        nonlocal field
        if cur is not None and field is not None:
            val = _FIELD_PREFIX[field].sub("", text[field_start:end], count=1)
            if field == "num":
                cur["topic"] = _clean(val)
            else:
                cur[_FIELD_COL[field]] = _clean(val)
        field = None

    for m in _TAG_RE.finditer(text):
        closing, tag = m.group(1) == "/", m.group(2).lower()
        ln = line_of(m.start())
        if tag == "top":
            if not closing:
                if cur is not None:
                    problems.append(Problem(spath, top_line, "<top> is not closed before the next <top>"))
                cur, field, top_line = {"line": ln}, None, ln
                continue
            if cur is None:
                problems.append(Problem(spath, ln, "</top> without a matching <top>"))
                continue
            close_field(m.start())
            rows.append(cur)
            cur = None
            continue
        if cur is None:
            problems.append(Problem(spath, ln, f"<{tag}> outside a <top> ... </top> block"))
            continue
        close_field(m.start())
        if not closing:
            field, field_start = tag, m.end()
    if cur is not None:
        problems.append(Problem(spath, top_line, "<top> is never closed (missing </top>)"))
    if not rows and not problems:
        problems.append(Problem(spath, None, "no <top> ... </top> topic found"))
    for r in rows:
        if not r.get("topic"):
            problems.append(Problem(spath, r["line"], "topic has no <num> (or an empty one)"))
        elif len(r["topic"].split()) != 1:
            problems.append(Problem(spath, r["line"], f"topic number {r['topic']!r} is not a single token"))
        if not r.get("title"):
            problems.append(Problem(spath, r["line"], f"topic {r.get('topic', '?')} has no <title> text"))
    return rows, problems


def _parse_tsv(spath: str, text: str) -> tuple[list[dict], list[Problem]]:
    rows: list[dict] = []
    problems: list[Problem] = []
    first = True
    for ln, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        if first and parts[0].strip().lower() in _HEADER_IDS:
            first = False
            continue  # a header line
        first = False
        if len(parts) < 2 or len(parts) > 4:
            problems.append(Problem(spath, ln, f"expected 2 to 4 tab-separated fields (id, title[, description"
                                               f"[, narrative]]), found {len(parts)}: {line[:80]!r}"))
            continue
        tid = parts[0].strip()
        if not tid or len(tid.split()) != 1:
            problems.append(Problem(spath, ln, f"topic id must be one token, found {parts[0]!r}"))
            continue
        if not parts[1].strip():
            problems.append(Problem(spath, ln, f"topic {tid} has an empty title"))
            continue
        r = {"topic": tid, "line": ln, "title": _clean(parts[1])}
        if len(parts) > 2:
            r["description"] = _clean(parts[2])
        if len(parts) > 3:
            r["narrative"] = _clean(parts[3])
        rows.append(r)
    return rows, problems


def _parse_jsonl(spath: str, text: str) -> tuple[list[dict], list[Problem]]:
    rows: list[dict] = []
    problems: list[Problem] = []
    for ln, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            from .safeload import loads_json
            obj = loads_json(line, spath, ln)
        except ValueError as exc:
            where = f"{exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
            problems.append(Problem(spath, ln, f"not valid JSON ({where})"))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(spath, ln, f"expected a JSON object, found {type(obj).__name__}"))
            continue
        r: dict = {"line": ln}
        for col, keys in _JSON_KEYS.items():
            for k in keys:
                if k in obj and obj[k] is not None:
                    r[col] = _clean(str(obj[k]))
                    break
        if not r.get("topic"):
            problems.append(Problem(spath, ln, 'missing topic id (key "id", "topic" or "qid")'))
            continue
        if not r.get("title"):
            problems.append(Problem(spath, ln, f'topic {r["topic"]} has no title (key "title" or "query")'))
            continue
        rows.append(r)
    return rows, problems


_PARSERS = {"sgml": _parse_sgml, "tsv": _parse_tsv, "jsonl": _parse_jsonl}
_HINTS = {"sgml": "each topic is <top> <num> Number: ID <title> ... <desc> ... <narr> ... </top>",
          "tsv": "each line reads: id<TAB>title[<TAB>description[<TAB>narrative]]",
          "jsonl": 'each line is a JSON object like {"id": "801", "title": "...", "description": "..."}'}


def read_topics(path: PathLike, warnings: Warnings | None = None, fmt: str | None = None) -> pd.DataFrame:
    """Read a topics file (SGML, TSV or JSONL; plain or .gz) into topic, title, description, narrative,
    line. A topic id defined twice is an error naming both lines."""
    spath = str(path)
    text = _decode(spath, read_bytes(path))
    if not text.strip():
        raise FormatError(Problem(spath, None, "file is empty (holds no topics)"),
                          hint="write topics as TREC <top> SGML, TSV (id<TAB>title) or JSONL")
    fmt = fmt or detect_topic_format(path, text)
    rows, problems = _PARSERS[fmt](spath, text)
    seen: dict[str, int] = {}
    for r in rows:
        if r.get("topic") in seen:
            problems.append(Problem(spath, r["line"], f"topic {r['topic']} is defined twice (first at line "
                                                      f"{seen[r['topic']]})"))
        elif r.get("topic"):
            seen[r["topic"]] = r["line"]
    if problems:
        problems.sort(key=lambda p: p.line or 0)
        raise FormatError(problems, hint=_HINTS[fmt])
    return pd.DataFrame({"topic": pd.Series([r["topic"] for r in rows], dtype=object),
                         "title": pd.Series([r.get("title", "") for r in rows], dtype=object),
                         "description": pd.Series([r.get("description", "") for r in rows], dtype=object),
                         "narrative": pd.Series([r.get("narrative", "") for r in rows], dtype=object),
                         "line": np.asarray([r["line"] for r in rows], dtype=np.int64)})


def empty_topics() -> pd.DataFrame:
    """A topic table with no rows."""
    return pd.DataFrame({**{c: pd.Series([], dtype=object) for c in TOPIC_COLUMNS},
                         "line": pd.Series([], dtype="int64")})


def write_topics(path: PathLike, topics: pd.DataFrame, fmt: str | None = None) -> None:
    """Write topics as SGML, TSV or JSONL (by `fmt`, else by suffix: .tsv, .jsonl, anything else SGML)."""
    name = Path(path).name.lower().removesuffix(".gz")
    fmt = fmt or ("tsv" if name.endswith(".tsv") else "jsonl" if name.endswith((".jsonl", ".json")) else "sgml")
    recs = []
    for r in topics.itertuples(index=False):
        d = {c: _clean(str(getattr(r, c, "") or "")) for c in TOPIC_COLUMNS}
        recs.append(d)
    if fmt == "tsv":
        def cells(d):
            out = [d["topic"], d["title"]]
            if d["description"] or d["narrative"]:
                out.append(d["description"])
            if d["narrative"]:
                out.append(d["narrative"])
            return "\t".join(out)
        text = "".join(cells(d) + "\n" for d in recs)
    elif fmt == "jsonl":
        text = "".join(json.dumps({"id": d["topic"], "title": d["title"], "description": d["description"],
                                   "narrative": d["narrative"]}, ensure_ascii=False) + "\n" for d in recs)
    else:
        text = "".join(f"<top>\n<num> Number: {d['topic']}\n\n<title> {d['title']}\n\n"
                       f"<desc> Description:\n{d['description']}\n\n<narr> Narrative:\n{d['narrative']}\n\n"
                       f"</top>\n\n" for d in recs)
    write_text(path, text)
