"""Prediction-powered intervals for a campaign whose people judged a sample of documents within topics.

The design is a pool file (pools/pool-NAME.tsv): its rows are the frame (every document the estimate is
about), the rows with order > 0 the sample people judge, and `prob` each document's inclusion
probability, as the uniform, stratified and statAP pools and `cranfield pool --strategy ppi-next` record
them. The model source labels the frame; the gold source's labels on the sample correct it
(engine.stability.ppi_design). Measures linear in the labels (P.k, dcg, rbp on binary grades) have the
exact Horvitz-Thompson form; map, ndcg and Rprec the statAP-family ratio form (engine.judgments.ppi_ratio);
others are refused with the reason. See docs/llm-judges.md.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import CranfieldError, Warnings

FEW_RELEVANT = 5
"""Below this many documents people call relevant in a topic's sample, the ratio measures' note warns."""
NONLINEAR = ("neither linear in the labels nor one of the ratio measures (map, ndcg, Rprec); use --design topics "
             "for it")


@dataclass
class Linear:
    """A measure linear in the labels: value = sum over retrieved documents of weight(rank) * gain(grade)."""

    name: str                    # the evaluator's output name (P_10, dcg, rbp)
    kind: str                    # P, dcg, rbp
    k: int = 0
    p: float = 0.9

    def weight(self, rank: np.ndarray) -> np.ndarray:
        rank = np.asarray(rank, np.float64)
        if self.kind == "P":
            return np.where(rank <= self.k, 1.0 / self.k, 0.0)
        if self.kind == "dcg":
            return 1.0 / np.log2(rank + 1.0)
        return (1.0 - self.p) * self.p ** (rank - 1.0)

    def gain(self, grade: np.ndarray, threshold: int) -> np.ndarray:
        g = np.asarray(grade, np.float64)
        if self.kind == "P":
            return (g >= threshold).astype(np.float64)
        return np.maximum(g, 0.0)


def linear_measure(spec: str) -> Linear | None:
    """The linear form of a measure spec (P.10, P_10, dcg, rbp, rbp.p=0.8), or None when it has none."""
    s = str(spec).strip()
    m = re.fullmatch(r"P[._@](\d+)", s)
    if m and int(m.group(1)) > 0:
        return Linear(f"P_{int(m.group(1))}", "P", k=int(m.group(1)))
    if s == "dcg":
        return Linear("dcg", "dcg")
    m = re.fullmatch(r"rbp(?:\.p=([0-9.]+))?", s)
    if m:
        p = float(m.group(1)) if m.group(1) else 0.9
        if not 0 < p < 1:
            raise CranfieldError(f"-m {s}: rbp's persistence p must be in (0, 1)")
        return Linear("rbp" if m.group(1) is None else f"rbp.p={m.group(1)}", "rbp", p=p)
    return None


@dataclass
class DesignValues:
    """One measure's per-topic HT sums (engine.stability.ppi_design.ht_sums), topics x runs."""

    measure: str
    runs: list[str]
    topics: list[str]
    A: np.ndarray                # HT sum of people's values over the sample
    C: np.ndarray                # HT sum of the model's values over the sample
    F: np.ndarray                # the model's values over the frame
    n_human: int                 # human-labelled documents of the sample
    n_frame: int                 # documents of the frame

    @property
    def n_topics(self) -> int:
        return len(self.topics)


@dataclass
class Frame:
    """A design's frame joined with the runs and both sources' labels. Per frame document: model grade
    `mg`, people's grade `hg` (0 where unknown), `sampled`, `pi`; per run row inside the frame: `row` (its
    frame document), topic code `tc`, run code `rc`, `rank`."""

    name: str
    table: pd.DataFrame
    mg: np.ndarray
    hg: np.ndarray
    judged: np.ndarray           # people's label known
    sampled: np.ndarray
    pi: np.ndarray
    row: np.ndarray
    tc: np.ndarray
    rc: np.ndarray
    rank: np.ndarray
    topics: list[str]
    runs: list[str]
    measures: list[Linear]
    threshold: int
    ratio: tuple[str, ...] = ()  # the ratio measures asked for (engine.judgments.ppi_ratio)
    runs_rows: pd.DataFrame | None = None  # the campaign's run rows on the frame's topics


