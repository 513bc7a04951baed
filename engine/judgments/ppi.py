"""How far a ranking judged mostly by a model can be trusted: prediction-powered intervals for a campaign.

A model source judges every topic; a gold source (people) judges a random sample of the topics. For each
measure and run, the per-topic value under the model's labels on every topic and under the gold labels on
the sampled topics give PPI intervals (engine.stability.ppi) of each run's mean, of each pairwise
difference, and so which pairs of the ranking are resolved at level alpha; a human-only interval stands
beside each. See docs/llm-judges.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import CranfieldError, Warnings

CI_METHODS = {"ppi": "ppi++", "ppi++": "ppi++", "ppi-classic": "ppi"}
"""--ci spellings -> the estimator: ppi (PPI++, power-tuned lambda), ppi-classic (lambda = 1)."""


@dataclass
class TopicValues:
    """One measure's per-topic values: the model's on every topic, the gold source's on the sampled ones."""

    measure: str
    runs: list[str]
    topics: list[str]
    model: np.ndarray            # topics x runs
    human: np.ndarray            # topics x runs, NaN on topics the gold source did not judge
    labelled: np.ndarray         # per topic: judged by the gold source
    strata: np.ndarray | None = None

    @property
    def n_human(self) -> int:
        return int(self.labelled.sum())

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    def split(self, cols: np.ndarray | None = None):
        """(y, f_lab, f_unl) for the runs, or for columns built from them (`cols`: a function of a matrix)."""
        h, m = self.human[self.labelled], self.model
        if cols is not None:
            h, m = cols(h), cols(m)
        return h, m[self.labelled], m[~self.labelled]


@dataclass
class PPIReport:
    """Interval tables of a campaign: per run mean, per pair of runs, and the ranking summary."""

    runs: pd.DataFrame
    pairs: pd.DataFrame
    ranking: pd.DataFrame
    values: list[TopicValues] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def model_and_gold(camp, model: str, gold: str, roles: str) -> tuple[str, str]:
    """The two sources' names as the campaign knows them; the same source for both is refused (`roles`
    says what each is for)."""
    from .sources import resolve_name
    model, gold = resolve_name(camp, model), resolve_name(camp, gold)
    if model == gold:
        raise CranfieldError(f"--judgments {model} and --gold {gold} name the same source: {roles}")
    return model, gold


def _long_values(camp, qrels: pd.DataFrame, measures) -> pd.DataFrame:
    from ..evaluation.seam import evaluate_campaign
    return evaluate_campaign(camp, measures, qrels=qrels, ranked=False).table


def _mean_measures(df: pd.DataFrame, notes: list[str]) -> list[str]:
    from ..evaluation.evaluate import aggregate_kind
    out = []
    for m in dict.fromkeys(df["measure"].astype(str)):
        if aggregate_kind(m, df) == "mean":
            out.append(m)
        else:
            notes.append(f"{m}: summarized by {aggregate_kind(m, df)}, not a mean over topics; no interval")
    return out


def topic_values(camp, model: str, gold: str = "human", measures=None, strata: str | None = None,
                 warnings: Warnings | None = None, notes: list[str] | None = None) -> list[TopicValues]:
    """Per measure: the runs' per-topic values under the `model` source (every topic it judged) and the
    `gold` source (the topics it judged). A run without results for a topic scores 0 there.
    `strata`: `category` (campaign.yaml's topic categories) to keep each topic's stratum."""
    from ..util.names import natural_key
    from .sources import source_judgments
    w = warnings if warnings is not None else camp.warnings
    notes = notes if notes is not None else []
    model, gold = model_and_gold(camp, model, gold, "the model source judges every topic, the gold source "
                                 "(people) a sample of them")
    qm, qh = source_judgments(camp, model, w), source_judgments(camp, gold, w)
    model_topics = set(qm["topic"])
    if not model_topics:
        raise CranfieldError(f"source {model} has no judgments")
    extra = sorted(set(qh["topic"]) - model_topics, key=natural_key)
    if extra:
        notes.append(f"{len(extra)} topic(s) judged by {gold} but not by {model} are left out: "
                     f"{', '.join(extra[:10])}")
    qh = qh[qh["topic"].isin(model_topics)]
    measures = measures or camp.measures() or ["map", "P.10", "ndcg_cut.10"]
    lm, lh = _long_values(camp, qm, measures), _long_values(camp, qh, measures)
    topics = sorted(model_topics, key=natural_key)
    runs = list(dict.fromkeys(lm["run"].astype(str)))
    labelled = np.isin(np.asarray(topics, dtype=object), np.asarray(sorted(set(qh["topic"])), dtype=object))
    st = None
    if strata:
        if strata != "category":
            raise CranfieldError(f"--strata {strata}: only 'category' (campaign.yaml's topics.categories) is known")
        cats = camp.categories()
        missing = [t for t in topics if t not in cats]
        if missing:
            raise CranfieldError(f"--strata category: {len(missing)} topic(s) have no category in campaign.yaml "
                                 f"(topics.categories), e.g. {missing[0]}; give every topic one")
        st = np.asarray([cats[t] for t in topics], dtype=object)
    out = []
    for m in _mean_measures(lm, notes):
        fm = np.nan_to_num(_matrix(lm, m, topics, runs), nan=0.0)
        hm = np.where(labelled[:, None], np.nan_to_num(_matrix(lh, m, topics, runs), nan=0.0), np.nan)
        out.append(TopicValues(m, runs, topics, fm, hm, labelled, st))
    return out


