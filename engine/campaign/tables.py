"""Experiment tables for papers and overview reports: per measure the mean of each run, topics improved and
degraded against a baseline, paired significance tests with a multiple-testing correction, effect sizes
and significance marks; rendered to Markdown, CSV and LaTeX.

`compare(runs, qrels, measures, baseline=...)` evaluates and compares; `compare_scores(table, ...)` does the
same from an evaluation long table (run, topic, measure, value), e.g. `Campaign.evaluate()`.

`compare` takes what PyTerrier's `pt.Experiment` takes (runs as a list or dict of frames in any column
convention, dicts or file paths, an integer or named baseline, ir_measures names, `correction`, `test`)
and gives its numbers (`Comparison.experiment()` is its table): a paired test per measure of every run
against the baseline (two-sided), corrected per measure over the compared runs (statsmodels'
`multipletests` semantics for holm, bonferroni and fdr_bh); identical per-topic values give a NaN
p-value for the t-test, as scipy's `ttest_rel` (NaN p-values stay out of the correction's family). With no
baseline every pair of runs is compared and the family is all pairs of a measure.

Marks: with a baseline, a run's cell carries a dagger when it is significantly better than the baseline and
a double dagger when significantly worse (one mark per significant pair). With all pairs, runs get letters
a, b, c, ... and a cell carries the letters of the runs it is significantly better than.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd
from ..util.lazy import lazy_module

from ..errors import CranfieldError
from ..stability.significance import holm, paired_p, randomization_p

stats = lazy_module("scipy.stats")   # the sign and Wilcoxon tests only

TESTS = ("t", "wilcoxon", "randomization", "sign")
CORRECTIONS = ("holm", "bonferroni", "bh", None)
BETTER, WORSE = "\u2020", "\u2021"          # dagger, double dagger
_TEX_MARK = {BETTER: r"\dag", WORSE: r"\ddag"}


# ---------------------------------------------------------------------------------------------- tests
def sign_p(d: np.ndarray) -> np.ndarray:
    """Two-sided exact sign test per column of paired differences d (topics x pairs); zeros dropped."""
    d = np.asarray(d, float)
    d = d[:, None] if d.ndim == 1 else d
    out = np.ones(d.shape[1])
    for j in range(d.shape[1]):
        w, l_ = int((d[:, j] > 0).sum()), int((d[:, j] < 0).sum())
        if w + l_:
            out[j] = stats.binomtest(w, w + l_, 0.5).pvalue
    return out


def wilcoxon_exact(d: np.ndarray) -> np.ndarray:
    """Two-sided Wilcoxon signed-rank p per column as scipy.stats.wilcoxon computes it (exact distribution for
    small samples without ties, as pt.Experiment reports); zero differences dropped; all zero -> 1."""
    d = np.asarray(d, float)
    d = d[:, None] if d.ndim == 1 else d
    out = np.ones(d.shape[1])
    for j in range(d.shape[1]):
        if np.any(d[:, j] != 0):
            out[j] = float(stats.wilcoxon(d[:, j]).pvalue)
    return out


def test_p(d: np.ndarray, test: str = "t", *, n_perm: int = 10000, seed: int = 0) -> np.ndarray:
    """Two-sided p-values of paired test `test` per column of d (topics x pairs)."""
    d = np.asarray(d, float)
    if d.ndim == 1:
        d = d[:, None]
    if test == "t":
        return paired_p(d)
    if test == "wilcoxon":
        return wilcoxon_exact(d)
    if test == "randomization":
        return randomization_p(d, n_perm, seed)
    if test == "sign":
        return sign_p(d)
    raise CranfieldError(f"unknown test {test!r}; choose from {', '.join(TESTS)}")


def correct(p, method: str | None) -> np.ndarray:
    """Adjusted p-values of one family: holm (step-down), bonferroni, bh (Benjamini-Hochberg) or None.
    NaN p-values (no test possible) stay NaN and are not counted in the family."""
    p = np.asarray(p, float)
    nan = np.isnan(p)
    if nan.any():
        out = np.full(len(p), np.nan)
        out[~nan] = correct(p[~nan], method)
        return out
    m = len(p)
    if method is None or method == "none" or m == 0:
        return p.copy()
    if method == "holm":
        return holm(p)
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    if method in ("bh", "fdr_bh"):
        order = np.argsort(p, kind="stable")[::-1]
        adj = np.minimum.accumulate(p[order] * m / (m - np.arange(m)))
        out = np.empty(m)
        out[order] = np.minimum(adj, 1.0)
        return out
    raise CranfieldError(f"unknown correction {method!r}; choose from holm, bonferroni, bh or none")


# ---------------------------------------------------------------------------------------------- result
@dataclass
class Comparison:
    """Result of `compare`: `means` (run x measure), `pairs` (one row per compared pair and measure:
    measure, a, b, mean_a, mean_b, diff, wins, losses, ties, n, p, p_adj, effect, significant) where a is
    the run and b the baseline in baseline mode, and the settings. Render with `to_markdown`, `to_csv`,
    `to_latex` or `render(fmt)`."""

    means: pd.DataFrame
    pairs: pd.DataFrame
    measures: list[str]
    runs: list[str]
    baseline: str | None
    test: str
    correction: str | None
    alpha: float
    letters: dict[str, str] = field(default_factory=dict)

    # -- views
    def vs_baseline(self, measure: str) -> pd.DataFrame:
        """Rows of `pairs` for one measure (baseline mode: one row per non-baseline run)."""
        return self.pairs[self.pairs["measure"] == measure].reset_index(drop=True)

    def marks(self) -> dict[tuple[str, str], str]:
        """(run, measure) -> mark string: daggers in baseline mode; with all pairs, the letters of the runs it
        is significantly better than, in run order (separated by commas once letters have two characters)."""
        cached = self.__dict__.get("_marks")
        if cached is not None and cached[0] is self.pairs:
            return cached[1]
        sig = self.pairs[self.pairs["significant"].to_numpy(bool)]
        runs = pd.Index(self.runs)
        a, b = runs.get_indexer(sig["a"]), runs.get_indexer(sig["b"])
        better = sig["diff"].to_numpy(float) > 0
        meas = pd.Index(self.measures).get_indexer(sig["measure"])
        if self.baseline is not None:
            who, token = a, np.where(better, 0, 1)                  # a dagger sorts before a double dagger
            text = np.array([BETTER, WORSE], dtype=object)
            sep = ""
        else:
            who, token = np.where(better, a, b), np.where(better, b, a)
            text = np.array([self.letters[r] for r in self.runs], dtype=object)
            sep = "" if len(self.runs) <= 26 else ","
        order = np.lexsort((token, meas, who))
        who, meas, token = who[order], meas[order], token[order]
        cut = np.flatnonzero((who[1:] != who[:-1]) | (meas[1:] != meas[:-1])) + 1
        out = {}
        for lo, hi in zip(np.r_[0, cut], np.r_[cut, len(who)]):
            if hi > lo:
                out[(self.runs[who[lo]], self.measures[meas[lo]])] = sep.join(text[token[lo:hi]])
        self.__dict__["_marks"] = (self.pairs, out)
        return out

    def table(self) -> pd.DataFrame:
        """The numbers behind the rendered table: run, then per measure mean, improved (+), degraded (-),
        p and p_adj against the baseline (baseline mode), and the marks."""
        rows = []
        marks = self.marks()
        for run in self.runs:
            row: dict = {"run": run}
            for m in self.measures:
                row[m] = float(self.means.loc[run, m])
                if self.baseline is not None:
                    pr = self.pairs[(self.pairs["measure"] == m) & (self.pairs["a"] == run)]
                    has = len(pr) > 0
                    row[f"{m} +"] = int(pr["wins"].iloc[0]) if has else None
                    row[f"{m} -"] = int(pr["losses"].iloc[0]) if has else None
                    row[f"{m} p"] = float(pr["p"].iloc[0]) if has else None
                    row[f"{m} p_adj"] = float(pr["p_adj"].iloc[0]) if has else None
                row[f"{m} mark"] = marks.get((run, m), "")
            rows.append(row)
        return pd.DataFrame(rows)

    def experiment(self) -> pd.DataFrame:
        """The table as PyTerrier's `pt.Experiment` prints it: name, each measure's mean and, with a
        baseline, per measure `m +`, `m -` (topics improved / degraded), `m p-value` and, with a correction,
        `m reject` and `m p-value corrected`; the baseline's own cells are empty (NaN / False)."""
        rows = []
        for run in self.runs:
            row: dict = {"name": run}
            for m in self.measures:
                row[m] = float(self.means.loc[run, m])
            rows.append(row)
        df = pd.DataFrame(rows, columns=["name"] + list(self.measures))
        if self.baseline is None:
            return df
        for m in self.measures:
            pr = self.vs_baseline(m).set_index("a")
            base = [r == self.baseline for r in self.runs]
            df[f"{m} +"] = [np.nan if b else float(pr.loc[r, "wins"]) for r, b in zip(self.runs, base)]
            df[f"{m} -"] = [np.nan if b else float(pr.loc[r, "losses"]) for r, b in zip(self.runs, base)]
            df[f"{m} p-value"] = [np.nan if b else float(pr.loc[r, "p"]) for r, b in zip(self.runs, base)]
            if self.correction is not None:
                df[f"{m} reject"] = [False if b else bool(pr.loc[r, "significant"]) for r, b in zip(self.runs, base)]
                df[f"{m} p-value corrected"] = [np.nan if b else float(pr.loc[r, "p_adj"])
                                                for r, b in zip(self.runs, base)]
        return df

    def _best(self) -> dict[str, str]:
        return {m: str(self.means[m].idxmax()) for m in self.measures}

    def legend(self) -> str:
        """One sentence explaining the marks."""
        corr = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", None: "no"}[self.correction]
        test = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test", "sign": "sign test",
                "randomization": "paired randomization test"}[self.test]
        if self.baseline is not None:
            what = (f"{BETTER} / {WORSE}: significantly better / worse than the baseline {self.baseline}; "
                    "+ / -: topics improved / degraded against the baseline")
        else:
            what = "letters: the runs (by letter) this run is significantly better than"
        return f"{what} ({test}, {corr} correction, alpha = {self.alpha:g}); bold: best mean per measure."

    def _headers(self) -> list[str]:
        cols = ["run"]
        for m in self.measures:
            cols.append(m)
            if self.baseline is not None:
                cols += [f"{m} +", f"{m} -"]
        return cols

    def _label(self, run: str) -> str:
        lab = run + (" (baseline)" if run == self.baseline else "")
        return f"({self.letters[run]}) {lab}" if self.baseline is None else lab

    def _cells(self, fmt: str, floatfmt: str) -> list[list[str]]:
        """Rows of cells; a mean's cell is `Raw` markup (bold, superscript marks) of `fmt`."""
        from ..formats.text_tables import Raw
        marks, best, rows = self.marks(), self._best(), []
        t = self.table()
        for i, run in enumerate(self.runs):
            cells = [self._label(run)]
            for m in self.measures:
                v = format(float(self.means.loc[run, m]), floatfmt)
                mk = marks.get((run, m), "")
                bold = best[m] == run
                if fmt == "latex":
                    s = rf"\textbf{{{v}}}" if bold else v
                    if mk:
                        s += r"\textsuperscript{" + "".join(_TEX_MARK.get(c, c) for c in mk) + "}"
                else:
                    s = f"**{v}**" if bold else v
                    if mk:
                        s += f"<sup>{mk}</sup>"
                cells.append(Raw(s))
                if self.baseline is not None:
                    for c in (f"{m} +", f"{m} -"):
                        x = t[c].iloc[i]
                        cells.append("" if x is None or pd.isna(x) else str(int(x)))
            rows.append(cells)
        return rows

    def _frame(self, fmt: str, floatfmt: str) -> tuple[pd.DataFrame, list[str]]:
        """The rendered cells as a frame for `format_table`, and the column alignment."""
        cols = self._headers()
        return pd.DataFrame(self._cells(fmt, floatfmt), columns=cols, dtype=object), ["l"] + ["r"] * (len(cols) - 1)

    def to_markdown(self, floatfmt: str = ".4f") -> str:
        """Markdown table (bold best, <sup> marks) and the legend below it."""
        from ..formats.text_tables import format_table, markdown_escape
        frame, align = self._frame("markdown", floatfmt)
        return format_table(frame, "markdown", align=align) + "\n" + markdown_escape(self.legend()) + "\n"

    def to_csv(self) -> str:
        """CSV of `table()` (plain numbers, raw and corrected p-values, marks as text)."""
        from ..formats.text_tables import format_table
        return format_table(self.table(), "csv", float_format="%.6g")

    def to_latex(self, floatfmt: str = ".4f") -> str:
        """A LaTeX tabular with bold best and \\textsuperscript marks, and the legend as a footnote line."""
        from ..formats.text_tables import _latex_escape as esc
        from ..formats.text_tables import format_table
        frame, align = self._frame("latex", floatfmt)
        body = format_table(frame, "latex", align=align).removesuffix("\\end{tabular}\n")
        leg = esc(self.legend()).replace(BETTER, r"\dag{}").replace(WORSE, r"\ddag{}")
        return body + f"\\multicolumn{{{frame.shape[1]}}}{{l}}{{\\footnotesize {leg}}} \\\\\n\\end{{tabular}}\n"

    def write(self, folder, stem: str) -> list:
        """Write `stem`.md, .csv and .tex into `folder`; returns the paths."""
        from pathlib import Path

        from ..formats.files import write_text
        from ..util import fs
        folder = Path(folder)
        fs.makedirs(folder)
        paths = []
        for ext, fmt in (("md", "markdown"), ("csv", "csv"), ("tex", "latex")):
            p = folder / f"{stem}.{ext}"
            write_text(p, self.render(fmt))          # temp file + rename: never a half-written table
            paths.append(p)
        return paths

    def render(self, fmt: str = "markdown", floatfmt: str = ".4f") -> str:
        """markdown, csv or latex."""
        if fmt in ("markdown", "md"):
            return self.to_markdown(floatfmt)
        if fmt == "csv":
            return self.to_csv()
        if fmt in ("latex", "tex"):
            return self.to_latex(floatfmt)
        raise CranfieldError(f"unknown table format {fmt!r} (use markdown, csv or latex)")


