"""Submission intake: validate a run against its campaign and, when it passes, copy it into runs/ with
its metadata recorded in campaign.yaml (runs.<tag>: group, type, pooled, priority, submitted, checksum).

Checks (every problem reported as `file:line: what`): the six-column format, every campaign topic present
(unless `submission.missing_topics: allow`), the depth limit (`submission.max_depth`, default
evaluation.depth), ranks unique and scores non-increasing in rank order (equal scores are reported as
notes), duplicate documents, document ids not in the collection (`submission.doclist`: one id per line or
JSON lines with "id"), the run tag unique in the campaign, one tag per file, the group's run limit
(`submission.max_runs_per_group`) and the deadline (`submission.deadline`, ISO 8601; `override=True`
accepts late runs).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import yaml

from ..errors import CranfieldError, FormatError, Problem
from ..util.atomic import atomic_path, atomic_write, campaign_lock
from ..util.names import natural_sorted
from ..util import fs

_TAG_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


@dataclass
class Submission:
    """The outcome of checking one run file."""

    path: str
    tag: str | None
    problems: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)
    header: list[str] = field(default_factory=list)      # '#' comment / ir_metadata lines, kept verbatim
    topics: int = 0
    lines: int = 0
    checksum: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems


def submission_config(camp) -> dict:
    """The campaign's `submission:` settings (free-form mapping; empty when absent)."""
    cfg = camp.config.get("submission") or {}
    if not isinstance(cfg, dict):
        raise CranfieldError(f"{camp.config_path}: submission: must be a mapping (deadline, max_depth, "
                             f"max_runs_per_group, missing_topics, doclist)")
    return cfg


def depth_limit(camp) -> int:
    """The most documents per topic a submitted run may hold (submission.max_depth, else evaluation.depth)."""
    return int(submission_config(camp).get("max_depth") or camp.depth())


def _deadline(cfg: dict, where: str) -> datetime | None:
    d = cfg.get("deadline")
    if d is None or d == "":
        return None
    if isinstance(d, datetime):
        dt = d
    else:
        try:
            dt = datetime.fromisoformat(str(d).replace("Z", "+00:00"))
        except ValueError:
            raise CranfieldError(f"{where}: submission.deadline {d!r} is not an ISO 8601 time "
                                 f"(e.g. 2026-07-01T23:59:00Z)") from None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _doclist(camp, cfg: dict) -> set[str] | None:
    f = cfg.get("doclist")
    if not f:
        return None
    p = camp.root / str(f)
    if not fs.is_file(p):
        raise CranfieldError(f"{camp.config_path}: submission.doclist: {f} does not exist")
    from ..formats.safeload import json_line
    ids = set()
    for i, ln in enumerate(fs.read_text(p, encoding="utf-8").splitlines(), start=1):
        ln = ln.strip()
        if not ln or ln.startswith("#"):
            continue
        if not ln.startswith("{"):
            ids.add(ln.split()[0])
            continue
        try:
            rec = json_line(ln, p, i)
            ids.add(str(rec["id"]))
        except (ValueError, KeyError, TypeError):
            raise CranfieldError(f"{p}:{i}: not a JSON object with an \"id\" (the doclist holds one document id, "
                                 f"or one {{\"id\": ...}} object, per line)") from None
    return ids


def campaign_topics(camp) -> list[str]:
    """The campaign's topics: topics/ when present, else the judged topics."""
    t = camp.topics()
    if len(t):
        return natural_sorted(set(t["topic"].astype(str)))
    q = camp.qrels()
    return natural_sorted(set(q["topic"].astype(str))) if len(q) else []


