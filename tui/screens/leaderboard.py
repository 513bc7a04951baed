"""Leaderboard: runs x measures, means with 95% intervals, one-key sorting, filters, significance."""
from __future__ import annotations

import numpy as np
import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Static

from engine.util.names import shown

from ..model import measure_choices
from ..widgets.fasttable import FastTable
from ..widgets.jobbar import JobBar
from .base import CranfieldScreen, nav_bar
from .choice import ChoiceScreen

SIG_MARK = "≈"
NUGGET_COLUMNS = (("all", "all"), ("vital", "vital"), ("strict_all", "s.all"), ("strict_vital", "s.vital"),
                  ("weighted", "wtd"), ("strict_weighted", "s.wtd"))
"""The nugget measures of answer runs (engine.nuggets.scores.MEASURES) and their column headers."""
RETRIEVAL_ONLY = ("filter", "choose_measures", "judgments", "mark", "fuse", "open_run")
"""Leaderboard actions about retrieval runs: hidden and refused while the answer runs are shown."""


class LeaderboardScreen(CranfieldScreen):
    TITLE = "Leaderboard"
    MODE = "leaderboard"
    HELP = f"""Every run's mean over topics for each chosen measure with the half-width of its 95% t interval,
and judged@10 (share of each top 10 that is judged). {SIG_MARK} marks a run NOT significantly different from
the run listed above it (paired t-test over topics, p >= 0.05, on the sort measure, or the first
measure when sorting by a non-measure column). Digits 1-9 sort by that column (numbers in the header);
s moves the sort to the next column; r reverses. Enter opens the run."""
    BINDINGS = [
        Binding("enter", "open_run", "Open run", show=False),
        Binding("s", "next_sort", "Sort", tooltip="Sort next"),
        Binding("r", "reverse", "Rev", tooltip="Reverse"),
        Binding("f", "filter", "Filter"),
        Binding("a", "choose_measures", "Measures"),
        Binding("J", "judgments", "Judgments", show=False,
                tooltip="Judgments the scores use: official, or another source filling its holes "
                        "(as eval --judgments; fill@10 = share of each top 10 that source judged)"),
        Binding("i", "submit", "Submit", show=False, tooltip="Submit a run file (intake, as cranfield submit)"),
        Binding("space", "mark", "Mark", show=False, tooltip="Mark / unmark the run for fusion"),
        Binding("u", "fuse", "Fuse", show=False,
                tooltip="Fuse the marked runs, else the top 3 (RRF, CombSUM, CombMNZ)"),
        Binding("n", "switch_view", "Answers/runs",
                tooltip="Switch between the retrieval runs and the answer runs (answers/) with their nugget "
                        "scores from the human source, as cranfield nuggets scores: all and vital count partial "
                        "support 1/2, s. (strict) full support only, wtd weighs okay nuggets 1/2"),
    ] + [Binding(str(i), f"sort_col({i})", f"Sort by column {i}", show=False) for i in range(1, 10)]

    def __init__(self):
        super().__init__()
        self.sort_key: str | None = None
        self.descending = True
        self.filt: tuple[str, str] = ("all", "")
        self.filt_label = "all runs"
        self.frame: pd.DataFrame | None = None
        self._row_runs: list[str] = []
        self.marked: list[str] = []          # runs marked for fusion, in marking order
        self._title_len = 0
        self.view = "runs"                   # "runs": retrieval runs; "answers": answer runs, nugget scores
        self._other_sort: tuple[str | None, bool] = ("all", True)    # the other view's sort
        self.nugget_board: pd.DataFrame | None = None
        self.nugget_problem = ""             # why there are no nugget scores (no nuggets yet, ...)
        self._answers_seen: tuple | None = None
        self._has_answers = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="lb-title", classes="title")
        yield JobBar()
        yield FastTable(id="lb", fixed=3)
        yield nav_bar(self)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#lb-title", Static).update("Loading…")
        self.sync()

    # ------------------------------------------------------------------ answer runs (nugget scores)
    WATCH = ("answers", "nuggets", "judgments", "sources")     # judgments, sources: the PPI intervals

    def has_answers(self) -> bool:
        """The campaign has answer runs (answers/*.jsonl)."""
        m = self.app.model
        if m is None:
            return False
        key = (str(m.root), self.app.data_version, self.app.file_versions.get("answers", 0))
        if key != self._answers_seen:
            from .nuggets import has_answer_runs
            self._answers_seen, self._has_answers = key, has_answer_runs(m.root)
        return self._has_answers

    @property
    def NEEDS_SCORES(self) -> bool:  # noqa: N802  (the base class's flag, per view here)
        """The retrieval runs need scores; the answer runs' nugget scores do not."""
        return self.view != "answers"

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """Hide the retrieval-only keys while the answer runs are shown, and n without answer runs."""
        if action in RETRIEVAL_ONLY and self.view == "answers":
            return False
        if action == "switch_view":
            return self.has_answers() or self.view == "answers"
        return True

    def set_view(self, view: str) -> None:
        if view != self.view:
            self.view = view
            (self.sort_key, self.descending), self._other_sort = self._other_sort, (self.sort_key, self.descending)
            self.refresh_bindings()

    def action_switch_view(self) -> None:
        if self.view == "runs":
            if not self.has_answers():
                self.notify("this campaign has no answer runs (answers/): nothing to switch to", severity="warning")
                return
            self.set_view("answers")
        elif self.model.scores is None:
            self.notify("no retrieval scores yet (no judgments of retrieval runs)", severity="warning")
            return
        else:
            self.set_view("runs")
        self.refresh_data()

    def sync(self) -> None:
        """As every screen; a campaign with answer runs and no retrieval scores opens on its answer runs."""
        m = self.app.model
        if m is not None and self.composed() and self.view == "runs" and m.scores is None and self.has_answers():
            self.set_view("answers")
        super().sync()

    def load_nugget_board(self) -> None:
        """The answer runs' nugget scores (engine.nuggets.campaign.leaderboard, as `cranfield nuggets scores`),
        read in a worker; the table redraws when they arrive."""
        from engine.errors import CranfieldError
        from engine.nuggets.campaign import campaign_answers, leaderboard, per_topic_scores
        from .nuggets import SOURCE
        root = self.model.root

        def work(progress):
            try:
                ans = campaign_answers(root)
                board = leaderboard(root, SOURCE, answers=ans)
                pt = per_topic_scores(root, SOURCE, answers=ans).groupby("run")[["nuggets", "unassigned"]].sum()
                pt = pt.reindex(board["run"], fill_value=0)
                board["assessed"] = (pt["nuggets"] - pt["unassigned"]).to_numpy()
                board["pairs"] = pt["nuggets"].to_numpy()
                return board, ""
            except CranfieldError as exc:
                return None, str(exc)

        def done(result) -> None:
            self.nugget_board, self.nugget_problem = result
            if self.view == "answers":
                self.redraw()
        self.run_job("nugget scores", work, done)

    def redraw_answers(self) -> None:
        """The answer runs with their nugget scores, sorted as chosen."""
        from .nuggets import SOURCE
        t = self.query_one("#lb", FastTable)
        arrow = "▼" if self.descending else "▲"
        df = self.nugget_board
        sortable = self.sort_columns()
        if self.sort_key not in sortable:
            self.sort_key, self.descending = "all", True
        if df is None:
            self.frame = None
            t.set_data(["pos", "run"], ["#", "run"], [])
            self._row_runs = []
            why = ("reading the nugget scores…" if not self.nugget_problem
                   else "no nuggets yet: N creates them (a adds one)" if "no nuggets yet" in self.nugget_problem
                   else f"no nugget scores: {self.nugget_problem}")
            title = Text.from_markup(f"[b]Answer runs[/b] · {Text(why).markup}"
                                     + (" · n: retrieval runs" if self.model.scores is not None else ""))
        else:
            df = df.sort_values([self.sort_key, "run"], ascending=[not self.descending, True], kind="mergesort")
            df = df.reset_index(drop=True)
            self.frame = df

            def label(name: str, text: str) -> str:
                return f"{sortable.index(name) + 1}:{text}" + (arrow if name == self.sort_key else "")
            cols = [("pos", "#", [str(i + 1) for i in range(len(df))]), ("run", label("run", "run"), [shown(r) for r in df["run"]])]
            cols += [(k, label(k, h), [f"{v:.4f}" for v in df[k].to_numpy()]) for k, h in NUGGET_COLUMNS]
            cols.append(("topics", "topics", [str(int(v)) for v in df["topics"]]))
            cols.append(("assessed", "assessed", [f"{int(a)}/{int(n)}" for a, n in zip(df["assessed"], df["pairs"])]))
            t.set_data([c[0] for c in cols], [c[1] for c in cols],
                       [[c[2][i] for c in cols] for i in range(len(df))], right=[k == "pos" for k, _, _ in cols])
            self._row_runs = []                    # x / o compare retrieval runs only
            done, pairs = int(df["assessed"].sum()), int(df["pairs"].sum())
            title = Text.from_markup(
                f"[b]Answer runs[/b] · nugget scores ({SOURCE}) · {len(df)} runs · by {self.sort_key}{arrow}"
                f" · assessed {done}/{pairs} (answer, nugget) pairs ({100 * done / max(pairs, 1):.0f}%)"
                + (" · n: retrieval runs" if self.model.scores is not None else ""))
        self.set_title(title, any_height=df is None)

    def set_title(self, title: Text, any_height: bool = False) -> None:
        """The title on one line, or two when it does not fit (a long judgment spec at 80 columns); with
        `any_height` as many as it needs (a message naming a file)."""
        lines = "auto" if any_height else 1 + (title.cell_len + 2 > self.size.width > 0)
        self.query_one("#lb-title", Static).update(title, layout=lines != self._title_len)
        self.query_one("#lb-title", Static).styles.height = lines
        self._title_len = lines

    # sortable columns: run, group, (filled@10 with a non-official source,) measures..., judged@10
    # (answer runs: run and the nugget measures)
    def sort_columns(self) -> list[str]:
        if self.view == "answers":
            return ["run"] + [k for k, _ in NUGGET_COLUMNS]
        s = self.model.scores
        return (["run", "group"] + (["filled@10"] if s.filled10 is not None else []) + list(s.measures)
                + ["judged@10"])

    def refresh_data(self) -> None:
        if self.view == "answers":
            self.load_nugget_board()
            self.redraw()
            return
        cols = self.sort_columns()
        if self.sort_key not in cols:
            self.sort_key = self.model.scores.measures[0] if self.model.scores.measures else "run"
            self.descending = True
        self.load_ppi()
        self.redraw()

    def redraw(self) -> None:
        """Rebuild the table for the current sort and filter (the hot path of the sort benchmark)."""
        if self.view == "answers":
            self.redraw_answers()
            return
        m = self.model
        s = m.scores
        df = m.leaderboard(sort=self.sort_key, descending=self.descending, filt=self.filt)
        self.frame = df
        t = self.query_one("#lb", FastTable)
        cursor_run = self._row_runs[t.cursor_row] if t.cursor_row < len(self._row_runs) else None
        arrow = "▼" if self.descending else "▲"
        sortable = self.sort_columns()

        def label(name: str, text: str | None = None) -> str:
            i = sortable.index(name) + 1
            return f"{i}:{text or name}" + (arrow if name == self.sort_key else "")

        runs = df["run"].to_numpy()
        cell = self.formatted(m._board_base(s), s.measures)   # every run's cells, formatted once per scores
        ix = df.index.to_numpy()                               # rows of the unsorted board, in the order shown
        groups, flags, j10 = cell["group"][ix], cell["flags"][ix], cell["judged@10"][ix]
        same = df["same_as_above"].to_numpy(bool)
        cells = {n: cell[n][ix] for n in s.measures}
        marked = set(self.marked)
        pos = [("*" if r in marked else "") + str(i + 1) for i, r in enumerate(runs)]
        sig = [SIG_MARK if x else "" for x in same]
        # columns: (key, header, values) of plain strings; FastTable joins each row into one line
        cols = [("pos", "#", pos), ("sig", SIG_MARK, sig), ("run", label("run"), cell["run"][ix]),
                ("group", label("group", "grp"), groups), ("flags", "MP", flags)]
        if "filled@10" in df:        # which judgments the scores used: share of each top 10 not official
            cols.append(("filled@10", label("filled@10", "fill@10"), cell["filled@10"][ix]))
        cols += [(n, label(n), cells[n]) for n in s.measures]
        cols.append(("judged@10", label("judged@10", "j@10"), j10))
        cols += self.ppi_columns(list(runs))
        t.set_data([c[0] for c in cols], [c[1] for c in cols],
                   [[c[2][i] for c in cols] for i in range(len(df))],
                   right=[k in ("pos",) for k, _, _ in cols])
        self._row_runs = list(runs)
        if cursor_run is not None and cursor_run in self._row_runs:
            t.move_cursor(self._row_runs.index(cursor_run))
        sm = df.attrs.get("sig_measure")
        title = Text.from_markup(
            f"[b]{Text(shown(m.name)).markup}[/b] · {len(df)}/{len(s.runs)} runs"
            + ("" if self.filt[0] == "all" else f" ({self.filt_label})")
            + f" · by {self.sort_key}{arrow} · {SIG_MARK} n.s. vs above ({sm})"
            + f" · judgments [b]{Text(shown(s.judgments)).markup}[/b]"
            + (" · n: answer runs" if self.has_answers() else ""))
        self.set_title(title)

    def formatted(self, base: pd.DataFrame, measures: list[str]) -> dict[str, np.ndarray]:
        """The cells of every run of the unsorted board `base` as shown (object arrays in its row order),
        cached while the board is the same: a re-sort only reorders them."""
        hit = getattr(self, "_formatted", None)
        if hit is not None and hit[0] is base:
            return hit[1]

        def arr(values) -> np.ndarray:
            values = list(values)
            out = np.empty(len(values), dtype=object)
            out[:] = values
            return out
        cell = {"run": arr(shown(r) for r in base["run"]), "group": arr(shown(g) for g in base["group"]),
                "flags": (np.where(base["type"].to_numpy() == "manual", "M", "·").astype(object)
                          + np.where(base["pooled"].to_numpy(bool), "P", "·").astype(object)),
                "judged@10": arr(f"{v:.2f}" for v in base["judged@10"].to_numpy())}
        if "filled@10" in base:
            cell["filled@10"] = arr(f"{v:.2f}" for v in base["filled@10"].to_numpy())
        for n in measures:
            cell[n] = arr(f"{v:.4f}±{h:.3f}".replace("±0.", "±.") if np.isfinite(h) else f"{v:.4f}"
                          for v, h in zip(base[n].to_numpy(), base[n + " ±"].to_numpy()))
        self._formatted = (base, cell)
        return cell

    # ------------------------------------------------------------------ actions
    def action_sort_col(self, i: int) -> None:
        if self.model is None or (self.model.scores is None and self.view == "runs"):
            return
        cols = self.sort_columns()
        if i > len(cols):
            self.notify(f"there is no column {i}", severity="warning")
            return
        self.set_sort(cols[i - 1])

    def set_sort(self, key: str) -> None:
        if key == self.sort_key:
            self.descending = not self.descending
        else:
            self.sort_key = key
            self.descending = key not in ("run", "group")
        self.redraw()

    def action_next_sort(self) -> None:
        if self.model is None or (self.model.scores is None and self.view == "runs"):
            return
        cols = self.sort_columns()
        i = cols.index(self.sort_key) if self.sort_key in cols else -1
        self.sort_key = cols[(i + 1) % len(cols)]
        self.descending = self.sort_key not in ("run", "group")
        self.redraw()

    def action_reverse(self) -> None:
        if self.frame is not None:
            self.descending = not self.descending
            self.redraw()

    def action_filter(self) -> None:
        if self.model is None:
            return
        opts = [(label, (kind, value, label)) for kind, value, label in self.model.filters()]

        def done(choice) -> None:
            if choice is not None:
                kind, value, label = choice
                self.filt, self.filt_label = (kind, value), label
                self.redraw()
        current = next((v for _, v in opts if (v[0], v[1]) == self.filt), None)
        self.app.push_screen(ChoiceScreen("Show which runs?", opts, current=current), done)

    def action_choose_measures(self) -> None:
        if self.model is None:
            return
        current = list(self.app.measures)
        choices = list(dict.fromkeys(current + measure_choices()))

        def done(chosen) -> None:
            if chosen:
                self.app.set_measures(chosen)
        self.app.push_screen(ChoiceScreen("Measures (columns)", [(c, c) for c in choices], multi=True,
                                          selected=current), done)

    def action_judgments(self) -> None:
        """Choose the judgments the scores use among the campaign's sources (engine.judgments.sources)."""
        current = self.model.scores.judgments
        opts = [(f"{'● ' if spec == current else '  '}{spec}: {what}", spec)
                for spec, what in self.model.judgment_choices()]
        if len(opts) < 2:
            self.notify("this campaign has one judgment source (official); import another with "
                        "`cranfield judgments import` or run `cranfield judgments auto`", timeout=8)
        self.app.push_screen(ChoiceScreen(f"Judgments (now {current})", opts, current=current),
                             lambda spec: spec is not None and self.app.set_judgments(spec))

    def action_submit(self) -> None:
        from .intake import SubmitScreen
        self.app.push_screen(SubmitScreen())

    def action_mark(self) -> None:
        t = self.query_one("#lb", FastTable)
        if not t.row_count:
            return
        run = self._row_runs[t.cursor_row]
        if run in self.marked:
            self.marked.remove(run)
        else:
            self.marked.append(run)
        self.redraw()
        t.move_cursor(min(t.cursor_row + 1, t.row_count - 1))
        self.notify(f"{len(self.marked)} run(s) marked for fusion (u fuses them, space unmarks)", timeout=3)

    def action_fuse(self) -> None:
        """Fuse the marked runs (in leaderboard order), else the top 3 runs as listed."""
        from .intake import FuseScreen
        shown = list(self._row_runs)
        marked = [r for r in shown if r in set(self.marked)]
        if len(marked) >= 2:
            runs, why = marked, "marked"
        else:
            runs, why = shown[:3], f"top {min(3, len(shown))} by {self.sort_key}"
        if len(runs) < 2:
            self.notify("fusion needs at least two runs", severity="warning")
            return
        self.app.push_screen(FuseScreen(runs, why))

    def on_fast_table_row_selected(self, event: FastTable.RowSelected) -> None:
        if self.view == "answers" or event.cursor_row >= len(self._row_runs):
            self.notify("answer runs have no run screen: N shows the nuggets and assigns them", timeout=5)
            return
        self.open_run(self._row_runs[event.cursor_row])

    def action_open_run(self) -> None:
        t = self.query_one("#lb", FastTable)
        if t.row_count:
            self.open_run(self._row_runs[t.cursor_row])

    def open_run(self, run: str) -> None:
        from .run import RunScreen
        self.app.push_screen(RunScreen(run))

    def action_export(self) -> None:
        """The table as shown with each measure's significance letters, and the significance table itself
        (engine.campaign.tables, as `cranfield table --run ...` in the order shown: all pairs, paired t, Holm).
        The tests of every pair run in the background (progress, Escape cancels); the files are written then."""
        t = self.export_table()
        if t is None:
            self.notify("Nothing to export on this screen", severity="warning")
            return
        stem, df = t
        if self.view != "runs" or self.significance_pairs() == 0:
            self.app.export(stem, df)
            return

        runs, scores = [str(r) for r in df["run"]], self.model.scores   # as shown now, whatever happens next

        def work(progress):
            progress(0.05, f"testing {len(runs) * (len(runs) - 1) // 2} pairs of runs")
            return self.significance(runs, scores)

        self.run_job("export: significance of every pair", work, lambda res: self._write_export(stem, df, res))

    def _write_export(self, stem: str, df: pd.DataFrame, res) -> None:
        df = df.copy()
        df.insert(df.columns.get_loc("run"), "letter", [res.letters[str(r)] for r in df["run"]])
        marks = res.marks()
        for m in res.measures:
            df.insert(df.columns.get_loc(m) + 1, f"{m} mark", [marks.get((str(r), m), "") for r in df["run"]])
        paths = self.app.export(stem, df)
        if not paths:
            return
        folder = self.app.export_folder()
        try:
            sig = self.app.export_texts("leaderboard-significance", {ext: res.render(fmt) for ext, fmt in
                                                                    (("md", "markdown"), ("csv", "csv"), ("tex", "latex"))})
        except OSError as exc:
            self.notify(f"export to {folder} failed: {exc}", severity="error", timeout=20)
            return
        self.app.last_export += ", " + ", ".join(p.name for p in sig)
        self.notify(f"wrote {folder}/: " + ", ".join(p.name for p in sig) + f" ({res.legend()})",
                    title="Export", timeout=15)

    def significance_pairs(self) -> int:
        """Pairs of runs the export's significance table compares (0 below two runs)."""
        n = 0 if self.frame is None else len(self.frame)
        return n * (n - 1) // 2

    def significance(self, runs: list[str] | None = None, scores=None):
        """All pairs of `runs` (default: the runs shown), per measure of `scores` (default: the model's)
        (engine.campaign.tables.compare_scores); None below two runs."""
        if runs is None:
            runs = [] if self.frame is None else [str(r) for r in self.frame["run"]]
        if len(runs) < 2:
            return None
        from engine.campaign.tables import compare_scores
        from .compare import long_table
        s = scores if scores is not None else self.model.scores
        long = pd.concat([long_table(s, m) for m in s.measures], ignore_index=True)
        return compare_scores(long, list(s.measures), runs=runs)

    # ------------------------------------------------------------------ PPI intervals (issue 38)
    ppi = None                               # tui.model.ppi.PPIBoard of the first measure, when there is one

    def load_ppi(self) -> None:
        """The PPI intervals of the first measure (a model source on every topic, people on a sample;
        tui.model.ppi), computed in a worker of their own; the table redraws when they arrive."""
        from ..model.ppi import ppi_board
        s = self.model.scores
        if s is None or not s.measures:
            return
        root, measure, spec = self.model.root, s.measures[0], s.judgments

        def done(board) -> None:
            self.ppi = board
            if self.view == "runs":
                self.redraw()
        from ..work import start_work          # its own group: a newer computation cancels only the older one
        start_work(self, "ppi", lambda progress: ppi_board(root, measure, spec), done, group="ppi")

    def ppi_columns(self, runs: list[str]) -> list:
        """The PPI column (interval, ≠: resolved from the run above), or none."""
        b = self.ppi
        if b is None:
            return []
        return [("ppi", b.header(), [b.cell(r, runs[i - 1] if i else None) for i, r in enumerate(runs)])]

    def export_table(self):
        if self.frame is None:
            return None
        if self.view == "answers":
            df = self.frame.copy()
            df.insert(0, "position", np.arange(1, len(df) + 1))
            return "leaderboard-answers", df
        df = self.frame.drop(columns=["same_as_above"]).copy()
        df.insert(0, "position", np.arange(1, len(df) + 1))
        return "leaderboard", df
