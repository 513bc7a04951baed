"""Compare two runs: per-topic differences (most different first), wins/losses/ties, a paired test with its
effect size, and the two ranked lists of the selected topic side by side with grades and rank correlation."""
from __future__ import annotations

import numpy as np
import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Footer, Header, Static

from engine.util.names import shown

from ..widgets.cells import plain
from .base import CranfieldScreen, nav_bar
from .choice import ChoiceScreen

TESTS = ("t", "wilcoxon", "sign", "randomization")


def long_table(scores, measure: str, runs: list[str] | None = None) -> pd.DataFrame:
    """The model's run x topic matrix of one measure as an evaluation long table (run, topic, measure, value);
    `runs`: only theirs (two of 1,000 runs for a comparison)."""
    m = scores.matrix[measure]
    names = list(scores.runs)
    if runs is not None:
        ix = [names.index(r) for r in runs]
        m, names = m[ix], [names[i] for i in ix]
    runs = np.repeat(np.asarray(names, object), len(scores.topics))
    topics = np.tile(np.asarray(scores.topics, object), len(names))
    df = pd.DataFrame({"run": runs, "topic": topics, "measure": measure, "value": m.reshape(-1)})
    return df[np.isfinite(df["value"].to_numpy(float))]


class MeasureCycle:
    """For screens showing one measure at a time: `current_measure()` keeps `self.measure` among the
    evaluated measures, n (action_next_measure) moves to the next one and redraws."""

    measure: str | None

    def current_measure(self) -> str:
        ms = self.model.scores.measures
        if self.measure not in ms:
            self.measure = ms[0]
        return self.measure

    def action_next_measure(self) -> None:
        ms = self.model.scores.measures
        self.measure = ms[(ms.index(self.current_measure()) + 1) % len(ms)]
        self.draw()


