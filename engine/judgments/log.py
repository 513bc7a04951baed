"""The judgment log (judgments/log.jsonl): durable locked appends, records, reading, undo and merging.

Log safety (format in docs/campaign-format.md): every append opens the file
with O_APPEND, takes an exclusive `fcntl.flock`, writes each complete line with one `write()`,
`fsync`s, then releases the lock; only then is the judgment acknowledged. A writer killed mid-line
leaves an incomplete last line (no newline); the next writer, under the lock, moves that fragment to
`log.jsonl.torn` and cuts it off before appending, so earlier lines are never touched and two writers
never interleave.

Conflicts: every judgment stays in the log. The merged view resolves repeated judgments of a
(topic, doc) by `judgments.conflict_rule`: `last` (the latest judgment wins, default), `max` (the
highest grade wins), `majority` (the most frequent grade; a tie goes to the latest of the tied
grades). An `undo` line retracts that assessor's latest earlier judgment of the document.
"""
from __future__ import annotations

import fcntl
import json
import math
import os
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from ..formats.safeload import type_name
from ..errors import CranfieldError, FormatError, Warnings
from ..formats.files import PathLike, check_text, read_bytes, str_series
from ..formats.qrels import resolve_duplicate_judgments, rule_text
from ..util import fs

CONFLICT_RULES = ("last", "max", "majority")
LOG_NAME = "log.jsonl"


# ---------------------------------------------------------------------------- the append-only log

def _open_locked(path: Path) -> int:
    """The log open for appending under an exclusive lock. After locking, the file locked must still be
    the one at `path`: a repair (or any writer) that swapped in a new log while this one waited would
    otherwise receive appends into the replaced file, lost. Then the new file is opened and locked."""
    return fs.open_locked(path)             # anchored, folders made, the name re-checked under the lock


