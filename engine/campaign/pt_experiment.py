"""`compare` = PyTerrier's `pt.Experiment` on precomputed runs: its arguments (`topics`, `names`, `baseline`,
`test` as 't', 'wilcoxon' or a callable `(a, b) -> (stat, p)`, `correction` with every statsmodels
`multipletests` method, `correction_alpha`, `perquery`, `round`, `highlight`, `filter_by_qrels`,
`filter_by_topics`, `save_dir`), its defaults (no correction unless asked), its frames (averages: name,
means, `m +`, `m -`, `m p-value`, `m reject`, `m p-value corrected`; per query: name, qid, measure, value)
and its errors (`ValueError`s). `Experiment(...)` has pt.Experiment's signature and return shapes;
`compare(...)` returns an `ExperimentResult` (a `Comparison`) whose `experiment()` and `perquery()` are those frames.

Semantics (pt.Experiment with ir_measures): judgments are restricted to `topics` (`filter_by_topics`);
every judged topic counts, a run that retrieved nothing for one scores 0 there; topics without judgments
appear in the per-query frame as NaN (with pt's warning) unless `filter_by_qrels`; the test pairs each run
with the baseline topic by topic (t: `engine.stability.significance.paired_p`, identical runs NaN as scipy);
the correction is per measure over the non-baseline runs. Cranfield's extras stay opt-in: all pairs and
letters without a baseline, the 'randomization' and 'sign' tests, `complete=False`, trec_eval options.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import CranfieldError
from .multitest import method_name, multipletests
from .tables import Comparison, _letters, _runs_frame, test_p
from ..util import fs

NO_OVERLAP = ("There is no overlap between the qids found in the topics and qrels. If this is intentional, set "
              "filter_by_topics=False and filter_by_qrels=False.")


class ExperimentError(CranfieldError, ValueError):
    """A wrong argument to `compare` / `Experiment` (a ValueError, as pt.Experiment raises)."""


# trec_eval output names of a nickname's members -> ir_measures' names (pt.Experiment labels them so)
_IRM_FIXED = {"map": "AP", "bpref": "Bpref", "recip_rank": "RR", "num_q": "NumQ", "num_rel": "NumRel",
              "num_ret": "NumRet", "num_rel_ret": "NumRet(rel=1)", "set_P": "SetP", "set_recall": "SetR",
              "set_F": "SetF", "set_map": "SetAP", "set_relative_P": "SetP(relative=True)", "ndcg": "nDCG"}
_IRM_CUT = {"P": "P", "recall": "R", "ndcg_cut": "nDCG", "map_cut": "AP", "success": "Success"}


def irm_label(trec_name: str) -> str:
    """ir_measures' name for a trec_eval output name (the name itself when ir_measures has none)."""
    if trec_name in _IRM_FIXED:
        return _IRM_FIXED[trec_name]
    m = re.fullmatch(r"(P|recall|ndcg_cut|map_cut|success)_(\d+)", trec_name)
    if m:
        return f"{_IRM_CUT[m.group(1)]}@{m.group(2)}"
    m = re.fullmatch(r"iprec_at_recall_(\d\.\d+)", trec_name)
    if m:
        return f"IPrec@{float(m.group(1))!r}"
    return trec_name


def _test_fn(test):
    """(name, function (a, b) -> two-sided p) of a test given as a name or a callable."""
    if callable(test):
        return getattr(test, "__name__", "custom"), lambda a, b: float(np.asarray(test(a, b), dtype=object)[1])
    if test == "t":
        from ..stability.significance import paired_p
        return "t", lambda a, b: float(paired_p(a - b)[0])
    if test in ("wilcoxon", "randomization", "sign"):
        return test, lambda a, b: float(test_p(a - b, test)[0])
    raise ExperimentError(f"unknown test {test!r}: give 't', 'wilcoxon' (Cranfield also: 'randomization', "
                          f"'sign') or a function (a, b) -> (statistic, p-value)")


