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
from scipy import stats

from ..errors import CranfieldError
from . import Progress, kendall_tau, rank_positions, report
from .rejudge import Rejudger


def unique_contribution_mask(qrels: pd.DataFrame, runs: pd.DataFrame, contributors: list[str],
                             left_out: list[str], depth: int) -> np.ndarray:
    """Bool per qrels row: judged documents that, among the top `depth` of the `contributors`,
    only runs in `left_out` retrieved."""
    top = runs[(runs["rank"].to_numpy() <= depth) & runs["run"].astype(str).isin(contributors).to_numpy()]
    out = top["run"].astype(str).isin(left_out).to_numpy()
    k = top.assign(topic=top["topic"].astype(str), doc=top["doc"].astype(str), out=out)
    agg = k.groupby(["topic", "doc"], sort=False)["out"].agg(["all"]).reset_index()
    only = agg[agg["all"]]
    key = pd.MultiIndex.from_frame(qrels[["topic", "doc"]].astype(str))
    return key.isin(pd.MultiIndex.from_frame(only[["topic", "doc"]]))


def _with_ranks(runs: pd.DataFrame) -> pd.DataFrame:
    if "rank" in runs.columns:
        return runs
    r = runs.sort_values(["run", "topic", "score", "doc"], ascending=[True, True, False, False], kind="mergesort")
    return r.assign(rank=r.groupby(["run", "topic"], sort=False).cumcount() + 1)


def _effects(full: np.ndarray, new: np.ndarray, sel: np.ndarray) -> dict:
    """Effect on the selected runs (bool over runs) of switching from `full` to `new` (topics x runs)."""
    a, b = full.mean(axis=0), new.mean(axis=0)
    ra, rb = rank_positions(a), rank_positions(b)
    ch = (rb - ra)[sel]
    d = new[:, sel] - full[:, sel]
    sd = d.std(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = d.mean(axis=0) / (sd / np.sqrt(d.shape[0]))
    p = np.where(sd > 0, 2 * stats.t.sf(np.abs(t), d.shape[0] - 1), np.where(d.mean(axis=0) == 0, 1.0, 0.0))
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


def _meta(run_meta: pd.DataFrame, runs_in: list[str]) -> pd.DataFrame:
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
    runs = _with_ranks(runs)
    report(progress, 0.0, "joining runs and judgments")
    rj = rejudger or Rejudger(qrels, runs, measures)
    meta = _meta(run_meta, rj.runs)
    contributors = meta.index[meta["pooled"]].tolist()
    groups = sorted(set(meta.loc[contributors, "group"].astype(str)))
    if not groups:
        raise CranfieldError("no pooled runs: nothing to leave out")
    full = rj.evaluate()
    detail = []
    for gi, grp in enumerate(groups):
        members = meta.index[meta["group"].astype(str) == grp].tolist()
        rm = unique_contribution_mask(rj.qrels, runs, contributors, [m for m in members if m in contributors], depth)
        new = rj.evaluate(~rm)
        sel = np.isin(np.asarray(rj.runs), members)
        for name in rj.names:
            a, b = full[name].mean(axis=0), new[name].mean(axis=0)
            ra, rb = rank_positions(a), rank_positions(b)
            for j, run in zip(np.flatnonzero(sel), np.asarray(rj.runs)[sel]):
                dj = new[name][:, j] - full[name][:, j]
                p = stats.ttest_rel(new[name][:, j], full[name][:, j]).pvalue if dj.std() > 0 else (1.0 if not dj.any() else 0.0)
                detail.append({"measure": name, "group": grp, "run": run, "removed": int(rm.sum()),
                               "old_rank": int(ra[j]), "new_rank": int(rb[j]), "rank_change": int(rb[j] - ra[j]),
                               "old": float(a[j]), "new": float(b[j]), "p": float(p)})
        report(progress, (gi + 1) / len(groups), f"left out group {grp} ({gi + 1}/{len(groups)})")
    det = pd.DataFrame(detail)
    rows = []
    for name in rj.names:
        s = det[det["measure"] == name]
        ch = s["rank_change"].to_numpy()
        rows.append({"measure": name, "n_left_out": len(s), "mean_abs_rank_change": float(np.abs(ch).mean()),
                     "mean_rank_change": float(ch.mean()), "max_up": int(max(0, -ch.min())),
                     "max_down": int(max(0, ch.max())),
                     "rms": float(np.sqrt(np.mean((s["new"] - s["old"]) ** 2))),
                     "mean_score_change": float((s["new"] - s["old"]).mean()),
                     "share_significant": float((s["p"] < 0.05).mean())})
    return pd.DataFrame(rows), det


def leave_manual_out(qrels: pd.DataFrame, runs: pd.DataFrame, run_meta: pd.DataFrame, measures, *,
                     depth: int = 50, rejudger: Rejudger | None = None, progress: Progress = None
                     ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary per measure, detail per manual run and measure) of removing the documents only manual
    pooled runs contributed (buttcher Table 3)."""
    runs = _with_ranks(runs)
    report(progress, 0.0, "joining runs and judgments")
    rj = rejudger or Rejudger(qrels, runs, measures)
    meta = _meta(run_meta, rj.runs)
    manual = meta.index[meta["type"].astype(str) == "manual"].tolist()
    if not manual:
        raise CranfieldError("no manual runs (campaign.yaml runs: type: manual): nothing to leave out")
    contributors = meta.index[meta["pooled"]].tolist()
    rm = unique_contribution_mask(rj.qrels, runs, contributors, [m for m in manual if m in contributors], depth)
    report(progress, 0.3, f"removed {int(rm.sum())} judgments only manual runs contributed")
    full = rj.evaluate()
    new = rj.evaluate(~rm)
    sel = np.isin(np.asarray(rj.runs), manual)
    rows, detail = [], []
    for name in rj.names:
        rows.append({"measure": name, "removed": int(rm.sum()), **_effects(full[name], new[name], sel)})
        a, b = full[name].mean(axis=0), new[name].mean(axis=0)
        ra, rb = rank_positions(a), rank_positions(b)
        for j in np.flatnonzero(sel):
            detail.append({"measure": name, "run": rj.runs[j], "old_rank": int(ra[j]), "new_rank": int(rb[j]),
                           "rank_change": int(rb[j] - ra[j]), "old": float(a[j]), "new": float(b[j])})
    report(progress, 1.0, "done")
    return pd.DataFrame(rows), pd.DataFrame(detail)
