"""Agreement between two judgment sources: kappa, alpha, confusion matrices, per topic, and the
leaderboards under each source (engine.judgments.agreement)."""
from __future__ import annotations

import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from engine.errors import CranfieldError

from ..widgets.jobbar import JobBar
from .base import CranfieldScreen, nav_bar
from .choice import ChoiceScreen


class AgreementScreen(CranfieldScreen):
    NEEDS_SCORES = False
    WATCH = ("judgments", "sources")
    TITLE = "Agreement"
    MODE = "agreement"
    HELP = """How far two judgment sources agree (human assessors, imported label sets, automatic judges):
on the documents both judged, Cohen's kappa (unweighted, linear, quadratic), Krippendorff's alpha
(nominal, ordinal) and the confusion matrix, graded and binarized at the campaign's threshold; the
topics that disagree most; and the leaderboard under each source (Kendall tau, tau_ap, largest rank
change, top-k overlap) for the first shown measure. Below them, B's judge card against A (the people):
kappa and alpha with bootstrap intervals over topics, the confusion matrix with exact intervals,
false-positive and false-negative rates by grade (Wilson), tau, tau_ap and tau@10 with topic-bootstrap
intervals, cost and time, and a caution where the shared documents are few. a and b choose the two
sources; e exports the per-topic table. Same as `cranfield agreement DIR --sources A B` and
`cranfield judgments card DIR --source B --gold A`."""
    BINDINGS = [Binding("a", "pick('a')", "Source A"), Binding("b", "pick('b')", "Source B")]

    def __init__(self):
        super().__init__()
        self.a: str | None = None
        self.b: str | None = None
        self.picked = False          # the user chose a source (a / b): keep the pair
        self.result = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="agr-title", classes="title")
        yield JobBar()
        with VerticalScroll(id="agr-body"):
            yield Static("", id="agr-text")
        yield nav_bar(self)
        yield Footer()

    def on_mount(self) -> None:
        self.sync()

    def campaign(self):
        return getattr(getattr(self.model, "o", None), "engine_campaign", None)

    def names(self) -> list[str]:
        from engine.judgments.sources import source_names
        camp = self.campaign()
        return source_names(camp) if camp is not None else []

    def refresh_data(self) -> None:
        camp = self.campaign()
        text = self.query_one("#agr-text", Static)
        if camp is None:
            text.update("Agreement needs a campaign directory (judgment sources live in it).")
            return
        if not self.picked:                  # the default pair follows the campaign's sources as they change
            self.a, self.b = self.model.agreement_pair()
        if self.b is None:
            self.query_one("#agr-title", Static).update(Text.from_markup(f"[b]Sources[/b] {Text(self.a).markup} only"))
            text.update("One independent judgment source (an assessor's judgments are part of human). Import "
                        "another (`cranfield judgments import`), run an automatic judge (`cranfield judgments "
                        "auto`) or let two assessors judge the same documents (double judging).")
            return
        self.compute()

    def compute(self) -> None:
        camp = self.campaign()
        a, b = self.a, self.b
        measure = (self.app.measures or camp.measures())[0]
        self.query_one("#agr-title", Static).update(Text.from_markup(
            f"[b]{Text(a).markup}[/b] vs [b]{Text(b).markup}[/b] · systems by {Text(measure).markup} · "
            f"[b]a[/b]/[b]b[/b] change sources"))

        def work(progress):
            from engine.judgments.agreement import label_agreement, leaderboard_agreement, mean_scores
            from engine.judgments.sources import source_judgments
            ja, jb = source_judgments(camp, a), source_judgments(camp, b)
            progress(0.2, "labels")
            la = label_agreement(ja, jb, (a, b), sorted(camp.scale()), camp.binary_threshold())
            progress(0.4, "leaderboards")
            sa = None
            runs = camp.runs()
            if runs["run"].nunique() >= 2:
                opt = camp.eval_options()
                sa = leaderboard_agreement(mean_scores(ja, runs, measure, opt, camp.gains()),
                                           mean_scores(jb, runs, measure, opt, camp.gains()), (a, b), measure)
            progress(0.6, "judge card")
            try:
                from engine.judgments.judge_card import card_text, judge_card
                from engine.planning.cost import CostModel, model_from_config
                cm = model_from_config(camp.config.get("cost"), CostModel())
                card = card_text(judge_card(camp, b, a, measure, seconds_per_judgment=cm.times(None).judgment_avg,
                                            cost_source=cm.describe()), "text")
            except CranfieldError as exc:
                card = f"No judge card of {b} against {a}: {exc}"
            return la, sa, card

        def done(res) -> None:
            from engine.judgments.agreement import report_lines
            from engine.util.names import shown
            self.result = res[:2]
            self.query_one("#agr-text", Static).update(Text("\n".join(report_lines(*res[:2], top_topics=15))
                                                            + "\n\n" + shown(res[2], "\n")))
        self.run_job("agreement", work, done)

    def action_pick(self, which: str) -> None:
        if self.campaign() is None:
            return
        try:
            names = self.names()
        except CranfieldError as exc:
            self.app.report_error(exc)
            return

        def done(n) -> None:
            if n is None:
                return
            setattr(self, which, n)
            self.picked = True
            if self.a is None or self.b is None or self.model.nested_sources(self.a, self.b):
                self.notify("pick two sources neither of which holds the other (human holds every "
                            "assessor:NAME)", severity="warning")
                return
            self.compute()
        self.app.push_screen(ChoiceScreen(f"Source {which.upper()}", [(n, n) for n in names]), done)

    def export_table(self) -> tuple[str, pd.DataFrame] | None:
        if self.result is None:
            return None
        return f"agreement-{self.a}-{self.b}".replace(":", "_"), self.result[0].per_topic
