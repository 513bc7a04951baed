"""Stability: variance components, E rho^2 and Phi with intervals, topics needed, the D-study curve,
discriminative power and reduction curves (all computed by engine.stability)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

from ..model import CampaignModel
from ..widgets.cells import literal, num, plain
from ..widgets.jobbar import JobBar
from .base import CranfieldScreen, Unavailable, nav_bar
from .plotview import FullPlot


def _engine_missing() -> str | None:
    return CampaignModel.engine_missing("stability")


def _plot_widget(id_: str):
    try:
        from ..widgets.plot import Plot
        return Plot(id=id_, classes="plot")
    except ImportError:  # the table beside it still shows the numbers
        return Static("(textual-plotext is not installed: no plot)", id=id_)


def _n(v) -> str:
    return "∞" if v is None or not math.isfinite(v) else f"{v:.0f}"


class StabilityScreen(FullPlot, CranfieldScreen):
    TITLE = "Stability"
    MODE = "stability"
    HELP = """Generalizability theory on the topic x run matrix of one measure (runs without a list for a topic
score 0 there): variance components of system, topic and system:topic; E rho^2 (relative) and Phi
(absolute) stability for this many topics with 95% intervals; topics needed to reach the target
(+ / - change it). Keys 1-4 switch tabs. The plot shows Phi and E rho^2 against the number of topics. d runs Sakai's paired
bootstrap (B = 1000) for discriminative power; r runs the judgment-reduction experiment (He et al.
levels, Kendall tau against the full judgments). f shows the plot of the tab showing full screen
(readable at 80x24). a picks the measure. Escape cancels a running job."""
    BINDINGS = [
        Binding("a", "choose_measure", "Meas.", tooltip="Measure"),
        Binding("plus,equals_sign", "target(0.01)", "Tgt+", key_display="+", tooltip="Target +"),
        Binding("minus", "target(-0.01)", "Tgt-", key_display="-", tooltip="Target -"),
        Binding("d", "discrim", "Power", tooltip="Disc. power"),
        Binding("r", "reduction", "Reduce", tooltip="Reduction"),
        Binding("b", "completion", "Pred", tooltip="Predicted relevance (completion)"),
        FullPlot.FULL_PLOT_BINDING,
    ] + [Binding(str(i + 1), f"tab('{t}')", f"Tab {name}", show=False)
         for i, (t, name) in enumerate([("tab-g", "G/D-study"), ("tab-plot", "plot"), ("tab-d", "disc. power"),
                                        ("tab-r", "reduction")])]

    def __init__(self):
        super().__init__()
        self.measure: str | None = None
        self.target = 0.95
        self.g = None
        self.tables: dict[str, pd.DataFrame] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        err = _engine_missing()
        if err is not None:
            yield Unavailable("Stability analysis", "engine.stability", err)
        else:
            yield Static("", id="st-title", classes="title")
            yield JobBar()
            with TabbedContent(id="st-tabs"):
                with TabPane("G/D-study", id="tab-g"):
                    yield DataTable(id="st-comp", cursor_type="row")
                with TabPane("Phi vs topics", id="tab-plot"):
                    yield _plot_widget("st-plot")
                with TabPane("Disc. power", id="tab-d"):
                    yield Static("d runs the paired bootstrap test on every pair of runs.", id="st-d-text")
                    yield DataTable(id="st-pairs", cursor_type="row")
                with TabPane("Reduction", id="tab-r"):
                    yield Static("r runs the reduction experiment (judgments removed at random, 16 levels).",
                                 id="st-r-text")
                    yield DataTable(id="st-red", cursor_type="row")
                    yield _plot_widget("st-red-plot")
        yield nav_bar(self)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sync()

    def matrix(self) -> pd.DataFrame:
        s = self.model.scores
        m = s.matrix[self.measure]
        return pd.DataFrame(np.nan_to_num(m.T, nan=0.0), index=s.topics, columns=s.runs)

    def refresh_data(self) -> None:
        if _engine_missing() is not None:
            return
        s = self.model.scores
        if self.measure not in s.measures:
            self.measure = s.measures[0] if s.measures else None
        self.compute_g()

    def compute_g(self) -> None:
        x = self.matrix()
        target = self.target
        m = self.model

        def work(progress):
            return m.g_study(x, target, progress)

        self.run_job(f"G-study of {self.measure}", work, self._show_g)

    def _show_g(self, res) -> None:
        g, comp, d, dall, need_phi, need_e = res
        self.g = g
        t = self.query_one("#st-comp", DataTable)
        t.clear(columns=True)
        for c in ("source", "df", "mean square", "variance", "share"):
            t.add_column(c, key=c)
        for r in comp.itertuples(index=False):
            t.add_row(r.source, str(r.df), f"{r.ms:.6f}", f"{r.variance:.6f}", f"{100 * r.share:.1f}%")
        t.add_row("", "", "", "", "")
        t.add_row(f"E rho^2 (n={g.n_topics})", "", num(d.erho2), f"[{num(d.erho2_lower, 3)}, {num(d.erho2_upper, 3)}]", "")
        t.add_row(f"Phi (n={g.n_topics})", "", num(d.phi), f"[{num(d.phi_lower, 3)}, {num(d.phi_upper, 3)}]", "")
        t.add_row(f"topics for Phi>={self.target:.2f}", "", _n(need_phi[0]), f"[{_n(need_phi[1])}, {_n(need_phi[2])}]", "")
        t.add_row(f"topics for Erho2>={self.target:.2f}", "", _n(need_e[0]), f"[{_n(need_e[1])}, {_n(need_e[2])}]", "")
        self.tables["gstudy"] = pd.concat([comp, pd.DataFrame({
            "source": ["erho2", "erho2_lower", "erho2_upper", "phi", "phi_lower", "phi_upper",
                       f"topics_for_phi_{self.target:.2f}", f"topics_for_erho2_{self.target:.2f}"],
            "variance": [d.erho2, d.erho2_lower, d.erho2_upper, d.phi, d.phi_lower, d.phi_upper,
                         need_phi[0], need_e[0]]})], ignore_index=True)
        self.tables["dstudy"] = pd.DataFrame({"topics": dall.n_topics, "erho2": dall.erho2,
                                              "erho2_lower": dall.erho2_lower, "erho2_upper": dall.erho2_upper,
                                              "phi": dall.phi, "phi_lower": dall.phi_lower, "phi_upper": dall.phi_upper})
        warn = f" · {literal('; '.join(p.message for p in g.warnings))}" if len(g.warnings) else ""
        self.query_one("#st-title", Static).update(
            f"[b]{self.measure}[/b] · {g.n_systems} runs x {g.n_topics} topics · Phi={num(d.phi, 3)} "
            f"Eρ²={num(d.erho2, 3)} · Phi≥{self.target:.2f}: {_n(need_phi[0])} topics{warn}")
        self.draw_plot(dall)

    def draw_plot(self, dall) -> None:
        w = self.query_one("#st-plot")
        if not hasattr(w, "draw"):
            return
        from ..widgets.plot import Figure
        ns = np.asarray(dall.n_topics, float)
        w.draw(Figure([("Phi", ns, dall.phi, "braille"), ("E rho^2", ns, dall.erho2, "dot"),
                       ("Phi 95% low", ns, dall.phi_lower, "·")],
                      f"{self.measure}: stability vs number of topics", "topics", ylim=(0, 1), hline=self.target))

    # ------------------------------------------------------------------ actions
    def action_tab(self, tab: str) -> None:
        if self.query("#st-tabs"):
            self.query_one("#st-tabs", TabbedContent).active = tab

    def action_completion(self) -> None:
        from .completion import CompletionScreen
        self.app.push_screen(CompletionScreen())

    def action_target(self, step: float) -> None:
        self.target = round(min(0.99, max(0.5, self.target + step)), 2)
        if self.model is not None and self.model.scores is not None:
            self.compute_g()

    def action_choose_measure(self) -> None:
        self.pick_measure("Measure", self.compute_g)

    def action_discrim(self) -> None:
        if _engine_missing() is not None or self.model is None or self.model.scores is None:
            return
        m = self.model
        x = self.matrix()
        self.query_one("#st-tabs", TabbedContent).active = "tab-d"

        def work(progress):
            return m.discriminative_power(x, n_bootstrap=1000, progress=progress)

        self.run_job(f"bootstrap on {x.shape[1] * (x.shape[1] - 1) // 2} pairs", work, self._show_d)

    def _show_d(self, d) -> None:
        self.query_one("#st-d-text", Static).update(
            f"[b]{self.measure}[/b]: {d.n_significant}/{d.n_pairs} pairs significant at alpha={d.alpha} "
            f"(discriminative power {100 * d.power:.1f}%, B={d.n_bootstrap}); estimated difference required "
            f"{d.diff_required:.4f}")
        pairs = d.pairs.sort_values("asl", kind="mergesort")
        self.tables["pairs"] = pairs
        t = self.query_one("#st-pairs", DataTable)
        t.clear(columns=True)
        for c in ("run a", "run b", "diff", "ASL", "sig"):
            t.add_column(c)
        for r in pairs.itertuples(index=False):
            t.add_row(plain(r.a), plain(r.b), f"{r.diff:+.4f}", f"{r.asl:.3f}", "*" if r.significant else "")

    def action_reduction(self) -> None:
        if _engine_missing() is not None or self.model is None or self.model.scores is None:
            return
        m = self.model
        specs = list(self.app.measures)
        self.query_one("#st-tabs", TabbedContent).active = "tab-r"

        def work(progress):   # the campaign seam streams over the run store on a large campaign
            return m.reduction(specs, method="uniform", trials=3, statistic="tau", progress=progress)

        self.run_job("reduction experiment", work, self._show_r)

    def _show_r(self, tab: pd.DataFrame) -> None:
        tab = tab.reset_index()
        self.tables["reduction"] = tab
        self.query_one("#st-r-text", Static).update(
            "Kendall tau of the run ranking with judgments removed at random (mean of 3 trials) against the full judgments:")
        t = self.query_one("#st-red", DataTable)
        t.clear(columns=True)
        for c in tab.columns:
            t.add_column(str(c))
        for r in tab.itertuples(index=False):
            t.add_row(f"{r[0]:g}%", *[num(v, 3) for v in r[1:]])
        w = self.query_one("#st-red-plot")
        if hasattr(w, "draw"):
            from ..widgets.plot import Figure
            levels = tab["level"].to_numpy(float)
            markers = ["braille", "dot", "·", "+", "x", "o"]
            w.draw(Figure([(str(col), levels, tab[col].to_numpy(float), markers[k % len(markers)])
                           for k, col in enumerate(tab.columns[1:])],
                          "Kendall tau vs % of judgments kept", "% judgments kept"))

    def export_table(self):
        active = self.query_one("#st-tabs", TabbedContent).active if self.query("#st-tabs") else ""
        key = {"tab-g": "gstudy", "tab-plot": "dstudy", "tab-d": "pairs", "tab-r": "reduction"}.get(active, "gstudy")
        if key not in self.tables:
            return None
        return f"stability-{key}-{self.measure}", self.tables[key]