# ---------------------------------------------------------------------------------------------- compute
def _letters(n: int) -> list[str]:
    out = []
    for i in range(n):
        s, k = "", i
        while True:
            s = chr(ord("a") + k % 26) + s
            k = k // 26 - 1
            if k < 0:
                break
        out.append(s)
    return out


def _matrix(table: pd.DataFrame, measure: str, runs: list[str], fill: float | None) -> pd.DataFrame:
    sub = table[table["measure"].astype(str).to_numpy() == measure]
    m = sub.assign(run=sub["run"].astype(str), topic=sub["topic"].astype(str)).pivot_table(
        index="topic", columns="run", values="value", aggfunc="first", observed=True)
    m = m.reindex(columns=runs).astype(float)
    return m.fillna(fill) if fill is not None else m


PAIR_CHUNK = 8192


def _pair_stats(x: np.ndarray, ia: np.ndarray, ib: np.ndarray, test: str, threshold: float, n_perm: int,
                seed: int) -> dict[str, np.ndarray]:
    """Per pair k of columns (ia[k], ib[k]) of x (topics x runs, NaN: no value): the means of both runs and of
    their differences over the topics both have, wins, losses, ties, n, the test's p and the effect size.
    Pairs of runs with every topic are computed a chunk of pairs at a time (columns in Fortran order: each
    column's sums in the order a single column's are, so the numbers are those of the pair alone); the
    randomization test (a seed per pair) and pairs with missing topics one pair at a time."""
    k = len(ia)
    out = {c: np.zeros(k) for c in ("mean_a", "mean_b", "diff", "p", "effect")}
    out.update({c: np.zeros(k, dtype=np.int64) for c in ("wins", "losses", "ties", "n")})
    has = ~np.isnan(x)
    full = has.all(axis=0)
    fast = full[ia] & full[ib] if test != "randomization" and x.shape[0] > 1 else np.zeros(k, bool)
    where = np.flatnonzero(fast)
    if len(where):
        col_mean = np.asfortranarray(x).mean(axis=0)
        xt = np.ascontiguousarray(x.T)
        for lo in range(0, len(where), PAIR_CHUNK):
            w = where[lo:lo + PAIR_CHUNK]
            d = (xt[ia[w]] - xt[ib[w]]).T              # topics x pairs, each column contiguous
            diff, sd = d.mean(axis=0), d.std(axis=0, ddof=1)
            out["mean_a"][w], out["mean_b"][w], out["diff"][w] = col_mean[ia[w]], col_mean[ib[w]], diff
            out["wins"][w] = (d > threshold).sum(axis=0)
            out["losses"][w] = (d < -threshold).sum(axis=0)
            out["ties"][w] = (np.abs(d) <= threshold).sum(axis=0)
            out["n"][w] = x.shape[0]
            out["p"][w] = test_p(d, test, n_perm=n_perm)
            with np.errstate(divide="ignore", invalid="ignore"):
                out["effect"][w] = np.where(sd > 0, diff / sd, 0.0)
    for j in np.flatnonzero(~fast):
        a, b = ia[j], ib[j]
        keep = has[:, a] & has[:, b]
        xa, xb = x[keep, a], x[keep, b]
        d = xa - xb
        n = len(d)
        sd = d.std(ddof=1) if n > 1 else 0.0
        out["mean_a"][j], out["mean_b"][j] = (xa.mean(), xb.mean()) if n else (np.nan, np.nan)
        out["diff"][j] = d.mean() if n else 0.0
        out["wins"][j], out["losses"][j] = (d > threshold).sum(), (d < -threshold).sum()
        out["ties"][j], out["n"][j] = (np.abs(d) <= threshold).sum(), n
        out["p"][j] = test_p(d, test, n_perm=n_perm, seed=seed + int(j))[0] if n > 1 else np.nan
        out["effect"][j] = d.mean() / sd if sd > 0 else 0.0
    return out


