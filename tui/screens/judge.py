"""Judging: the next document of a topic under the campaign's strategy, graded with number keys."""
from __future__ import annotations

import time

import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Header, Input, Static

from ..model import CampaignModel, CranfieldError
from ..widgets.cells import plural
from ..widgets.hints import Hints, key_hint
from .base import CranfieldScreen, Unavailable, nav_bar
from .choice import ChoiceScreen


def _engine_missing() -> str | None:
    return CampaignModel.engine_missing("judging")


class TextPrompt(ModalScreen):
    """One line of free text (Enter keeps it, Escape cancels)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str = ""):
        super().__init__()
        self.title_text, self.value = title, value

    def compose(self) -> ComposeResult:
        with Vertical(id="choice-box"):
            yield Static(f"[b]{Text(self.title_text).markup}[/b]  (enter keeps, escape cancels)")
            yield Input(value=self.value, id="prompt-input")

    def on_mount(self) -> None:
        self.query_one("#prompt-input", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class JudgeScreen(CranfieldScreen):
    NEEDS_SCORES = False
    NEEDS_RUNS = True
    WATCH = ("pools", "sources", "config")   # a new pool or automatic labels: the next document comes from them
    TITLE = "Judging"
    MODE = "judge"
    HELP = """Judge the next document of a topic. The document comes from the newest pool in pools/ (written by
the pool builder), else from the campaign's pool strategy and depth (campaign.yaml `pool:`); online
strategies (mtf, hedge, mtc) pick after each judgment. The topic statement (title, description,
narrative from topics/) and the guidelines (campaign.yaml judging.guidelines) are shown beside the
document (i hides them). Number keys grade (the campaign's relevance scale); when an automatic label
exists (judging.auto_source, else the first automatic source) it is shown and Enter accepts it, a number
changes it (both logged with the label's source). s skips (for this session), x marks the document as
one you cannot judge (with a reason), r adds a rationale to the next judgment, o switches random order
(against position bias), u undoes your last judgment, t picks another topic. Each document is leased to
you (judgments/leases.jsonl) so another assessor on the same topic gets a different one, unless it is
double judged (judging.double_fraction); a lease is released on skip and expires after
judging.lease_seconds. Each action is appended to judgments/log.jsonl with your name and the seconds it
took. The title line shows how many documents of the active pool are left. ctrl+r re-evaluates."""
    BINDINGS = [Binding(str(g), f"grade({g})", f"Grade {g}", show=False) for g in range(10)] + [
        Binding("enter", "accept", "Accept label", show=False),
        Binding("s", "skip", "Skip"),
        Binding("x", "cannot_judge", "Cannot judge"),
        Binding("r", "rationale", "Rationale"),
        Binding("o", "toggle_order", "Random order", show=False),
        Binding("i", "toggle_side", "Topic panel", show=False),
        Binding("u", "undo", "Undo"),
        Binding("t", "choose_topic", "Topic"),
    ]

    def __init__(self):
        super().__init__()
        self.topic: str | None = None
        self.doc: str | None = None
        self.shown_at = 0.0
        self.skipped: set[tuple[str, str]] = set()
        self.history: list[dict] = []
        self.pool_table: pd.DataFrame | None = None
        self.strategy = "depth"
        self.depth = 100
        self.pool_name = ""
        self.jcfg: dict = {}
        self.random_order = False
        self.auto: dict[tuple[str, str], int] = {}
        self.auto_source: str | None = None
        self.rationale = ""
        self.cannot: set[tuple[str, str]] = set()
        self.progress: pd.DataFrame | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        err = _engine_missing()
        if err is not None:
            yield Unavailable("Judging", "engine.judging.workflow", err)
        else:
            yield Static("", id="judge-title", classes="title")
            yield Static("", id="judge-info")
            with Horizontal(id="judge-body"):
                with VerticalScroll(id="judge-doc"):
                    yield Static("", id="judge-text")
                with VerticalScroll(id="judge-side"):
                    yield Static("", id="judge-topic")
                    yield Static("", id="judge-guidelines")
            yield Static("", id="judge-keys", classes="status")
        yield nav_bar(self)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sync()

    def on_unmount(self) -> None:
        """Leaving the app: give the document on screen back to the other assessors."""
        if _engine_missing() is None and self.model is not None and not getattr(self.app, "keep_leases", False):
            self.release()

    # ------------------------------------------------------------------ state
    def scale(self) -> dict[int, str]:
        """Grade -> label (the campaign's accessor, relevance.scale)."""
        sc = self.model.o.engine_campaign.scale()
        return {int(g): str((v or {}).get("label", g)) for g, v in sc.items()}

    def refresh_data(self) -> None:
        if _engine_missing() is not None:
            return
        m = self.model
        desk = m.judging
        cfg = m.config.get("pool") or {}
        self.strategy = str(cfg.get("strategy") or "depth")
        self.depth = int(cfg.get("depth") or 100)
        self.pool_table = None
        try:
            self.jcfg = desk.config()
        except CranfieldError as exc:
            self.app.report_error(exc)
            self.jcfg = desk.config(fallback=True)
        self.random_order = self.jcfg["random_order"] if not hasattr(self, "_order_set") else self.random_order
        name, pt = desk.active_pool()
        if pt is not None and len(pt):
            self.pool_table = pt
            self.strategy = f"{pt['method'].iat[0]}"
            self.pool_name = name
            frac = desk.pool_double_fraction(name)
            if frac is not None:          # the pool builder's double-judging share
                self.jcfg["double_fraction"] = frac
        self.load_auto_labels()
        self.cannot = self.my_cannot_judge()
        self.release()                       # the document on screen goes back; the next one is chosen anew
        if self.topic is None:
            open_topic = self.first_open_topic()
            self.topic = open_topic if open_topic is not None else self.first_topic()
            self.next_doc(advance=False)     # the topics were just searched
        else:
            self.next_doc()

    def first_topic(self) -> str | None:
        topics = list(self.model.pool_progress()["topic"])
        return topics[0] if topics else None

    def load_auto_labels(self) -> None:
        """The automatic labels shown for post-editing: judging.auto_source, else the first automatic source."""
        self.auto, self.auto_source = {}, None
        try:
            self.auto, self.auto_source = self.model.judging.auto_labels(self.jcfg.get("auto_source"))
        except CranfieldError as exc:
            self.app.report_error(exc)

    def log_entries(self) -> pd.DataFrame | None:
        return self.model.judging.log()

    def my_cannot_judge(self) -> set[tuple[str, str]]:
        log = self.log_entries()
        if log is None or not len(log):
            return set()
        c = log[(log["op"] == "cannot_judge") & (log["assessor"] == self.app.assessor)]
        return set(zip(c["topic"].astype(str), c["doc"].astype(str)))

    def judged(self) -> pd.DataFrame:
        """Imported judgments plus the log as it is now (other assessors included)."""
        return self.model.judging.judged()

    def judged_by(self) -> dict:
        """(topic, doc) -> assessors whose judgment stands in the log ('' for imported judgments)."""
        return self.model.judging.judged_by()

    def candidates(self, topic: str, k: int, judged: pd.DataFrame | None = None) -> list[str]:
        if self.pool_table is not None:
            pt = self.pool_table[self.pool_table["topic"] == topic].sort_values("order", kind="mergesort")
            return list(dict.fromkeys(pt["doc"].astype(str)))
        return self.model.judging.next_documents(topic, self.strategy, k=k, depth=self.depth, judged=judged)

    def open_documents(self, topic: str, k: int = 1, by: dict | None = None,
                       judged: pd.DataFrame | None = None) -> list[str]:
        """The topic's documents this assessor could judge now, in presentation order (before leases);
        `by`, `judged`: judged_by() and judged() when the caller has them."""
        desk = self.model.judging
        by = self.judged_by() if by is None else by
        frac = self.jcfg.get("double_fraction", 0.0)
        out = []
        for d in self.candidates(topic, k, judged):
            key = (topic, d)
            if key in self.skipped or key in self.cannot:
                continue
            who = by.get(key, set())
            if self.app.assessor in who:
                continue
            second = desk.is_double(topic, d, frac) and "" not in who and len(who) < 2
            if who and not second:
                continue
            out.append(d)
        return desk.order_documents(out, topic, self.app.assessor, self.random_order)

    def first_open_topic(self) -> str | None:
        """The first topic with a document this assessor could judge now; None when there is none."""
        topics = list(self.model.pool_progress()["topic"])
        by = self.judged_by()
        per_topic: dict = {}
        left = None
        if self.pool_table is None:         # the log read once, split by topic once
            judged = self.judged()
            per_topic = {str(t): g for t, g in judged.groupby(judged["topic"].astype(str), sort=False)}
            none = judged.iloc[:0]
            try:                            # topics whose pool has nothing unjudged are passed over at once
                left = self.model.judging.topics_left(self.strategy, self.depth, judged)
            except CranfieldError:
                left = None
        for t in topics:
            if left is not None and str(t) not in left:
                continue
            try:
                if self.open_documents(t, 1, by, per_topic.get(str(t), none) if self.pool_table is None else None):
                    return t
            except CranfieldError:
                continue
        return None

    def next_doc(self, advance: bool = True) -> None:
        """Show the topic's next document; when the topic has none left (and `advance`), the first topic
        with work left."""
        self._next_doc()
        if self.doc is None and advance and self.topic is not None:
            topic = self.first_open_topic()
            if topic is not None and topic != self.topic:
                done = self.topic
                self.topic = topic
                self._next_doc()
                if self.doc is not None:
                    self.notify(f"topic {done}: nothing left to judge; on to topic {topic}", timeout=4)

    def _next_doc(self) -> None:
        desk = self.model.judging
        self.doc = None
        if self.topic is not None:
            try:
                k = 1 + sum(1 for t, _ in self.skipped if t == self.topic) + len(self.cannot)
                docs = self.open_documents(self.topic, k)
                if docs:
                    try:
                        self.doc = desk.acquire(self.topic, docs, self.app.assessor, judged_by=self.judged_by(),
                                                double=self.double_set(docs),
                                                seconds=desk.lease_seconds(self.jcfg))
                    except OSError as exc:   # a read-only campaign: judge without leases
                        self.doc = docs[0]
                        self.notify(f"no document lease ({exc.strerror or exc}): another assessor may get the "
                                    f"same document", severity="warning")
            except CranfieldError as exc:
                self.app.report_error(exc)
        self.shown_at = time.monotonic()
        self.draw()

    def double_set(self, docs: list[str]) -> set:
        frac = self.jcfg.get("double_fraction", 0.0)
        return {(self.topic, d) for d in docs if self.model.judging.is_double(self.topic, d, frac)}

    def release(self, judged: bool = False) -> None:
        if self.doc is not None and self.topic is not None:
            try:
                self.model.judging.release(self.topic, self.doc, self.app.assessor, judged)
            except OSError as exc:
                self.app.report_error(exc)

    def draw(self) -> None:
        m = self.model
        topic = self.topic
        tt = m.topics
        trow = tt[tt["topic"].astype(str) == str(topic)] if topic is not None and len(tt) else tt.iloc[0:0]
        title = str(trow["title"].iat[0]) if len(trow) else ""
        judged = self.judged()
        n_j = int((judged["topic"] == topic).sum()) if topic else 0
        if self.pool_table is not None:
            pp = m.judging.pool_progress(self.pool_table, judged)
            self.progress = pp
            row = pp[pp["topic"] == str(topic)]
            left_t = int(row["left"].iat[0]) if len(row) else 0
            src = f"pool {self.pool_name}: {left_t} left in topic, {int(pp['left'].iat[-1])} left overall"
        else:
            src = f"strategy {self.strategy}, depth {self.depth}"
        order = " · random order" if self.random_order else ""
        self.query_one("#judge-title", Static).update(Text.from_markup(
            f"[b]Topic {topic}[/b] {Text(title).markup} · {n_j} judged · {Text(src).markup}{order} · "
            f"assessor {Text(self.app.assessor).markup}"))
        side = []
        if len(trow):
            for col, lab in (("title", "Title"), ("description", "Description"), ("narrative", "Narrative")):
                v = str(trow[col].iat[0]) if col in trow else ""
                if v and v != "nan":
                    side.append(Text.from_markup(f"[b]{lab}[/b]\n") + Text(v + "\n\n"))
        topic_text = Text("")
        for part in side:
            topic_text += part
        self.query_one("#judge-topic", Static).update(topic_text if side else Text("(no topic statement in topics/)",
                                                                                   style="dim"))
        try:
            gl = m.judging.guidelines()
        except CranfieldError as exc:
            gl = str(exc)
        self.query_one("#judge-guidelines", Static).update(
            Text.from_markup("[b]Guidelines[/b]\n") + Text(gl) if gl else Text(""))
        info = self.query_one("#judge-info", Static)
        text = self.query_one("#judge-text", Static)
        if self.doc is None:
            info.update("Nothing left to judge for this topic under this strategy.")
            text.update("Press t for another topic, or build a deeper or larger pool on the pool screen (p).")
        else:
            tr = m.topic_runs(topic)
            r = tr[(tr["topic"] == topic) & (tr["doc"] == self.doc)]
            best = int(r["rank"].min()) if len(r) else 0
            src_doc = m.pool_sources(topic).get(self.doc, "") if self.pool_table is None else ""
            if self.pool_table is not None:
                pr = self.pool_table[(self.pool_table["topic"] == topic) & (self.pool_table["doc"] == self.doc)]
                if len(pr):
                    src_doc = f"{pr['method'].iat[0]}/s{pr['stratum'].iat[0]} p={float(pr['prob'].iat[0]):.3g}"
            auto = self.auto.get((str(topic), str(self.doc)))
            auto_txt = ""
            if auto is not None:
                lab = self.scale().get(auto, str(auto))
                auto_txt = (f"\nautomatic label [b]{auto}[/b] {Text(lab).markup} ({Text(self.auto_source or '').markup})"
                            f" · [b]Enter[/b] accepts, a number changes it")
            info.update(Text.from_markup(
                f"document [b]{self.doc}[/b] · retrieved by {plural(r['run'].nunique(), 'run')}, best rank {best}"
                + (f" · {src_doc}" if src_doc else "") + auto_txt
                + (f"\nrationale: {Text(self.rationale).markup}" if self.rationale else "")))
            d = m.docs().get(self.doc)
            if d:
                text.update(Text.from_markup(f"[b]{Text(str(d.get('title', ''))).markup}[/b]\n\n")
                            + Text(str(d.get("text", ""))))
            else:
                text.update(Text(f"(no text: the campaign has no docs/ store entry for {self.doc})", style="dim"))
        hints = [key_hint(str(g), lab) for g, lab in sorted(self.scale().items())]
        hints += [key_hint(k, lab) for k, lab in (("s", "skip"), ("x", "cannot judge"), ("r", "rationale"),
                                                  ("u", "undo"), ("t", "topic"))]
        if self.history:
            h = self.history[-1]
            hints.append(Text(f"· last: {h['doc']}={h['grade']} in {h['seconds']:.1f}s"))
        self.query_one("#judge-keys", Static).update(Hints(hints))   # a line breaks between hints only

    # ------------------------------------------------------------------ actions
    def action_grade(self, g: int, accepted: bool = False) -> None:
        if _engine_missing() is not None or self.doc is None:
            return
        if g not in self.scale():
            self.notify(f"grade {g} is not on this campaign's scale ({', '.join(map(str, sorted(self.scale())))})",
                        severity="warning")
            return
        secs = round(time.monotonic() - self.shown_at, 2)
        auto = self.auto.get((str(self.topic), str(self.doc)))
        action = "judge" if auto is None else ("accept" if accepted else "change")
        try:
            self.model.judging.record(self.topic, self.doc, g, self.app.assessor, secs, self.strategy,
                                      action=action, auto_grade=auto, auto_source=self.auto_source if auto is not None
                                      else None, rationale=self.rationale or None)
        except Exception as exc:
            self.app.report_error(exc)
            return
        self.release(judged=True)
        self.history.append({"topic": self.topic, "doc": self.doc, "grade": g, "seconds": secs, "action": action})
        self.rationale = ""
        self.app.mark_stale()
        self.next_doc()

    def action_accept(self) -> None:
        if self.doc is None:
            return
        auto = self.auto.get((str(self.topic), str(self.doc)))
        if auto is None:
            self.notify("no automatic label for this document: grade it with a number key", severity="warning")
            return
        self.action_grade(auto, accepted=True)

    def action_skip(self) -> None:
        if self.doc is not None:
            self.release()
            self.skipped.add((self.topic, self.doc))
            self.next_doc()

    def action_cannot_judge(self) -> None:
        if self.doc is None:
            return
        desk = self.model.judging
        topic, doc = self.topic, self.doc
        secs = round(time.monotonic() - self.shown_at, 2)

        def done(reason) -> None:
            if reason is None:
                return
            if reason == "other":
                self.app.push_screen(TextPrompt("Why can you not judge this document?"),
                                     lambda text: done(text) if text else None)
                return
            try:
                desk.record_cannot_judge(topic, doc, self.app.assessor, reason, secs)
            except Exception as exc:
                self.app.report_error(exc)
                return
            self.release()
            self.cannot.add((topic, doc))
            self.notify(f"{doc}: cannot judge ({reason})")
            self.next_doc()
        self.app.push_screen(ChoiceScreen("Why can you not judge this document?",
                                          [(r, r) for r in desk.cannot_judge_reasons()]), done)

    def action_rationale(self) -> None:
        def done(text) -> None:
            if text is not None:
                self.rationale = text.strip()
                self.draw()
        self.app.push_screen(TextPrompt("Rationale for the next judgment", self.rationale), done)

    def action_toggle_order(self) -> None:
        self._order_set = True
        self.random_order = not self.random_order
        self.release()
        self.notify("random order" if self.random_order else "pool order")
        self.next_doc()

    def action_toggle_side(self) -> None:
        side = self.query_one("#judge-side")
        side.display = not side.display

    def action_undo(self) -> None:
        if _engine_missing() is not None or not self.history:
            self.notify("nothing to undo in this session", severity="warning")
            return
        h = self.history.pop()
        try:
            self.model.judging.undo(h["topic"], h["doc"], self.app.assessor)
        except Exception as exc:
            self.app.report_error(exc)
            return
        desk = self.model.judging
        self.release()
        self.app.mark_stale()
        self.topic, self.doc = h["topic"], h["doc"]
        desk.acquire(self.topic, [self.doc], self.app.assessor, double={(self.topic, self.doc)},
                     seconds=desk.lease_seconds(self.jcfg))
        self.shown_at = time.monotonic()
        self.notify(f"undid {h['doc']} = {h['grade']}")
        self.draw()

    def action_choose_topic(self) -> None:
        if self.model is None:
            return
        pp = self.model.pool_progress()
        opts = [(f"{r.topic}  {r.judged}/{r.target} judged", str(r.topic)) for r in pp.itertuples()]

        def done(t) -> None:
            if t is not None:
                self.release()
                self.topic = t
                self.next_doc(advance=False)
        self.app.push_screen(ChoiceScreen("Judge which topic?", opts), done)

    def export_table(self):
        if not self.history:
            return None
        return "judging-session", pd.DataFrame(self.history)
