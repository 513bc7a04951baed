"""Pool builders: which documents to judge, per topic, under a budget.

`build_pool(runs, strategy, budget, depth=..., seed=...)` returns a `Pool` whose table has one row
per document: topic, doc, stratum, prob (inclusion probability), method (selecting strategy), order
(1.. = judging order; 0 = in the sampling frame, not selected). Strategies:

  depth       depth-k pool (k = `k`, default the pool depth); a budget keeps the best-ranked first
  take_n      round-robin over runs, rank by rank, to the budget
  uniform     simple random sample of the depth pool (infAP)
  stratified  stratified random sample, strata by rank depth (xinfAP / infNDCG; thesis 3.1.5)
  statap      unequal-probability sample, prior from AP, exact inclusion probabilities (statAP)
  rrf         take@N by reciprocal-rank-fusion weight sum 1/(k + rank) over the pooled runs (k = 60)
  rbp         take@N by rank-biased-precision weight sum (1 - p) p^(rank - 1) (p = 0.8)
  mtf         move-to-front (online)          hedge   Hedge (online)          mtc   MTC (online)

Online strategies need the judgments as they arrive: `build_pool(..., oracle=qrels)` replays them
(simulation); interactive judging asks `engine.judging.workflow.next_document`.
"""
from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import CranfieldError, FormatError, Problem
from .candidates import ap_prior, group_codes, pool_candidates, rank_within, ranked_runs
from .online import SELECTORS
from .static import SAMPLING, STATIC
from .fusion import FUSION_POOLS, fusion_pool

STRATEGIES = tuple(STATIC) + FUSION_POOLS + tuple(SELECTORS)
ONLINE = frozenset(SELECTORS)
POOL_COLUMNS = ["topic", "doc", "stratum", "prob", "method", "order"]
MQ_TARGETS = (8, 16, 32, 64, 128)


@dataclass
class Pool:
    """A built pool: the per-document table and the specification that reproduces it."""

    table: pd.DataFrame
    spec: dict = field(default_factory=dict)

    def selected(self) -> pd.DataFrame:
        """Rows to judge (order >= 1), in judging order."""
        t = self.table
        return t[t["order"] > 0].sort_values(["topic", "order"], kind="mergesort").reset_index(drop=True)

    def sizes(self) -> pd.Series:
        """Documents to judge per topic."""
        return self.selected().groupby("topic", sort=False).size()


def resolve_budgets(budget, pool_sizes: pd.Series) -> pd.Series | None:
    """Per-topic budgets (int) from an int (same for every topic), a fraction in (0, 1) of each
    topic's depth pool, or a mapping topic -> int (every pooled topic needs one)."""
    if budget is None:
        return None
    idx = pool_sizes.index
    if isinstance(budget, (dict, pd.Series)):
        m = pd.Series(budget)
        m.index = m.index.astype(str)
        missing = [t for t in idx if t not in m.index]
        if missing:
            raise CranfieldError(f"no budget for topic(s) {', '.join(map(str, missing[:10]))}"
                                 + (" ..." if len(missing) > 10 else "")
                                 + "; give every pooled topic a budget or target")
        out = m.reindex(idx).astype(float)
    else:
        b = float(budget)
        if b <= 0:
            raise CranfieldError(f"budget must be positive, got {budget}")
        if b < 1:
            out = pd.Series(np.maximum(1, np.round(b * pool_sizes.to_numpy(float))), index=idx)
        else:
            if b != int(b):
                raise CranfieldError(f"budget {budget}: give a whole number of documents or a fraction below 1")
            out = pd.Series(b, index=idx)
    if (out < 0).any() or out.isna().any():
        raise CranfieldError("budgets must be non-negative integers")
    return out.astype(np.int64)


def parse_budget(text: str | None):
    """CLI budget text: '50' (per topic), '0.05' or '5%' (of each depth pool)."""
    if text is None:
        return None
    t = str(text).strip()
    try:
        if t.endswith("%"):
            return float(t[:-1]) / 100.0
        v = float(t)
    except ValueError:
        raise CranfieldError(f"--budget {text!r}: use a count per topic (50), a fraction (0.05) or a "
                             f"percentage (5%), or 'targets' for the campaign's per-topic targets") from None
    return int(v) if v >= 1 and v == int(v) else v