def _cut_torn_tail(fd: int, path: Path, complete=None) -> None:
    """Under the lock: an incomplete last line (a writer died mid-write) is saved to PATH.torn and
    removed, so the next line starts on a line of its own (`complete`: whether a last line without its
    newline is a whole entry; default: a valid log entry)."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    start = max(0, size - 65536)
    while True:
        chunk = os.pread(fd, size - start, start)
        nl = chunk.rfind(b"\n")
        if nl >= 0 or start == 0:
            break
        start = max(0, start - 65536)
    cut = start + nl + 1 if nl >= 0 else 0
    fragment = os.pread(fd, size - cut, cut)
    if (complete or _complete_entry)(fragment):   # a whole entry that only lacks its newline: keep it
        _write_all(fd, b"\n")
        return
    fs.append(str(path) + ".torn", fragment + b"\n")
    os.ftruncate(fd, cut)


def _complete_entry(line: bytes) -> bool:
    """True when `line` is a whole, valid log entry (JSON object passing the log reader's checks)."""
    from ..formats.safeload import loads_json
    try:
        obj = loads_json(line.decode("utf-8"), "log")
    except (UnicodeDecodeError, ValueError):
        return False
    return isinstance(obj, dict) and _check_log_entry(obj) is None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


@contextmanager
def locked_file(path, complete=None):
    """The file at `path` open for reading and appending under the log's exclusive lock (the file locked
    is the one at `path`, a torn last line cut off first; `complete` as for the torn-tail check): yields
    the descriptor; write with `write_lines`. Other append-only campaign files (the judging leases) use it."""
    p = Path(path)
    fd = _open_locked(p)
    try:
        _cut_torn_tail(fd, p, complete)
        yield fd
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def record_lines(records: list[dict]) -> list[bytes]:
    """JSON records as complete lines (UTF-8), refusing a record that would span lines."""
    lines = [(json.dumps(r, ensure_ascii=False, separators=(", ", ": ")) + "\n").encode("utf-8")
             for r in records]
    if any(b"\n" in ln[:-1] for ln in lines):
        raise CranfieldError("a judgment record may not contain a line break")
    return lines


def write_lines(fd: int, path, lines: list[bytes]) -> None:
    """Under `locked_file`: append complete lines, one write() each, then fsync; on an I/O error the file
    is cut back to what it was and the error names `path`."""
    size = os.fstat(fd).st_size
    try:
        for ln in lines:
            _write_all(fd, ln)   # one write() per complete line (regular files: never short)
        os.fsync(fd)
    except OSError as exc:       # disk full, quota, I/O error: cut back to the lines before, name the file
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        except OSError:
            pass
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None


def append_records(path, records: list[dict], complete=None) -> int:
    """Append JSON records as lines, durably and under an exclusive lock; returns the count.

    When this returns, every record is on disk (fsync) as a complete line.
    """
    lines = record_lines(records)
    with locked_file(path, complete) as fd:
        write_lines(fd, path, lines)
    return len(lines)


def now_ts() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def judgment_record(topic, doc, grade: int, assessor: str = "", seconds: float | None = None,
                    strategy: str | None = None, op: str = "judge", ts: str | None = None) -> dict:
    """One log record (schema of docs/campaign-format.md)."""
    if op not in ("judge", "undo"):
        raise CranfieldError(f"unknown judgment op {op!r} (judge or undo)")
    try:
        g = int(grade)
    except (TypeError, ValueError):
        raise CranfieldError(f"grade must be an integer, got {grade!r}") from None
    rec = {"topic": str(topic), "doc": str(doc), "grade": g, "assessor": str(assessor or ""),
           "ts": ts or now_ts(), "seconds": None if seconds is None else float(seconds),
           "strategy": strategy, "op": op}
    for k in ("topic", "doc"):
        if not rec[k] or any(c.isspace() for c in rec[k]):
            raise CranfieldError(f"{k} {rec[k]!r}: must be non-empty without white space")
        try:
            rec[k].encode("utf-8")
        except UnicodeEncodeError:
            raise CranfieldError(f"{k} {rec[k].encode('utf-8', 'surrogateescape')!r}: not valid UTF-8 text; "
                                 f"ids are recorded as UTF-8 (check the terminal's encoding)") from None
    if op == "undo":
        del rec["grade"]
    return rec


def log_path(root) -> Path:
    """The campaign's judgment log, confined (a symbolic link out of the campaign is refused)."""
    from engine.util.confine import campaign_path
    return campaign_path(root, "log")


def undo_judgment(root, topic, doc, assessor="") -> dict:
    """Append an undo line: retracts this assessor's latest judgment of the document."""
    rec = judgment_record(topic, doc, 0, assessor, None, None, op="undo")
    append_records(log_path(root), [rec])
    return rec


def standing_judgment(root, topic, doc, assessor="") -> bool:
    """True when `assessor` has a judgment of (topic, doc) in force in the campaign's log (one to undo)."""
    p = log_path(root)
    if not p.is_file():
        return False
    j = log_judgments(read_log(p))
    return bool(((j["topic"] == str(topic)) & (j["doc"] == str(doc)) & (j["assessor"] == str(assessor))).any())


def read_log(path, warnings: Warnings | None = None) -> pd.DataFrame:
    """Every entry of a judgment log in file order (read_judgment_log: a torn last line is
    ignored with a warning, any other malformed line is an error)."""
    return read_judgment_log(path, warnings)


def apply_undo(log: pd.DataFrame, warnings: Warnings | None = None, source: str = LOG_NAME) -> pd.DataFrame:
    """The judge entries still in force after undos, in log order (log_judgments)."""
    return log_judgments(log, source, warnings)


def resolve_judgments(judgments: pd.DataFrame, rule: str = "last",
                      warnings: Warnings | None = None, source: str = "judgments") -> pd.DataFrame:
    """One grade per (topic, doc) from repeated judgments (rows in time order), by `rule` (the
    rules of engine.formats.resolve_duplicate_judgments). Returns topic, doc, grade, n_judgments,
    conflict (True when the judgments disagreed)."""
    if rule not in CONFLICT_RULES:
        raise CranfieldError(f"judgments.conflict_rule {rule!r}: use one of {', '.join(CONFLICT_RULES)}")
    cols = ["topic", "doc", "grade"]
    df = judgments[cols].astype({"topic": str, "doc": str}).reset_index(drop=True)
    df["grade"] = df["grade"].astype(np.int64)
    picked = resolve_duplicate_judgments(df, source, Warnings(), rule)[cols]
    stats = df.groupby(["topic", "doc"], sort=False)["grade"].agg(n_judgments="size", n_grades="nunique")
    out = picked.merge(stats.reset_index(), on=["topic", "doc"], how="left")
    out["conflict"] = out["n_grades"] > 1
    n_conf = int(out["conflict"].sum())
    if n_conf and warnings is not None:
        warnings.add(source, None, f"{n_conf} document(s) judged differently more than once; "
                                   f"all judgments are kept, rule '{rule}' picks the grade")
    return out[["topic", "doc", "grade", "n_judgments", "conflict"]].reset_index(drop=True).astype(
        {"grade": np.int64, "n_judgments": np.int64})


def merged_log(path, rule: str = "last", warnings: Warnings | None = None) -> pd.DataFrame:
    """The log's judgments in force, resolved to one grade per (topic, doc)."""
    log = apply_undo(read_log(path, warnings), warnings, str(path))
    return resolve_judgments(log, rule, warnings, str(path))


# ---------------------------------------------------------------------------- reading and merging

_KNOWN_OPS = {"judge", "undo"}
_OTHER_OPS = {"topic", "skip", "view", "session", "note", "pause", "resume", "start", "stop", "cannot_judge"}
LOG_COLUMNS = ["topic", "doc", "grade", "assessor", "ts", "seconds", "strategy", "op", "line"]


def read_judgment_log(path: PathLike, warnings: Warnings | None = None) -> pd.DataFrame:
    """Every entry of an assessor log (JSON lines) in file order, columns LOG_COLUMNS plus any extra
    keys found (stratum, prob, method, ...). `grade` is nullable Int64, `seconds` float (NaN unknown).

    A last line that is cut off (no newline, not valid JSON: a crash mid-write) is ignored with a
    warning; any other malformed line is an error naming the line.
    """
    w = warnings if warnings is not None else Warnings()
    spath = str(path)
    data = read_bytes(path)
    check_text(spath, data)
    from ..formats.safeload import jsonl_objects
    recs, problems = jsonl_objects(spath, data, w, _check_log_entry)
    if problems:
        raise FormatError(problems, hint='each line is one JSON object, e.g. {"topic": "801", "doc": "D1", '
                                         '"grade": 1, "assessor": "ann", "op": "judge"}')
    unknown: dict[str, int] = {}
    for r in recs:
        op = r.get("op") or "judge"
        if op not in _KNOWN_OPS and op not in _OTHER_OPS and op not in unknown:
            unknown[op] = r["line"]
    for op, ln in unknown.items():
        w.add(spath, ln, f"op {op!r} is not a judgment operation (judge, undo); such lines are kept in the log "
                         f"but change no judgment")
    return _log_frame(recs)


def _check_log_entry(obj: dict) -> str | None:
    op = obj.get("op", "judge")
    if op is None:
        op = "judge"
    if not isinstance(op, str):
        return f'"op" must be a string, found {type_name(op)}'
    if op in _KNOWN_OPS:
        for k in ("topic", "doc"):
            if k not in obj or obj[k] is None or isinstance(obj[k], (bool, list, dict)) or str(obj[k]) == "":
                return f'missing or invalid "{k}" (a {k} id) in a {op} entry'
    if op == "judge":
        g = obj.get("grade")
        if isinstance(g, bool) or not isinstance(g, int):
            return f'"grade" must be an integer, found {type_name(g)}'
    s = obj.get("seconds")
    if s is not None and (isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s) or s < 0):
        return f'"seconds" must be a number >= 0, found {type_name(s)}'
    if "prob" in obj and obj["prob"] is not None:
        p = obj["prob"]
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not (0 < p <= 1):
            return f'"prob" must be a probability in (0, 1], found {type_name(p)}'
    if "stratum" in obj and obj["stratum"] is not None:
        if isinstance(obj["stratum"], bool) or not isinstance(obj["stratum"], int):
            return f'"stratum" must be an integer, found {type_name(obj["stratum"])}'
    return None


