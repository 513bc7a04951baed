"""Nugget screens for RAG campaigns (docs/rag.md): the Nuggets screen (a topic's nuggets with importance,
provenance and assignment progress; add, reword, importance, retire) and the Assign screen (one answer
with its citations, one nugget at a time; s / p / n record support / partial / not, u undoes, c shows the
cited passages). A small app of its own (`cranfield nuggets tui DIR`) over engine.nuggets; every write
goes to the append-only stores the command line uses, so the same numbers come out everywhere."""
from __future__ import annotations

from engine.util.names import natural_key

import time
from pathlib import Path

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from engine.errors import CranfieldError

from .widgets.cells import literal, plain

LABEL_KEYS = {"s": "support", "p": "partial_support", "n": "not_support"}
SHORT = {"support": "S", "partial_support": "P", "not_support": "N"}


def esc(text: object) -> str:
    """Text (an id, a nugget, a passage) for markup, shown as it is (tui.widgets.cells.literal)."""
    return literal(text)


class NuggetData:
    """What the screens show, read from the campaign's stores (re-read after every write)."""

    def __init__(self, root: Path, source: str, assessor: str):
        from engine.nuggets.campaign import campaign_answers
        from engine.nuggets.store import current_nuggets
        self.root, self.source, self.assessor = root, source, assessor
        self.answers = campaign_answers(root)
        nug = current_nuggets(root)
        tt = sorted({a.topic for a in self.answers} | set(nug["topic"]), key=natural_key)
        self.topics = tt
        self.reload()

    def reload(self) -> None:
        from engine.nuggets.store import current_nuggets, read_assignments
        self.nuggets = current_nuggets(self.root)
        a = read_assignments(self.root, self.source)
        self.labels = {(r, t, n): lab for r, t, n, lab in zip(a["run"], a["topic"], a["nugget"], a["label"])}

    def topic_nuggets(self, topic: str):
        return self.nuggets[self.nuggets["topic"] == topic].reset_index(drop=True)

    def topic_answers(self, topic: str) -> list:
        return [a for a in self.answers if a.topic == topic]

    def progress(self, topic: str) -> tuple[int, int]:
        nug = list(self.topic_nuggets(topic)["nugget"])
        ans = self.topic_answers(topic)
        done = sum((a.run, topic, n) in self.labels for a in ans for n in nug)
        return done, len(nug) * len(ans)


def _changed(app) -> None:
    """Tell the main app (tui.app.CranfieldApp) the stores changed, so its screens redraw now."""
    hook = getattr(app, "campaign_changed", None)
    if hook is not None:
        hook()


