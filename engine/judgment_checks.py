"""Judgments are checked before they are written, and a damaged log can be repaired.

`check_new_judgment` (called by `judging.record_judgment` before anything is appended):
grade an integer on the campaign's scale (or within grammar.GRADE_MIN..GRADE_MAX without a
campaign.yaml), topic known to the campaign (its topic files, or already judged) unless
`new_topic=True`, seconds finite and >= 0, assessor non-empty, strategy (the judgment's source)
non-empty when given.

`plan_repair(path)` reads a log line by line and says what `cranfield judgments repair` would do:
keep every valid line, add the missing newline to a complete last line, and move every line that is
not a valid entry (torn, not JSON, bad grade or seconds) to `log.jsonl.rejected`, keeping it there
word for word (nothing is deleted). `apply_repair` does it atomically (temp file, fsync, rename).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CranfieldError
from .grammar import GRADE_MAX, GRADE_MIN, parse_int


def _campaign_facts(root: Path) -> tuple[set[int] | None, set[str] | None]:
    """(grades on the scale, known topics) of the campaign at `root`; (None, None) without campaign.yaml."""
    from .campaign import CONFIG_NAME, load_campaign
    if not (root / CONFIG_NAME).is_file():
        return None, None
    camp = load_campaign(root)
    scale = {int(g) for g in camp.scale()}
    known = set(camp.topics()["topic"].astype(str))
    return scale, known


def _judged_topics(root: Path) -> set[str]:
    from .campaign import load_campaign
    camp = load_campaign(root)
    q = camp.qrels()
    return set(q["topic"].astype(str)) if len(q) else set()


def check_new_judgment(root, topic: str, grade, seconds, assessor: str, strategy: str | None,
                       new_topic: bool = False, op: str = "judge") -> None:
    """Raise CranfieldError (naming the value and what to do) for a judgment that must not be written."""
    root = Path(root)
    try:
        if isinstance(grade, bool) or not isinstance(grade, (int, str)):
            raise ValueError
        g = grade if isinstance(grade, int) else parse_int(grade)
    except ValueError:
        raise CranfieldError(f"grade {grade!r}: must be an integer on the campaign's scale") from None
    if seconds is not None:
        try:
            s = float(seconds)
        except (TypeError, ValueError):
            raise CranfieldError(f"--seconds {seconds!r}: must be a number of seconds >= 0") from None
        if not math.isfinite(s) or s < 0:
            raise CranfieldError(f"--seconds {seconds!r}: must be a finite number of seconds >= 0 "
                                 f"(the time spent judging)")
    if not str(assessor or "").strip():
        raise CranfieldError("the assessor is empty: give --assessor NAME (or set CRANFIELD_ASSESSOR)")
    if strategy is not None and not str(strategy).strip():
        raise CranfieldError("--strategy is empty: name the strategy that selected the document, or leave it out")
    scale, known = _campaign_facts(root)
    if op == "judge":
        if scale is None:
            if not GRADE_MIN <= g <= GRADE_MAX:
                raise CranfieldError(f"grade {g}: outside [{GRADE_MIN}, {GRADE_MAX}]")
        elif g not in scale:
            raise CranfieldError(f"grade {g} is not on the campaign's scale ({', '.join(map(str, sorted(scale)))}); "
                                 f"use one of those, or add the grade to relevance.scale in campaign.yaml")
    if known is not None and not new_topic and str(topic) not in known and str(topic) not in _judged_topics(root):
        raise CranfieldError(f"topic {topic} is not in the campaign's topics (topics/) nor judged yet; "
                             f"check the id, or pass --new-topic to judge a topic the topic files do not list")


# ----------------------------------------------------------------------------- repair

@dataclass
class RepairPlan:
    """What a repair would change: lines kept, newline to add, lines to move (line number, reason)."""

    path: Path
    keep: list[bytes] = field(default_factory=list)
    moved: list[tuple[int, str, bytes]] = field(default_factory=list)
    add_newline: bool = False

    @property
    def changes(self) -> bool:
        return bool(self.moved) or self.add_newline

    def describe(self) -> list[str]:
        out = []
        if self.add_newline:
            out.append(f"{self.path}:{len(self.keep)}: complete last line without a newline: the newline is added")
        for ln, why, raw in self.moved:
            out.append(f"{self.path}:{ln}: {why}: moved to {self.path.name}.rejected "
                       f"({len(raw)} bytes, kept word for word)")
        return out


def plan_repair(path) -> RepairPlan:
    """Classify every line of a judgment log (see the module docstring)."""
    from .judgment_log import _check_log_entry
    from .safeload import loads_json
    p = Path(path)
    data = p.read_bytes()
    plan = RepairPlan(p)
    raw = data.split(b"\n")
    if raw and raw[-1] == b"":
        raw = raw[:-1]
    for ln, b in enumerate(raw, start=1):
        if not b.strip():
            continue
        last = ln == len(raw) and not data.endswith(b"\n")
        try:
            obj = loads_json(b.decode("utf-8"), str(p), ln)
        except (UnicodeDecodeError, ValueError) as exc:
            why = "cut off (a crash mid-write)" if last else f"not valid JSON ({getattr(exc, 'msg', exc)})"
            plan.moved.append((ln, why, b))
            continue
        msg = "expected a JSON object" if not isinstance(obj, dict) else _check_log_entry(obj)
        if msg:
            plan.moved.append((ln, msg, b))
            continue
        plan.keep.append(b)
        if last:
            plan.add_newline = True
    return plan


def apply_repair(plan: RepairPlan) -> None:
    """Write the repaired log atomically; rejected lines are appended (durably) to LOG.rejected first."""
    from .atomic import atomic_write
    from .judgment_log import _open_locked, _write_all
    import fcntl
    import os
    if not plan.changes:
        return
    fd = _open_locked(plan.path)                 # no writer appends while the log is rewritten
    try:
        now = plan.path.read_bytes()
        again = plan_repair(plan.path)
        if len(now) and (again.keep != plan.keep or again.moved != plan.moved):
            raise CranfieldError(f"{plan.path} changed while planning the repair; run the command again")
        if plan.moved:
            rej = Path(str(plan.path) + ".rejected")
            rfd = os.open(rej, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                _write_all(rfd, b"".join(r + b"\n" for _, _, r in plan.moved))
                os.fsync(rfd)
            finally:
                os.close(rfd)
        atomic_write(plan.path, b"".join(k + b"\n" for k in plan.keep))
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