def compare_scores(table: pd.DataFrame, measures=None, baseline: str | None = None, *, test: str = "t",
                   correction: str | None = "holm", alpha: float = 0.05, threshold: float = 0.0,
                   runs: list[str] | None = None, fill: float | None = None, n_perm: int = 10000,
                   seed: int = 0) -> Comparison:
    """Compare runs from a long evaluation table (run, topic, measure, value).

    Per pair, topics where either run has no value are left out unless `fill` is given (0.0 = trec_eval -c).
    A topic counts as a win (loss) when the difference exceeds `threshold` (is below -threshold).
    """
    if test not in TESTS:
        raise CranfieldError(f"unknown test {test!r}; choose from {', '.join(TESTS)}")
    if correction == "none":
        correction = None
    correction = {"fdr_bh": "bh"}.get(correction, correction)       # statsmodels' name (pt.Experiment's)
    if correction not in CORRECTIONS:
        raise CranfieldError(f"unknown correction {correction!r}; choose from holm, bonferroni, bh (fdr_bh) or none")
    if len(table) == 0:
        raise CranfieldError("no evaluation results to compare")
    have = list(dict.fromkeys(table["measure"].astype(str).tolist()))
    measures = [str(m) for m in (measures or have)]
    missing = [m for m in measures if m not in have]
    if missing:
        raise CranfieldError(f"measure(s) {', '.join(missing)} not in the results (have: {', '.join(have[:20])})")
    all_runs = list(dict.fromkeys(table["run"].astype(str).tolist()))
    runs = [str(r) for r in (runs or all_runs)]
    unknown = [r for r in runs + ([baseline] if baseline else []) if r not in all_runs]
    if unknown:
        raise CranfieldError(f"unknown run(s) {', '.join(unknown)} (have: {', '.join(all_runs[:20])})")
    if baseline is not None and baseline not in runs:
        runs = [baseline] + runs
    if len(runs) < 2 and baseline is not None:
        raise CranfieldError("a comparison against a baseline needs at least two runs")
    if not runs:
        raise CranfieldError("no runs to compare")
    pos = {r: i for i, r in enumerate(runs)}
    if baseline is not None:
        ia = np.array([pos[r] for r in runs if r != baseline], dtype=np.intp)
        ib = np.full(len(ia), pos[baseline], dtype=np.intp)
    else:
        ia, ib = np.triu_indices(len(runs), 1)
    means = pd.DataFrame(index=pd.Index(runs, name="run"), columns=measures, dtype=float)
    names = np.array(runs, dtype=object)
    cols = ["measure", "a", "b", "mean_a", "mean_b", "diff", "wins", "losses", "ties", "n", "p", "p_adj",
            "effect", "significant"]
    blocks = []
    for m in measures:
        mat = _matrix(table, m, runs, fill)
        means[m] = mat.mean(axis=0)
        x = mat.to_numpy(np.float64)                 # topics x runs (runs in `runs` order)
        got = _pair_stats(x, ia, ib, test, threshold, n_perm, seed)
        got["p_adj"] = correct(got["p"], correction)
        got["significant"] = got["p_adj"] < alpha
        blocks.append(pd.DataFrame({"measure": m, "a": names[ia], "b": names[ib], **got}, columns=cols))
    pairs = pd.concat(blocks, ignore_index=True) if len(ia) else pd.DataFrame([], columns=cols)
    return Comparison(means, pairs, measures, runs, baseline, test, correction,
                      alpha, dict(zip(runs, _letters(len(runs)))))


