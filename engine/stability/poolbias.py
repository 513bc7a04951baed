"""Pool-bias experiments (buttcher-et-al-2007 section 5.2, Tables 2-3).

- Leave one group out: for each group G, every judged document that only G's pooled runs retrieved
  within the pool depth is removed from the judgments; all runs are re-evaluated and G's runs are
  compared with their scores and ranks under the full judgments.
- Leave manual runs out: every judged document that only manual pooled runs retrieved within the
  pool depth is removed; the manual runs are compared.

Per measure: mean absolute rank change of the left-out runs, mean signed change (positive = the
run moved down the ranking), largest move up and down, RMS error of their mean scores, mean score
change, the share of left-out runs whose per-topic scores differ significantly (paired t-test,
p < 0.05), and Kendall's tau between the full rankings (all runs; left-out runs only).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from ..ranking.join import judgment_keys, ranked_rows
from .matrix import Progress, kendall_tau, rank_positions, report
from .rejudge import Rejudger
from .significance import paired_p


def unique_contribution_mask(qrels: pd.DataFrame, runs: pd.DataFrame, contributors: list[str],
                             left_out: list[str], depth: int) -> np.ndarray:
    """Bool per qrels row: judged documents that, among the top `depth` of the `contributors`,
    only runs in `left_out` retrieved. `runs["rank"]` is the trec_eval rank (`with_trec_ranks`), the
    order pools are built in; a run file's own rank column is never trusted."""
    run = runs["run"].astype(str)
    top = (runs["rank"].to_numpy() <= depth) & run.isin(contributors).to_numpy()
    out = run[top].isin(left_out).to_numpy()
    rk, qk, n = judgment_keys(runs[top], qrels)
    retrieved = np.bincount(rk, minlength=n)
    by_others = np.bincount(rk[~out], minlength=n)
    return ((retrieved > 0) & (by_others == 0))[qk]


def with_trec_ranks(runs: pd.DataFrame) -> pd.DataFrame:
    """Run rows with their trec_eval rank (ranking.ranked_rows) in `rank`, replacing the file's rank
    column; groups by run then topic name."""
    rows, rank = ranked_rows(runs, by_name=True)
    return runs.iloc[rows].assign(rank=rank)


def run_metadata(run_meta: pd.DataFrame, runs_in: list[str]) -> pd.DataFrame:
    need = {"run", "group"}
    if not need <= set(run_meta.columns):
        raise CranfieldError("run metadata needs columns run and group (campaign.yaml runs: group/type/pooled)")
    m = run_meta.assign(run=run_meta["run"].astype(str)).set_index("run")
    m = m.reindex(runs_in)
    if m["group"].isna().any():
        miss = m.index[m["group"].isna()].tolist()
        raise CranfieldError(f"no group for run(s) {', '.join(miss[:5])}: add them to campaign.yaml runs:")
    if "pooled" not in m.columns:
        m["pooled"] = True
    if "type" not in m.columns:
        m["type"] = "automatic"
    m["pooled"] = m["pooled"].fillna(True).astype(bool)
    return m


def leave_group_out(qrels: pd.DataFrame, runs: pd.DataFrame, run_meta: pd.DataFrame, measures, *,
                    depth: int = 50, rejudger: Rejudger | None = None, progress: Progress = None
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary per measure, detail per left-out run and measure) of the leave-one-group-out experiment
    (only groups with pooled runs are left out)."""
    return _in_memory("group", qrels, runs, run_meta, measures, depth, rejudger, progress)


def leave_manual_out(qrels: pd.DataFrame, runs: pd.DataFrame, run_meta: pd.DataFrame, measures, *,
                     depth: int = 50, rejudger: Rejudger | None = None, progress: Progress = None
                     ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary per measure, detail per manual run and measure) of removing the documents only manual
    pooled runs contributed (buttcher Table 3)."""
    return _in_memory("manual", qrels, runs, run_meta, measures, depth, rejudger, progress)


def _in_memory(mode, qrels, runs, run_meta, measures, depth, rejudger, progress):
    """The experiment on a run table: `pool_bias_store`'s code on one block (the whole table)."""
    runs = with_trec_ranks(runs)
    report(progress, 0.0, "joining runs and judgments")
    rj = rejudger or Rejudger(qrels, runs, measures)
    meta = run_metadata(run_meta, rj.runs)
    scen, contributors = scenarios(meta, mode)

    def tick(d, n):
        report(progress, d / n, f"left out {scen[d - 1][0]} ({d}/{n})")

    res = _scenario_results(rj, runs, [(lo, mem) for _, lo, mem in scen], contributors, depth, rj.runs,
                            tick if progress else None)
    return _tables(mode, scen, [res], list(rj.runs))


