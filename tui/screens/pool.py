"""Pool builder: strategy and budget, per-topic pool sizes and expected judging hours, then write."""
from __future__ import annotations

import pandas as pd
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Header, Input, Label, Select, Static

from ..model import CampaignModel, CranfieldError, pool_preview
from ..widgets.cells import literal, num, plain
from ..widgets.jobbar import JobBar
from .base import CranfieldScreen, Unavailable, nav_bar


def _engine_missing() -> str | None:
    return CampaignModel.engine_missing("pooling")


class PoolScreen(CranfieldScreen):
    NEEDS_SCORES = False
    NEEDS_RUNS = True
    TITLE = "Pool builder"
    MODE = "pool"
    HELP = """Choose a pooling strategy, a per-topic budget (documents: 50; a fraction of each depth pool:
0.1 or 10%; empty = no budget), the depth of the runs to pool, and a seed. b builds the pool in the
background and shows, per topic, the sampling frame, the documents to judge, how many are already
judged, the new ones and the expected assessor hours (engine.planning.cost model). w writes
pools/pool-NAME.tsv and logs the specification so the pool is reproducible. Online strategies (mtf,
hedge, mtc) choose as judgments arrive: use the judging screen."""
    BINDINGS = [Binding("b", "build", "Build", tooltip="Build preview"), Binding("w", "write", "Write", tooltip="Write pool")]

    def __init__(self):
        super().__init__()
        self.pool = None
        self.frame: pd.DataFrame | None = None
        self._shown = False

    def compose(self) -> ComposeResult:
        yield Header()
        err = _engine_missing()
        if err is not None:
            yield Unavailable("The pool builder", "engine.pooling", err)
        else:
            strategies = CampaignModel.pool_choices()
            with Horizontal(classes="form"):
                yield Label("strategy")
                yield Select([(s, s) for s in strategies], value="depth", allow_blank=False, id="pool-strategy", compact=True)
                yield Label("budget")
                yield Input(placeholder="none", id="pool-budget", compact=True)
                yield Label("depth")
                yield Input(value="", placeholder="100", id="pool-depth", compact=True)
            with Horizontal(classes="form"):
                yield Label("seed")
                yield Input(value="0", id="pool-seed", compact=True)
                yield Label("name")
                yield Input(value="", placeholder="strategy", id="pool-name", compact=True)
            yield Static("b builds a preview; nothing is written until w.", id="pool-summary", classes="title")
            yield JobBar()
            yield DataTable(id="pool-table", cursor_type="row", zebra_stripes=True)
        yield nav_bar(self)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sync()

    def refresh_data(self) -> None:
        if _engine_missing() is not None:
            return
        cfg = self.model.o.engine_campaign.pool()   # campaign.yaml's pool: section with the schema's defaults
        d = self.query_one("#pool-depth", Input)
        if not d.value:
            d.value = str(cfg["depth"])
        if cfg["strategy"] in self.model.pool_strategies():
            self.query_one("#pool-strategy", Select).value = cfg["strategy"]
        if not self._shown or not isinstance(self.focused, (Input, Select)):
            self.query_one("#pool-table", DataTable).focus()   # later: never out of a field being typed in
        self._shown = True

    def _spec(self) -> dict:
        strategy = str(self.query_one("#pool-strategy", Select).value)
        budget = CampaignModel.parse_budget(self.query_one("#pool-budget", Input).value.strip() or None)
        try:
            depth = int(self.query_one("#pool-depth", Input).value or 100)
            seed = int(self.query_one("#pool-seed", Input).value or 0)
        except ValueError:
            raise CranfieldError("depth and seed must be whole numbers") from None
        name = self.query_one("#pool-name", Input).value.strip() or strategy
        return {"strategy": strategy, "budget": budget, "depth": depth, "seed": seed, "name": name}

    def on_input_submitted(self, event) -> None:
        self.query_one("#pool-table", DataTable).focus()
        self.action_build()

    def action_build(self) -> None:
        if _engine_missing() is not None or self.model is None:
            return
        try:
            spec = self._spec()
        except Exception as exc:
            self.app.report_error(exc)
            return
        m = self.model
        pooled = [r for r, p in zip(m.run_meta.index, m.run_meta["pooled"]) if p] or None

        def work(progress):
            progress(0.1, f"building the {spec['strategy']} pool")
            # the campaign seam reads the run store by topic blocks (first `depth` documents) when there is one
            pool = m.build_pool(spec["strategy"], spec["budget"], depth=spec["depth"], seed=spec["seed"],
                                pooled=pooled)
            progress(0.8, "estimating judging time")
            return spec, pool, pool_preview(m, pool.table)

        self.run_job(f"building {spec['strategy']} pool", work, self._built)

    def _built(self, result) -> None:
        spec, pool, frame = result
        self.pool, self.spec, self.frame = pool, spec, frame
        t = self.query_one("#pool-table", DataTable)
        t.clear(columns=True)
        for c in ("topic", "frame", "to judge", "judged", "new", "hours"):
            t.add_column(c, key=c)
        for r in frame.itertuples(index=False):
            t.add_row(plain(r.topic), str(r.frame), str(r.to_judge), str(r.judged), str(r.new), num(r.hours, 2), key=r.topic)
        b = spec["budget"]
        self.query_one("#pool-summary", Static).update(
            f"[b]{spec['strategy']}[/b] depth {spec['depth']}, budget {b if b is not None else 'none'}, seed {spec['seed']}: "
            f"{int(frame['to_judge'].sum())} documents to judge over {len(frame)} topics, "
            f"{int(frame['new'].sum())} new, about [b]{frame['hours'].sum():.1f} h[/b] of assessor time. "
            f"w writes pools/pool-{spec['name']}.tsv")

    def action_write(self) -> None:
        if _engine_missing() is not None or self.pool is None:
            self.notify("build a pool first (b)", severity="warning")
            return
        try:
            path = self.model.write_pool(self.spec["name"], self.pool)
        except Exception as exc:
            self.app.report_error(exc)
            return
        self.notify(f"wrote {literal(path)}", title="Pool written", timeout=10)
        self.app.campaign_changed()

    def export_table(self):
        return ("pool-preview", self.frame) if self.frame is not None else None
