"""Topic drill-down: ranked lists side by side, or one run's list with pool source and contributions."""
from __future__ import annotations

import numpy as np
import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static

from ..widgets.cells import grade_mark, num
from .base import CranfieldScreen, nav_bar


class TopicScreen(CranfieldScreen):
    TITLE = "Topic"
    HELP = """One topic. Side by side: the top runs' ranked lists (leaderboard order), each document with its
grade: a number is the judged grade (bold = relevant), ? = pooled but not judged, · = never pooled.
t switches to one run's list with the pool/stratum each document came from and its contribution to
the measure, as the measure itself explains its score (AP, P@k, recall@k, nDCG, nDCG@k, ndcgx, RBP;
the contributions of the whole list sum to the value).
n / b: next / previous run; ] / [: next / previous topic; . cycles the measure."""
    BINDINGS = [
        Binding("t", "toggle", "Single", tooltip="Side/single"),
        Binding("n", "run(1)", "Run+", tooltip="Next run"),
        Binding("b", "run(-1)", "Run-", tooltip="Prev run"),
        Binding("right_square_bracket", "topic(1)", "Topic+", key_display="]", tooltip="Next topic"),
        Binding("left_square_bracket", "topic(-1)", "Topic-", key_display="[", tooltip="Prev topic"),
        Binding("full_stop", "measure", "Measure", key_display="."),
    ]

    def __init__(self, topic: str, run: str | None = None):
        super().__init__()
        self.topic = str(topic)
        self.run = run
        self.single = run is not None
        self.measure: str | None = None
        self.first_run = 0
        self.frame: pd.DataFrame | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="topic-title", classes="title")
        yield DataTable(id="topic-table", cursor_type="row", zebra_stripes=True)
        yield nav_bar(self)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sync()

    def order(self) -> list[str]:
        lb = self.model.leaderboard(sort=self.measure)
        return list(lb["run"])

    def refresh_data(self) -> None:
        s = self.model.scores
        if self.measure not in s.measures:
            self.measure = s.measures[0] if s.measures else None
        if self.run is None or self.run not in s.runs:
            self.run = self.order()[0]
        self.draw()

    def draw(self) -> None:
        m = self.model
        s = m.scores
        if self.topic not in s.topics:
            self.query_one("#topic-title", Static).update(f"topic {self.topic} has no judgments in this campaign")
            return
        ti = s.topics.index(self.topic)
        tt = m.topics.set_index("topic")["title"].to_dict() if len(m.topics) else {}
        cat = m.o.categories().get(self.topic, "")
        R = int(s.t_num_rel[ti])
        judged = int(((m.qrels["topic"] == self.topic) & (m.qrels["grade"] >= 0)).sum())
        head = (f"[b]Topic {self.topic}[/b] {Text(tt.get(self.topic, '')).markup}"
                + (f" \\[{Text(cat).markup}]" if cat else "") + f" · R={R} · judged {judged}")
        t = self.query_one("#topic-table", DataTable)
        t.clear(columns=True)
        rl = m.options.rel_level
        if self.single:
            whole = m.ranked_list(self.run, self.topic, self.measure, limit=None)
            df = whole.iloc[:100]
            val = s.matrix[self.measure][s.runs.index(self.run), ti] if self.measure else np.nan
            head += f"\nrun [b]{self.run}[/b] · {self.measure} = {num(val)}"
            if df["contribution"].isna().all():
                head += " · (this measure does not explain its score per document)"
            else:
                head += f" · contributions sum to {num(float(whole['contribution'].sum()))}"
            t.add_column("rank", key="rank")
            t.add_column("doc", key="doc")
            t.add_column("grade", key="grade")
            t.add_column("pool/stratum", key="source")
            t.add_column("contrib", key="contrib")
            for r in df.itertuples(index=False):
                t.add_row(str(r.rank), r.doc, grade_mark(int(r.grade), rl), r.source or "",
                          num(r.contribution) if np.isfinite(r.contribution) else "", key=str(r.rank))
            self.frame = df
        else:
            runs = self.order()
            width = max(1, (self.app.size.width - 6) // 15)
            self.first_run = max(0, min(self.first_run, len(runs) - 1))
            shown = runs[self.first_run:self.first_run + width]
            lists = {r: m.ranked_list(r, self.topic, None, limit=100, among=tuple(shown)) for r in shown}
            depth = max((len(d) for d in lists.values()), default=0)
            head += f"\nruns {self.first_run + 1}-{self.first_run + len(shown)} of {len(runs)} by {self.measure} (n/b scroll)"
            t.add_column("rk", key="rank")
            out = pd.DataFrame({"rank": np.arange(1, depth + 1)})
            for r in shown:
                v = s.matrix[self.measure][s.runs.index(r), ti]
                t.add_column(f"{r} {num(v, 3)}", key=r)
                d = lists[r]
                out[r] = pd.Series(d["doc"].astype(str).to_numpy() + ":" + d["grade"].astype(str).to_numpy()).reindex(range(depth))
            for k in range(depth):
                cells = [str(k + 1)]
                for r in shown:
                    d = lists[r]
                    if k < len(d):
                        cells.append(Text(f"{d['doc'].iat[k]} ") + grade_mark(int(d["grade"].iat[k]), rl))
                    else:
                        cells.append("")
                t.add_row(*cells, key=str(k + 1))
            self.frame = out
        self.query_one("#topic-title", Static).update(Text.from_markup(head))

    # ------------------------------------------------------------------ actions
    def action_toggle(self) -> None:
        self.single = not self.single
        self.draw()

    def action_run(self, step: int) -> None:
        runs = self.order()
        if self.single:
            i = runs.index(self.run) if self.run in runs else 0
            self.run = runs[(i + step) % len(runs)]
        else:
            self.first_run = max(0, min(len(runs) - 1, self.first_run + step))
        self.draw()

    def action_topic(self, step: int) -> None:
        topics = self.model.scores.topics
        i = topics.index(self.topic) if self.topic in topics else 0
        self.topic = topics[(i + step) % len(topics)]
        self.draw()

    def action_measure(self) -> None:
        ms = self.model.scores.measures
        self.measure = ms[(ms.index(self.measure) + 1) % len(ms)] if self.measure in ms else ms[0]
        self.draw()

    def export_table(self):
        if self.frame is None:
            return None
        return (f"topic-{self.topic}-{self.run}" if self.single else f"topic-{self.topic}"), self.frame