def check_run(path, camp, *, group: str | None = None, taken: set[str] | None = None,
              group_counts: dict[str, int] | None = None) -> Submission:
    """Check one run file against the campaign; nothing is written."""
    cfg = submission_config(camp)
    spath = str(path)
    data = fs.read_bytes(path)
    sub = Submission(spath, None, checksum=hashlib.sha256(data).hexdigest())
    err = sub.problems.append
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        err(Problem(spath, None, "is not UTF-8 text"))
        return sub
    depth = depth_limit(camp)
    docs_ok = _doclist(camp, cfg)
    tags: dict[str, int] = {}
    per_topic: dict[str, list[tuple[int, float, str, int]]] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s:
            continue
        if s.startswith("#"):
            sub.header.append(raw.rstrip())
            continue
        f = s.split()
        if len(f) != 6:
            err(Problem(spath, no, f"expected 6 columns (topic Q0 doc rank score tag), found {len(f)}"))
            continue
        topic, _, doc, rank_s, score_s, tag = f
        try:
            rank = int(rank_s)
        except ValueError:
            err(Problem(spath, no, f"rank {rank_s!r} is not an integer"))
            continue
        try:
            score = float(score_s)
            if score != score or score in (float("inf"), float("-inf")):
                raise ValueError
        except ValueError:
            err(Problem(spath, no, f"score {score_s!r} is not a finite number"))
            continue
        tags.setdefault(tag, no)
        if docs_ok is not None and doc not in docs_ok:
            err(Problem(spath, no, f"document {doc} is not in the collection (submission.doclist)"))
        per_topic.setdefault(topic, []).append((rank, score, doc, no))
        sub.lines += 1
    if not per_topic and not sub.problems:
        err(Problem(spath, None, "has no result lines"))
    if len(tags) > 1:
        first = list(tags)
        for t in first[1:]:
            err(Problem(spath, tags[t], f"run tag {t} differs from {first[0]} (line {tags[first[0]]}); "
                                        f"one file holds one run"))
    sub.tag = next(iter(tags), None)
    if sub.tag is not None:
        from ..util.names import name_problem
        if name_problem(sub.tag, "run tag"):
            err(Problem(spath, tags[sub.tag], name_problem(sub.tag, "run tag")))
        elif not _TAG_OK.match(sub.tag):
            err(Problem(spath, tags[sub.tag], f"run tag {sub.tag!r}: use ASCII letters (a-z, A-Z), digits and _ . + -"))
        if sub.tag in (taken or set()):
            err(Problem(spath, tags[sub.tag], f"run tag {sub.tag} is already in the campaign; choose a new tag"))
    reordered: list[tuple[str, int, int]] = []     # (topic, first line, tied pairs evaluation reorders)
    for topic, rows in per_topic.items():
        seen: dict[str, int] = {}
        for _, _, doc, no in rows:
            if doc in seen:
                err(Problem(spath, no, f"topic {topic}: document {doc} repeated (first at line {seen[doc]})"))
            else:
                seen[doc] = no
        if len(rows) > depth:
            err(Problem(spath, rows[depth][3], f"topic {topic}: {len(rows)} documents, more than the depth "
                                               f"limit {depth}"))
        by_rank = sorted(rows, key=lambda r: (r[0], r[3]))
        ties = 0
        for prev, cur in zip(by_rank, by_rank[1:]):
            if cur[0] == prev[0]:
                err(Problem(spath, cur[3], f"topic {topic}: rank {cur[0]} repeated (also line {prev[3]})"))
            elif cur[1] > prev[1]:
                err(Problem(spath, cur[3], f"topic {topic}: score {cur[1]:g} at rank {cur[0]} is higher than "
                                           f"{prev[1]:g} at rank {prev[0]} (line {prev[3]}); scores must not "
                                           f"increase down the ranking"))
            elif cur[1] == prev[1] and prev[2].encode() < cur[2].encode():
                ties += 1       # trec_eval puts tied documents in descending id order: this pair swaps
        if ties:
            reordered.append((topic, by_rank[0][3], ties))
    if reordered:     # one note for the file: tied scores whose order evaluation changes
        t0, line0, _ = reordered[0]
        sub.notes.append(Problem(spath, line0, f"{len(reordered)} topic(s) ({', '.join(t for t, _, _ in reordered[:5])}"
                                               f"{', ...' if len(reordered) > 5 else ''}) have tied scores in an order "
                                               f"evaluation changes: ties are broken by document id (descending, "
                                               f"as trec_eval), not by your ranks"))
    want = campaign_topics(camp)
    missing = [t for t in want if t not in per_topic]
    if missing and per_topic and str(cfg.get("missing_topics", "refuse")) != "allow":
        err(Problem(spath, None, f"{len(missing)} campaign topic(s) missing: {', '.join(missing[:10])}"
                                 f"{' ...' if len(missing) > 10 else ''} (submit every topic, or set "
                                 f"submission.missing_topics: allow)"))
    extra = natural_sorted(set(per_topic) - set(want)) if want else []
    if extra:
        sub.notes.append(Problem(spath, None, f"{len(extra)} topic(s) not in the campaign, ignored in evaluation: "
                                              f"{', '.join(extra[:10])}"))
    limit = cfg.get("max_runs_per_group")
    if limit is not None and group is not None:
        have = (group_counts or {}).get(group, 0)
        if have + 1 > int(limit):
            err(Problem(spath, None, f"group {group} already has {have} run(s); the limit is {limit}"))
    sub.topics = len(per_topic)
    return sub


def _yaml_entry(tag: str, meta: dict, indent: str) -> str:
    body = yaml.safe_dump({tag: meta}, sort_keys=False, default_flow_style=False, allow_unicode=True)
    return "".join(indent + ln + "\n" for ln in body.splitlines())


def _add_run_entry(text: str, tag: str, meta: dict) -> str:
    """campaign.yaml text with runs.<tag> added, comments and layout kept."""
    lines = text.splitlines(keepends=True)
    for i, ln in enumerate(lines):
        if re.match(r"^runs:\s*(\{\s*\})?\s*(#.*)?$", ln):
            indent = "  "
            for nxt in lines[i + 1:]:
                if nxt.strip() and not nxt.lstrip().startswith("#"):
                    m = re.match(r"^(\s+)\S", nxt)
                    indent = m.group(1) if m else "  "
                    break
            head = "runs:\n" if "{" in ln else ln if ln.endswith("\n") else ln + "\n"
            return "".join(lines[:i]) + head + _yaml_entry(tag, meta, indent) + "".join(lines[i + 1:])
    if text and not text.endswith("\n"):
        text += "\n"
    return text + "runs:\n" + _yaml_entry(tag, meta, "  ")