def _topic_ids(topics) -> list[str]:
    """Topic ids from a topics frame (qid / query_id / topic column), a list or a mapping."""
    if isinstance(topics, pd.DataFrame):
        col = next((c for c in ("qid", "query_id", "topic", "query") if c in topics.columns), None)
        if col is None:
            raise ExperimentError(f"topics: expected a qid column, got columns {list(topics.columns)[:12]}")
        vals = topics[col].tolist()
    elif isinstance(topics, pd.Series):
        vals = topics.tolist()
    elif isinstance(topics, str):
        from ..formats.topics import read_topics
        vals = read_topics(topics)["topic"].tolist()
    else:
        vals = list(topics)
    return list(dict.fromkeys(str(v) for v in vals))


@dataclass
class ExperimentResult(Comparison):
    """`compare`'s result: a `Comparison` (means, pairs, rendering) with pt.Experiment's frames:
    `experiment()` (averages) and `perquery()` (name, qid, measure, value)."""

    per_topic: pd.DataFrame = field(default_factory=pd.DataFrame)
    correction_alpha: float = 0.05
    rounding: object = None
    highlight: str | None = None
    rejected: dict = field(default_factory=dict)      # (run, measure) -> multipletests' reject

    def _round(self, measure, value):
        r = self.rounding
        if isinstance(r, int) and not isinstance(r, bool):
            return round(value, r)
        if isinstance(r, dict) and measure in r:
            return round(value, r[measure])
        return value

    def experiment(self, dataframe: bool = True, highlight: str | None = None):
        """pt.Experiment's averages: name, means and, with a baseline, per measure `m +`, `m -`,
        `m p-value` (and with a correction `m reject`, `m p-value corrected`); `highlight` ('bold' or
        'color') gives a pandas Styler marking each column's best value, as pt.Experiment."""
        if not dataframe:
            return {r: {m: self._round(m, float(self.means.loc[r, m])) for m in self.measures} for r in self.runs}
        df = pd.DataFrame([[r] + [self._round(m, float(self.means.loc[r, m])) for m in self.measures]
                           for r in self.runs], columns=["name"] + list(self.measures))
        best = {m: "+" for m in self.measures}
        if self.baseline is not None:
            for m in self.measures:
                pr = self.vs_baseline(m).set_index("a")
                base = [r == self.baseline for r in self.runs]
                df[f"{m} +"] = [np.nan if b else pr.loc[r, "wins"] for r, b in zip(self.runs, base)]
                df[f"{m} -"] = [np.nan if b else pr.loc[r, "losses"] for r, b in zip(self.runs, base)]
                df[f"{m} p-value"] = [np.nan if b else pr.loc[r, "p"] for r, b in zip(self.runs, base)]
                best[f"{m} +"], best[f"{m} -"] = "+", "-"
                if self.correction is not None:
                    df[f"{m} reject"] = [False if b else self.rejected[(r, m)] for r, b in zip(self.runs, base)]
                    df[f"{m} p-value corrected"] = [np.nan if b else pr.loc[r, "p_adj"] for r, b in zip(self.runs, base)]
        highlight = highlight or self.highlight
        if highlight is None:
            return df
        if highlight not in ("bold", "color", "colour"):
            raise ExperimentError(f"highlight must be 'bold' or 'color', got {highlight!r}")
        style = "font-weight: bold" if highlight == "bold" else "background-color: lightgreen"

        def mark(col: pd.Series):
            if col.name not in best or not len(col.dropna()):
                return [""] * len(col)
            target = col.max() if best[col.name] == "+" else col.min()
            return [style if v == target else "" for v in col]
        return df.style.apply(mark, axis=0)

    def perquery(self, dataframe: bool = True):
        """pt.Experiment's per-query frame: name, qid, measure, value (by name, then qid); with
        `dataframe=False`, {run index: {qid: {measure: value}}}."""
        df = self.per_topic
        if not dataframe:
            out: dict = {}
            pos = {r: i for i, r in enumerate(self.runs)}
            for n, q, m, v in df.itertuples(index=False):
                out.setdefault(pos[n], {}).setdefault(q, {})[m] = v
            return out
        if isinstance(self.rounding, int) and not isinstance(self.rounding, bool):
            df = df.assign(value=df["value"].round(self.rounding))
        return df

    def legend(self) -> str:
        what = super().legend() if self.test in ("t", "wilcoxon", "randomization", "sign") and \
            self.correction in ("holm", "bonferroni", None) else ""
        if what:
            return what
        return (f"marks: significant differences ({self.test} test, {self.correction or 'no'} correction, "
                f"alpha = {self.alpha:g}); bold: best mean per measure.")