def _log_frame(recs: list[dict]) -> pd.DataFrame:
    extra = []
    for r in recs:
        for k in r:
            if k not in LOG_COLUMNS and k not in extra:
                extra.append(k)
    get = (lambda k, d=None: [r.get(k, d) for r in recs])
    df = pd.DataFrame({
        "topic": str_series([None if v is None else str(v) for v in get("topic")]),
        "doc": str_series([None if v is None else str(v) for v in get("doc")]),
        "grade": pd.array(get("grade"), dtype="Int64"),
        "assessor": str_series(["" if v is None else str(v) for v in get("assessor")]),
        "ts": str_series(["" if v is None else str(v) for v in get("ts")]),
        "seconds": pd.to_numeric(pd.Series(get("seconds"), dtype=object), errors="coerce").astype("float64"),
        "strategy": str_series(["" if v is None else str(v) for v in get("strategy")]),
        "op": str_series([v or "judge" for v in get("op")]),
        "line": np.asarray(get("line"), dtype=np.int64),
    })
    for k in extra:
        df[k] = str_series(get(k))
    return df


def log_judgments(log: pd.DataFrame, path: str = LOG_NAME, warnings: Warnings | None = None) -> pd.DataFrame:
    """The judge entries of a log that stand after applying undos, in log order: topic, doc, grade,
    assessor, line (+ stratum, prob, method when the log carries them).

    An undo retracts the same assessor's latest standing judgment of that (topic, doc).
    """
    w = warnings if warnings is not None else Warnings()
    ops = log["op"].to_numpy(object)
    is_judge = ops == "judge"
    is_undo = ops == "undo"
    keep = is_judge.copy()
    if is_undo.any():
        key = (log["topic"].astype(str) + "\x00" + log["doc"].astype(str) + "\x00"
               + log["assessor"].astype(str)).to_numpy(object)
        undo_keys = set(key[is_undo])
        stacks: dict[str, list[int]] = {}
        for i in np.flatnonzero((is_judge | is_undo) & np.isin(key, list(undo_keys))):
            k = key[i]
            if is_judge[i]:
                stacks.setdefault(k, []).append(i)
            elif stacks.get(k):
                keep[stacks[k].pop()] = False
            else:
                r = log.iloc[i]
                w.add(path, int(r["line"]), f"undo of document {r['doc']} for topic {r['topic']} by "
                                            f"{r['assessor'] or 'an unnamed assessor'} has no earlier judgment "
                                            f"to retract; ignored")
    j = log[keep]
    out = pd.DataFrame({"topic": str_series(j["topic"].to_numpy(object)),
                        "doc": str_series(j["doc"].to_numpy(object)),
                        "grade": j["grade"].to_numpy(np.int64),
                        "assessor": str_series(j["assessor"].to_numpy(object)),
                        "line": j["line"].to_numpy(np.int64)})
    if "stratum" in j:
        out["stratum"] = pd.to_numeric(j["stratum"], errors="coerce").to_numpy(np.float64)
    if "prob" in j:
        out["prob"] = pd.to_numeric(j["prob"], errors="coerce").to_numpy(np.float64)
    if "method" in j:
        out["method"] = str_series([None if v is None else str(v) for v in j["method"]])
    return out


