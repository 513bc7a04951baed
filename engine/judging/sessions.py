"""Judging sessions for hours of work: the active pool and its progress, document leases (two assessors
on one topic never get the same document unless it is double judged), double judging, random order,
guidelines, post-editing automatic labels, "cannot judge" and rationales.

campaign.yaml `judging:` (all optional):

    judging:
      guidelines: guidelines.md   # shown beside the document (a file in the campaign directory)
      random_order: false         # present each topic's documents in a random order (per assessor)
      double_fraction: 0.1        # share of pooled documents that two assessors judge (a pool built
                                  # with `cranfield pool --double F` sets its own share)
      lease_seconds: 900          # a lease not released by then expires
      auto_source: llm-gpt-4o     # the automatic labels to show (default: the first automatic source)

Leases live in `judgments/leases.jsonl` (lease / release / done lines, appended under an exclusive lock;
the choice of a document and its lease happen under that same lock; `done` marks a judged document). Actions go to the judgment log:
judgments carry `action` (judge, accept, change), and for accept / change the automatic label and its
source (`auto_grade`, `auto_source`); `cannot_judge` lines carry a reason; `rationale` is optional.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..campaign.config import section_defaults
from ..errors import CranfieldError
from ..util import fs

LEASES_NAME = "leases.jsonl"          # engine.util.confine CAMPAIGN_PATHS["leases"]
DEFAULT_LEASE_SECONDS = float(section_defaults("judging")["lease_seconds"])
CANNOT_JUDGE_REASONS = ("document unreadable or empty", "not in a language I can judge",
                        "topic statement unclear", "needs expertise I lack", "other")


def judging_config(config: dict) -> dict:
    """campaign.yaml `judging:` with the schema's defaults (engine.campaign.config), checked; `config` is a
    campaign's configuration (validated or as read)."""
    raw = config.get("judging") or {}
    defaults = section_defaults("judging")
    if not isinstance(raw, dict):
        raise CranfieldError(f"campaign.yaml: judging: must be a mapping ({', '.join(defaults)})")
    bad = set(raw) - set(defaults)
    if bad:
        raise CranfieldError(f"campaign.yaml: judging.{sorted(bad)[0]}: unknown key; allowed: {', '.join(sorted(defaults))}")
    out = {k: (raw.get(k) if raw.get(k) is not None else v) for k, v in defaults.items()}
    out.update(random_order=bool(out["random_order"]), double_fraction=float(out["double_fraction"]),
               lease_seconds=float(out["lease_seconds"]))
    if not 0 <= out["double_fraction"] <= 1:
        raise CranfieldError(f"campaign.yaml: judging.double_fraction must be in [0, 1], got {out['double_fraction']}")
    if out["lease_seconds"] <= 0:
        raise CranfieldError("campaign.yaml: judging.lease_seconds must be > 0")
    return out


def guidelines_text(root, config: dict) -> str | None:
    """The guidelines file's text (judging.guidelines), None when not configured."""
    g = judging_config(config)["guidelines"]
    if not g:
        return None
    p = Path(root) / str(g)
    try:
        return fs.read_text(p, encoding="utf-8")
    except OSError as exc:
        raise CranfieldError(f"judging.guidelines: {p} cannot be read ({exc.strerror}); fix the path "
                             f"(relative to the campaign directory)") from None


# ---------------------------------------------------------------------------- the active pool

def active_pool(root) -> tuple[str | None, pd.DataFrame | None]:
    """The newest pool in pools/ (the one the judging screen follows): (name, table with order > 0)."""
    from ..pooling import list_pools, read_pool
    files = list_pools(root)
    if not files:
        return None, None
    t = read_pool(files[-1])
    t = t[t["order"] > 0].astype({"topic": str, "doc": str})
    return files[-1].stem[5:], t.reset_index(drop=True)


