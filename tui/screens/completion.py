"""Predicted relevance (Buettcher et al. 2007): classifier quality against the training fraction, and the
pool-bias experiments with the judgments completed by the KLD and SVM classifiers (engine.completion)."""
from __future__ import annotations

import pandas as pd
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from ..widgets.jobbar import JobBar
from .base import CranfieldScreen

FRACTIONS = (0.05, 0.1, 0.2, 0.4, 0.6, 0.8)


class CompletionScreen(CranfieldScreen):
    TITLE = "Predicted relevance"
    MODE = "stability"
    HELP = """Completing biased judgments by predicting relevance (Buettcher, Clarke, Yeung and Soboroff 2007).
f: classifier quality (per-topic precision, recall, F1 macro-averaged) when trained on 5-80% of each
topic's judged documents and tested on the rest (the paper's Table 6).
g: leave-one-group-out; a: leave the manual runs out (automatic-only judgments). Each is evaluated on the
reduced judgments (none) and on the judgments completed by the KLD and SVM classifiers, which predict the
unjudged documents the left-out runs retrieve within the pool depth (Tables 7 and 8).
Needs document text (cranfield docs import). Escape cancels a running job, or goes back."""
    BINDINGS = [
        Binding("f", "quality", "Classifiers"),
        Binding("g", "poolbias('group')", "Group out", tooltip="Leave group out"),
        Binding("a", "poolbias('manual')", "Auto only", tooltip="Automatic only"),
    ]

    def __init__(self):
        super().__init__()
        self.table: pd.DataFrame | None = None
        self.what = ""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("f classifier quality · g leave one group out · a automatic-only (completion none / kld / svm)",
                     id="cp-title", classes="title")
        yield JobBar()
        yield DataTable(id="cp-table", cursor_type="row")
        yield Footer()

    def refresh_data(self) -> None:
        pass

    def _measures(self) -> list[str]:
        return list(getattr(self.app, "measures", None) or []) or ["P.20", "map", "bpref"]

    def action_quality(self) -> None:
        if self.model is None:
            return
        self.what = "classifier quality vs training fraction"
        self.run_job("training classifiers", lambda progress: self.model.completion_quality(FRACTIONS, progress),
                     self._show)

    def action_poolbias(self, mode: str) -> None:
        if self.model is None:
            return
        ms = self._measures()
        self.what = ("leave one group out" if mode == "group" else "automatic-only judgments") + \
            " with completion none / kld / svm"
        self.run_job(self.what, lambda progress: self.model.completion_poolbias(mode, ms, progress), self._show)

    def _show(self, df: pd.DataFrame) -> None:
        self.table = df
        t = self.query_one("#cp-table", DataTable)
        t.clear(columns=True)
        for c in df.columns:
            t.add_column(str(c), key=str(c))
        for r in df.itertuples(index=False):
            t.add_row(*[f"{v:.4f}" if isinstance(v, float) else str(v) for v in r])
        self.query_one("#cp-title", Static).update(f"[b]{self.what}[/b] · {len(df)} rows")

    def export_table(self):
        return ("completion", self.table) if self.table is not None else None
