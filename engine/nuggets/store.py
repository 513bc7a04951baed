"""Append-only stores of a campaign's nuggets, nugget assignments and citation-support labels.

- `nuggets/nuggets.jsonl`: every nugget operation (create, edit, merge, split, retire) with who made it;
  the nuggets in force and each nugget's edit history are folded from it. Provenance: `person`, `llm`
  (with model and prompt version), `post-edited` (an LLM or imported nugget a person changed, merged
  or split) or `imported` (read from another tool's file: `origin` names the file, format, line, id).
- `nuggets/assign/SOURCE.jsonl`: one file per assignment source (a person, an endpoint's model), kept
  apart like judgment sources; lines `assign` (run, topic, nugget, label) and `undo`.
- `nuggets/support/SOURCE.jsonl`: citation-support labels (run, topic, sentence, doc, label) per source.
Every append goes through the judgment log's locked, fsynced append (engine.judgments.log); new nugget
ids are allocated under an exclusive lock on `nuggets/.lock`, re-reading the log inside it. Every path
is confined to the campaign directory (symbolic links too).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import CranfieldError, FormatError, Warnings
from ..formats.files import check_text, read_bytes
from ..formats.safeload import jsonl_objects, type_name
from ..judgments.log import append_records, now_ts
from ..judgments.sources import check_name
from .scores import IMPORTANCE, LABELS
from ..util import fs

NUGGETS_DIR = "nuggets"
PROVENANCE = ("person", "llm", "post-edited", "imported")
NUGGET_OPS = ("create", "edit", "merge", "split", "retire")
MAX_NUGGET_CHARS = 2000


def _path(root, *parts: str) -> Path:
    """A store path inside the campaign, refused (never opened) when it resolves outside it."""
    from ..util.confine import campaign_path
    return campaign_path(root, "nuggets", *parts)


def nuggets_path(root) -> Path:
    return _path(root, "nuggets.jsonl")


def assign_path(root, source: str) -> Path:
    return _path(root, "assign", f"{check_name(source)}.jsonl")


def support_path(root, source: str) -> Path:
    return _path(root, "support", f"{check_name(source)}.jsonl")


def list_sources(root, kind: str = "assign") -> list[str]:
    """The names of the assignment (or support) sources with a log."""
    d = _path(root, kind)
    return sorted(p.stem for p in fs.glob(d, "*.jsonl")) if fs.is_dir(d) else []


# ---------------------------------------------------------------------------- reading a store

def read_records(path: Path, check, warnings: Warnings | None = None) -> list[dict]:
    """Every record of a store in file order, each with its `line`. A cut-off last line (a crash
    mid-write) is ignored with a warning; any other malformed line is an error naming file:line."""
    w = warnings if warnings is not None else Warnings()
    if not path.is_file():
        return []
    spath = str(path)
    data = read_bytes(path)
    check_text(spath, data)
    out, problems = jsonl_objects(spath, data, w, check)
    if problems:
        raise FormatError(problems, hint="the store is written by cranfield; restore the line from a backup "
                                         "or remove it (every other line stays valid)")
    return out


def _need_str(obj: dict, *keys: str) -> str | None:
    for k in keys:
        v = obj.get(k)
        if not isinstance(v, str) or not v or any(c.isspace() for c in v):
            return f'"{k}" must be a non-empty string without white space, found {type_name(v)}'
    return None


def _check_nugget_op(obj: dict) -> str | None:
    op = obj.get("op")
    if op not in NUGGET_OPS:
        return f'"op" must be one of {", ".join(NUGGET_OPS)}, found {op!r}'
    err = _need_str(obj, "topic")
    if err:
        return err
    if op in ("create", "edit", "retire"):
        err = _need_str(obj, "nugget")
    elif op == "merge":
        ns = obj.get("nuggets")
        if not isinstance(ns, list) or len(ns) < 2 or not all(isinstance(n, str) for n in ns):
            return '"nuggets" must list at least two nugget ids'
        err = _need_str(obj, "nugget")
    else:
        err = _need_str(obj, "nugget")
        into = obj.get("into")
        if not isinstance(into, list) or len(into) < 2 or not all(isinstance(n, str) for n in into):
            return '"into" must list at least two new nugget ids'
    if err:
        return err
    if "importance" in obj and obj["importance"] not in IMPORTANCE:
        return f'"importance" must be vital or okay, found {obj["importance"]!r}'
    if "provenance" in obj and obj["provenance"] not in PROVENANCE:
        return f'"provenance" must be one of {", ".join(PROVENANCE)}, found {obj["provenance"]!r}'
    return None


def _check_assign(obj: dict) -> str | None:
    op = obj.get("op")
    if op not in ("assign", "undo"):
        return f'"op" must be assign or undo, found {op!r}'
    err = _need_str(obj, "run", "topic", "nugget")
    if err:
        return err
    if op == "assign" and obj.get("label") not in LABELS:
        return f'"label" must be one of {", ".join(LABELS)}, found {obj.get("label")!r}'
    return None


def _check_support(obj: dict) -> str | None:
    op = obj.get("op")
    if op not in ("support", "undo"):
        return f'"op" must be support or undo, found {op!r}'
    err = _need_str(obj, "run", "topic", "doc")
    if err:
        return err
    s = obj.get("sentence")
    if isinstance(s, bool) or not isinstance(s, int) or s < 0:
        return f'"sentence" must be an integer >= 0, found {type_name(s)}'
    if op == "support" and obj.get("label") not in LABELS:
        return f'"label" must be one of {", ".join(LABELS)}, found {obj.get("label")!r}'
    return None


# ---------------------------------------------------------------------------- nuggets

def _id_lock(root):
    """The nugget store's lock (nuggets/.lock) while an id is chosen and recorded."""
    from ..util.atomic import exclusive_lock
    return exclusive_lock(_path(root, ".lock"))           # folders made by the anchored lock