def assign_targets(topics, levels=MQ_TARGETS, seed: int = 0) -> pd.Series:
    """Million Query design: per-topic judgment targets, the number of topics per level inversely
    proportional to the level (equal total effort per level: 16:8:4:2:1 for 8..128), shuffled."""
    topics = [str(t) for t in topics]
    lv = np.asarray(levels, dtype=np.int64)
    share = (1.0 / lv) / (1.0 / lv).sum() * len(topics)
    counts = np.floor(share).astype(np.int64)
    rem = len(topics) - counts.sum()
    counts[np.argsort(-(share - counts), kind="stable")[:rem]] += 1
    values = np.repeat(lv, counts)
    rng = np.random.default_rng(seed)
    rng.shuffle(values)
    return pd.Series(values, index=pd.Index(topics, name="topic"), name="target")


def derive_targets(counts: pd.Series, levels=MQ_TARGETS) -> pd.Series:
    """A topic's judgment target read from its judgment count: the smallest level >= the count
    (collisions between selection methods only ever lower a count below its target). A count above
    the largest level is filed under the largest level; how many were is in `attrs["above_largest"]`."""
    lv = np.asarray(sorted(levels), dtype=np.int64)
    c = counts.to_numpy(np.int64)
    i = np.minimum(np.searchsorted(lv, c, side="left"), len(lv) - 1)
    out = pd.Series(lv[i], index=counts.index, name="target")
    out.attrs["above_largest"] = int((c > lv[-1]).sum()) if len(lv) else 0
    return out


