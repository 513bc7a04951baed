"""The leaderboard's prediction-powered intervals (issue 38): when the campaign has a model source judging
every topic and people judged a sample of them, each run's PPI interval of a measure and which runs are
resolved from the run listed above them (engine.judgments.ppi.campaign_ppi; built off the UI thread)."""
from __future__ import annotations

from dataclasses import dataclass

from engine.errors import CranfieldError

PPI_MARK = "≠"
"""Marks a run whose PPI interval of its difference from the run listed above it excludes 0."""


@dataclass
class PPIBoard:
    """One measure's PPI intervals for the leaderboard: per run (estimate, lower, upper), per pair resolved."""

    measure: str
    model: str
    gold: str
    n_human: int
    n_topics: int
    intervals: dict            # run -> (estimate, lower, upper)
    resolved: dict             # frozenset({a, b}) -> the pair's PPI interval excludes 0
    small: bool                # fewer human-judged topics than the normal approximation needs

    def cell(self, run: str, above: str | None) -> str:
        """`lower–upper`, with PPI_MARK when the run is resolved from the run above it."""
        iv = self.intervals.get(run)
        if iv is None:
            return ""
        mark = PPI_MARK if above is not None and self.resolved.get(frozenset((run, above))) else " "
        return f"{iv[1]:.3f}–{iv[2]:.3f}{mark}"

    def header(self) -> str:
        return f"PPI {self.measure} n={self.n_human}/{self.n_topics}" + ("!" if self.small else "")


def ppi_board(root, measure: str, judgments: str | None = None, alpha: float = 0.05) -> PPIBoard | None:
    """The PPI intervals of `measure` for the campaign at `root`, or None when it has no model source
    judging beyond the human sample, or people judged fewer than 2 or all of its topics."""
    from engine.campaign.campaign import load_campaign
    from engine.judgments.ppi import campaign_ppi, default_model_source
    from engine.stability.ppi import MIN_TOPICS
    camp = load_campaign(root)
    model = default_model_source(camp, judgments)
    if model is None:
        return None
    try:
        rep = campaign_ppi(camp, model, "human", [measure], alpha)
    except CranfieldError:
        return None                   # too few human-judged topics, or a measure without a mean
    n, T = int(rep.ranking["n_human"].iat[0]), int(rep.ranking["n_topics"].iat[0])
    if n >= T:
        return None
    r, p = rep.runs, rep.pairs
    intervals = {str(a): (e, lo, hi) for a, e, lo, hi in zip(r["run"], r["estimate"], r["lower"], r["upper"])}
    resolved = {frozenset((str(a), str(b))): bool(x) for a, b, x in zip(p["run_a"], p["run_b"], p["resolved"])}
    return PPIBoard(measure, model, "human", n, T, intervals, resolved, n < MIN_TOPICS)