def _runs_frame(runs, names: list[str] | None = None, issues=None) -> pd.DataFrame:
    """One run table (run, topic, doc, score) from a run table with a run column, a mapping tag -> run, or a
    list of runs named by `names` (else run0, run1, ... by position, as pt.Experiment's baseline index);
    each run in any shape `engine.evaluation.adapters.as_runs` reads (frames in the four column conventions,
    pytrec_eval dicts, ranx runs, file paths). Empty rankings are kept (`attrs["empty"]`)."""
    from ..evaluation.adapters import as_runs
    if isinstance(runs, pd.DataFrame):
        return as_runs(runs, issues=issues)
    if isinstance(runs, (list, tuple)):         # pt.Experiment style: a list of runs (+ names)
        if names is not None and len(names) != len(runs):
            raise CranfieldError(f"{len(names)} names for {len(runs)} runs")
        runs = {(names[i] if names else f"run{i}"): r for i, r in enumerate(runs)}
    if not isinstance(runs, Mapping) or not runs:
        raise CranfieldError("runs must be a run table, a mapping tag -> run or a non-empty list of runs (frames, "
                             "pytrec_eval dicts, ranx runs or file paths)")
    parts, empty = [], []
    for tag, r in runs.items():
        df = as_runs(r, issues=issues, name=str(tag))
        if len(df) and df["run"].nunique() > 1:
            raise CranfieldError(f"run {tag!r} holds several runs ({', '.join(map(str, df['run'].unique()[:5]))}); "
                                 f"give one run per entry")
        parts.append(df.assign(run=str(tag)))
        empty += [(str(tag), t) for _, t in df.attrs.get("empty", ())]
    out = pd.concat(parts, ignore_index=True)
    if empty:
        out.attrs["empty"] = empty
    return out