def build_pool(runs: pd.DataFrame, strategy: str, budget=None, *, depth: int = 100, seed: int = 0,
               pooled: list[str] | None = None, oracle: pd.DataFrame | None = None, rel_level: int = 1,
               topics: list[str] | None = None, candidates: pd.DataFrame | None = None, **params) -> Pool:
    """Build a pool of the `pooled` runs (default: all) cut at `depth` with `strategy` and per-topic
    `budget` (see `resolve_budgets`). Reproducible from (runs, strategy, budget, depth, seed, params).
    `candidates` (static strategies) is `pool_candidates` computed elsewhere, e.g. streamed over the
    run store by `engine.pooling.store.pool_candidates_store`; `runs` is then not read."""
    if strategy not in STRATEGIES:
        raise CranfieldError(f"unknown pool strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    if depth is None or int(depth) < 1:
        raise CranfieldError("pool depth must be a positive integer")
    depth = int(depth)
    _check_params(strategy, params)
    if candidates is not None and strategy in STATIC:
        cand = candidates
        rr = pd.DataFrame({"run": sorted(pooled) if pooled else []})
    else:
        rr = ranked_runs(runs, depth, pooled, topics)
        cand = pool_candidates(rr, depth)
    sizes = cand.groupby("topic", sort=False).size()
    budgets = resolve_budgets(budget, sizes)
    rng = np.random.default_rng(seed)
    spec = {"strategy": strategy, "budget": jsonable(budget), "depth": depth, "seed": int(seed),
            "params": jsonable(params), "pooled": sorted(rr["run"].unique().tolist()) if pooled else None,
            "rel_level": rel_level}
    if strategy in FUSION_POOLS:
        if budgets is None:
            raise CranfieldError(f"strategy {strategy} needs a budget (--budget N per topic)")
        sel = fusion_pool(rr, strategy, budgets, **params)
        table = pd.DataFrame({"topic": sel["topic"].to_numpy(object), "doc": sel["doc"].to_numpy(object),
                              "stratum": np.int64(1), "prob": 1.0, "method": strategy,
                              "order": (sel.groupby("topic", sort=False).cumcount() + 1).to_numpy(np.int64)})
        return Pool(table[POOL_COLUMNS], spec)
    if strategy in STATIC:
        row_budget = None if budgets is None else cand["topic"].map(budgets).to_numpy(np.int64)
        sel, stratum, prob = STATIC[strategy](cand, row_budget, rng=rng, **params)
        codes, _ = group_codes(cand["topic"])
        order = np.where(sel, rank_within(np.where(sel, codes, -1 - codes)) + 1, 0)
        keep = sel | (strategy in SAMPLING)
        table = pd.DataFrame({"topic": cand["topic"].to_numpy(object), "doc": cand["doc"].to_numpy(object),
                              "stratum": np.asarray(stratum, np.int64), "prob": np.asarray(prob, np.float64),
                              "method": strategy, "order": order.astype(np.int64)})[keep]
        return Pool(table.reset_index(drop=True), spec)
    if oracle is None:
        raise CranfieldError(f"strategy {strategy} is online: it needs judgments as they arrive. Judge with "
                             f"`cranfield judgments next`, or replay known judgments (--oracle truth)")
    if budgets is None:
        budgets = sizes
    known = _grade_lookup(oracle)
    frames = []
    for topic, rows in rr.groupby("topic", sort=False):
        sel_ = SELECTORS[strategy](rows, depth, **params)
        grades = known.get(topic, {})
        picked = []
        for _ in range(int(budgets.get(topic, 0))):
            i = sel_.next()
            if i is None:
                break
            d = sel_.docs[i]
            sel_.update(i, grades.get(d, 0) >= rel_level)
            picked.append(d)
        frames.append(pd.DataFrame({"topic": topic, "doc": np.asarray(picked, dtype=object)}))
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({"topic": [], "doc": []})
    table["stratum"] = np.int64(1)
    table["prob"] = 1.0
    table["method"] = strategy
    table["order"] = (table.groupby("topic", sort=False).cumcount() + 1).astype(np.int64)
    return Pool(table[POOL_COLUMNS], spec)


def _check_params(strategy: str, params: dict) -> None:
    """Unknown strategy parameters are an error, not silently ignored."""
    import inspect
    fn = (STATIC[strategy] if strategy in STATIC else fusion_pool if strategy in FUSION_POOLS
          else SELECTORS[strategy].__init__)
    names = [p.name for p in inspect.signature(fn).parameters.values()
             if p.kind is p.POSITIONAL_OR_KEYWORD or p.kind is p.KEYWORD_ONLY]
    known = set(names) - {"self", "cand", "budget", "rng", "rows", "depth", "rr", "kind", "budgets"}
    bad = sorted(set(params) - known)
    if bad:
        raise CranfieldError(f"strategy {strategy}: unknown parameter(s) {', '.join(bad)}; "
                             f"it takes {', '.join(sorted(known)) or 'none'}")


def _grade_lookup(qrels: pd.DataFrame) -> dict:
    out: dict = {}
    for t, g in qrels.groupby(qrels["topic"].astype(str), sort=False):
        out[t] = dict(zip(g["doc"].astype(str), g["grade"].astype(int)))
    return out


def jsonable(v):
    if isinstance(v, pd.Series):
        return {str(k): int(x) for k, x in v.items()}
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v


# ---------------------------------------------------------------------------- storage

def judged_in_pool(table: pd.DataFrame, qrels: pd.DataFrame) -> pd.Series:
    """Per document to judge of a pool table (order > 0), whether `qrels` already holds a grade >= 0 for
    it (True) or it is new to the assessors (False); indexed like those rows."""
    sel = table[table["order"] > 0]
    judged = qrels[qrels["grade"] >= 0]
    have = pd.MultiIndex.from_arrays([judged["topic"].astype(str), judged["doc"].astype(str)])
    key = pd.MultiIndex.from_arrays([sel["topic"].astype(str), sel["doc"].astype(str)])
    return pd.Series(key.isin(have), index=sel.index)


def pool_path(root, name: str) -> Path:
    """pools/pool-NAME.tsv of the campaign, confined."""
    from engine.util.confine import campaign_path
    return campaign_path(root, "pools", f"pool-{name}.tsv")


def write_pool(root, name: str, pool: Pool) -> Path:
    """Write pools/pool-NAME.tsv (header + rows) and append the spec to pools/pools.log.jsonl.

    The log entry is the commit point: the table is first written as pools/pool-NAME.tsv.pending,
    then the entry (with the table's sha256) is appended, then the pending file is renamed into
    place. Killed before the entry, the pending file is an orphan `recover_pools` deletes; killed after
    it, `recover_pools` (run by `write_pool` and `pool_log`) finishes the rename.
    """
    from ..util.atomic import atomic_write

    from ..util.names import name_problem
    if name_problem(name, "pool name") or any(c in name for c in " \t"):
        raise CranfieldError(name_problem(name, "pool name") or f"pool name {name!r}: use letters, digits, '-' or '_'")
    p = pool_path(root, name)
    t = pool.table[POOL_COLUMNS].copy()
    t["prob"] = t["prob"].map(repr)  # exact round trip
    data = t.to_csv(sep="\t", index=False).encode("utf-8")
    pending = p.with_name(p.name + PENDING)
    with _pools_lock(root):          # a concurrent write_pool or recover_pools waits (never sees our pending)
        _recover(root)
        atomic_write(pending, data)
        rec = {"op": "pool", "name": name, "file": str(p.relative_to(Path(root))),
               "sha256": hashlib.sha256(data).hexdigest(),
               "ts": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "documents": int((pool.table["order"] > 0).sum()), "topics": int(pool.table["topic"].nunique()),
               **pool.spec}
        from engine.util.confine import campaign_path
        _append_pool_record(campaign_path(root, "pool_log"), rec)
        os.replace(pending, p)
    return p


PENDING = ".pending"


def _append_pool_record(path: Path, rec: dict) -> None:
    from ..judgments.log import append_records
    append_records(path, [rec])


@contextmanager
def _pools_lock(root):
    """An exclusive lock on pools/ (fcntl on pools/.lock) for writing a pool or recovering one."""
    import fcntl
    from engine.util.confine import campaign_path
    pdir = campaign_path(root, "pools")
    pdir.mkdir(parents=True, exist_ok=True)
    fd = os.open(pdir / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def recover_pools(root) -> None:
    """Bring pools/ back to a state where every pool file has its log entry (see `write_pool`)."""
    from engine.util.confine import campaign_path
    pdir = campaign_path(root, "pools")
    if not pdir.is_dir() or not any(pdir.glob("pool-*.tsv" + PENDING)):
        return
    with _pools_lock(root):
        _recover(root)


def _recover(root) -> None:
    """recover_pools under the pools lock: a pending file whose sha256 is its file's latest log entry
    is renamed into place; any other is an orphan of a killed build and removed."""
    from engine.util.confine import campaign_path
    pdir = campaign_path(root, "pools")
    pending = sorted(pdir.glob("pool-*.tsv" + PENDING))
    if not pending:
        return
    last: dict[str, str] = {}
    for r in _read_log(pdir / "pools.log.jsonl"):
        if isinstance(r, dict) and isinstance(r.get("file"), str):
            last[r["file"]] = r.get("sha256")
    for q in pending:
        final = q.with_name(q.name[: -len(PENDING)])
        if last.get(str(final.relative_to(Path(root)))) == hashlib.sha256(q.read_bytes()).hexdigest():
            os.replace(q, final)      # committed by its log entry: finish the rename
        else:
            q.unlink()                # never committed: the pool was not built


def list_pools(root) -> list[Path]:
    """The pool files in pools/, oldest first (by modification time, then name), after `recover_pools`,
    so a build killed after its log entry counts and an uncommitted one does not."""
    recover_pools(root)
    from engine.util.confine import campaign_files
    return sorted(campaign_files(root, "pools", "pool-*.tsv"), key=lambda p: (p.stat().st_mtime, p.name))


def read_pool(path) -> pd.DataFrame:
    """Read a pool TSV written by `write_pool` (after `recover_pools`, when it lies in a pools/ folder,
    so a build killed after its log entry is finished before the file is read)."""
    p = Path(path)
    if p.parent.name == "pools":
        from engine.util.confine import confine
        confine(p.parent.parent, p)
        recover_pools(p.parent.parent)
    try:
        df = pd.read_csv(p, sep="\t", dtype={"topic": str, "doc": str, "method": str}, keep_default_na=False)
    except FileNotFoundError:
        raise FormatError(Problem(str(p), None, "pool file not found"),
                          hint="build one with `cranfield pool CAMPAIGN --strategy ... --name NAME`") from None
    missing = [c for c in POOL_COLUMNS if c not in df.columns]
    if missing:
        raise FormatError(Problem(str(p), 1, f"pool header lacks column(s) {', '.join(missing)}"),
                          hint="the header reads: " + "\t".join(POOL_COLUMNS))
    try:
        df["stratum"] = df["stratum"].astype(np.int64)
        df["order"] = df["order"].astype(np.int64)
        df["prob"] = df["prob"].astype(np.float64)
    except (ValueError, TypeError) as exc:
        raise FormatError(Problem(str(p), None, f"stratum/order must be integers and prob a number ({exc})")) from None
    return df[POOL_COLUMNS]


def pool_log(root) -> list[dict]:
    """The pools log records (one per pool built)."""
    recover_pools(root)
    from engine.util.confine import campaign_path
    return _read_log(campaign_path(root, "pool_log"))


def _read_log(p: Path) -> list[dict]:
    if not p.exists():
        return []
    out = []
    for line in p.read_text(encoding="utf-8").splitlines():
        try:
            from ..formats.safeload import loads_json
            out.append(loads_json(line, str(p)))
        except ValueError:
            continue
    return out


__all__ = ["Pool", "build_pool", "resolve_budgets", "parse_budget", "assign_targets", "derive_targets",
           "write_pool", "read_pool", "list_pools", "pool_log", "recover_pools", "pool_path", "STRATEGIES", "ONLINE", "MQ_TARGETS",
           "POOL_COLUMNS", "ap_prior", "ranked_runs", "pool_candidates"]
