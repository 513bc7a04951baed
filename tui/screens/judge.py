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

from engine.util.names import shown

from ..model import CampaignModel, CranfieldError
from ..widgets.cells import plural
from ..widgets.hints import Hints, key_hint
from .base import CranfieldScreen, Unavailable, desk_only, nav_bar
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
took. The title line shows how many documents of the active pool are judged and left (as Home, t and
`cranfield status` count them); a document another assessor judges meanwhile is left within a second.
ctrl+r re-evaluates."""
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
        self.progress = None                 # the engine's JudgingProgress last drawn (a pool is judged)
        self.held_by_others: dict = {}       # what is left of the topic, leased to others: doc -> (holder, expiry)
        self._followed: int | None = None    # the app's judgments file version this screen last followed

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
        if not desk_only(self.app) or hasattr(self.app, "NAV"):   # a desk's bar names only its own screens
            yield nav_bar(self)                                      # (tui.desk_app.DESK_NAV); no organizer bar
        yield Footer(compact=True)

    ORGANIZER_ACTIONS = ("export",)
    """Keys hidden and refused on the assessors' desk (tui.screens.base.desk_only: `cranfield serve`)."""

    def on_mount(self) -> None:
        self.sync()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """On the assessors' desk the organizer's keys (ORGANIZER_ACTIONS) are hidden and refused."""
        return not (action in self.ORGANIZER_ACTIONS and desk_only(self.app))

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
        pcfg = m.o.engine_campaign.pool()       # campaign.yaml's pool: section with the schema's defaults
        self.strategy = str(pcfg["strategy"])
        self.depth = int(pcfg["depth"])
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
        self.load_auto_labels()
        self._followed = self.app.file_versions.get("judgments")
        self.release()                       # the document on screen goes back; the next one is chosen anew
        if self.topic is None:
            found = self.first_open_topic()
            if found is not None:            # the topics were just searched: its offer is the document
                self.topic, offer = found
                self.show_offer(offer)
                return
            self.topic = self.first_topic()
            self.next_doc(advance=False)
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

    def judged_by(self) -> dict:
        """(topic, doc) -> assessors whose judgment stands ('' for imported judgments)."""
        return self.model.judging.judged_by()

    def offer(self, topic: str, k: int = 1, lease: bool = True):
        """The engine's next documents of `topic` for this assessor (engine.judging.progress.offer_next,
        as `cranfield judgments next`): leased to them unless `lease` is False; this session's skipped
        documents passed over, in this screen's order. With no pool written, the campaign's strategy
        documents come from the desk's kept per-topic pools."""
        desk = self.model.judging
        cands = None
        if self.pool_table is None:
            cands = desk.next_documents(topic, self.strategy, k=1 << 30, depth=self.depth)
        return desk.offer(topic, self.app.assessor, k, skip=self.skipped, candidates=cands,
                          random_order=self.random_order, lease=lease)

    def open_documents(self, topic: str, k: int = 1) -> list[str]:
        """The topic's first `k` documents this assessor could judge now, in presentation order (none leased)."""
        return self.offer(topic, k, lease=False).docs

    def first_open_topic(self):
        """(topic, offer) of the first topic with a document this assessor may judge now, leased to them;
        None when there is none. Topics with nothing left in the pool are passed over at once (unless
        documents are double judged: one judged by another may still be this assessor's)."""
        desk = self.model.judging
        topics = list(self.model.pool_progress()["topic"])
        left = None
        if self.pool_table is not None:
            prog = desk.progress()
            frac = desk.pool_double_fraction(self.pool_name)
            frac = float(self.jcfg.get("double_fraction") or 0.0) if frac is None else frac
            if frac <= 0:
                left = set(prog.topics.loc[prog.topics["left"] > 0, "topic"].astype(str))
        else:
            try:                            # topics whose pool has nothing unjudged are passed over at once
                left = desk.topics_left(self.strategy, self.depth, desk.judged())
            except CranfieldError:
                left = None
        for t in topics:
            if left is not None and str(t) not in left:
                continue
            try:
                offer = self.offer(t)
            except CranfieldError:
                continue
            except OSError:                 # a read-only campaign: judge without leases
                offer = self.offer(t, lease=False)
            if offer.docs:
                return t, offer
        return None

    def next_doc(self, advance: bool = True) -> None:
        """Show the topic's next document; when the topic has none left (and `advance`), the first topic
        with work left."""
        offer = self._offer()
        if not (offer is not None and offer.docs) and advance and self.topic is not None:
            found = self.first_open_topic()
            if found is not None and found[0] != self.topic:
                done = self.topic
                self.topic, offer = found
                self.notify(f"topic {shown(done)}: nothing left to judge; on to topic {shown(self.topic)}",
                            timeout=4)
        self.show_offer(offer)

    def _offer(self):
        """The engine's offer for the current topic (a lease), or None; errors become notifications."""
        if self.topic is None:
            return None
        try:
            try:
                return self.offer(self.topic)
            except OSError as exc:           # a read-only campaign: judge without leases
                self.notify(f"no document lease ({exc.strerror or exc}): another assessor may get the "
                            f"same document", severity="warning")
                return self.offer(self.topic, lease=False)
        except CranfieldError as exc:
            self.app.report_error(exc)
            return None

    def show_offer(self, offer) -> None:
        """Put the offer's first document on screen (none: nothing left, or what is left is leased)."""
        self.doc = offer.docs[0] if offer is not None and offer.docs else None
        self.held_by_others = dict(offer.leased) if offer is not None and self.doc is None else {}
        self.shown_at = time.monotonic()
        self.draw(offer.progress if offer is not None else None)

    def follow(self) -> None:
        """The judgments changed on disk (another assessor, the CLI, this screen): move off the document on
        screen when it is no longer this assessor's to judge (judged by someone else), else redraw the
        counts."""
        self._followed = self.app.file_versions.get("judgments")
        if self.topic is None or _engine_missing() is not None:
            return
        if self.doc is None:
            self.next_doc(advance=False)
            return
        try:
            mine = self.doc in self.offer(self.topic, 1 << 30, lease=False).docs
        except CranfieldError:
            return
        if mine:
            self.draw()
            return
        gone = self.doc
        who = sorted(a or "imported judgments" for a in self.judged_by().get((str(self.topic), str(gone)), ()))
        self.release()
        self.notify(f"{shown(gone)} was judged by {shown(', '.join(who)) or 'another assessor'}; "
                    f"on to the next document", timeout=4)
        self.next_doc()

    def on_files_changed(self, event) -> None:
        """The app's poll saw the judgment files change (tui.app.FilesChanged): follow them."""
        if "judgments" in event.kinds and self.composed() and self.model is not None:
            self.follow()

    def on_screen_resume(self) -> None:
        """Back on this screen (CranfieldScreen.on_screen_resume redraws what it watches): judgments
        recorded meanwhile are followed (Textual calls each class's handler)."""
        if self._followed != self.app.file_versions.get("judgments") and self.model is not None:
            self.follow()

    def release(self, judged: bool = False) -> None:
        if self.doc is not None and self.topic is not None:
            try:
                self.model.judging.release(self.topic, self.doc, self.app.assessor, judged)
            except OSError as exc:
                self.app.report_error(exc)

    def draw(self, progress=None) -> None:
        """Draw the topic, the document and the counts (`progress`: the engine's judging_progress when the
        caller has it, else read now)."""
        m = self.model
        topic = self.topic
        tt = m.topics
        trow = tt[tt["topic"].astype(str) == str(topic)] if topic is not None and len(tt) else tt.iloc[0:0]
        title = str(trow["title"].iat[0]) if len(trow) else ""
        if self.pool_table is not None:
            prog = self.progress = progress if progress is not None else m.judging.progress()
            pooled, n_j, left_t = prog.topic(topic) if topic is not None else (0, 0, 0)
            src = (f"pool {shown(prog.pool)}: {n_j} of {pooled} judged, {left_t} left in topic, "
                   f"{prog.left} left overall")
        else:
            judged = m.judging.judged()
            n_j = int((judged["topic"].astype(str) == str(topic)).sum()) if topic else 0
            src = f"{n_j} judged · strategy {self.strategy}, depth {self.depth}"
        order = " · random order" if self.random_order else ""
        self.query_one("#judge-title", Static).update(Text.from_markup(
            f"[b]Topic {Text(shown(topic)).markup}[/b] {Text(title).markup} · {Text(src).markup}{order} · "
            f"assessor {Text(shown(self.app.assessor)).markup}"))
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
        if self.doc is None and self.held_by_others:
            from engine.judging.sessions import lease_time
            held = "; ".join(f"{shown(d)} to {shown(a) or 'an unnamed assessor'} until {lease_time(e)}"
                             for d, (a, e) in list(self.held_by_others.items())[:3])
            info.update(Text(f"What is left of this topic is leased to other assessors: {held}."))
            text.update("Press t for another topic, or wait: a lease ends when its document is judged or skipped.")
        elif self.doc is None:
            info.update("Nothing left to judge for this topic under this strategy.")
            text.update("Press t for another topic." if desk_only(self.app) else
                        "Press t for another topic, or build a deeper or larger pool on the pool screen (p).")
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
            # the assessor's desk shows no run figures (blind judging); a document no run retrieved (a canary
            # planted in the pool) shows none anywhere, rather than "0 runs"
            runs_txt = "" if desk_only(self.app) or not len(r) else \
                f" · retrieved by {plural(r['run'].nunique(), 'run')}, best rank {best}"
            info.update(Text.from_markup(
                f"document [b]{self.doc}[/b]{runs_txt}"
                + (f" · {src_doc}" if src_doc else "") + auto_txt
                + (f"\nrationale: {Text(self.rationale).markup}" if self.rationale else "")))
            d = m.judging.document(self.doc)
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
        from engine.judging.sessions import LeaseHeld
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
        except LeaseHeld as exc:               # our lease ran out and another assessor took the document
            self.notify(f"{exc}: on to the next document", severity="warning", timeout=8)
            self.doc = None
            self.next_doc()
            return
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
        opts = [(f"{shown(r.topic)}  {r.judged}/{r.target} judged" + (f", {r.left} left" if r.left else ""),
                 str(r.topic)) for r in pp.itertuples()]

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
