"""Cost-benefit: assessor hours against judgments per query, and the cheapest design for a target."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Header, Input, Label, Static, TabbedContent, TabPane

from ..model import CampaignModel, CranfieldError
from ..widgets.cells import num
from ..widgets.jobbar import JobBar
from .base import CranfieldScreen, Unavailable, nav_bar


def _engine_missing() -> str | None:
    return CampaignModel.engine_missing("planning")


def _f(v, d=1) -> str:
    return "—" if v is None or not np.isfinite(v) else f"{v:.{d}f}"


PLAN_TOPICS = 1000
PLAN_ROWS = 2_000_000      # run rows the planner evaluates per design at most (a seeded sample of runs beyond)


class CostScreen(CranfieldScreen):
    TITLE = "Cost-benefit"
    MODE = "cost"
    AUTO_FOCUS = "#cost-designs"     # never a target input: screen and app keys work on arrival
    HELP = """Plans a judging effort from this campaign's runs and judgments (engine.planning.planner): for designs of Q
queries x j judgments per query, the assessor hours (engine.planning.cost, thesis Table 3.4 times unless
campaign.yaml overrides them) and the expected Kendall tau against the full ranking (subsampling
topics and judgments), plus the Phi of the D-study. The targets are editable: type a value and press
enter (tau target, Phi target, trials). b recomputes; a picks the measure; 1-3 switch tabs.
The cheapest design per criterion is shown on top; below the designs, what the judgments allow (judged
documents per topic, and topics with fewer than j, which keep all they have). 'Current effort' prices the judgments made so far.
On a campaign of more than 2,000,000 run rows the planner works on a seeded random sample of runs (a notice says how many)."""
    BINDINGS = [Binding("b", "plan", "Plan"), Binding("a", "choose_measure", "Measure")] + [
        Binding(str(i + 1), f"tab('{t}')", f"Tab {t[4:]}", show=False)
        for i, t in enumerate(["tab-designs", "tab-hours", "tab-effort"])]

    def __init__(self):
        super().__init__()
        self.measure: str | None = None
        self.result = None
        self.tables: dict[str, pd.DataFrame] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        err = _engine_missing()
        if err is not None:
            yield Unavailable("Cost-benefit planning", "engine.planning.planner / engine.planning.cost", err)
        else:
            with Horizontal(classes="form"):
                yield Label("tau target")
                yield Input(value="0.9", id="cost-tau", compact=True)
                yield Label("Phi target")
                yield Input(value="0.95", id="cost-phi", compact=True)
                yield Label("trials")
                yield Input(value="50", id="cost-trials", compact=True)
            yield Static("b plans (runs in the background).", id="cost-title", classes="title")
            yield JobBar()
            with TabbedContent(id="cost-tabs"):
                with TabPane("Designs", id="tab-designs"):
                    yield DataTable(id="cost-designs", cursor_type="row")
                    yield Static("", id="cost-avail")
                with TabPane("Hours vs j", id="tab-hours"):
                    try:
                        from ..widgets.plot import Plot
                        yield Plot(id="cost-plot", classes="plot")
                    except ImportError:
                        yield Static("(textual-plotext is not installed: no plot)", id="cost-plot")
                with TabPane("Current effort", id="tab-effort"):
                    yield Static("", id="cost-effort-text")
                    yield DataTable(id="cost-effort", cursor_type="row")
        yield nav_bar(self)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sync()

    def refresh_data(self) -> None:
        if _engine_missing() is not None:
            return
        s = self.model.scores
        if self.measure not in s.measures:
            self.measure = s.measures[0] if s.measures else "map"
        self.show_effort()
        self.query_one("#cost-designs", DataTable).focus()
        # the planner's thread holds the interpreter for long stretches: start it once the screen has drawn
        self.call_after_refresh(self.action_plan)

    def show_effort(self) -> None:
        effort = self.model.judging_effort()
        if effort is None:
            return
        n_judged, tab, hours, source = effort
        self.tables["effort"] = tab
        self.query_one("#cost-effort-text", Static).update(
            f"The {n_judged} judgments made so far cost about [b]{hours:.1f} h[/b] "
            f"of assessor time ({source}).")
        t = self.query_one("#cost-effort", DataTable)
        t.clear(columns=True)
        for c in tab.columns:
            t.add_column(str(c))
        for r in tab.itertuples(index=False):
            t.add_row(*[num(v, 2) if isinstance(v, float) else str(v) for v in r])

    def _targets(self) -> tuple[float, float, int]:
        try:
            tau = float(self.query_one("#cost-tau", Input).value)
            phi = float(self.query_one("#cost-phi", Input).value)
            trials = int(self.query_one("#cost-trials", Input).value)
        except ValueError:
            raise CranfieldError("targets are numbers in (0, 1) and trials a whole number") from None
        if not (0 < tau < 1 and 0 < phi < 1) or trials < 5:
            raise CranfieldError("targets must be in (0, 1) and trials at least 5")
        return tau, phi, trials

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#cost-designs", DataTable).focus()
        self.action_plan()

    def action_plan(self) -> None:
        if _engine_missing() is not None or self.model is None or self.model.scores is None:
            return
        try:
            tau, phi, trials = self._targets()
        except CranfieldError as exc:
            self.app.report_error(exc)
            return
        m = self.model
        measure = self.measure

        def work(progress):
            # the planner re-evaluates the runs many times in memory: on a large campaign it works on a
            # seeded random sample of PLAN_TOPICS judged topics read from the run store, and on a seeded
            # sample of runs when those are more than PLAN_ROWS rows (1,000 runs x 50 topics: 3.5 GB before)
            return m.plan(measure, trials=trials, target_tau=tau, target_phi=phi, sample_topics=PLAN_TOPICS,
                          sample_rows=PLAN_ROWS, progress=progress, notify=lambda text: self.app.notify(text, timeout=6))

        self.run_job(f"planning designs for {measure}", work, self._show)

    def _show(self, res) -> None:
        self.result = res
        d = res.designs
        self.tables["designs"] = d
        t = self.query_one("#cost-designs", DataTable)
        t.clear(columns=True)
        for c in ("j", "h/query", f"Q tau>={res.target_tau}", "hours", "Q 95%", "hours",
                  f"Q Phi>={res.target_phi}", "hours"):
            t.add_column(c)
        for r in d.itertuples(index=False):
            t.add_row(str(r.j), _f(r.hours_per_query, 3), _f(r.queries_tau_mean, 0), _f(r.hours_tau_mean),
                      _f(r.queries_tau_p95, 0), _f(r.hours_tau_p95), _f(r.queries_phi, 0), _f(r.hours_phi))
        best = []
        for crit, lab in (("tau_mean", f"E\\[tau]>={res.target_tau}"), ("tau_p95", f"tau>={res.target_tau} with probability 95%"),
                          ("phi", f"Phi>={res.target_phi}")):
            try:
                b = res.cheapest(crit)
                q = b[{"tau_mean": "queries_tau_mean", "tau_p95": "queries_tau_p95", "phi": "queries_phi"}[crit]]
                h = b[{"tau_mean": "hours_tau_mean", "tau_p95": "hours_tau_p95", "phi": "hours_phi"}[crit]]
                best.append(f"{lab}: {math.ceil(q)} queries x {int(b['j'])} judgments = {h:.1f} h")
            except CranfieldError:
                best.append(f"{lab}: out of reach")
        self.query_one("#cost-avail", Static).update(Text("\n".join(res.availability_lines())))
        self.query_one("#cost-title", Static).update(
            f"[b]{res.measure}[/b] on {res.n_topics} topics · cheapest: " + " · ".join(best))
        w = self.query_one("#cost-plot")
        if hasattr(w, "draw"):
            from ..widgets.plot import Figure
            js = d["j"].to_numpy(float)
            w.draw(Figure([(lab, js, d[col].to_numpy(float), mk) for col, lab, mk in (
                ("hours_tau_mean", f"E[tau]>={res.target_tau}", "braille"), ("hours_tau_p95", "95%", "dot"),
                ("hours_phi", f"Phi>={res.target_phi}", "·"))],
                "assessor hours to reach the target vs judgments per query", "judgments per query (j)", logx=True))

    def action_tab(self, tab: str) -> None:
        if self.query("#cost-tabs"):
            self.query_one("#cost-tabs", TabbedContent).active = tab

    def action_choose_measure(self) -> None:
        self.pick_measure("Measure", self.action_plan)

    def export_table(self):
        active = self.query_one("#cost-tabs", TabbedContent).active if self.query("#cost-tabs") else ""
        key = "effort" if active == "tab-effort" else "designs"
        return (f"cost-{key}", self.tables[key]) if key in self.tables else None