def scenarios(meta: pd.DataFrame, mode: str) -> tuple[list, list[str]]:
    """([(label, left-out pooled runs, runs compared)], pooled runs) of a mode."""
    contributors = meta.index[meta["pooled"]].tolist()
    if mode == "group":
        groups = sorted(set(meta.loc[contributors, "group"].astype(str)))
        if not groups:
            raise CranfieldError("no pooled runs: nothing to leave out")
        scen = []
        for grp in groups:
            members = meta.index[meta["group"].astype(str) == grp].tolist()
            scen.append((grp, [m for m in members if m in contributors], members))
        return scen, contributors
    if mode == "manual":
        manual = meta.index[meta["type"].astype(str) == "manual"].tolist()
        if not manual:
            raise CranfieldError("no manual runs (campaign.yaml runs: type: manual): nothing to leave out")
        return [("manual", [m for m in manual if m in contributors], manual)], contributors
    raise CranfieldError(f"pool-bias mode must be 'group' or 'manual', got {mode!r}")


def _scenario_results(rj: Rejudger, runs: pd.DataFrame, scenarios, contributors, depth, run_order, tick=None):
    """Per scenario (runs left out): removed judgments, run sums under full and reduced judgments,
    and per-topic values of the compared runs (for the paired tests), over rj's topics."""
    col = np.asarray([run_order.index(r) for r in rj.runs])
    full = rj.evaluate()
    nm, nr = len(rj.names), len(run_order)

    def sums(ev):
        s = np.zeros((nm, nr))
        for j, name in enumerate(rj.names):
            s[j, col] = ev[name].sum(axis=0)
        return s

    def per_topic(ev, members):
        m = np.zeros((nm, rj.n_topics, len(members)))
        for j, name in enumerate(rj.names):
            for k, r in enumerate(members):
                if r in rj.runs:
                    m[j, :, k] = ev[name][:, rj.runs.index(r)]
        return m

    out = []
    for i, (left_out, members) in enumerate(scenarios):
        rm = unique_contribution_mask(rj.qrels, runs, contributors, left_out, depth)
        new = rj.evaluate(~rm) if rm.any() else full
        out.append((int(rm.sum()), sums(new), per_topic(full, members), per_topic(new, members)))
        if tick is not None:
            tick(i + 1, len(scenarios))
    return sums(full), rj.n_topics, rj.names, out


# --------------------------------------------------------------------------- streamed over a run store

def _poolbias_block(args):
    """`_scenario_results` of one topic block read from the store (None when it has no rows)."""
    from ..evaluation.blocks import read_block
    task, scenarios, contributors, depth, run_order, options = args
    q = task.qrels
    # pos: the trec_eval rank the store computed at ingest (the file's rank column is not trusted)
    runs = read_block(task, ["topic", "doc", "score", "pos"]).rename(columns={"pos": "rank"})
    if len(runs) == 0 or len(q) == 0:
        return None
    return _scenario_results(Rejudger(q, runs, task.measures, options), runs, scenarios, contributors, depth,
                             run_order)