def design_values(camp, model: str, gold: str, measures, design: tuple[str, pd.DataFrame],
                  warnings: Warnings | None = None, notes: list[str] | None = None) -> list[DesignValues]:
    """Per measure (linear, then ratio): each run's per-topic HT sums (ratio estimates) under `design` = (pool
    name, pool table; as engine.pooling.ppi_batch.design_pool reads it), the `model` source labelling its frame
    and the `gold` source its sample."""
    from ..stability.ppi_design import ht_sums
    from ..util.names import shown
    notes = notes if notes is not None else []
    f = frame_rows(camp, model, gold, measures, design, warnings, notes)
    if not f.sampled.any():
        raise CranfieldError(f"source {shown(gold)} judged none of pool {shown(f.name)}'s sampled documents")
    out = []
    thr, row = f.threshold, f.row
    n = int(f.sampled.sum())
    for m in f.measures:
        A, C, F = ht_sums(m.weight(f.rank), m.gain(f.hg[row], thr), m.gain(f.mg[row], thr), f.pi[row],
                          f.sampled[row], f.tc, f.rc, len(f.topics), len(f.runs))
        out.append(DesignValues(m.name, f.runs, f.topics, A, C, F, n, len(f.table)))
    if f.ratio:
        from .ppi_ratio import ratio_sums
        sums = ratio_sums(f.table, f.runs_rows, list(f.ratio), f.hg, f.mg, f.pi, f.sampled, f.topics, f.runs, thr)
        out.extend(DesignValues(m, f.runs, f.topics, *sums[m], n, len(f.table)) for m in f.ratio)
        notes.append(f"{', '.join(f.ratio)}: ratio estimators (statAP, statNDCG, statRprec), approximately "
                     f"unbiased; not to be trusted where a topic's sample holds few relevant documents")
        t_of = {t: i for i, t in enumerate(f.topics)}
        tc = f.table["topic"].astype(str).map(t_of).to_numpy(np.int64)
        rel = np.bincount(tc[f.sampled & (f.hg >= thr)], minlength=len(f.topics))
        if (rel < FEW_RELEVANT).any():
            notes.append(f"{int((rel < FEW_RELEVANT).sum())} of {len(f.topics)} topics' samples hold fewer than "
                         f"{FEW_RELEVANT} documents {shown(gold)} calls relevant: there the ratio estimates' bias "
                         f"can exceed their standard error; judge more documents a topic for "
                         f"{', '.join(f.ratio)} (docs/llm-judges.md)")
    notes.append(f"design: pool {shown(f.name)}, {n} human-labelled of {len(f.table)} frame documents "
                 f"in {len(f.topics)} topics")
    return out


def frame_rows(camp, model: str, gold: str, measures, design: tuple[str, pd.DataFrame],
               warnings: Warnings | None = None, notes: list[str] | None = None) -> Frame:
    """The `Frame` of `design` = (pool name, pool table): its documents' labels, and the runs' rows in it.
    Sampled documents people have not judged yet leave the sample (with a note)."""
    from ..util.names import natural_key, shown
    from .sources import source_judgments
    w = warnings if warnings is not None else camp.warnings
    notes = notes if notes is not None else []
    from .ppi import model_and_gold
    model, gold = model_and_gold(camp, model, gold, "the model labels the frame, people (gold) the sample")
    name, pt = design
    pt = pt.drop_duplicates(["topic", "doc"]).reset_index(drop=True)
    if not len(pt):
        raise CranfieldError(f"pool {shown(name)} is empty: no frame to estimate over")
    specs = measures or camp.measures() or ["P.10", "dcg"]
    from .ppi_ratio import ratio_measure
    lin, ratio = [], []
    for s in specs:
        m = linear_measure(s)
        if m is not None:
            lin.append(m)
        elif ratio_measure(s) is not None:
            ratio.append(ratio_measure(s))
        else:
            notes.append(f"{s}: {NONLINEAR}; no document-design interval")
    ratio = list(dict.fromkeys(ratio))
    if not lin and not ratio:
        raise CranfieldError(f"--design documents: none of {', '.join(map(str, specs))} has a document-design "
                             f"estimator; the document design supports P.k, dcg, rbp (binary grades), map, ndcg "
                             f"and Rprec; ask for one with -m, or use --design topics")
    qm, qh = source_judgments(camp, model, w), source_judgments(camp, gold, w)
    key = lambda t, d: pd.MultiIndex.from_arrays([t.astype(str), d.astype(str)])
    fk = key(pt["topic"], pt["doc"])
    mg = pd.Series(qm["grade"].to_numpy(np.float64), index=key(qm["topic"], qm["doc"])).reindex(fk).to_numpy()
    hg = pd.Series(qh["grade"].to_numpy(np.float64), index=key(qh["topic"], qh["doc"])).reindex(fk).to_numpy()
    sampled = (pt["order"] > 0).to_numpy()
    pi = pt["prob"].to_numpy(np.float64)
    if np.any(~(pi > 0)):
        raise CranfieldError(f"pool {shown(name)}: {int((~(pi > 0)).sum())} frame document(s) have inclusion "
                             f"probability 0, so the estimate cannot reach them; draw the design with every "
                             f"probability > 0")
    no_model = int(np.isnan(mg).sum())
    if no_model:
        notes.append(f"{no_model} of {len(pt)} frame documents have no {shown(model)} label; they count as not "
                     f"relevant under the model")
    missing = sampled & np.isnan(hg)
    if missing.any():
        notes.append(f"{int(missing.sum())} of {int(sampled.sum())} sampled documents are not judged by "
                     f"{shown(gold)} yet; they are left out of the sample, which is unbiased only if they are "
                     f"missing at random (judge them first, or name the design before this batch with --design-pool)")
        sampled = sampled & ~missing
    judged = ~np.isnan(hg)
    mg, hg = np.nan_to_num(mg, nan=0.0), np.nan_to_num(hg, nan=0.0)
    thr = camp.binary_threshold()
    if any(m.kind == "rbp" for m in lin) and max(mg.max(initial=0), hg[sampled].max(initial=0)) > 1:
        notes.append("rbp: grades above 1 are rescaled per topic, which is not linear; no document-design interval")
        lin = [m for m in lin if m.kind != "rbp"]
        if not lin and not ratio:
            raise CranfieldError("--design documents: rbp on graded labels is not linear; ask for P.k or dcg")
    topics = sorted(pd.unique(pt["topic"].astype(str)), key=natural_key)
    all_runs = camp.runs()
    on_topics = all_runs[all_runs["topic"].astype(str).isin(set(topics))]
    rr = _ranked(on_topics, topics)
    runs = list(dict.fromkeys(rr["run"].astype(str)))
    t_code = {t: i for i, t in enumerate(topics)}
    r_code = {r: i for i, r in enumerate(runs)}
    pos = pd.Series(np.arange(len(pt)), index=fk).reindex(key(rr["topic"], rr["doc"])).to_numpy()
    inside = ~np.isnan(pos)
    row = pos[inside].astype(np.int64)
    tc = np.fromiter((t_code[t] for t in rr["topic"].astype(str)[inside]), np.int64)
    rc = np.fromiter((r_code[r] for r in rr["run"].astype(str)[inside]), np.int64)
    rank = rr["rank"].to_numpy(np.float64)[inside]
    return Frame(name, pt, mg, hg, judged, sampled, pi, row, tc, rc, rank, topics, runs, lin, thr, tuple(ratio),
                 on_topics)


