"""Import other tools' nugget and assignment files into a campaign's nugget store, and export the
store in their formats (engine.nuggets.interchange reads and writes the formats).

Imported nuggets are `create` records with provenance `imported` and an `origin` (file, sha256, format,
line, position, original id, the topic's question); imported assignments are `assign` records of kind
`imported` with the same origin, in the named source. Every write is the store's locked, fsynced
append; nothing is written unless the whole file is consistent with the store. Importing the same
file again adds nothing and says so; a file that would change what the store holds (another text or
importance for a nugget id, another nugget list for a topic) is refused naming file:line.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import CranfieldError, FormatError, Problem
from ..judgments.log import append_records, now_ts
from .interchange import (
    Item,
    autoargue_nugget_line,
    label_token,
    nuggetizer_assignment_line,
    nuggetizer_nugget_line,
    read_interchange,
    trec_assignment_line,
    trec_nugget_line,
)
from .store import (
    _check_assign,
    _id_lock,
    _standing,
    _topic,
    assign_path,
    fold_nuggets,
    nugget_log,
    nuggets_path,
    read_records,
)

DEFAULT_SOURCE = {"nuggetizer-assignments": "nuggetizer", "trec-assignments": "nist", "nist-rag24": "nist"}


@dataclass
class Imported:
    path: str
    format: str
    kind: str           # nuggets | assignments
    added: int
    already: int
    topics: int
    source: str | None = None
    replaced: int = 0       # assignments that replace another standing label of the source
    notes: list[str] = field(default_factory=list)     # warnings for the user
    before: "Imported | None" = None     # nist-rag24: the nuggets imported from the same file first

    def summary(self) -> str:
        if self.before is not None:
            return self.before.summary() + "\n" + replace(self, before=None).summary()
        where = f" into source {self.source}" if self.source else ""
        if not self.added:
            return (f"{self.path} ({self.format}): nothing new{where}; all {self.already} {self.kind} are "
                    f"already in the store")
        repl = f" ({self.replaced} replace another label, kept in the log)" if self.replaced else ""
        return (f"{self.path} ({self.format}): {self.added} {self.kind} imported{where} for {self.topics} "
                f"topic(s){repl}; {self.already} already there")


def import_file(root, path, fmt: str | None = None, source: str | None = None, by: str = "") -> Imported:
    """Import one nugget or assignment file (format detected unless given)."""
    fmt, items, data, notes = read_interchange(path, fmt)
    base = {"file": str(Path(path).resolve()), "sha256": hashlib.sha256(data).hexdigest()}
    for it in items:
        it.origin = {**base, **it.origin}
    if fmt.endswith("nuggets"):
        res = _import_nuggets(root, str(path), fmt, items, by)
    elif fmt == "nist-rag24":       # the topics' nuggets (each topic's first line), then the assignments
        first: dict[str, int] = {}
        nuggets = [Item(it.topic, it.text, it.importance, None, None, None,
                        {k: v for k, v in it.origin.items() if k not in ("answer_text", "response_length")})
                   for it in items if first.setdefault(it.topic, it.origin["line"]) == it.origin["line"]]
        made = _import_nuggets(root, str(path), fmt, nuggets, by)
        res = _import_assignments(root, str(path), fmt, items, source or DEFAULT_SOURCE[fmt], by)
        res.before = made
    else:
        res = _import_assignments(root, str(path), fmt, items, source or DEFAULT_SOURCE[fmt], by)
    res.notes = notes + res.notes
    return res


def _where(spath: str, it: Item) -> tuple[str, int]:
    return spath, it.origin["line"]


def _import_nuggets(root, spath: str, fmt: str, items: list[Item], by: str) -> Imported:
    probs: list[Problem] = []
    with _id_lock(root):
        cur = fold_nuggets(nugget_log(root))
        recs, already = [], 0
        by_topic: dict[str, list[Item]] = {}
        for it in items:
            by_topic.setdefault(_topic(it.topic), []).append(it)
        for topic, its in by_topic.items():
            if fmt == "trec-nuggets":
                for it in its:
                    have = cur.get((topic, it.nugget_id))
                    if have is None:
                        recs.append(_create(topic, it.nugget_id, it, by))
                    elif have["text"] == it.text and have["importance"] == it.importance and have["active"]:
                        already += 1
                    else:
                        state = "retired" if not have["active"] else f"{have['importance']}: {have['text']!r}"
                        probs.append(Problem(*_where(spath, it), f"topic {topic} already has a nugget "
                                                                 f"{it.nugget_id} ({state}); importing would "
                                                                 f"change it"))
                continue
            mine = [v for v in cur.values() if v["topic"] == topic and v["active"] and v.get("origin")
                    and v["origin"].get("format") == fmt]
            want = [(it.text, it.importance) for it in its]
            if mine:
                if [(v["text"], v["importance"]) for v in mine] == want:
                    already += len(its)
                else:
                    probs.append(Problem(*_where(spath, its[0]), f"topic {topic} already has other nuggets "
                                                                 f"imported from {mine[0]['origin'].get('file')}; "
                                                                 f"retire them first to import this list"))
                continue
            taken = {n for (t, n) in cur if t == topic}
            k = 1
            for it in its:
                while f"n{k}" in taken:
                    k += 1
                taken.add(f"n{k}")
                recs.append(_create(topic, f"n{k}", it, by))
        if probs:
            raise FormatError(probs, hint="nothing was imported; the store keeps each nugget's history "
                                          "(cranfield nuggets history)")
        if recs:
            append_records(nuggets_path(root), recs)
    return Imported(spath, fmt, "nuggets", len(recs), already, len({r["topic"] for r in recs}))


def _create(topic: str, nid: str, it: Item, by: str) -> dict:
    return {"op": "create", "topic": topic, "nugget": nid, "text": it.text, "importance": it.importance,
            "provenance": "imported", "by": by, "ts": now_ts(), "origin": it.origin}


def _import_assignments(root, spath: str, fmt: str, items: list[Item], source: str, by: str) -> Imported:
    with _id_lock(root):      # one importer at a time: the check and the append see the same store
        cur = fold_nuggets(nugget_log(root))
        active: dict[str, list[dict]] = {}
        for v in cur.values():
            if v["active"]:
                active.setdefault(v["topic"], []).append(v)
        p = assign_path(root, source)
        standing = {(r["run"], r["topic"], r["nugget"]): r["label"]
                    for r in _standing(read_records(p, _check_assign), ("run", "topic", "nugget"), "assign", str(p),
                                       _Quiet())}
        probs: list[Problem] = []
        recs, already, replaced = [], 0, 0
        used: dict[tuple, int] = {}
        for it in items:
            topic = it.topic
            if fmt == "trec-assignments":
                nid = it.nugget_id
                if not any(v["nugget"] == nid for v in active.get(topic, [])):
                    probs.append(Problem(*_where(spath, it), f"topic {topic} has no nugget {nid} in force; import "
                                                             f"the nugget file first"))
                    continue
            else:
                nid = _by_text(active.get(topic, []), it, used)
                if nid is None:
                    probs.append(Problem(*_where(spath, it), f"topic {topic} has no nugget in force with the text "
                                                             f"{it.text!r} ({it.importance}); import the nugget file "
                                                             f"first"))
                    continue
                if isinstance(nid, Problem):
                    probs.append(Problem(spath, it.origin["line"], nid.message))
                    continue
            was = standing.get((it.run, topic, nid))
            if was == it.label:
                already += 1
                continue
            replaced += was is not None
            recs.append({"op": "assign", "run": it.run, "topic": topic, "nugget": nid, "label": it.label,
                         "assessor": by or source, "kind": "imported", "ts": now_ts(), "seconds": None,
                         "origin": it.origin})
        if probs:
            raise FormatError(probs, hint="nothing was imported")
        if recs:
            append_records(p, recs)
    notes = _unanswered(root, spath, {(it.run, it.topic) for it in items})
    return Imported(spath, fmt, "assignments", len(recs), already, len({r["topic"] for r in recs}), source,
                    replaced, notes)


def _unanswered(root, spath: str, pairs: set[tuple[str, str]]) -> list[str]:
    """A note when assignments name (run, topic) pairs the campaign has no answer for (not scored)."""
    from .campaign import campaign_answers
    have = {(a.run, a.topic) for a in campaign_answers(root)}
    miss = sorted(pairs - have)
    if not miss:
        return []
    first = ", ".join(f"{r}/{t}" for r, t in miss[:5])
    msg = (f"{spath}: {len(miss)} (run, topic) pair(s) have no answer in the campaign's answers/ and are not "
           f"scored until those answer runs are submitted (first: {first})")
    return [msg]


class _Quiet:
    def add(self, *a) -> None:
        pass


def _by_text(nuggets: list[dict], it: Item, used: dict):
    """The id of the nugget with the item's text (the k-th of equal texts in a line takes the k-th)."""
    key = (it.run, it.topic, it.origin["line"], it.text)
    k = used.get(key, 0)
    same = [v for v in nuggets if v["text"] == it.text]
    if len(same) <= k:
        return None
    used[key] = k + 1
    v = same[k]
    if v["importance"] != it.importance:
        return Problem("", None, f"topic {it.topic}'s nugget {v['nugget']} {it.text!r} is {v['importance']} in the "
                                 f"store, {it.importance} here; importing would change its weight")
    return v["nugget"]