def merge_judgments(frames: list[pd.DataFrame], rule: str, warnings: Warnings, source: str,
                    resolved: bool = False) -> pd.DataFrame:
    """Merge judgment tables given oldest first; repeated (topic, doc) resolve by `rule` (`resolved`: each
    table was already resolved by `rule` on its own, as the judgment readers do; one table then stands).

    Differences between sources are summarized in one warning stating the rule. Extra columns
    present in some source only are filled: stratum -1 (none), prob 1.0 (judged with certainty, as
    MQ prels mark documents not sampled), method ''.
    """
    frames = [f for f in frames if len(f)]
    extras = [c for c in ("stratum", "prob", "method") if any(c in f for f in frames)]
    if not frames:
        out = pd.DataFrame({"topic": pd.Series([], dtype=object), "doc": pd.Series([], dtype=object),
                            "grade": pd.Series([], dtype="int64")})
        for c in extras:
            out[c] = pd.Series([], dtype={"stratum": "int64", "prob": "float64", "method": object}[c])
        return out
    cols = ["topic", "doc", "grade"] + extras
    parts = []
    for f in frames:
        g = pd.DataFrame({"topic": str_series(f["topic"].to_numpy(object)),
                          "doc": str_series(f["doc"].to_numpy(object)), "grade": f["grade"].to_numpy(np.int64)})
        for c in extras:
            if c in f:
                g[c] = f[c].to_numpy(object if c == "method" else np.float64)
            else:
                g[c] = pd.Series(np.full(len(f), np.nan if c != "method" else None, dtype=object if c == "method"
                                         else np.float64))
        parts.append(g[cols])
    df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    n_before = len(df)
    if resolved and len(parts) == 1:
        merged = df
    else:
        merged = resolve_duplicate_judgments(df, source, Warnings(), rule)  # reported below, in one line
    if len(merged) < n_before:
        conf = _count_conflicts(df)
        if conf:
            warnings.add(source, None, f"{conf} document(s) judged with different grades across the judgment "
                                       f"files and the log; rule '{rule}': {rule_text(rule)} "
                                       f"(judgments.conflict_rule)")
    merged = merged.reset_index(drop=True)
    filled = {}
    for c in extras:
        s = merged[c]
        miss = s.isna() | ((s.astype(str) == "") if c == "method" else False)
        if c == "stratum":
            merged[c] = s.fillna(-1).astype(np.int64)
        elif c == "prob":
            merged[c] = s.fillna(1.0).astype(np.float64)
        else:
            merged[c] = str_series(s.fillna("").astype(str).to_numpy(object))
        if miss.any():
            filled[c] = int(miss.sum())
    if filled:
        warnings.add(source, None, "judgments without " + ", ".join(f"{c} ({n})" for c, n in filled.items())
                     + ": filled with stratum -1, prob 1.0 (judged with certainty), method ''")
    return merged[cols]


def _count_conflicts(df: pd.DataFrame) -> int:
    real = df[df["grade"] >= 0]
    n = real.groupby(["topic", "doc"], sort=False)["grade"].nunique()
    return int((n > 1).sum())


# ----------------------------------------------------------------------------- the campaign
