"""Significance tables in the prediction-powered form (issue 38): when a model source judged every topic and
people a sample of them (the leaderboard's PPI condition, engine.judgments.ppi.default_model_source), each
pair of runs gets the PPI interval of its difference (engine.judgments.ppi.intervals), a two-sided p-value
derived from the same estimate and standard error (engine.stability.significance.interval_p), that p-value
adjusted over the family of all pairs of a measure (holm, bonferroni, bh or none, as
engine.campaign.tables.correct) and resolved when the adjusted p is below alpha; the human-only result (the
people's topics alone, lambda 0) stands beside it, treated alike. One table serves the library,
`cranfield stability significance --ci ppi`, `cranfield compare --ci ppi`, the reports and the TUI's Compare
screen. See docs/llm-judges.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import CranfieldError

CORRECTIONS = ("holm", "bonferroni", "bh", "none")
COLUMNS = ["measure", "run_a", "run_b", "difference", "lower", "upper", "p_ppi", "p_ppi_adj", "resolved_ppi",
           "human_difference", "human_lower", "human_upper", "p_human", "p_human_adj", "resolved_human",
           "model_only", "lambda", "flag"]


@dataclass
class PPISignificance:
    """Every pair of runs per measure, PPI beside human-only (`pairs`, columns COLUMNS), and the setting."""

    pairs: pd.DataFrame
    model: str
    gold: str
    n_human: int
    n_topics: int
    alpha: float
    correction: str
    method: str
    notes: list[str] = field(default_factory=list)

    @property
    def small(self) -> bool:
        """Too few human-judged topics for the normal approximation (engine.stability.ppi.MIN_TOPICS)."""
        from ..stability.ppi import MIN_TOPICS
        return self.n_human < MIN_TOPICS

    def heading(self) -> str:
        """One line saying what the table combines and how it corrects."""
        fam = "no correction" if self.correction == "none" else f"{self.correction}-adjusted over all pairs of a measure"
        return (f"{100 * (1 - self.alpha):g}% prediction-powered intervals ({self.method}) of each pair's difference: "
                f"the model source {self.model} judged all {self.n_topics} topics, {self.gold} {self.n_human} of "
                f"them; p-values from the same estimate and standard error, {fam}; resolved = adjusted p < "
                f"{self.alpha:g}; human_* from the {self.gold}-judged topics alone")

    def caution(self) -> str:
        """The small-sample caution ('' when the human sample is large enough)."""
        from ..stability.ppi import MIN_TOPICS
        if not self.small:
            return ""
        return (f"caution: only {self.n_human} human-judged topics (< {MIN_TOPICS}): the normal approximation "
                f"behind these intervals and p-values is not to be trusted")

    def pair(self, measure: str, a: str, b: str) -> dict:
        """The row of runs `a` and `b` on `measure` as a - b (a row stored as b - a is turned round)."""
        p = self.pairs
        sel = p[(p["measure"] == measure) & (p["run_a"] == a) & (p["run_b"] == b)]
        if len(sel):
            return sel.iloc[0].to_dict()
        sel = p[(p["measure"] == measure) & (p["run_a"] == b) & (p["run_b"] == a)]
        if not len(sel):
            raise CranfieldError(f"no PPI row for runs {a} and {b} on {measure}")
        r = sel.iloc[0].to_dict()
        r["run_a"], r["run_b"] = a, b
        for pre in ("", "human_"):
            d, lo, hi = r[f"{pre}difference"], r[f"{pre}lower"], r[f"{pre}upper"]
            r[f"{pre}difference"], r[f"{pre}lower"], r[f"{pre}upper"] = -d, -hi, -lo
        r["model_only"] = -r["model_only"]
        return r

    def pair_lines(self, measure: str, a: str, b: str) -> list[str]:
        """The PPI and human-only result of one pair as lines of text (the CLI's and the Compare screen's)."""
        r = self.pair(measure, a, b)
        fam = "" if self.correction == "none" else f" {self.correction}"
        def verdict(ok: bool) -> str:
            return "resolved" if ok else "not resolved"
        out = [f"PPI ({self.model} on all {self.n_topics} topics, {self.gold} on {self.n_human}): {a} - {b} "
               f"{r['difference']:+.4f} [{r['lower']:+.4f}, {r['upper']:+.4f}] p={r['p_ppi']:.4g}"
               f"{fam} p={r['p_ppi_adj']:.4g}: {verdict(bool(r['resolved_ppi']))} at alpha {self.alpha:g}",
               f"human only ({self.n_human} topics): {r['human_difference']:+.4f} [{r['human_lower']:+.4f}, "
               f"{r['human_upper']:+.4f}] p={r['p_human']:.4g}{fam} p={r['p_human_adj']:.4g}: "
               f"{verdict(bool(r['resolved_human']))}"]
        if self.caution():
            out.append(self.caution())
        elif r["flag"]:
            out.append("caution: the human-judged topics' values of this pair are too skewed for the normal "
                       "approximation (Cochran's rule): not to be trusted")
        return out

    def for_run(self, run: str) -> pd.DataFrame:
        """The rows where `run` is one of the two (a participant's page)."""
        p = self.pairs
        return p[(p["run_a"] == run) | (p["run_b"] == run)].reset_index(drop=True)


def available(camp, judgments: str | None = None) -> str | None:
    """The model source the PPI form uses (engine.judgments.ppi.default_model_source), None without one."""
    from ..judgments.ppi import default_model_source
    return default_model_source(camp, judgments)


def ppi_significance(camp, measures=None, *, model: str | None = None, gold: str = "human", alpha: float = 0.05,
                     correction: str = "holm", method: str = "ppi++", strata: str | None = None) -> PPISignificance:
    """Every pair of the campaign's runs per measure in the PPI form beside the human-only one. `model`: the
    model source (default: the leaderboard's, `available`); `correction` over all pairs of a measure."""
    from ..judgments.ppi import CI_METHODS, intervals, topic_values
    from ..stability.significance import interval_p
    from .tables import correct
    if correction not in CORRECTIONS:
        raise CranfieldError(f"--correction {correction}: choose from {', '.join(CORRECTIONS)}")
    method = CI_METHODS.get(method, method)
    if method not in ("ppi++", "ppi"):
        raise CranfieldError(f"--ci {method}: use ppi (PPI++, power-tuned) or ppi-classic (lambda = 1)")
    model = model or available(camp)
    if model is None:
        raise CranfieldError(f"{camp.root}: the PPI form needs a model judgment source that judged topics people "
                             f"did not (`cranfield judgments sources {camp.root}` lists the sources; judge with "
                             f"`cranfield judgments auto`, or import one)")
    notes: list[str] = []
    values = topic_values(camp, model, gold, measures, strata, notes=notes)
    if not values:
        raise CranfieldError("no measure averaged over topics to test (ask for map, P.10, ndcg_cut.10 ...)"
                             + ("; " + "; ".join(notes) if notes else ""))
    n, T = int(values[0].labelled.sum()), len(values[0].topics)
    if n < 2:
        raise CranfieldError(f"source {gold} judged {n} of the {T} topics {model} judged: the PPI form needs human "
                             f"judgments on a random sample of at least 2 topics (30 or more to trust it)")
    if n == T:
        notes.append(f"{gold} judged every topic: PPI adds nothing; the human-only result is the answer")
    rows = []
    corr = None if correction == "none" else correction
    for tv in values:
        if len(tv.runs) < 2:
            continue
        pv, ph, pm, (ii, jj) = intervals(tv, alpha, method, strata is not None, pairs=True)
        p_ppi, p_h = interval_p(pv.estimate, pv.se, pv.df), interval_p(ph.estimate, ph.se, ph.df)
        adj, hadj = correct(p_ppi, corr), correct(p_h, corr)
        names = np.asarray(tv.runs, dtype=object)
        rows.append(pd.DataFrame({
            "measure": tv.measure, "run_a": names[ii], "run_b": names[jj], "difference": pv.estimate,
            "lower": pv.lower, "upper": pv.upper, "p_ppi": p_ppi, "p_ppi_adj": adj,
            "resolved_ppi": np.nan_to_num(adj, nan=1.0) < alpha, "human_difference": ph.estimate,
            "human_lower": ph.lower, "human_upper": ph.upper, "p_human": p_h, "p_human_adj": hadj,
            "resolved_human": np.nan_to_num(hadj, nan=1.0) < alpha, "model_only": pm, "lambda": pv.lam,
            "flag": np.where(pv.small, "small sample", "")}))
    if not rows:
        raise CranfieldError("the PPI form compares pairs of runs: the campaign has fewer than 2")
    pairs = pd.concat(rows, ignore_index=True)[COLUMNS]
    label = method + (" stratified" if strata else "")
    return PPISignificance(pairs, model, gold, n, T, alpha, correction, label, notes)
