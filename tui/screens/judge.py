"""Judging: the next document of a topic under the campaign's strategy, graded with number keys."""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from engine.errors import CranfieldError

from .base import CranfieldScreen, Unavailable, nav_bar
from .choice import ChoiceScreen


def _engine():
    try:
        import engine.judging as judging
        import engine.pooling  # noqa: F401  (next_documents builds pools)
        return judging, None
    except ImportError as exc:
        return None, str(exc)


class JudgeScreen(CranfieldScreen):
    NEEDS_SCORES = False
    TITLE = "Judging"
    MODE = "judge"
    HELP = """Judge the next document of a topic. The document comes from the newest pool in pools/ (written by
the pool builder), else from the campaign's pool strategy and depth (campaign.yaml `pool:`); online
strategies (mtf, hedge, mtc) pick after each judgment. Number keys grade (the campaign's relevance
scale), s skips (for this session), u undoes your last judgment, t picks another topic. Each judgment is
appended to judgments/log.jsonl with your name and the seconds it took; the log is re-read before every
pick, so two people can judge the same campaign at once. ctrl+r re-evaluates the campaign."""
    BINDINGS = [Binding(str(g), f"grade({g})", f"Grade {g}", show=False) for g in range(10)] + [
        Binding("s", "skip", "Skip"),
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

    def compose(self) -> ComposeResult:
        yield Header()
        judging, err = _engine()
        if judging is None:
            yield Unavailable("Judging", "engine.judging", err)
        else:
            yield Static("", id="judge-title", classes="title")
            yield Static("", id="judge-info")
            with VerticalScroll(id="judge-doc"):
                yield Static("", id="judge-text")
            yield Static("", id="judge-keys", classes="status")
        yield nav_bar(self)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sync()

    # ------------------------------------------------------------------ state
    def scale(self) -> dict[int, str]:
        sc = ((self.model.config.get("relevance") or {}).get("scale") or {})
        if not sc:
            return {0: "not relevant", 1: "relevant"}
        return {int(g): str((v or {}).get("label", g)) for g, v in sc.items()}

    def refresh_data(self) -> None:
        if _engine()[0] is None:
            return
        m = self.model
        cfg = m.config.get("pool") or {}
        self.strategy = str(cfg.get("strategy") or "depth")
        self.depth = int(cfg.get("depth") or 100)
        self.pool_table = None
        pools = m.pools()
        if len(pools):
            newest = sorted((m.root / "pools").glob("pool-*.tsv"), key=lambda p: p.stat().st_mtime)[-1].stem[5:]
            pt = pools[pools["pool"] == newest].copy()
            pt["order"] = pd.to_numeric(pt["order"], errors="coerce").fillna(0).astype(np.int64)
            self.pool_table = pt
            self.strategy = f"{pt['method'].iat[0]}" if len(pt) else self.strategy
            self.pool_name = newest
        if self.topic is None:
            self.topic = self.first_open_topic()
        self.next_doc()

    def judged(self) -> pd.DataFrame:
        """Imported judgments plus the log as it is now (other assessors included)."""
        judging, _ = _engine()
        m = self.model
        rule = str((m.config.get("judgments") or {}).get("conflict_rule", "last"))
        base = m.qrels[m.qrels["grade"] >= 0][["topic", "doc", "grade"]]
        lp = judging.log_path(m.root)
        if not lp.exists():
            return base.reset_index(drop=True)
        log = judging.merged_log(lp, rule)[["topic", "doc", "grade"]]
        both = pd.concat([base, log], ignore_index=True)
        return both.drop_duplicates(["topic", "doc"], keep="last").reset_index(drop=True)

    def candidates(self, topic: str, k: int) -> list[str]:
        judging, _ = _engine()
        m = self.model
        pooled = [r for r, p in zip(m.run_meta.index, m.run_meta["pooled"]) if p] or None
        return judging.next_documents(m.topic_runs(topic), self.judged(), topic, self.strategy if self.pool_table is None
                                      else "depth", k=k, pool=self.pool_table, depth=self.depth, pooled=pooled,
                                      rel_level=m.options.rel_level)

    def first_open_topic(self) -> str | None:
        topics = list(self.model.pool_progress()["topic"])
        for t in topics:
            try:
                if self.candidates(t, 1):
                    return t
            except CranfieldError:
                continue
        return topics[0] if topics else None

    def next_doc(self) -> None:
        self.doc = None
        if self.topic is not None:
            try:
                k = 1 + sum(1 for t, _ in self.skipped if t == self.topic)
                docs = [d for d in self.candidates(self.topic, k) if (self.topic, d) not in self.skipped]
                self.doc = docs[0] if docs else None
            except CranfieldError as exc:
                self.app.report_error(exc)
        self.shown_at = time.monotonic()
        self.draw()

    def draw(self) -> None:
        m = self.model
        topic = self.topic
        titles = dict(zip(m.topics["topic"].astype(str), m.topics["title"].astype(str)))
        judged = self.judged()
        n_j = int((judged["topic"] == topic).sum()) if topic else 0
        src = f"pool {self.pool_name}" if self.pool_table is not None else f"strategy {self.strategy}, depth {self.depth}"
        self.query_one("#judge-title", Static).update(Text.from_markup(
            f"[b]Topic {topic}[/b] {Text(titles.get(topic, '')).markup} · {n_j} judged · {src} · "
            f"assessor {Text(self.app.assessor).markup}"))
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
            info.update(Text.from_markup(
                f"document [b]{self.doc}[/b] · retrieved by {r['run'].nunique()} runs, best rank {best}"
                + (f" · {src_doc}" if src_doc else "")))
            d = m.docs().get(self.doc)
            if d:
                text.update(Text.from_markup(f"[b]{Text(str(d.get('title', ''))).markup}[/b]\n\n")
                            + Text(str(d.get("text", ""))))
            else:
                text.update(Text(f"(no text: the campaign has no docs/ store entry for {self.doc})", style="dim"))
        keys = "  ".join(f"[b]{g}[/b] {lab}" for g, lab in sorted(self.scale().items()))
        last = ""
        if self.history:
            h = self.history[-1]
            last = f" · last: {h['doc']}={h['grade']} in {h['seconds']:.1f}s"
        self.query_one("#judge-keys", Static).update(
            Text.from_markup(keys + "  [b]s[/b] skip  [b]u[/b] undo  [b]t[/b] topic" + last))

    # ------------------------------------------------------------------ actions
    def action_grade(self, g: int) -> None:
        judging, _ = _engine()
        if judging is None or self.doc is None:
            return
        if g not in self.scale():
            self.notify(f"grade {g} is not on this campaign's scale ({', '.join(map(str, sorted(self.scale())))})",
                        severity="warning")
            return
        secs = round(time.monotonic() - self.shown_at, 2)
        try:
            judging.record_judgment(self.model.root, self.topic, self.doc, g, self.app.assessor, secs,
                                    self.strategy)
        except Exception as exc:
            self.app.report_error(exc)
            return
        self.history.append({"topic": self.topic, "doc": self.doc, "grade": g, "seconds": secs})
        self.app.mark_stale()
        self.next_doc()

    def action_skip(self) -> None:
        if self.doc is not None:
            self.skipped.add((self.topic, self.doc))
            self.next_doc()

    def action_undo(self) -> None:
        judging, _ = _engine()
        if judging is None or not self.history:
            self.notify("nothing to undo in this session", severity="warning")
            return
        h = self.history.pop()
        try:
            judging.undo_judgment(self.model.root, h["topic"], h["doc"], self.app.assessor)
        except Exception as exc:
            self.app.report_error(exc)
            return
        self.app.mark_stale()
        self.topic, self.doc = h["topic"], h["doc"]
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
                self.topic = t
                self.next_doc()
        self.app.push_screen(ChoiceScreen("Judge which topic?", opts), done)

    def export_table(self):
        if not self.history:
            return None
        return "judging-session", pd.DataFrame(self.history)