def _matrix(long: pd.DataFrame, measure: str, topics: list[str], runs: list[str]) -> np.ndarray:
    """Topics x runs values of one measure from a long table (NaN where a run has no value)."""
    sub = long[long["measure"].astype(str) == measure]
    p = sub.pivot_table(index="topic", columns="run", values="value", observed=True, aggfunc="first")
    p.columns = p.columns.astype(str)
    return p.reindex(index=topics, columns=runs).to_numpy(np.float64)


def intervals(tv: TopicValues, alpha: float = 0.05, method: str = "ppi++", stratified: bool = False,
              pairs: bool = False, small_n: bool = True):
    """(PPI interval, human-only interval, model-only means, run index pairs) for the runs' means, or for
    every pairwise difference with `pairs`."""
    from ..stability.ppi import pair_columns, ppi_mean, stratified_ppi_mean
    cols = None
    ii = jj = None
    if pairs:
        ii, jj, _ = pair_columns(tv.model[:1])
        cols = lambda m: m[:, ii] - m[:, jj]
    y, fl, fu = tv.split(cols)
    lam = None if method == "ppi++" else 1.0
    if stratified and tv.strata is not None:
        sl, su = tv.strata[tv.labelled], tv.strata[~tv.labelled]
        iv = stratified_ppi_mean(y, fl, fu, sl, su, alpha, lam, small_n)
        hv = stratified_ppi_mean(y, fl, fu, sl, su, alpha, 0.0, small_n)
    else:
        iv = ppi_mean(y, fl, fu, alpha, lam, small_n)
        hv = ppi_mean(y, fl, fu, alpha, 0.0, small_n)
    model_only = (cols(tv.model) if cols else tv.model).mean(0)
    return iv, hv, model_only, (ii, jj)


def campaign_ppi(camp, model: str, gold: str = "human", measures=None, alpha: float = 0.05, method: str = "ppi++",
                 strata: str | None = None, warnings: Warnings | None = None, small_n: bool = True) -> PPIReport:
    """PPI intervals of a campaign: `model` judged every topic, `gold` a random sample of topics. Tables:
    runs (per measure and run), pairs (per pair of runs: the difference, resolved or not) and ranking
    (per measure: resolved pairs under PPI and human-only). `small_n` False: ppi-python's normal form."""
    method = CI_METHODS.get(method, method)
    if method not in ("ppi++", "ppi"):
        raise CranfieldError(f"--ci {method}: use ppi (PPI++, power-tuned) or ppi-classic (lambda = 1)")
    notes: list[str] = []
    values = topic_values(camp, model, gold, measures, strata, warnings, notes)
    if not values:
        raise CranfieldError("no measure averaged over topics to put an interval on (ask for map, P.10, ndcg_cut.10 ...)"
                             + ("; " + "; ".join(notes) if notes else ""))
    n = int(values[0].labelled.sum())
    T = len(values[0].topics)
    from ..stability.ppi import MIN_TOPICS
    if n < 2:
        raise CranfieldError(f"source {gold} judged {n} of the {T} topics {model} judged: PPI needs human judgments on "
                             f"a random sample of at least 2 topics (30 or more for an interval to trust)")
    if n == T:
        notes.append(f"{gold} judged every topic: PPI adds nothing; the human-only interval is the answer")
    if n < MIN_TOPICS:
        notes.append(f"only {n} human-judged topics (< {MIN_TOPICS}): the normal approximation behind every "
                     f"interval is not to be trusted; flagged rows say so")
    label = method + (" stratified" if strata else "") + ("" if small_n else " normal")
    fn = lambda tv, pairs: intervals(tv, alpha, method, strata is not None, pairs=pairs, small_n=small_n)
    return report_tables(values, fn, alpha, label, notes)