def compare(runs, qrels, measures=None, baseline: str | int | None = None, *, topics=None,
            names: list[str] | None = None, test="t", correction: str | None = None, correction_alpha: float = 0.05,
            alpha: float | None = None, perquery=False, round=None, highlight: str | None = None,
            filter_by_qrels: bool = False, filter_by_topics: bool = True, save_dir=None,
            complete: bool = True, gains: dict | None = None, issues=None, **eval_options) -> ExperimentResult:
    """Evaluate `runs` against `qrels` with `measures` (names of any vocabulary or ir_measures measure
    objects) and compare them as pt.Experiment does (see the module docstring). `runs`: a list (named by
    `names`, else run0, run1, ...), a dict name -> run or a run table; each run in any shape
    `engine.evaluation.adapters` reads. `alpha` (default `correction_alpha`) marks significance in the
    rendered tables. `eval_options` go to `cranfield.evaluate` (rel_level, max_depth, judged_only,
    trec_eval_version). `perquery` only matters to `Experiment`."""
    from ..evaluation.adapters import Issues, as_qrels, surface
    from ..evaluation.api import evaluate
    from ..evaluation.dialects import is_measure_object
    from ..evaluation.evaluate import summarize

    test_name, fn = _test_fn(test)
    if correction is not None:
        if baseline is None:
            raise ExperimentError("Requested multiple testing correction, but no baseline was specified.")
        try:
            correction = method_name(correction)
        except CranfieldError as e:
            raise ExperimentError(str(e)) from None
    if isinstance(runs, dict) and names is not None:
        names = None                                     # a dict names its runs (pt.Experiment ignores names)
    if isinstance(runs, (list, tuple)) and names is not None and len(names) != len(runs):
        raise ExperimentError("names should be the same length as retr_systems")
    if round is not None and not (isinstance(round, int) and round >= 0) and not isinstance(round, dict):
        raise ExperimentError("Argument round should be an integer or a dictionary")
    measures = ["official"] if measures is None else ([measures] if isinstance(measures, str) or
                                                     is_measure_object(measures) else list(measures))
    if not measures:
        raise ExperimentError("no measures asked")
    w = issues if issues is not None else Issues()
    try:
        frame = _runs_frame(runs, names, w)
        order = list(dict.fromkeys(frame["run"].astype(str).tolist()))
        if isinstance(baseline, str):
            if baseline not in order:
                raise ExperimentError(f"Unknown baseline '{baseline}'. Valid options are: {', '.join(order)}")
        elif baseline is not None:
            if isinstance(baseline, bool) or not 0 <= int(baseline) < len(order):
                raise ExperimentError(f"baseline index {baseline} is out of range for {len(order)} runs")
            baseline = order[int(baseline)]
        q = as_qrels(qrels, issues=w)
        asked = None
        if topics is not None:
            asked = _topic_ids(topics)
            judged = set(q["topic"])
            if filter_by_qrels:
                asked = [t for t in asked if t in judged]
                if not asked:
                    raise ExperimentError(NO_OVERLAP)
            if filter_by_topics:
                q = q[q["topic"].isin(set(asked))].reset_index(drop=True)
                if not len(q):
                    raise ExperimentError(NO_OVERLAP)
        long = evaluate(q, frame, measures, gains=gains, complete=complete, issues=w, trec_labels=False,
                        **eval_options)
    finally:
        if issues is None:
            surface(w, stacklevel=3)
    # labels as pt.Experiment: a name as asked, an object by its name, a nickname's members by ir_measures' names
    asked_labels = {m if isinstance(m, str) else str(m) for m in measures}
    relabel = {c: (str(c) if not isinstance(c, str) else (c if c in asked_labels else irm_label(c)))
               for c in long["measure"].cat.categories}
    long = long[long["measure"].astype(object).map(lambda c: relabel[c] != "runid")]
    long.attrs["aggregates"] = {relabel[k]: v for k, v in long.attrs.get("aggregates", {}).items()}
    cats = list(dict.fromkeys(relabel[c] for c in long["measure"].cat.categories if relabel[c] != "runid"))
    long = long.assign(measure=pd.Categorical(long["measure"].astype(object).map(relabel), categories=cats),
                       run=pd.Categorical(long["run"].astype(str), categories=order))
    meas = cats
    means = summarize(long).reindex(index=order, columns=meas)
    means.index.name = "run"
    per_topic = _per_query(long, order, meas, asked, set(q["topic"]), filter_by_qrels)
    pairs, rejected = _pairs(long, order, meas, baseline, fn, correction, correction_alpha,
                             correction_alpha if alpha is None else alpha)
    res = ExperimentResult(means, pairs, meas, order, baseline, test_name, correction,
                     correction_alpha if alpha is None else alpha, dict(zip(order, _letters(len(order)))),
                     per_topic=per_topic, correction_alpha=correction_alpha, rounding=round, highlight=highlight,
                     rejected=rejected)
    if save_dir is not None:
        _save(res, save_dir)
    return res