def _ranked(runs: pd.DataFrame, topics: list[str]) -> pd.DataFrame:
    """run, topic, doc, rank (trec_eval's order) of the runs' rows on `topics`."""
    from ..ranking.join import ranked_rows
    df = runs[runs["topic"].astype(str).isin(set(topics))]
    order, rank = ranked_rows(df, None)
    return pd.DataFrame({"run": df["run"].astype(str).to_numpy(object)[order],
                         "topic": df["topic"].astype(str).to_numpy(object)[order],
                         "doc": df["doc"].astype(str).to_numpy(object)[order], "rank": rank})


def design_intervals(v: DesignValues, alpha: float = 0.05, method: str = "ppi++", pairs: bool = False,
                     small_n: bool = True):
    """(PPI interval, human-only HT interval, model-only means, run index pairs) of the runs' means, or of
    every pairwise difference with `pairs`."""
    from ..stability.ppi import pair_columns
    from ..stability.ppi_design import design_ppi_mean
    A, C, F = v.A, v.C, v.F
    ii = jj = None
    if pairs:
        ii, jj, _ = pair_columns(F[:1])
        A, C, F = (x[:, ii] - x[:, jj] for x in (A, C, F))
    lam = None if method == "ppi++" else 1.0
    n_model = v.n_frame - v.n_human
    iv = design_ppi_mean(A, C, F, alpha, lam, small_n, v.n_human, n_model)
    hv = design_ppi_mean(A, C, F, alpha, 0.0, small_n, v.n_human, n_model)
    return iv, hv, F.mean(0), (ii, jj)


def adjacent_se(v: DesignValues, alpha: float = 0.05):
    """(PPI++ standard error of each run's mean, (i, j) the runs adjacent in the PPI++ ranking, the standard
    error of each adjacent difference): what the next-batch chooser weighs its columns by."""
    from ..stability.ppi_design import design_ppi_mean
    iv = design_intervals(v, alpha)[0]
    order = np.argsort(-iv.estimate, kind="stable")
    ii, jj = order[:-1], order[1:]
    pv = design_ppi_mean(*(x[:, ii] - x[:, jj] for x in (v.A, v.C, v.F)), alpha)
    return iv.se, (ii, jj), pv.se


def campaign_design_ppi(camp, model: str, gold: str, measures, design: tuple[str, pd.DataFrame],
                        alpha: float = 0.05, method: str = "ppi++", warnings: Warnings | None = None,
                        small_n: bool = True):
    """The PPI tables (engine.judgments.ppi.PPIReport) of a campaign under a document-level `design`
    ((pool name, pool table)): the same runs, pairs and ranking tables as `campaign_ppi`, n_human
    counting human-labelled documents."""
    from .ppi import CI_METHODS, report_tables
    method = CI_METHODS.get(method, method)
    if method not in ("ppi++", "ppi"):
        raise CranfieldError(f"--ci {method}: use ppi (PPI++, power-tuned) or ppi-classic (lambda = 1)")
    from ..stability.ppi import MIN_TOPICS
    notes: list[str] = []
    values = design_values(camp, model, gold, measures, design, warnings, notes)
    T = values[0].n_topics
    if T < MIN_TOPICS:
        notes.append(f"only {T} topics (< {MIN_TOPICS}): the normal approximation over topics behind every "
                     f"interval is not to be trusted; flagged rows say so")
    label = method + " documents" + ("" if small_n else " normal")
    fn = lambda v, pairs: design_intervals(v, alpha, method, pairs, small_n)
    return report_tables(values, fn, alpha, label, notes)