def pool_double_fraction(root, name: str | None) -> float | None:
    """The double-judging share the pool builder gave pool `name` (`cranfield pool --double`), else None."""
    from engine.util.confine import campaign_path
    p = campaign_path(root, "pool_log")
    if not name or not fs.is_file(p):
        return None
    from ..formats.safeload import json_line
    frac = None
    for i, ln in enumerate(fs.read_text(p, encoding="utf-8").splitlines(), start=1):
        try:
            rec = json_line(ln, p, i)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("name") == name:
            frac = rec.get("double_fraction")      # the latest spec of that name wins
    return None if frac is None else float(frac)


def _strings(col: pd.Series) -> list[str]:
    """A column's values as a list of str (a Python list: iterating an Arrow string column item by item is
    many times slower)."""
    return col.astype(str).tolist()


def pool_progress(pool: pd.DataFrame, judged: pd.DataFrame) -> pd.DataFrame:
    """Per topic of the pool: pooled, judged (of the pooled documents), left; plus a last row `all`."""
    j = judged.loc[judged["grade"] >= 0]
    key = set(zip(_strings(j["topic"]), _strings(j["doc"])))
    p = pool[["topic", "doc"]].astype(str).drop_duplicates()
    p = p.assign(judged=[(t, d) in key for t, d in zip(_strings(p["topic"]), _strings(p["doc"]))])
    g = p.groupby("topic", sort=False)["judged"].agg(pooled="size", judged="sum").reset_index()
    g["judged"] = g["judged"].astype(np.int64)
    g["left"] = g["pooled"] - g["judged"]
    tot = pd.DataFrame({"topic": ["all"], "pooled": [int(g["pooled"].sum())], "judged": [int(g["judged"].sum())],
                        "left": [int(g["left"].sum())]})
    return pd.concat([g, tot], ignore_index=True)


# ---------------------------------------------------------------------------- double judging and order

