"""Running the campaign from the TUI: submit a run file (engine.campaign.intake, as `cranfield submit`) and fuse
runs into one (engine.pooling.rank_fusion, as `cranfield fuse`). Both go through the TUI model; both are small modal
screens that Escape closes."""
from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Checkbox, Input, OptionList, Static
from textual.widgets.option_list import Option

from engine.util.names import shown

from ..widgets.cells import literal
from ..work import start_work
from .choice import PlainOptionList

FUSION_HELP = {"rrf": "reciprocal rank fusion, sum 1/(60 + rank)",
               "combsum": "sum of min-max normalized scores",
               "combmnz": "CombSUM times the number of runs retrieving the document"}


CLOSE = Binding("escape", "cancel", "Close")


class SubmitScreen(ModalScreen):
    """Submit a run file: the intake checks it against the campaign; refused with every problem as
    file:line, or accepted (copied into runs/, metadata in campaign.yaml) and the campaign reloaded."""

    BINDINGS = [CLOSE]

    def __init__(self, path: str = "", *, manual: bool = False, pooled: bool = True):
        super().__init__()
        self.path = path
        self.manual, self.pooled = manual, pooled   # a fused run: manual when one of its runs is, never pooled
        self.result = None           # the model's Intake of the last submission

    def compose(self) -> ComposeResult:
        with Vertical(id="intake-box"):
            yield Static("[b]Submit a run[/b]  (enter submits, tab moves, escape closes)")
            yield Input(value=self.path, placeholder="run file path", id="submit-path", select_on_focus=False)
            with Horizontal(classes="intake-row"):
                yield Input(placeholder="group (default: run tag)", id="submit-group")
                yield Checkbox("manual run", self.manual, id="submit-manual")
            with VerticalScroll(id="intake-report"):
                yield Static("", id="submit-report")

    def on_mount(self) -> None:
        self.query_one("#submit-path", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.submit()

    def submit(self) -> None:
        model = self.app.model
        path = self.query_one("#submit-path", Input).value.strip()
        if model is None:
            self.show(["the campaign is not loaded yet"], False)
            return
        if not path:
            self.show(["type the path of a run file (topic Q0 doc rank score tag)"], False)
            return
        group = self.query_one("#submit-group", Input).value.strip() or None
        manual = self.query_one("#submit-manual", Checkbox).value
        p = str(Path(path).expanduser())
        self.show([f"checking {p} …"], None)
        pooled = self.pooled
        start_work(self, "submit", lambda _progress: model.submit_runs([p], group=group, manual=manual,
                                                                       pooled=pooled),
                   self.finished, group="modal")

    def action_cancel(self) -> None:
        """Escape closes (work still running is cancelled with the screen)."""
        self.dismiss(None)

    def finished(self, result) -> None:
        self.result = result
        if result.accepted:
            self.show(result.lines + ["", "the leaderboard is reloading with the new run; escape closes"], True)
            self.app.notify(f"accepted run {literal(', '.join(result.tags))}; reloading",
                            title="Submit")
            self.app.action_reload()
        else:
            self.show(["refused (nothing copied):"] + result.lines, False)
            self.query_one("#submit-path", Input).focus()     # fix the path (or the file) and submit again

    def show(self, lines: list[str], ok: bool | None) -> None:
        style = {True: "green", False: "red", None: ""}[ok]
        text = Text()
        for i, ln in enumerate(lines):
            text.append(("\n" if i else "") + shown(ln, "\n\t"), style=style if i == 0 else "")
        self.query_one("#submit-report", Static).update(text)


class FuseScreen(ModalScreen):
    """Fuse runs into one with a method the engine offers; the fused run is written to the export folder
    (its full path is shown) and can then be submitted (s)."""

    BINDINGS = [CLOSE, Binding("s", "submit_fused", "Submit the fused run")]

    def __init__(self, runs: list[str], why: str):
        super().__init__()
        self.runs, self.why = list(runs), why
        self.path: Path | None = None     # the fused run written

    def compose(self) -> ComposeResult:
        methods = self.app.model.fusion_methods() if self.app.model is not None else ()
        methods = sorted(methods, key=lambda m: m != "rrf")          # RRF first: the usual choice
        with Vertical(id="intake-box"):
            yield Static(Text.assemble(("Fuse ", "bold"), (f"{len(self.runs)} runs", "bold"), f" ({shown(self.why)}): ",
                                       ", ".join(shown(r) for r in self.runs),
                                       "\nenter fuses with the method, escape closes"))
            yield PlainOptionList(*[Option(f"{m:<8} {FUSION_HELP.get(m, '')}", id=m) for m in methods], id="fuse-method")
            yield Input(placeholder="run tag (default fused-METHOD)", id="fuse-tag")
            with VerticalScroll(id="intake-report"):
                yield Static("", id="fuse-report")

    def on_mount(self) -> None:
        self.query_one("#fuse-method", OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.fuse(str(event.option.id))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        ol = self.query_one("#fuse-method", OptionList)
        if ol.highlighted is not None:
            self.fuse(str(ol.get_option_at_index(ol.highlighted).id))

    def fuse(self, method: str) -> None:
        model = self.app.model
        if model is None:
            return
        tag = self.query_one("#fuse-tag", Input).value.strip() or None
        folder = self.app.export_folder()
        report = self.query_one("#fuse-report", Static)
        report.update(f"fusing {len(self.runs)} runs with {method} …")
        start_work(self, "fuse", lambda _progress: model.fuse_runs(self.runs, method, folder, tag=tag),
                   self.finished, group="modal")

    def action_cancel(self) -> None:
        """Escape closes (work still running is cancelled with the screen)."""
        self.dismiss(None)

    def finished(self, result) -> None:
        self.path, summary = result
        self.query_one("#fuse-report", Static).update(Text(shown(summary, "\n") + "\ns submits it to the campaign, "
                                                                     "escape closes"))
        self.query_one("#fuse-method", OptionList).focus()
        self.app.notify(literal(summary), title="Fusion", timeout=15)

    def action_submit_fused(self) -> None:
        if self.path is None:
            self.notify("fuse first: pick a method and press enter", severity="warning")
            return
        model = self.app.model
        manual = model is not None and any(str(model.run_meta.at[r, "type"]) == "manual"
                                           for r in self.runs if r in model.run_meta.index)
        self.app.push_screen(SubmitScreen(str(self.path), manual=manual, pooled=False))