def _per_query(long, order, meas, asked, judged, filter_by_qrels) -> pd.DataFrame:
    """pt.Experiment's per-query frame; topics asked without judgments are NaN (with pt's warning)."""
    df = pd.DataFrame({"name": long["run"].astype(str).to_numpy(), "qid": long["topic"].astype(str).to_numpy(),
                       "measure": long["measure"].astype(object).to_numpy(), "value": long["value"].to_numpy()})
    if asked is not None and not filter_by_qrels:
        extra = [t for t in asked if t not in judged]
        if extra:
            import warnings
            warnings.warn(f"{len(extra)} topic(s) not found in qrels. Scores for these topics are given as NaN and "
                          f"should not contribute to averages.", stacklevel=4)
            df = pd.concat([df, pd.DataFrame([(r, t, m, np.nan) for r in order for t in extra for m in meas],
                                             columns=df.columns)], ignore_index=True)
    key = pd.Categorical(df["name"], categories=sorted(set(order)))
    return df.assign(_k=key).sort_values(["_k", "qid"], kind="stable").drop(columns="_k").reset_index(drop=True)


def _pairs(long, order, meas, baseline, fn, correction, correction_alpha, alpha):
    """The `pairs` table (Comparison's columns) and multipletests' reject per (run, measure)."""
    rows, rejected = [], {}
    pairs = [(r, baseline) for r in order if r != baseline] if baseline is not None else \
        [(order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))]
    for m in meas:
        sub = long[long["measure"] == m]
        mat = sub.pivot_table(index="topic", columns="run", values="value", aggfunc="first", observed=False,
                              dropna=False).reindex(columns=order)
        x = mat.to_numpy(np.float64)
        col = {r: i for i, r in enumerate(order)}
        block = []
        for a, b in pairs:
            xa, xb = x[:, col[a]], x[:, col[b]]
            keep = ~(np.isnan(xa) | np.isnan(xb))
            xa, xb = xa[keep], xb[keep]
            d = xa - xb
            n = len(d)
            p = fn(xa, xb) if n > 1 else math.nan
            sd = d.std(ddof=1) if n > 1 else 0.0
            block.append({"measure": m, "a": a, "b": b, "mean_a": float(xa.mean()) if n else np.nan,
                          "mean_b": float(xb.mean()) if n else np.nan, "diff": float(d.mean()) if n else 0.0,
                          "wins": int((d > 0).sum()), "losses": int((d < 0).sum()), "ties": int((d == 0).sum()),
                          "n": n, "p": p, "effect": float(d.mean() / sd) if sd > 0 else 0.0})
        ps = [r["p"] for r in block]
        if correction is not None:
            rej, adj = multipletests(ps, correction_alpha, correction)
        else:
            adj, rej = np.asarray(ps, float), np.asarray(ps, float) < alpha
        for r, pa, rj in zip(block, adj, rej):
            r["p_adj"] = float(pa)
            r["significant"] = bool(rj)
            rejected[(r["a"], m)] = bool(rj)
        rows += block
    cols = ["measure", "a", "b", "mean_a", "mean_b", "diff", "wins", "losses", "ties", "n", "p", "p_adj",
            "effect", "significant"]
    return pd.DataFrame(rows, columns=cols), rejected