def submit(campaign, paths: list, *, group: str | None = None, manual: bool = False, priority: int | None = None,
           override_deadline: bool = False, now: datetime | None = None, dry_run: bool = False,
           pooled: bool = True) -> list[Submission]:
    """Check every run file; if all pass, copy each into runs/<tag>.txt and record runs.<tag> in
    campaign.yaml (type manual or automatic; `pooled`: whether the run contributes to pools, False for
    a run derived from others, e.g. a fusion). If any fails, raise FormatError with every problem and
    write nothing.

    The whole check-and-record holds the campaign lock and reads campaign.yaml afresh under it, so two
    submissions at once both land (neither sees the other's tag as free, neither entry is lost)."""
    from .campaign import load_campaign
    root = Path(campaign.root if hasattr(campaign, "config") else campaign)
    warnings = getattr(campaign, "warnings", None)
    with campaign_lock(root):
        camp = load_campaign(root, warnings=warnings) if warnings is not None else load_campaign(root)
        return _submit_locked(camp, paths, group=group, manual=manual, priority=priority,
                              override_deadline=override_deadline, now=now, dry_run=dry_run, pooled=pooled)


def _submit_locked(camp, paths: list, *, group, manual, priority, override_deadline, now, dry_run,
                   pooled) -> list[Submission]:
    from .campaign import read_config
    cfg = submission_config(camp)
    now = now or datetime.now(timezone.utc)
    dl = _deadline(cfg, str(camp.config_path))
    if dl is not None and now > dl and not override_deadline:
        raise CranfieldError(f"{camp.config_path}: intake closed at the deadline {dl.isoformat()} "
                             f"(submission.deadline); use --override-deadline to accept a late run")
    meta = camp.run_meta()
    taken = set(meta["run"].astype(str)) | set(camp.config["runs"])
    counts = meta.groupby("group").size().to_dict() if len(meta) else {}
    results: list[Submission] = []
    for p in paths:
        if not Path(p).is_file():
            raise CranfieldError(f"{p}: no such run file")
        g = group
        s = check_run(p, camp, group=None, taken=taken)
        g = g or s.tag
        if g is not None:
            lim = cfg.get("max_runs_per_group")
            s2 = check_run(p, camp, group=g, taken=taken, group_counts=counts) if lim is not None else s
            s = s2
            counts[g] = counts.get(g, 0) + 1
        if s.tag is not None:
            dest = camp.path("runs", f"{s.tag}.txt")
            if dest.exists() and not any(pr.message.startswith(f"run tag {s.tag} is already") for pr in s.problems):
                s.problems.append(Problem(str(p), None, f"runs/{dest.name} already exists; choose a new tag"))
            taken.add(s.tag)
        results.append(s)
    problems = [pr for s in results for pr in s.problems]
    if problems:
        raise FormatError(problems, hint="nothing was copied; fix the run file(s) and submit again")
    if dry_run:
        return results
    cfg_path = camp.path("config")
    text = fs.read_text(cfg_path, encoding="utf-8")
    stamp = now.astimezone(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    for s in results:
        entry = {"group": group or s.tag, "type": "manual" if manual else "automatic", "pooled": bool(pooled),
                 "file": f"runs/{s.tag}.txt", "submitted": stamp, "checksum": f"sha256:{s.checksum}"}
        if priority is not None:
            entry["priority"] = int(priority)
        text = _add_run_entry(text, s.tag, entry)
    # validate the new configuration before anything is written
    fs.makedirs(camp.path("runs"))
    written = []
    try:
        with atomic_path(cfg_path) as tmp_cfg:       # validated, fsynced, then renamed over campaign.yaml
            with fs.open(tmp_cfg, "w", encoding="utf-8") as fh:     # the temporary file itself
                fh.write(text)
            read_config(tmp_cfg)
            for s in results:                        # the run files first, each durable
                dest = camp.path("runs", f"{s.tag}.txt")
                atomic_write(dest, fs.read_bytes(s.path))
                written.append(dest)
    except BaseException:
        for d in written:
            fs.unlink(d)
        raise
    return results


def select_by_priority(camp, runs: list[str] | None, per_group: int) -> list[str]:
    """TREC-style pooled-run selection: per group, the `per_group` runs of `runs` (default all) with the
    best submission priority (runs.<tag>.priority; 1 = first; runs without one come last, in tag order)."""
    if per_group < 1:
        raise CranfieldError("--runs-per-group must be at least 1")
    meta = camp.run_meta()
    cand = meta if runs is None else meta[meta["run"].astype(str).isin(set(runs))]
    prio = {t: m.get("priority") for t, m in camp.config["runs"].items()}
    order = sorted(cand.itertuples(index=False),
                   key=lambda r: (prio.get(r.run) is None, prio.get(r.run) or 0, str(r.run)))
    taken: dict[str, int] = {}
    out = []
    for r in order:
        if taken.get(r.group, 0) < per_group:
            taken[r.group] = taken.get(r.group, 0) + 1
            out.append(str(r.run))
    return sorted(out)
