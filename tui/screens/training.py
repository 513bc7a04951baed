"""Training collections: selection characteristics, rankers' test MAP per selection budget, and
the training-measure sensitivity curves, with the best choice per budget (engine.training)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

from ..widgets.cells import num
from ..widgets.jobbar import JobBar
from .base import CranfieldScreen, Unavailable, nav_bar
from .plotview import FullPlot

TABS = ["tab-learn", "tab-sens", "tab-select"]
QUICK_METHODS = ("depth", "infap", "statap", "mtc", "hedge", "letor")
QUICK_PERCENTS = (1, 5, 20, 60)


def _engine():
    try:
        import engine.training.report as report
        return report, None
    except ImportError as exc:
        return None, str(exc)


class TrainingScreen(FullPlot, CranfieldScreen):
    TITLE = "Training"
    MODE = "training"
    NEEDS_SCORES = False
    HELP = """Training collections (kanoulas thesis ch. 4, He et al. 2008). Shows the tables that
`cranfield training select|learn|sensitivity --campaign DIR` saved in <campaign>/training/:
1 rankers' test MAP versus the share of the depth pool selected, per selection method, with the
best method per budget; 2 the test MAP of the setting each training measure chooses versus the
share of training judgments kept, with the best measure per level; 3 precision, recall and
discrepancy of the selected sets. n cycles the ranker of the curves; y cycles the curve of tab 3;
b computes tab 3 for this campaign now (features simulated from its runs and judgments). f shows the
plot of the tab showing full screen (readable at 80x24)."""
    BINDINGS = [Binding("b", "characterize", "Characterize"), Binding("n", "next_ranker", "Ranker"),
                Binding("y", "next_y", "Curve"), FullPlot.FULL_PLOT_BINDING] + [
        Binding(str(i + 1), f"tab('{t}')", f"Tab {i + 1}", show=False) for i, t in enumerate(TABS)]
    SELECT_Y = ("precision", "recall", "disc_rel", "disc_rel_nonrel")

    def __init__(self):
        super().__init__()
        self.results: dict[str, pd.DataFrame] = {}
        self.ranker_i = 0
        self.y_i = 0
        self.tables: dict[str, pd.DataFrame] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        report, err = _engine()
        if report is None:
            yield Unavailable("Training collections", "engine.training", err)
        else:
            yield Static("", id="tr-title", classes="title")
            yield JobBar()
            with TabbedContent(id="tr-tabs"):
                for tab, label, key in (("tab-learn", "Rankers vs budget", "learn"),
                                        ("tab-sens", "Training measure", "sens"),
                                        ("tab-select", "Selected sets", "select")):
                    with TabPane(label, id=tab):
                        yield Static("", id=f"tr-{key}-best")
                        yield self._plot(f"tr-{key}-plot")
                        yield DataTable(id=f"tr-{key}-table", cursor_type="row")
        yield nav_bar(self)
        yield Footer()

    @staticmethod
    def _plot(wid: str):
        try:
            from ..widgets.plot import Plot
            return Plot(id=wid, classes="plot")
        except ImportError:
            return Static("(textual-plotext is not installed: no plot)", id=wid)

    def on_mount(self) -> None:
        self.sync()

    def refresh_data(self) -> None:
        report, _ = _engine()
        if report is None or self.model is None:
            return
        self.results = report.load_results(report.results_dir(self.model.root))
        self.show_all()

    # ------------------------------------------------------------------ drawing
    def show_all(self) -> None:
        have = [k for k in ("learn", "sensitivity", "select") if k in self.results]
        self.query_one("#tr-title", Static).update(
            f"[b]Training collections[/b] · saved results: {', '.join(have) or 'none'}"
            + ("" if have else " · run `cranfield training learn|sensitivity|select --campaign DIR`, or b here"))
        self.show_learn()
        self.show_sens()
        self.show_select()

    def _fill(self, wid: str, df: pd.DataFrame) -> None:
        t = self.query_one(wid, DataTable)
        t.clear(columns=True)
        for c in df.columns:
            t.add_column(str(c))
        for r in df.itertuples(index=False):
            t.add_row(*[num(v, 3) if isinstance(v, (float, np.floating)) else str(v) for v in r])

    def _draw(self, wid: str, series: dict, title: str, xlabel: str, logx: bool = True) -> None:
        w = self.query_one(wid)
        if hasattr(w, "draw"):
            from ..widgets.plot import Figure
            w.draw(Figure([(name, xs, ys, "dot") for name, (xs, ys) in series.items()], title, xlabel, logx=logx))

    def rankers(self) -> list[str]:
        d = self.results.get("learn")
        return sorted(d["ranker"].unique().tolist()) if d is not None else []

    def show_learn(self) -> None:
        report, _ = _engine()
        d = self.results.get("learn")
        best_w = self.query_one("#tr-learn-best", Static)
        if d is None:
            best_w.update("No learning results: `cranfield training learn --campaign DIR` saves them.")
            return
        rk = self.rankers()
        ranker = rk[self.ranker_i % len(rk)]
        sub = d[(d["ranker"] == ranker) & (d["method"] != "full")]
        full = d[(d["ranker"] == ranker) & (d["method"] == "full")]["map"]
        best = report.best_selection(d)
        self.tables["learn"] = best
        b = best[best["ranker"] == ranker]
        best_w.update(f"[b]{ranker}[/b] (n: next ranker) · full pool MAP "
                      f"{full.mean():.3f} · best per budget: "
                      + ", ".join(f"{p:g}% {m} {v:.3f}" for p, m, v in zip(b["percent"], b["method"], b["map"])))
        self._draw("#tr-learn-plot", report.curves(sub, "percent", "map", "method"),
                   f"{ranker}: test MAP vs % of the depth pool", "% of the depth pool")
        self._fill("#tr-learn-table", best)

    def show_sens(self) -> None:
        report, _ = _engine()
        s = self.results.get("sensitivity")
        best_w = self.query_one("#tr-sens-best", Static)
        if s is None:
            best_w.update("No sensitivity results: `cranfield training sensitivity --campaign DIR` saves them.")
            return
        bm = report.best_measure(s)
        self.tables["sensitivity"] = bm
        low = bm.iloc[0]
        best_w.update(f"best training measure at {low['level']:g}% of the judgments: [b]{low['measure']}[/b] "
                      f"(test MAP {low['test_map']:.3f}, MAP-trained {low['map_trained']:.3f})")
        self._draw("#tr-sens-plot", report.curves(s, "level", "test_map", "measure"),
                   "test MAP of the chosen setting vs % of training judgments", "% of training judgments kept")
        self._fill("#tr-sens-table", bm)

    def show_select(self) -> None:
        report, _ = _engine()
        s = self.results.get("select")
        best_w = self.query_one("#tr-select-best", Static)
        if s is None:
            best_w.update("No selection results: b computes them for this campaign.")
            return
        y = self.SELECT_Y[self.y_i % len(self.SELECT_Y)]
        self.tables["select"] = s
        top = s.loc[s.groupby("percent")["precision"].idxmax()]
        best_w.update(f"curve: [b]{y}[/b] (y: next) · most precise method per budget: "
                      + ", ".join(f"{p:g}% {m}" for p, m in zip(top["percent"], top["method"])))
        self._draw("#tr-select-plot", report.curves(s, "percent", y, "method"), f"{y} of the selected sets",
                   "% of the depth pool")
        self._fill("#tr-select-table", s)

    # ------------------------------------------------------------------ actions
    def action_next_ranker(self) -> None:
        if self.rankers():
            self.ranker_i += 1
            self.show_learn()

    def action_next_y(self) -> None:
        self.y_i += 1
        self.show_select()

    def action_tab(self, tab: str) -> None:
        if self.query("#tr-tabs"):
            self.query_one("#tr-tabs", TabbedContent).active = tab

    def action_characterize(self) -> None:
        report, _ = _engine()
        m = self.model
        if report is None or m is None or m.large:
            if m is not None and m.large:
                self.notify("large campaign: run `cranfield training select --campaign DIR` instead", severity="warning")
            return
        runs = m.runs
        qrels = m.o.truth_qrels() if hasattr(m.o, "truth_qrels") else None
        qrels = m.qrels[m.qrels["grade"] >= 0] if qrels is None else qrels
        root = m.root

        def work(progress):
            from engine.training.features import simulate_features
            from engine.training.select import characterize, select
            from engine.training.learn import complete_qrels
            feats, _ = simulate_features(runs, qrels, 100)
            pool = complete_qrels(feats)        # the complete collection: the depth-100 pool
            rows = []
            plan = [(a, p) for a in QUICK_METHODS for p in QUICK_PERCENTS]
            for i, (meth, pct) in enumerate(plan):
                progress(i / len(plan), f"{meth} {pct}%")
                sel = select(meth, runs, qrels, pct, features=feats)
                rows.append({"method": meth, "percent": float(pct), **characterize(sel, feats, pool)})
            df = pd.DataFrame(rows)
            report.save_result(report.results_dir(root), "select", df)
            return df

        self.run_job("characterizing training selections", work, self._characterized)

    def _characterized(self, df) -> None:
        self.results["select"] = df
        self.show_all()
        self.action_tab("tab-select")

    def export_table(self):
        active = self.query_one("#tr-tabs", TabbedContent).active if self.query("#tr-tabs") else ""
        key = {"tab-learn": "learn", "tab-sens": "sensitivity", "tab-select": "select"}.get(active, "learn")
        return (f"training-{key}", self.tables[key]) if key in self.tables else None
