"""The leaderboard's view model (and the run screen's per-topic table): engine scores arranged as one row per
run, intervals and adjacent-run tests from engine.stability.significance."""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.stability.significance import adjacent_paired_p, t_interval

from .scores import Scores, quiet


class LeaderboardView:
    """The leaderboard (l) and run (enter on a run) screens' tables, from the model's scores."""

    # ------------------------------------------------------------------ leaderboard
    def leaderboard(self, sort: str | None = None, descending: bool = True, filt: tuple[str, str] | None = None,
                    sig_measure: str | None = None, alpha: float = 0.05) -> pd.DataFrame:
        """One row per run: metadata, per measure mean and 95% half-width, judged@10, and whether the
        run is significantly different (paired t-test over topics) from the run listed above it."""
        s = self._need()
        df = self._board_base(s)
        if filt is not None:
            df = df[filter_mask(df, filt)]
        if sort is None:
            sort = s.measures[0] if s.measures else "run"
        df = df.sort_values([sort, "run"], ascending=[not descending, True], kind="mergesort")
        sm = sig_measure if sig_measure in s.matrix else (sort if sort in s.matrix else (s.measures[0] if s.measures else None))
        p = np.full(len(df), np.nan)
        if sm is not None and len(df) > 1:
            p[1:] = adjacent_paired_p(s.matrix[sm][df.index.to_numpy()])
        df["p_above"] = p
        same = ~(p < alpha)                           # NaN (identical runs, no test): not different
        same[:1] = False                              # the first run has no run above it
        df["same_as_above"] = same
        df.attrs["sig_measure"] = sm
        return df

    def _board_base(self, s: Scores) -> pd.DataFrame:
        """The unsorted leaderboard of the current scores (cached: sorting only reorders it)."""
        cached = getattr(self, "_board_cache", None)
        if cached is not None and cached[0] is s:
            return cached[1]
        meta = self.run_meta.reindex(s.runs)
        cols = {"run": s.runs, "group": meta["group"].fillna("").to_numpy(),
                "type": meta["type"].fillna("automatic").to_numpy(),
                "pooled": meta["pooled"].fillna(False).astype(bool).to_numpy()}
        for n in s.measures:
            _, half = t_interval(s.matrix[n])
            cols[n] = s.means[n].reindex(s.runs).to_numpy(np.float64)
            cols[n + " ±"] = half
        cols["judged@10"] = s.judged10
        if s.filled10 is not None:
            cols["filled@10"] = s.filled10
        df = pd.DataFrame(cols, index=np.arange(len(s.runs)))
        self._board_cache = (s, df)
        return df

    def filters(self) -> list[tuple[str, str, str]]:
        """(kind, value, label) of every leaderboard filter."""
        out = [("all", "", "all runs"), ("pooled", "yes", "pooled runs"), ("pooled", "no", "runs not pooled"),
               ("type", "manual", "manual runs"), ("type", "automatic", "automatic runs")]
        for g in sorted(set(self.run_meta["group"].dropna().astype(str)) - {""}):
            out.append(("group", g, f"group {g}"))
        return out


    def run_topics(self, run: str) -> pd.DataFrame:
        """One run's per-topic values of every measure, with the topic median of the first measure."""
        s = self._need()
        ri = s.runs.index(run)
        df = pd.DataFrame({"topic": s.topics})
        for n in s.measures:
            df[n] = s.matrix[n][ri]
        if s.measures:
            with quiet():
                df["median"] = np.nanmedian(s.matrix[s.measures[0]], axis=0)
            df["vs median"] = df[s.measures[0]] - df["median"]
        return df


def filter_mask(df: pd.DataFrame, filt: tuple[str, str]) -> np.ndarray:
    kind, value = filt
    if kind == "pooled":
        return (df["pooled"] == (value == "yes")).to_numpy()
    if kind in ("type", "group"):
        return (df[kind].astype(str) == value).to_numpy()
    return np.ones(len(df), dtype=bool)