def nugget_log(root, warnings: Warnings | None = None) -> list[dict]:
    """Every nugget operation in log order."""
    return read_records(nuggets_path(root), _check_nugget_op, warnings)


def fold_nuggets(records: list[dict]) -> dict[tuple[str, str], dict]:
    """(topic, nugget) -> the nugget in force or retired: text, importance, provenance, model,
    prompt_version, created_by, edits, active, history (the line numbers of its operations)."""
    cur: dict[tuple[str, str], dict] = {}

    def new(t, n, text, imp, prov, r, hist):
        cur[(t, n)] = {"topic": t, "nugget": n, "text": text, "importance": imp, "provenance": prov,
                       "model": r.get("model"), "prompt_version": r.get("prompt_version"),
                       "created_by": r.get("by", ""), "edits": 0, "active": True, "history": hist,
                       "origin": r.get("origin")}

    def edited(prov: str) -> str:
        return "person" if prov == "person" else "post-edited"

    for r in records:
        t, op = r["topic"], r["op"]
        if op == "create":
            new(t, r["nugget"], r.get("text", ""), r.get("importance", "okay"), r.get("provenance", "person"), r,
                [r["line"]])
            continue
        if op in ("edit", "retire"):
            n = cur.get((t, r["nugget"]))
            if n is None:
                continue
            n["history"].append(r["line"])
            if op == "retire":
                n["active"] = False
                continue
            n["text"] = r.get("text", n["text"])
            n["importance"] = r.get("importance", n["importance"])
            n["provenance"] = edited(n["provenance"])
            n["edits"] += 1
        elif op == "merge":
            parts = [cur[(t, x)] for x in r["nuggets"] if (t, x) in cur]
            for p in parts:
                p["active"] = False
                p["history"].append(r["line"])
            prov = "person" if all(p["provenance"] == "person" for p in parts) else "post-edited"
            new(t, r["nugget"], r.get("text", ""), r.get("importance", "okay"), prov, r,
                sorted({h for p in parts for h in p["history"]}))
            cur[(t, r["nugget"])]["merged_from"] = list(r["nuggets"])
        elif op == "split":
            src = cur.get((t, r["nugget"]))
            if src is None:
                continue
            src["active"] = False
            src["history"].append(r["line"])
            texts = r.get("texts") or [""] * len(r["into"])
            imps = r.get("importances") or [src["importance"]] * len(r["into"])
            for nid, text, imp in zip(r["into"], texts, imps):
                new(t, nid, text, imp, edited(src["provenance"]), {**src, "by": r.get("by", "")},
                    list(src["history"]))
                cur[(t, nid)]["split_from"] = r["nugget"]
    return cur


def current_nuggets(root, topic: str | None = None, warnings: Warnings | None = None) -> pd.DataFrame:
    """The nuggets in force: topic, nugget, text, importance, provenance, model, prompt_version,
    created_by, edits (in creation order)."""
    rows = [v for v in fold_nuggets(nugget_log(root, warnings)).values()
            if v["active"] and (topic is None or v["topic"] == str(topic))]
    cols = ["topic", "nugget", "text", "importance", "provenance", "model", "prompt_version", "created_by",
            "edits"]
    return pd.DataFrame([{c: r[c] for c in cols} for r in rows], columns=cols)