def _save(res: ExperimentResult, save_dir) -> None:
    """pt.Experiment's summary files in `save_dir`: aggregated.csv and perquery.csv, keeping the rows of
    runs this call did not evaluate."""
    from pathlib import Path

    from ..formats.files import write_text
    d = Path(save_dir)
    if not d.is_dir():
        raise ExperimentError(f"save_dir {save_dir} does not exist or is not a directory")
    for name, new in (("aggregated.csv", res.experiment()), ("perquery.csv", res.perquery())):
        path = d / name
        if path.exists():
            with fs.open(path, "rb") as fh:
                old = pd.read_csv(fh, dtype={"qid": str} if name == "perquery.csv" else None)
            old = old[~old["name"].isin(set(res.runs))]
            if len(old):
                new = pd.concat([new, old], ignore_index=True)
        write_text(path, new.to_csv(index=False))


def Experiment(retr_systems, topics, qrels, eval_metrics, names=None, perquery=False, dataframe: bool = True,
                filter_by_qrels: bool = False, filter_by_topics: bool = True, baseline=None, test="t",
                correction=None, correction_alpha: float = 0.05, highlight=None, round=None, save_dir=None,
                **kwargs):
    """pt.Experiment's call on precomputed runs (frames, dicts, paths): the averages frame, the per-query
    frame (`perquery=True`) or both (`perquery='both'`); `dataframe=False` gives dicts."""
    if isinstance(retr_systems, dict):
        names = None
    elif not isinstance(retr_systems, list):
        raise TypeError(f"Expected list or dict of runs for retr_systems, instead received {type(retr_systems)}")
    elif isinstance(baseline, str):
        raise TypeError("baseline should be an int when retr_systems is a list")
    bad = [k for k in kwargs if k not in ("rel_level", "max_depth", "judged_only", "trec_eval_version",
                                          "complete", "gains", "issues", "alpha")]
    if bad:
        raise TypeError(f"Unknown kwargs: {bad}")
    res = compare(retr_systems, qrels, eval_metrics, baseline, topics=topics, names=names, test=test,
                  correction=correction, correction_alpha=correction_alpha, round=round, highlight=highlight,
                  filter_by_qrels=filter_by_qrels, filter_by_topics=filter_by_topics, save_dir=save_dir, **kwargs)
    if not perquery:
        return res.experiment(dataframe=dataframe)
    if perquery == "both":
        return res.experiment(dataframe=dataframe), res.perquery(dataframe=dataframe)
    return res.perquery(dataframe=dataframe)