def pool_bias_store(store, qrels: pd.DataFrame, run_meta: pd.DataFrame, measures, *, mode: str = "group",
                    depth: int = 50, options=None, block_rows: int | None = None, workers: int | None = None,
                    executor=None, progress: Progress = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`leave_group_out` (mode "group") or `leave_manual_out` ("manual") over a run store, streamed by
    topic blocks: each block re-judges its topics for every scenario; run sums and the compared
    runs' per-topic scores are joined over blocks. Same tables as in memory (means up to rounding)."""
    from ..evaluation.blocks import BLOCK_ROWS, BlockTask, sorted_topics, block_rows_of, plan_blocks
    from ..util.parallel import map_tasks
    from ..ranking.ranked import EvalOptions
    run_order = list(store.runs)
    meta = run_metadata(run_meta, run_order)
    scen, contributors = scenarios(meta, mode)
    q = qrels.reset_index(drop=True)
    plan = plan_blocks(store, sorted_topics(q["topic"].astype(str)), run_order, block_rows or BLOCK_ROWS // 2)
    opt = options or EvalOptions()
    tasks = []
    for (b, parts), rows in zip(plan, block_rows_of(plan, q["topic"])):
        task = BlockTask(parts, tuple(run_order), tuple(b), q.iloc[rows].reset_index(drop=True), measures, opt, None)
        tasks.append((task, [(lo, mem) for _, lo, mem in scen], contributors, depth, run_order, opt))
    res = [r for r in map_tasks(_poolbias_block, tasks, workers, executor,
                           (lambda d, n: report(progress, d / n, f"pool bias: topic block {d}/{n}")) if progress else None)
           if r is not None]
    if not res:
        raise CranfieldError("no (run, topic) pairs with both results and judgments to evaluate")
    return _tables(mode, scen, res, run_order)


def _tables(mode: str, scen: list, res: list, run_order: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary, detail) from the `_scenario_results` of every topic block."""
    names = res[0][2]
    T = sum(r[1] for r in res)
    a_all = sum(r[0] for r in res) / T
    summary, detail = [], []
    for si, (label, _, members) in enumerate(scen):
        removed = sum(r[3][si][0] for r in res)
        b_all = sum(r[3][si][1] for r in res) / T
        f_pt = np.concatenate([r[3][si][2] for r in res], axis=1)
        n_pt = np.concatenate([r[3][si][3] for r in res], axis=1)
        sel = np.isin(np.asarray(run_order), members)
        idx = [run_order.index(m) for m in members]
        for j, name in enumerate(names):
            a, b = a_all[j], b_all[j]
            ra, rb = rank_positions(a), rank_positions(b)
            if mode == "manual":
                full_m = np.zeros((T, len(run_order)))
                new_m = np.zeros((T, len(run_order)))
                full_m[:, idx] = f_pt[j]
                new_m[:, idx] = n_pt[j]
                eff = _effects_means(a, b, full_m[:, sel], new_m[:, sel], sel)
                summary.append({"measure": name, "removed": removed, **eff})
            for k, run in enumerate(members):
                jj = run_order.index(run)
                row = {"measure": name, "run": run, "old_rank": int(ra[jj]), "new_rank": int(rb[jj]),
                       "rank_change": int(rb[jj] - ra[jj]), "old": float(a[jj]), "new": float(b[jj])}
                if mode == "group":
                    dj = n_pt[j, :, k] - f_pt[j, :, k]
                    p = paired_p(dj)[0]
                    row = {"measure": name, "group": label, "run": run, "removed": removed,
                           **{k2: v for k2, v in row.items() if k2 not in ("measure", "run")}, "p": float(p)}
                detail.append(row)
    det = pd.DataFrame(detail)
    if mode == "group":
        for name in names:
            s = det[det["measure"] == name]
            ch = s["rank_change"].to_numpy()
            summary.append({"measure": name, "n_left_out": len(s), "mean_abs_rank_change": float(np.abs(ch).mean()),
                            "mean_rank_change": float(ch.mean()), "max_up": int(max(0, -ch.min())),
                            "max_down": int(max(0, ch.max())),
                            "rms": float(np.sqrt(np.mean((s["new"] - s["old"]) ** 2))),
                            "mean_score_change": float((s["new"] - s["old"]).mean()),
                            "share_significant": float((s["p"] < 0.05).mean())})
    return pd.DataFrame(summary), det


def _effects_means(a: np.ndarray, b: np.ndarray, full_sel: np.ndarray, new_sel: np.ndarray, sel: np.ndarray) -> dict:
    """Effect on the selected runs (bool over runs) from run means under full (`a`) and reduced (`b`)
    judgments (all runs) and the selected runs' per-topic scores."""
    ra, rb = rank_positions(a), rank_positions(b)
    ch = (rb - ra)[sel]
    d = new_sel - full_sel
    p = paired_p(d)
    return {
        "n_left_out": int(sel.sum()),
        "mean_abs_rank_change": float(np.abs(ch).mean()) if len(ch) else 0.0,
        "mean_rank_change": float(ch.mean()) if len(ch) else 0.0,
        "max_up": int(max(0, -ch.min())) if len(ch) else 0,
        "max_down": int(max(0, ch.max())) if len(ch) else 0,
        "rms": float(np.sqrt(np.mean((b[sel] - a[sel]) ** 2))) if len(ch) else 0.0,
        "mean_score_change": float((b[sel] - a[sel]).mean()) if len(ch) else 0.0,
        "share_significant": float((p < 0.05).mean()) if len(ch) else 0.0,
        "tau_all": kendall_tau(a, b),
        "tau_left_out": kendall_tau(a[sel], b[sel]) if sel.sum() > 1 else float("nan"),
    }