def compare(runs, qrels, measures=None, baseline: str | int | None = None, *, test: str = "t",
            correction: str | None = "holm", alpha: float = 0.05, threshold: float = 0.0,
            fill: float | None = None, n_perm: int = 10000, seed: int = 0, gains: dict | None = None,
            names: list[str] | None = None, complete: bool = True, issues=None, **eval_options) -> Comparison:
    """Evaluate `runs` against `qrels` (any shape `engine.evaluation.adapters` reads) with `measures` (any names
    `engine.measures.names` reads: trec_eval's, ir_measures') and compare them, as pt.Experiment does:
    against `baseline` (a run tag, or an index into the runs) or all pairs. `runs`: a run table, a mapping
    tag -> run, or a list of runs named by `names`. `test`: t, wilcoxon, randomization or sign;
    `correction`: holm, bonferroni, bh or None. `complete` (default, as pt.Experiment): every judged topic
    counts, scoring 0 where a run retrieved nothing (trec_eval -c); `eval_options` go to
    `cranfield.evaluate` (rel_level, max_depth, judged_only, trec_eval_version). Warnings go to `issues`
    when given, else to Python's warnings."""
    from ..evaluation.adapters import Issues, surface
    from ..evaluation.api import evaluate
    w = issues if issues is not None else Issues()
    try:
        frame = _runs_frame(runs, names, w)
        order = list(dict.fromkeys(frame["run"].astype(str).tolist()))
        if isinstance(baseline, int) and not isinstance(baseline, bool):
            if not 0 <= baseline < len(order):
                raise CranfieldError(f"baseline index {baseline} is out of range for {len(order)} runs")
            baseline = order[baseline]
        long = evaluate(qrels, frame, measures, gains=gains, complete=complete, issues=w, **eval_options)
    finally:
        if issues is None:
            surface(w, stacklevel=3)
    # every output name of the requested measures (P.5 -> P_5; P -> P_5, P_10, ...)
    return compare_scores(long, None, baseline, test=test, correction=correction, alpha=alpha,
                          threshold=threshold, runs=order, fill=fill, n_perm=n_perm, seed=seed)