def report_tables(values, interval_fn, alpha: float, label: str, notes: list[str]) -> PPIReport:
    """The runs, pairs and ranking tables from `interval_fn(v, pairs)` -> (PPI interval, human-only
    interval, model-only means, (i, j) run pairs) for each measure's values `v` (with .measure, .runs,
    .n_human, .n_topics); `label` names the method in the ranking table."""
    runs_rows, pair_rows, rank_rows = [], [], []
    for tv in values:
        iv, hv, mo, _ = interval_fn(tv, False)
        runs_rows.append(pd.DataFrame({
            "measure": tv.measure, "run": tv.runs, "estimate": iv.estimate, "lower": iv.lower, "upper": iv.upper,
            "lambda": iv.lam, "human_estimate": hv.estimate, "human_lower": hv.lower, "human_upper": hv.upper,
            "width_ratio": _ratio(iv.width, hv.width), "model_only": mo, "n_human": tv.n_human,
            "n_topics": tv.n_topics, "flag": np.where(iv.small, "small sample", "")}))
        pv, ph, pm, (ii, jj) = interval_fn(tv, True)
        res = (pv.lower > 0) | (pv.upper < 0)
        hres = (ph.lower > 0) | (ph.upper < 0)
        names = np.asarray(tv.runs, dtype=object)
        pair_rows.append(pd.DataFrame({
            "measure": tv.measure, "run_a": names[ii], "run_b": names[jj], "difference": pv.estimate,
            "lower": pv.lower, "upper": pv.upper, "resolved": res, "lambda": pv.lam, "human_lower": ph.lower,
            "human_upper": ph.upper, "human_resolved": hres, "model_only": pm,
            "flag": np.where(pv.small, "small sample", "")}))
        rank_rows.append({"measure": tv.measure, "runs": len(tv.runs), "pairs": len(ii),
                          "resolved_ppi": int(res.sum()), "resolved_human_only": int(hres.sum()),
                          "n_human": tv.n_human, "n_topics": tv.n_topics, "alpha": alpha, "method": label})
    runs_df = pd.concat(runs_rows, ignore_index=True)
    runs_df = runs_df.sort_values(["measure", "estimate"], ascending=[True, False], kind="mergesort")
    order = {m: i for i, m in enumerate(v.measure for v in values)}
    runs_df = runs_df.sort_values("measure", key=lambda s: s.map(order), kind="mergesort").reset_index(drop=True)
    return PPIReport(runs_df, pd.concat(pair_rows, ignore_index=True), pd.DataFrame(rank_rows), values, notes)


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / b, np.nan)


def pilot(tv: TopicValues, pairs: bool = False):
    """The planning pilot (engine.stability.ppi.Pilot) of a measure's run means, or of its pairwise differences."""
    from ..stability.ppi import pair_columns, pilot_stats
    cols = None
    if pairs:
        ii, jj, _ = pair_columns(tv.model[:1])
        cols = lambda m: m[:, ii] - m[:, jj]
    return pilot_stats(*tv.split(cols))


def default_model_source(camp, judgments: str | None = None) -> str | None:
    """The model source a report or the leaderboard puts PPI intervals on: `judgments` when it names one
    non-human source, else the first non-human source that judged topics people did not; None without one."""
    from .sources import model_sources, source_judgments
    names = model_sources(camp)
    if judgments in names:
        return judgments
    human = set(source_judgments(camp, "human")["topic"])
    for s in names:
        if set(source_judgments(camp, s)["topic"]) - human:
            return s
    return None