class CompareScreen(MeasureCycle, CranfieldScreen):
    TITLE = "Compare"
    HELP = """Two runs on one measure: wins, losses and ties per topic, the paired test (t cycles t, Wilcoxon,
sign, randomization) with the effect size d_z, and every topic's scores, most different first. The lower
table shows the highlighted topic's two ranked lists side by side (grade; ? = unjudged) with Kendall tau
and tau_ap of the lists. a / b choose run A / B, w swaps them, n moves to the next measure. i shows or hides
the prediction-powered form when a model source judged every topic and people a sample: the PPI interval of
A - B with its p-value (Holm over all pairs of the measure), resolved or not, beside the human-only result,
and a caution when the human sample is small (the numbers of `cranfield compare --ci ppi`)."""
    BINDINGS = [Binding("a", "pick('a')", "Run A"), Binding("b", "pick('b')", "Run B"),
                Binding("w", "swap", "Swap"), Binding("t", "next_test", "Test"),
                Binding("n", "next_measure", "Measure"), Binding("i", "toggle_ppi", "PPI")]

    def __init__(self, a: str | None = None, b: str | None = None, measure: str | None = None):
        super().__init__()
        self.a, self.b, self.measure = a, b, measure
        self.test = "t"
        self.result = None
        self.topic: str | None = None
        self.show_ppi = False
        self.ppi: dict = {}           # measure -> engine.campaign.ppisig.PPISignificance, or the reason there is none

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="cmp-title", classes="title")
        with Vertical():   # stacked, not side by side: both tables fit 80 columns
            yield DataTable(id="cmp-topics", cursor_type="row", zebra_stripes=True)
            yield DataTable(id="cmp-lists", cursor_type="row", zebra_stripes=True)
        yield nav_bar(self)
        yield Footer(compact=True)     # every key whole at 80 columns (i PPI made it one too many)

    def on_mount(self) -> None:
        self.sync()

    def refresh_data(self) -> None:
        s = self.model.scores
        self.ppi = {}                  # judgments may have changed
        if self.show_ppi:
            self.compute_ppi()
        self.current_measure()
        means = pd.Series(np.nanmean(s.matrix[self.measure], axis=1), index=s.runs).sort_values(
            ascending=False, kind="mergesort")
        if self.a not in s.runs:
            self.a = str(means.index[0])
        if self.b not in s.runs or self.b == self.a:
            self.b = next(str(r) for r in means.index if r != self.a)
        self.draw()

    def draw(self) -> None:
        from engine.campaign.runcompare import compare_two
        s = self.model.scores
        self.result = r = compare_two(long_table(s, self.measure, [self.a, self.b]), self.a, self.b, self.measure,
                                      test=self.test)
        t = self.query_one("#cmp-topics", DataTable)
        t.clear(columns=True)
        for c in ("topic", self.a, self.b, "diff", "outcome"):
            t.add_column(plain(c), key=c)
        top = r.most_different(len(r.topics))
        for row in top.itertuples(index=False):
            t.add_row(plain(row.topic), f"{row.a:.4f}", f"{row.b:.4f}", f"{row.diff:+.4f}", row.outcome, key=row.topic)
        self.query_one("#cmp-title", Static).update(Text(shown("\n".join(self.title_lines()), "\n")))
        if self.topic not in set(r.topics["topic"]):
            self.topic = str(top["topic"].iloc[0]) if len(top) else None
        if self.topic is not None:
            t.move_cursor(row=list(top["topic"]).index(self.topic))
        self.draw_lists()

    def draw_lists(self) -> None:
        from engine.campaign.runcompare import list_correlation, ranked_list, side_by_side
        t = self.query_one("#cmp-lists", DataTable)
        t.clear(columns=True)
        if self.topic is None:
            return
        m = self.model
        runs = m.run_rows([self.a, self.b], topics=[self.topic])   # the two runs' rows only (1,000 runs: not all)
        sbs = side_by_side(runs, m.qrels, self.a, self.b, self.topic, depth=20)
        for c in sbs.columns:
            t.add_column(plain(c.replace("grade_", "g ").replace("doc_", "")), key=c)
        for row in sbs.itertuples(index=False):
            t.add_row(*[plain(v) for v in row])
        tau, tap, n = list_correlation(ranked_list(runs, self.a, self.topic, 100),
                                       ranked_list(runs, self.b, self.topic, 100))
        self.list_stats = (tau, tap, n)
        self.query_one("#cmp-title", Static).update(Text(shown(
            "\n".join(self.title_lines())
            + f"\ntopic {self.topic}: Kendall tau {tau:.3f}, tau_ap {tap:.3f} over {n} common documents (top 100)", "\n")))

    def title_lines(self) -> list[str]:
        """The comparison's summary, and with `i` the PPI form of the pair (or why there is none)."""
        lines = self.result.summary_lines()
        if not self.show_ppi:
            return lines
        sig = self.ppi.get(self.measure)
        if sig is None:
            return lines + ["PPI: computing..."]
        if isinstance(sig, str):
            return lines + [f"PPI: {sig}"]
        return lines + sig.pair_lines(str(sig.pairs["measure"].iat[0]), self.a, self.b)

    def compute_ppi(self) -> None:
        """The PPI significance table of the measure (engine.campaign.ppisig), off the UI thread."""
        measure, root = self.measure, self.model.root

        def work(progress):
            from engine.campaign.campaign import load_campaign
            from engine.campaign.ppisig import ppi_significance
            from engine.errors import CranfieldError
            try:
                return ppi_significance(load_campaign(root), [measure])
            except CranfieldError as exc:
                return str(exc)

        def done(sig) -> None:
            self.ppi[measure] = sig
            if measure == self.measure and self.result is not None:
                self.draw()
        self.run_job(f"PPI intervals of {measure}", work, done)

    def action_next_measure(self) -> None:
        super().action_next_measure()
        if self.show_ppi and self.measure not in self.ppi:
            self.compute_ppi()

    def action_toggle_ppi(self) -> None:
        if self.model is None or self.model.scores is None:
            return
        self.show_ppi = not self.show_ppi
        if self.show_ppi and self.measure not in self.ppi:
            self.compute_ppi()
        self.draw()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id != "cmp-topics" or event.row_key is None or event.row_key.value == self.topic:
            return
        self.topic = event.row_key.value
        self.draw_lists()

    def action_pick(self, which: str) -> None:
        if self.model is None or self.model.scores is None:
            return

        def done(choice) -> None:
            if choice:
                setattr(self, which, choice)
                if self.a == self.b:
                    self.notify("choose two different runs", severity="warning")
                    return
                self.draw()
        runs = self.model.scores.runs
        self.app.push_screen(ChoiceScreen(f"Run {which.upper()}", [(r, r) for r in runs], current=getattr(self, which)),
                             done)

    def action_swap(self) -> None:
        self.a, self.b = self.b, self.a
        self.draw()

    def action_next_test(self) -> None:
        self.test = TESTS[(TESTS.index(self.test) + 1) % len(TESTS)]
        self.draw()

    def export_table(self):
        if self.result is None:
            return None
        return f"compare-{self.a}-{self.b}-{self.measure}", self.result.topics.rename(
            columns={"a": self.a, "b": self.b})