def nugget_history(root, topic: str, nugget: str) -> list[dict]:
    """Every operation that made or changed this nugget (its sources' too), oldest first."""
    recs = nugget_log(root)
    n = fold_nuggets(recs).get((str(topic), str(nugget)))
    if n is None:
        raise CranfieldError(f"topic {topic} has no nugget {nugget}")
    lines = set(n["history"])
    return [r for r in recs if r["line"] in lines]


def _check_text(text: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise CranfieldError("a nugget's text must be non-empty")
    if len(text) > MAX_NUGGET_CHARS or "\n" in text or "\x00" in text:
        raise CranfieldError(f"a nugget's text must be one line of at most {MAX_NUGGET_CHARS} characters")
    return text.strip()


def _check_imp(imp: str) -> str:
    if imp not in IMPORTANCE:
        raise CranfieldError(f"importance {imp!r}: use vital or okay")
    return imp


def _topic(t) -> str:
    t = str(t)
    if not t or any(c.isspace() for c in t):
        raise CranfieldError(f"topic {t!r}: must be non-empty without white space")
    return t


def add_nuggets(root, topic: str, items: list[tuple[str, str]], by: str = "", provenance: str = "person",
                model: str | None = None, prompt_version: str | None = None,
                seconds: float | None = None) -> list[str]:
    """Create nuggets (text, importance) for a topic; returns their new ids (n1, n2, ... per topic)."""
    topic = _topic(topic)
    if provenance not in ("person", "llm"):
        raise CranfieldError("a new nugget is made by a person or an llm")
    if provenance == "llm" and not model:
        raise CranfieldError("an LLM nugget records its model (and prompt version)")
    items = [(_check_text(t), _check_imp(i)) for t, i in items]
    with _id_lock(root):
        taken = {n for (t, n) in fold_nuggets(nugget_log(root)) if t == topic}
        ids, k = [], 1
        for _ in items:
            while f"n{k}" in taken:
                k += 1
            ids.append(f"n{k}")
            taken.add(f"n{k}")
        recs = []
        for nid, (text, imp) in zip(ids, items):
            r = {"op": "create", "topic": topic, "nugget": nid, "text": text, "importance": imp,
                 "provenance": provenance, "by": by, "ts": now_ts(), "seconds": seconds}
            if provenance == "llm":
                r.update(model=model, prompt_version=prompt_version)
            recs.append(r)
        append_records(nuggets_path(root), recs)
    return ids


def _active(root, topic: str, ids: list[str]) -> dict:
    cur = fold_nuggets(nugget_log(root))
    for n in ids:
        if not cur.get((topic, n), {}).get("active"):
            raise CranfieldError(f"topic {topic} has no nugget {n} in force")
    return cur


def edit_nugget(root, topic: str, nugget: str, text: str | None = None, importance: str | None = None,
                by: str = "", seconds: float | None = None) -> None:
    """Reword a nugget and/or change its importance (an LLM nugget becomes post-edited)."""
    topic = _topic(topic)
    r = {"op": "edit", "topic": topic, "nugget": nugget, "by": by, "ts": now_ts(), "seconds": seconds}
    if text is not None:
        r["text"] = _check_text(text)
    if importance is not None:
        r["importance"] = _check_imp(importance)
    if len(r) == 6:
        raise CranfieldError("an edit changes the text, the importance or both")
    with _id_lock(root):
        _active(root, topic, [nugget])
        append_records(nuggets_path(root), [r])


def retire_nugget(root, topic: str, nugget: str, by: str = "") -> None:
    """Take a nugget out of force (its history stays)."""
    topic = _topic(topic)
    with _id_lock(root):
        _active(root, topic, [nugget])
        append_records(nuggets_path(root), [{"op": "retire", "topic": topic, "nugget": nugget, "by": by,
                                             "ts": now_ts()}])


def merge_nuggets(root, topic: str, nuggets: list[str], text: str, importance: str, by: str = "") -> str:
    """Merge nuggets into a new one; returns its id."""
    topic = _topic(topic)
    text, importance = _check_text(text), _check_imp(importance)
    if len(set(nuggets)) < 2:
        raise CranfieldError("merge needs at least two different nuggets")
    with _id_lock(root):
        cur = _active(root, topic, list(nuggets))
        nid = _next_ids(cur, topic, 1)[0]
        append_records(nuggets_path(root), [{"op": "merge", "topic": topic, "nuggets": list(nuggets), "nugget": nid,
                                             "text": text, "importance": importance, "by": by, "ts": now_ts()}])
    return nid


def split_nugget(root, topic: str, nugget: str, parts: list[tuple[str, str]], by: str = "") -> list[str]:
    """Split a nugget into new ones (text, importance); returns their ids."""
    topic = _topic(topic)
    parts = [(_check_text(t), _check_imp(i)) for t, i in parts]
    if len(parts) < 2:
        raise CranfieldError("split needs at least two parts")
    with _id_lock(root):
        cur = _active(root, topic, [nugget])
        ids = _next_ids(cur, topic, len(parts))
        append_records(nuggets_path(root), [{"op": "split", "topic": topic, "nugget": nugget, "into": ids,
                                             "texts": [t for t, _ in parts], "importances": [i for _, i in parts],
                                             "by": by, "ts": now_ts()}])
    return ids


def _next_ids(cur: dict, topic: str, k: int) -> list[str]:
    taken = {n for (t, n) in cur if t == topic}
    out, i = [], 1
    while len(out) < k:
        if f"n{i}" not in taken:
            out.append(f"n{i}")
        i += 1
    return out


# ---------------------------------------------------------------------------- assignments and support

def assign(root, source: str, items: list[tuple[str, str, str, str]], assessor: str = "", kind: str = "person",
           seconds: float | None = None, **extra) -> int:
    """Append assignments (run, topic, nugget, label) to a source's log; returns the count."""
    recs = []
    for run, topic, nugget, label in items:
        if label not in LABELS:
            raise CranfieldError(f"assignment {label!r}: use {', '.join(LABELS)}")
        recs.append({"op": "assign", "run": str(run), "topic": _topic(topic), "nugget": str(nugget),
                     "label": label, "assessor": assessor or source, "kind": kind, "ts": now_ts(),
                     "seconds": seconds, **extra})
    return append_records(assign_path(root, source), recs) if recs else 0


def undo_assign(root, source: str, run: str, topic: str, nugget: str, assessor: str = "") -> None:
    """Retract the latest standing assignment of (run, topic, nugget) in this source."""
    append_records(assign_path(root, source), [{"op": "undo", "run": str(run), "topic": _topic(topic),
                                                "nugget": str(nugget), "assessor": assessor or source,
                                                "ts": now_ts()}])


def _standing(recs: list[dict], key_cols: tuple[str, ...], op: str, path: str, w: Warnings) -> list[dict]:
    stacks: dict[tuple, list[dict]] = {}
    for r in recs:
        k = tuple(r[c] for c in key_cols)
        if r["op"] == op:
            stacks.setdefault(k, []).append(r)
        elif stacks.get(k):
            stacks[k].pop()
        else:
            w.add(path, r["line"], "undo with nothing earlier to retract; ignored")
    return [s[-1] for s in stacks.values() if s]


def read_assignments(root, source: str, warnings: Warnings | None = None) -> pd.DataFrame:
    """One label per (run, topic, nugget) from a source: the latest standing one. Columns run, topic,
    nugget, label, assessor, kind, seconds, n (how many assignments the triple received)."""
    w = warnings if warnings is not None else Warnings()
    p = assign_path(root, source)
    recs = read_records(p, _check_assign, w)
    keep = _standing(recs, ("run", "topic", "nugget"), "assign", str(p), w)
    cols = ["run", "topic", "nugget", "label", "assessor", "kind", "seconds"]
    df = pd.DataFrame([{c: r.get(c) for c in cols} for r in keep], columns=cols)
    df["seconds"] = pd.to_numeric(df["seconds"], errors="coerce")
    return df


def record_support(root, source: str, items: list[tuple[str, str, int, str, str]], assessor: str = "",
                   kind: str = "person", **extra) -> int:
    """Append citation-support labels (run, topic, sentence, doc, label)."""
    recs = []
    for run, topic, sent, doc, label in items:
        if label not in LABELS:
            raise CranfieldError(f"support label {label!r}: use {', '.join(LABELS)}")
        recs.append({"op": "support", "run": str(run), "topic": _topic(topic), "sentence": int(sent),
                     "doc": str(doc), "label": label, "assessor": assessor or source, "kind": kind,
                     "ts": now_ts(), **extra})
    return append_records(support_path(root, source), recs) if recs else 0


def read_support(root, source: str, warnings: Warnings | None = None) -> pd.DataFrame:
    """One label per (run, topic, sentence, doc) from a source (the latest standing one)."""
    w = warnings if warnings is not None else Warnings()
    p = support_path(root, source)
    keep = _standing(read_records(p, _check_support, w), ("run", "topic", "sentence", "doc"), "support",
                     str(p), w)
    cols = ["run", "topic", "sentence", "doc", "label"]
    return pd.DataFrame([{c: r[c] for c in cols} for r in keep], columns=cols)