def _unit(*parts) -> float:
    h = hashlib.sha256("\x00".join(map(str, parts)).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2 ** 64


def is_double(topic: str, doc: str, fraction: float, seed: int = 0) -> bool:
    """Whether a pooled document is assigned to a second assessor (a fixed share, by a hash of the pair)."""
    return fraction > 0 and _unit("double", seed, topic, doc) < fraction


def order_documents(docs: list[str], topic: str, assessor: str, random_order: bool) -> list[str]:
    """The order an assessor sees a topic's documents: as pooled, or shuffled by a seed of (assessor, topic)
    (against position bias; the same assessor sees the same order after a restart)."""
    if not random_order:
        return list(docs)
    return sorted(docs, key=lambda d: _unit("order", assessor, topic, d))


# ---------------------------------------------------------------------------- leases

class LeaseHeld(CranfieldError):
    """A document leased to another assessor: `holder` holds it until `expires` (seconds since the epoch)."""

    def __init__(self, topic: str, doc: str, holder: str, expires: float):
        self.topic, self.doc, self.holder, self.expires = str(topic), str(doc), holder, float(expires)
        super().__init__(f"topic {topic} doc {doc} is leased to {holder or 'an unnamed assessor'} until "
                         f"{lease_time(expires)}; nothing recorded")


def lease_time(ts: float) -> str:
    """A lease's expiry for messages (UTC, to the second)."""
    from datetime import UTC, datetime
    return datetime.fromtimestamp(float(ts), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def leases_path(root) -> Path:
    """judgments/leases.jsonl of the campaign (engine.util.confine CAMPAIGN_PATHS["leases"]), confined."""
    from ..util.confine import campaign_path
    return campaign_path(root, "leases")


def _whole_lease_line(line: bytes) -> bool:
    """A last line without its newline that is a whole lease record (kept, not moved to .torn)."""
    try:
        rec = json.loads(line)
    except ValueError:
        return False
    return isinstance(rec, dict) and rec.get("op") in ("lease", "release", "done")


def _read_lines(fd: int, path: Path | str | None = None) -> list[dict]:
    from ..formats.safeload import json_line
    size = os.fstat(fd).st_size
    data = os.pread(fd, size, 0) if size else b""
    out = []
    where = path if path is not None else "judgments/leases.jsonl"
    for i, ln in enumerate(data.split(b"\n"), start=1):
        if ln.strip():
            try:
                rec = json_line(ln, where, i)
            except ValueError:
                continue
            if isinstance(rec, dict):
                out.append(rec)
    return out


def read_leases(root) -> list[dict]:
    """Every record of the lease file (none when there is no file)."""
    p = leases_path(root)
    if not fs.is_file(p):
        return []
    fd = fs.open_fd(p)
    try:
        return _read_lines(fd, p)
    finally:
        os.close(fd)


def active_leases(records: list[dict], now: float) -> dict[tuple[str, str], dict[str, float]]:
    """(topic, doc) -> {assessor: expiry} of the leases in force (a `done` mark: expiry inf)."""
    out: dict[tuple[str, str], dict[str, float]] = {}
    for r in records:
        k = (str(r.get("topic")), str(r.get("doc")))
        a = str(r.get("assessor", ""))
        if r.get("op") == "lease":
            out.setdefault(k, {})[a] = float(r.get("expires", 0))
        elif r.get("op") == "done":           # judged: held for good (until released after an undo)
            out.setdefault(k, {})[a] = float("inf")
        elif r.get("op") == "release":
            out.get(k, {}).pop(a, None)
    return {k: {a: e for a, e in v.items() if e > now} for k, v in out.items() if any(e > now for e in v.values())}


def leases_held_by_others(records: list[dict], assessor: str, now: float) -> dict[tuple[str, str], tuple[str, float]]:
    """(topic, doc) -> (holder, expiry) of the leases in force that another assessor holds (the one expiring
    last); `done` marks are not leases (a judged document may be judged again)."""
    out: dict[tuple[str, str], tuple[str, float]] = {}
    for k, held in active_leases(records, now).items():
        others = [(e, a) for a, e in held.items() if a != assessor and e != float("inf")]
        if others:
            e, a = max(others)
            out[k] = (a, e)
    return out


def lease_holder(root, topic: str, doc: str, assessor: str, now: float | None = None) -> tuple[str, float] | None:
    """(holder, expiry) when another assessor than `assessor` holds a lease of (topic, doc) now, else None."""
    t = time.time() if now is None else now
    return leases_held_by_others(read_leases(root), assessor, t).get((str(topic), str(doc)))


def check_lease(root, topic: str, doc: str, assessor: str) -> None:
    """Raise LeaseHeld when another assessor holds (topic, doc)'s judging lease now (the check every
    judgment path makes before it records, unless told to override)."""
    if leases_path(root).is_file():
        held = lease_holder(root, topic, doc, assessor)
        if held is not None:
            raise LeaseHeld(str(topic), str(doc), *held)


def acquire_many(root, topic: str, candidates: list[str], assessor: str, k: int = 1, *,
                 judged_by: dict | None = None, double: set | None = None,
                 seconds: float = DEFAULT_LEASE_SECONDS, now: float | None = None) -> list[str]:
    """Under the lease file's lock (the judgment log's locking, engine.judgments.log.locked_file): the
    first `k` candidates no other assessor holds (a double-judged one: held or judged by fewer than two
    others), leased to `assessor`. A document this assessor already holds is returned again. `judged_by`
    maps (topic, doc) -> set of assessors who judged it."""
    from ..judgments.log import locked_file, record_lines, write_lines
    p = leases_path(root)
    picks: list[str] = []
    with locked_file(p, _whole_lease_line) as fd:
        t = time.time() if now is None else now
        held = active_leases(_read_lines(fd, p), t)
        judged_by = judged_by or {}
        double = double or set()
        new = []
        for d in candidates:
            if len(picks) >= k:
                break
            key = (str(topic), str(d))
            holders = set(held.get(key, {}))
            if assessor in holders:
                picks.append(str(d))
                continue
            if assessor in judged_by.get(key, set()):
                continue
            others = (holders | set(judged_by.get(key, set()))) - {assessor}
            if not others or (key in double and len(others) < 2):
                picks.append(str(d))
                new.append({"op": "lease", "topic": str(topic), "doc": str(d), "assessor": assessor, "ts": t,
                            "expires": t + seconds})
        if new:
            write_lines(fd, p, record_lines(new))
    return picks


def acquire(root, topic: str, candidates: list[str], assessor: str, *, judged_by: dict | None = None,
            double: set | None = None, seconds: float = DEFAULT_LEASE_SECONDS, now: float | None = None) -> str | None:
    """The first candidate `acquire_many` leases to `assessor`, or None."""
    got = acquire_many(root, topic, candidates, assessor, 1, judged_by=judged_by, double=double,
                       seconds=seconds, now=now)
    return got[0] if got else None


def release(root, topic: str, doc: str, assessor: str, judged: bool = False) -> None:
    """Release this assessor's lease of a document (on skip or cannot-judge); with `judged`, turn it into
    a `done` mark that never expires, so no other assessor is offered the document even when their view
    of the judgment log is a moment old (double-judged documents still go to one more assessor)."""
    from ..judgments.log import append_records
    append_records(leases_path(root), [{"op": "done" if judged else "release", "topic": str(topic),
                                        "doc": str(doc), "assessor": assessor, "ts": time.time()}],
                   complete=_whole_lease_line)


# ---------------------------------------------------------------------------- actions in the log

def record_action(root, topic, doc, grade: int, assessor: str, seconds: float | None = None,
                  strategy: str | None = None, *, action: str = "judge", auto_grade: int | None = None,
                  auto_source: str | None = None, rationale: str | None = None,
                  override_lease: bool = False) -> dict:
    """Append a judgment with how it was made: action judge (no automatic label), accept (the automatic
    label taken as is) or change (a different grade than the automatic label). A document another assessor
    holds the lease of raises LeaseHeld (check_lease) unless `override_lease`."""
    from ..judgments.log import append_records, judgment_record, log_path
    if action not in ("judge", "accept", "change"):
        raise CranfieldError(f"judging action {action!r}: judge, accept or change")
    rec = judgment_record(topic, doc, grade, assessor, seconds, strategy)
    if not override_lease:
        check_lease(root, rec["topic"], rec["doc"], rec["assessor"])
    rec["action"] = action
    if auto_source is not None:
        rec["auto_grade"] = None if auto_grade is None else int(auto_grade)
        rec["auto_source"] = str(auto_source)
    if rationale:
        rec["rationale"] = " ".join(str(rationale).split())
    append_records(log_path(root), [rec])
    return rec


def record_cannot_judge(root, topic, doc, assessor: str, reason: str, seconds: float | None = None) -> dict:
    """Append a `cannot_judge` line (no grade) with the reason."""
    from ..judgments.log import append_records, log_path, now_ts
    reason = " ".join(str(reason or "").split())
    if not reason:
        raise CranfieldError("cannot judge: give a reason")
    rec = {"topic": str(topic), "doc": str(doc), "assessor": str(assessor), "ts": now_ts(),
           "seconds": seconds, "op": "cannot_judge", "reason": reason}
    append_records(log_path(root), [rec])
    return rec


def edit_rates(log: pd.DataFrame) -> pd.DataFrame:
    """Per assessor: judgments shown an automatic label, accepted, changed, edit rate; cannot-judge count."""
    if log is None or not len(log) or "action" not in log:
        return pd.DataFrame(columns=["assessor", "shown_auto", "accepted", "changed", "edit_rate", "cannot_judge"])
    j = log[log["op"] == "judge"]
    rows = []
    for a in sorted(set(log["assessor"].astype(str))):
        ja = j[j["assessor"].astype(str) == a]
        acc = int((ja["action"] == "accept").sum())
        chg = int((ja["action"] == "change").sum())
        cj = int(((log["op"] == "cannot_judge") & (log["assessor"].astype(str) == a)).sum())
        rows.append({"assessor": a, "shown_auto": acc + chg, "accepted": acc, "changed": chg,
                     "edit_rate": chg / (acc + chg) if acc + chg else float("nan"), "cannot_judge": cj})
    return pd.DataFrame(rows)