class NuggetsScreen(Screen):
    """A topic's nuggets: importance, provenance, edits; add, reword, importance, retire; enter assigns."""

    BINDINGS = [
        Binding("left_square_bracket", "topic(-1)", "Topic", key_display="["),
        Binding("right_square_bracket", "topic(1)", "Topic", key_display="]"),
        Binding("a", "add", "Add"),
        Binding("r", "reword", "Reword"),
        Binding("i", "importance", "Vital/okay"),
        Binding("d", "retire", "Retire"),
        Binding("v", "passages", "Passages"),
        Binding("enter", "assign", "Assign", key_display="⏎"),
        Binding("escape", "cancel_input", "Cancel", show=False),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, data: NuggetData | None):
        super().__init__()
        self.data = data                       # None until the main app has a RAG campaign to show
        self.t = 0
        self.editing: str | None = None        # "add" or "reword" while the input is shown

    def compose(self) -> ComposeResult:
        yield Header()
        yield from self.body()
        yield Footer()

    def body(self) -> ComposeResult:
        """The title, the nugget table, the selected nugget's text and the (hidden) text input."""
        yield Static("", id="nug-title", classes="title")
        yield DataTable(id="nug-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="nug-text", classes="status")
        yield Input(placeholder="nugget text, enter to save, escape to cancel", id="nug-input")

    def on_mount(self) -> None:
        t = self.query_one(DataTable)
        t.add_columns("id", "imp", "provenance", "ed", "nugget")
        self.query_one(Input).display = False
        self.show()

    @property
    def topic(self) -> str | None:
        return self.data.topics[self.t] if self.data is not None and self.data.topics else None

    def selected(self) -> str | None:
        nug = self.data.topic_nuggets(self.topic) if self.topic else None
        if nug is None or not len(nug):
            return None
        row = min(self.query_one(DataTable).cursor_row, len(nug) - 1)
        return str(nug["nugget"].iat[row])

    def show(self) -> None:
        title = self.query_one("#nug-title", Static)
        table = self.query_one(DataTable)
        if self.topic is None:
            title.update("No topics: the campaign has no answer runs (answers/) and no nuggets.")
            return
        row = table.cursor_row
        table.clear()
        nug = self.data.topic_nuggets(self.topic)
        for r in nug.itertuples(index=False):
            table.add_row(plain(r.nugget), "VITAL" if r.importance == "vital" else "okay", plain(r.provenance),
                          str(r.edits), plain(r.text if len(r.text) <= 44 else r.text[:43] + "…"))
        if len(nug):
            table.move_cursor(row=min(row, len(nug) - 1))
        done, total = self.data.progress(self.topic)
        n_v = int((nug["importance"] == "vital").sum()) if len(nug) else 0
        title.update(f"[b]Topic {esc(self.topic)}[/b] ({self.t + 1}/{len(self.data.topics)}) · {len(nug)} "
                     f"nuggets, {n_v} vital · assigned {done}/{total} ({self.data.source}) · ⏎ assign")
        self.show_text()

    def show_text(self) -> None:
        nid = self.selected()
        text = self.query_one("#nug-text", Static)
        if nid is None:
            text.update("No nuggets yet: a adds one (enter on this screen assigns them).")
            return
        nug = self.data.topic_nuggets(self.topic).set_index("nugget").loc[nid]
        who = f" · model {nug['model']}" if nug["model"] else ""
        text.update(f"{esc(nid)}: {esc(nug['text'])}\n[dim]{esc(nug['provenance'])}{esc(who)} · made by "
                    f"{esc(str(nug['created_by'] or '-'))}[/dim]")

    def on_data_table_row_highlighted(self, event) -> None:
        self.show_text()

    def on_data_table_row_selected(self, event) -> None:
        self.action_assign()                  # enter on the table (the table takes the key first)

    def _write(self, fn) -> None:
        try:
            fn()
        except CranfieldError as exc:
            self.notify(str(exc), severity="error", timeout=6)
        self.data.reload()
        self.show()
        _changed(self.app)

    def action_topic(self, step: int) -> None:
        if self.topic is not None:
            self.t = (self.t + step) % len(self.data.topics)
            self.query_one(DataTable).move_cursor(row=0)
            self.show()

    def _open_input(self, mode: str, value: str = "") -> None:
        if self.topic is None:
            return
        self.editing = mode
        box = self.query_one(Input)
        box.value = value
        box.display = True
        box.focus()

    def action_add(self) -> None:
        self._open_input("add")

    def action_reword(self) -> None:
        nid = self.selected()
        if nid is None:
            self.notify("no nugget to reword", severity="warning")
            return
        self._open_input("reword", str(self.data.topic_nuggets(self.topic).set_index("nugget").loc[nid, "text"]))

    def action_cancel_input(self) -> None:
        self.editing = None
        box = self.query_one(Input)
        box.display = False
        self.query_one(DataTable).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        from engine.nuggets.store import add_nuggets, edit_nugget
        mode, text = self.editing, event.value
        self.action_cancel_input()
        if mode == "add":
            self._write(lambda: add_nuggets(self.data.root, self.topic, [(text, "okay")], by=self.data.assessor))
        elif mode == "reword":
            nid = self.selected()
            self._write(lambda: edit_nugget(self.data.root, self.topic, nid, text=text, by=self.data.assessor))

    def action_importance(self) -> None:
        from engine.nuggets.store import edit_nugget
        nid = self.selected()
        if nid is None:
            return
        cur = self.data.topic_nuggets(self.topic).set_index("nugget").loc[nid, "importance"]
        self._write(lambda: edit_nugget(self.data.root, self.topic, nid,
                                        importance="okay" if cur == "vital" else "vital", by=self.data.assessor))

    def action_retire(self) -> None:
        from engine.nuggets.store import retire_nugget
        nid = self.selected()
        if nid is not None:
            self._write(lambda: retire_nugget(self.data.root, self.topic, nid, by=self.data.assessor))

    def action_assign(self) -> None:
        if self.topic is None:
            return
        if not len(self.data.topic_nuggets(self.topic)) or not self.data.topic_answers(self.topic):
            self.notify("this topic needs nuggets and answers to assign", severity="warning")
            return
        self.app.push_screen(self.assign_screen(self.data, self.topic), lambda _: self.show())

    def assign_screen(self, data: NuggetData, topic: str) -> Screen:
        """The Assign screen enter opens (the main app's own subclass there)."""
        return AssignScreen(data, topic)

    def action_passages(self) -> None:
        if self.topic is not None:
            self.app.push_screen(PassagesScreen(self.data, self.topic))

    def action_quit(self) -> None:
        self.app.exit()


class PassagesScreen(Screen):
    """The passages the answer runs cite for a topic (the material nuggets are made from)."""

    BINDINGS = [Binding("escape", "back", "Back", key_display="esc")]

    def __init__(self, data: NuggetData, topic: str):
        super().__init__()
        self.data, self.topic = data, topic

    def compose(self) -> ComposeResult:
        from engine.judging.auto import read_docs
        docs = read_docs(self.data.root)
        ids: list[str] = []
        for a in self.data.topic_answers(self.topic):
            for s in a.sentences:
                for c in s.citations:
                    if a.references[c] not in ids:
                        ids.append(a.references[c])
        lines = [f"[b]{esc(d)}[/b] {esc(str(docs.get(d, {}).get('text', '(no text in docs/docs.jsonl)')))}"
                 for d in ids] or ["No passage is cited for this topic."]
        yield Header()
        yield Static(f"[b]Topic {esc(self.topic)}[/b] · {len(ids)} cited passage(s)", classes="title")
        with VerticalScroll(id="as-body"):
            yield Static("\n\n".join(lines))
        yield Footer()

    def action_back(self) -> None:
        self.dismiss(None)


class AssignScreen(Screen):
    """One answer and one nugget at a time: s / p / n record, u undoes, c shows the cited passages."""

    BINDINGS = [
        Binding("s", "label('s')", "Support"),
        Binding("p", "label('p')", "Partial"),
        Binding("n", "label('n')", "Not"),
        Binding("u", "undo", "Undo"),
        Binding("c", "cited", "Cited"),
        Binding("left", "nugget(-1)", "Nugget", key_display="←"),
        Binding("right", "nugget(1)", "Nugget", key_display="→"),
        Binding("comma", "answer(-1)", "Answer", key_display=","),
        Binding("full_stop", "answer(1)", "Answer", key_display="."),
        Binding("escape", "back", "Back", key_display="esc"),
    ]

    def __init__(self, data: NuggetData, topic: str):
        super().__init__()
        self.data, self.topic = data, topic
        self.a = 0
        self.k = 0
        self.show_cited = False
        self.undo_stack: list[tuple[int, int]] = []
        self.shown_at = time.monotonic()
        from engine.judging.auto import read_docs
        self.docs = read_docs(data.root)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="as-title", classes="title")
        yield Static("", id="as-nugget", classes="status")
        with VerticalScroll(id="as-body"):
            yield Static("", id="as-answer")
        yield Footer()

    def on_mount(self) -> None:
        self.show()

    def current(self):
        ans = self.data.topic_answers(self.topic)
        nug = self.data.topic_nuggets(self.topic)
        return ans, nug

    def show(self) -> None:
        ans, nug = self.current()
        if not len(nug) or not ans:
            self.query_one("#as-title", Static).update("Nothing to assign (no nuggets or no answers).")
            return
        self.a = min(self.a, len(ans) - 1)
        self.k = min(self.k, len(nug) - 1)
        a, row = ans[self.a], nug.iloc[self.k]
        done, total = self.data.progress(self.topic)
        have = self.data.labels.get((a.run, self.topic, row["nugget"]))
        self.query_one("#as-title", Static).update(
            f"[b]Topic {esc(self.topic)}[/b] · answer {self.a + 1}/{len(ans)} run {esc(a.run)} · nugget "
            f"{self.k + 1}/{len(nug)} · done {done}/{total}")
        state = f"now: [b]{esc(have)}[/b]" if have else "not assigned yet"
        imp = "VITAL" if row["importance"] == "vital" else "okay"
        self.query_one("#as-nugget", Static).update(
            f"[b]{esc(row['nugget'])} ({imp})[/b] {esc(row['text'])}\n{state} · s support, p partial, n not")
        lines = []
        for i, s in enumerate(a.sentences):
            cites = "".join(f" [{c + 1}]" for c in s.citations)
            lines.append(f"{i + 1}. {esc(s.text)}{esc(cites)}")
        if self.show_cited:
            lines.append("")
            lines.append("[b]Cited passages[/b] (c hides)")
            for j, d in enumerate(a.references):
                doc = self.docs.get(d, {})
                lines.append(f"[{j + 1}] {esc(d)}: {esc(str(doc.get('text', '(no text in docs/docs.jsonl)')))}")
        elif a.references:
            lines.append(f"\n[dim]{len(a.references)} cited passage(s): c shows them[/dim]")
        self.query_one("#as-answer", Static).update("\n".join(lines))
        if self.show_cited:
            self.query_one("#as-body").scroll_end(animate=False)
        self.shown_at = time.monotonic()

    def action_label(self, key: str) -> None:
        from engine.nuggets.store import assign
        ans, nug = self.current()
        if not len(nug) or not ans:
            return
        a, nid = ans[self.a], str(nug["nugget"].iat[self.k])
        secs = round(time.monotonic() - self.shown_at, 2)
        try:
            assign(self.data.root, self.data.source, [(a.run, self.topic, nid, LABEL_KEYS[key])],
                   assessor=self.data.assessor, seconds=secs)
        except CranfieldError as exc:
            self.notify(str(exc), severity="error", timeout=6)
            return
        self.undo_stack.append((self.a, self.k))
        self.data.reload()
        if self.k + 1 < len(nug):
            self.k += 1
        elif self.a + 1 < len(ans):
            self.a, self.k = self.a + 1, 0
        else:
            self.notify("last answer and nugget of the topic assigned")
        self.show()
        _changed(self.app)

    def action_undo(self) -> None:
        from engine.nuggets.store import undo_assign
        if not self.undo_stack:
            self.notify("nothing to undo in this session", severity="warning")
            return
        ans, nug = self.current()
        a_i, k_i = self.undo_stack.pop()
        if a_i >= len(ans) or k_i >= len(nug):
            return
        try:
            undo_assign(self.data.root, self.data.source, ans[a_i].run, self.topic, str(nug["nugget"].iat[k_i]),
                        assessor=self.data.assessor)
        except CranfieldError as exc:
            self.notify(str(exc), severity="error", timeout=6)
            return
        self.a, self.k = a_i, k_i
        self.data.reload()
        self.show()
        _changed(self.app)

    def action_cited(self) -> None:
        self.show_cited = not self.show_cited
        self.show()

    def action_nugget(self, step: int) -> None:
        _, nug = self.current()
        if len(nug):
            self.k = (self.k + step) % len(nug)
            self.show()

    def action_answer(self, step: int) -> None:
        ans, _ = self.current()
        if ans:
            self.a = (self.a + step) % len(ans)
            self.show()

    def action_back(self) -> None:
        self.dismiss(None)


class NuggetsApp(App):
    """The nugget screens over one RAG campaign."""

    TITLE = "Cranfield nuggets"
    ENABLE_COMMAND_PALETTE = False          # every action has its key (shown in the footer)
    CSS = """
    Screen { layout: vertical; }
    .title { height: auto; padding: 0 1; background: $boost; }
    .status { height: auto; padding: 0 1; }
    #nug-table { height: 1fr; }
    #as-body { height: 1fr; border: round $foreground 30%; padding: 0 1; }
    """

    def __init__(self, root, source: str = "human", assessor: str = ""):
        super().__init__()
        self.data = NuggetData(Path(root), source, assessor)

    def on_mount(self) -> None:
        self.push_screen(NuggetsScreen(self.data))