# ---------------------------------------------------------------------------- export

def export_text(root, fmt: str, source: str | None = None, answers=None, titles: dict | None = None) -> str:
    """The store's nuggets in force (or a source's standing assignments) in `fmt`."""
    cur = [v for v in fold_nuggets(nugget_log(root)).values() if v["active"]]
    if fmt == "trec-nuggets":
        return "".join(trec_nugget_line(v["topic"], v["nugget"], v["importance"], v["text"]) for v in cur)
    if fmt in ("nuggetizer-nuggets", "autoargue-nuggets"):
        topics: dict[str, list[dict]] = {}
        for v in cur:
            topics.setdefault(v["topic"], []).append(v)
        if fmt == "autoargue-nuggets":      # a nugget read as a question stays one; every other is a claim
            return "".join(autoargue_nugget_line(t, _query(vs, titles), [
                (v["text"], v["importance"], (v.get("origin") or {}).get("kind", "claim")) for v in vs])
                for t, vs in topics.items())
        return "".join(nuggetizer_nugget_line(t, _query(vs, titles), [(v["text"], v["importance"]) for v in vs])
                       for t, vs in topics.items())
    if source is None:
        raise CranfieldError(f"{fmt}: name the assignment source (--source)")
    p = assign_path(root, source)
    if not p.is_file():
        raise CranfieldError(f"{p}: no assignment source {source}")
    keep = _standing(read_records(p, _check_assign), ("run", "topic", "nugget"), "assign", str(p), _Quiet())
    nug = {(v["topic"], v["nugget"]): v for v in cur}
    keep = [r for r in keep if (r["topic"], r["nugget"]) in nug]
    if fmt == "trec-assignments":
        return "".join(trec_assignment_line(r["run"], r["topic"], r["nugget"],
                                            label_token(r["label"], (r.get("origin") or {}).get("token")))
                       for r in keep)
    if fmt not in ("nuggetizer-assignments", "nist-rag24"):       # one layout (see interchange)
        raise CranfieldError(f"unknown format {fmt!r}")
    order = {k: i for i, k in enumerate(nug)}
    per: dict[tuple[str, str], list[dict]] = {}
    for r in keep:
        per.setdefault((r["run"], r["topic"]), []).append(r)
    ans = {(a.run, a.topic): a for a in (answers or [])}
    out = []
    for (run, topic), rs in per.items():
        rs = sorted(rs, key=lambda r: order[(topic, r["nugget"])])
        meta = next((r["origin"] for r in rs if r.get("origin") and "answer_text" in r["origin"]), None)
        a = ans.get((run, topic))
        if meta is not None:
            q, text, rl = meta.get("query", ""), meta.get("answer_text"), meta.get("response_length")
        else:
            q = a.query if a is not None else _query([nug[(topic, r["nugget"])] for r in rs], titles)
            text = a.text if a is not None else ""
            rl = (a.response_length if a.response_length is not None else a.words) if a is not None else None
        out.append(nuggetizer_assignment_line(run, topic, q, text, rl, [
            (nug[(topic, r["nugget"])]["text"], nug[(topic, r["nugget"])]["importance"], r["label"]) for r in rs]))
    return "".join(out)


def _query(vs: list[dict], titles: dict | None) -> str:
    for v in vs:
        o = v.get("origin") or {}
        if "query" in o:
            return o["query"]
    return (titles or {}).get(vs[0]["topic"], "") if vs else ""
