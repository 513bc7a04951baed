"""Repairing a damaged judgment log: the plan (what is kept, what is dropped and why) and its atomic
application.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CranfieldError
from ..util import fs


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
    from .log import _check_log_entry
    from ..formats.safeload import loads_json
    p = Path(path)
    data = fs.read_bytes(p)
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
    from ..util.atomic import atomic_write
    from .log import _open_locked
    import fcntl
    import os
    if not plan.changes:
        return
    fd = _open_locked(plan.path)                 # no writer appends while the log is rewritten
    try:
        now = fs.read_bytes(plan.path)
        again = plan_repair(plan.path)
        if len(now) and (again.keep != plan.keep or again.moved != plan.moved):
            raise CranfieldError(f"{plan.path} changed while planning the repair; run the command again")
        if plan.moved:
            rej = Path(str(plan.path) + ".rejected")
            fs.append(rej, b"".join(r + b"\n" for _, _, r in plan.moved))
        atomic_write(plan.path, b"".join(k + b"\n" for k in plan.keep))
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

