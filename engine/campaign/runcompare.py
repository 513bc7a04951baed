"""Comparing two runs: per-topic differences with wins, losses and ties, a paired test with its effect size,
the topics where they differ most, their ranked lists side by side with grades, and the rank correlation of
the two lists (Kendall's tau and tau_ap)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..stability.correlation import kendall_tau
from ..errors import CranfieldError
from ..ranking.join import ranked_doc_lists
from ..util.names import natural_sorted

UNJUDGED = "?"


def tau_ap(ranking: list, reference: list) -> float:
    """AP rank correlation (Yilmaz, Aslam and Robertson, SIGIR 2008) of `ranking` against `reference`, over
    the items in both: (2 / (N - 1)) * sum_{i=2..N} C(i) / (i - 1) - 1, where C(i) counts the items above
    position i in `ranking` that the reference also puts above that item. Not symmetric; NaN when N < 2."""
    ref = {d: i for i, d in enumerate(reference)}
    items = [d for d in ranking if d in ref]
    n = len(items)
    if n < 2:
        return float("nan")
    pos = np.array([ref[d] for d in items])
    total = sum(float((pos[:i] < pos[i]).sum()) / i for i in range(1, n))
    return 2.0 * total / (n - 1) - 1.0


def list_correlation(docs_a: list, docs_b: list) -> tuple[float, float, int]:
    """(Kendall tau, tau_ap of A against B, number of common documents) of two ranked document lists."""
    common = [d for d in docs_a if d in set(docs_b)]
    if len(common) < 2:
        return float("nan"), float("nan"), len(common)
    rb = {d: i for i, d in enumerate(docs_b)}
    x = -np.arange(len(common), dtype=float)
    y = -np.array([rb[d] for d in common], dtype=float)
    return float(kendall_tau(x, y)), tau_ap(docs_a, docs_b), len(common)


def ranked_list(runs: pd.DataFrame, run: str, topic: str, depth: int | None = None) -> list[str]:
    """Documents of `run` for `topic` in trec_eval order (score descending, ties by doc id descending)."""
    return ranked_doc_lists(runs, [run], depth).get((str(run), str(topic)), [])


def side_by_side(runs: pd.DataFrame, qrels: pd.DataFrame, a: str, b: str, topic: str,
                 depth: int = 10) -> pd.DataFrame:
    """rank, doc_a, grade_a, doc_b, grade_b for one topic; grade '?' = unjudged, '' = list ended."""
    q = qrels[qrels["topic"].astype(str) == str(topic)]
    grade = dict(zip(q["doc"].astype(str), q["grade"].astype(int)))
    lists = ranked_doc_lists(runs, [a, b], depth)
    la, lb = lists.get((str(a), str(topic)), []), lists.get((str(b), str(topic)), [])
    rows = []
    for i in range(max(len(la), len(lb))):
        da = la[i] if i < len(la) else ""
        db = lb[i] if i < len(lb) else ""
        ga = "" if not da else str(grade[da]) if da in grade else UNJUDGED
        gb = "" if not db else str(grade[db]) if db in grade else UNJUDGED
        rows.append((i + 1, da, ga, db, gb))
    return pd.DataFrame(rows, columns=["rank", f"doc_{a}", f"grade_{a}", f"doc_{b}", f"grade_{b}"])


@dataclass
class RunComparison:
    """Two runs on one measure: `topics` (topic, a, b, diff, outcome win/loss/tie), counts, the test."""

    a: str
    b: str
    measure: str
    topics: pd.DataFrame
    wins: int
    losses: int
    ties: int
    test: str
    p: float
    effect: float
    threshold: float
    correlation: pd.DataFrame | None = None     # topic, tau, tau_ap, common

    @property
    def mean_a(self) -> float:
        return float(self.topics["a"].mean())

    @property
    def mean_b(self) -> float:
        return float(self.topics["b"].mean())

    def most_different(self, n: int = 5) -> pd.DataFrame:
        """The n topics with the largest absolute difference."""
        from ..util.names import natural_sorted
        order = {t: i for i, t in enumerate(natural_sorted(self.topics["topic"]))}     # ties: natural topic order
        t = self.topics.assign(_abs=self.topics["diff"].abs(), _o=self.topics["topic"].map(order))
        return (t.sort_values(["_abs", "_o"], ascending=[False, True], kind="mergesort").head(n)
                .drop(columns=["_abs", "_o"]))

    def summary_lines(self) -> list[str]:
        out = [f"{self.measure}: {self.a} {self.mean_a:.4f} vs {self.b} {self.mean_b:.4f} "
               f"(diff {self.mean_a - self.mean_b:+.4f}) over {len(self.topics)} topics",
               f"wins {self.wins}, losses {self.losses}, ties {self.ties} (|diff| <= {self.threshold:g} is a tie)",
               f"{self.test} test: p = {self.p:.4g}; effect size (mean diff / sd of diffs) d_z = {self.effect:.3f}"]
        if self.correlation is not None and len(self.correlation):
            c = self.correlation
            out.append(f"rank correlation of the two lists (common documents, mean over topics): "
                       f"Kendall tau {c['tau'].mean():.3f}, tau_ap {c['tau_ap'].mean():.3f}")
        return out


def compare_two(table: pd.DataFrame, a: str, b: str, measure: str, *, test: str = "t", threshold: float = 0.0,
                runs: pd.DataFrame | None = None, depth: int | None = None, n_perm: int = 10000,
                seed: int = 0) -> RunComparison:
    """Compare run `a` with run `b` on `measure` from an evaluation long table (topics both runs have).
    With `runs`, also the per-topic Kendall tau and tau_ap of their ranked lists (first `depth` documents)."""
    from .tables import test_p
    sub = table[table["measure"].astype(str) == measure]
    if not len(sub):
        raise CranfieldError(f"measure {measure!r} is not in the results")
    names = set(sub["run"].astype(str))
    for r in (a, b):
        if r not in names:
            raise CranfieldError(f"unknown run {r!r} (have: {', '.join(sorted(names)[:20])})")
    if a == b:
        raise CranfieldError("compare two different runs")
    m = sub.assign(run=sub["run"].astype(str), topic=sub["topic"].astype(str)).pivot_table(
        index="topic", columns="run", values="value", aggfunc="first", observed=True)[[a, b]].dropna()
    m = m.loc[natural_sorted(m.index)]                 # the natural topic order of every face
    m = m.astype(float)
    d = (m[a] - m[b]).to_numpy()
    outcome = np.where(d > threshold, "win", np.where(d < -threshold, "loss", "tie"))
    topics = pd.DataFrame({"topic": m.index.astype(str), "a": m[a].to_numpy(), "b": m[b].to_numpy(), "diff": d,
                           "outcome": outcome})
    p = float(test_p(d, test, n_perm=n_perm, seed=seed)[0]) if len(d) > 1 else np.nan
    sd = d.std(ddof=1) if len(d) > 1 else 0.0
    corr = None
    if runs is not None:
        lists = ranked_doc_lists(runs, [a, b], depth)
        rows = []
        for t in topics["topic"]:
            tau, tap, n = list_correlation(lists.get((str(a), t), []), lists.get((str(b), t), []))
            rows.append((t, tau, tap, n))
        corr = pd.DataFrame(rows, columns=["topic", "tau", "tau_ap", "common"])
    return RunComparison(a, b, measure, topics, int((outcome == "win").sum()), int((outcome == "loss").sum()),
                         int((outcome == "tie").sum()), test, p, float(d.mean() / sd) if sd > 0 else 0.0,
                         threshold, corr)
