"""What the screens show, as plain tables (no Textual imports): the campaign model (`core`) and one view model
per screen family (leaderboard, topics, pools, experiments, home, intake), composed into `CampaignModel`.
Statistics are the engine's; the view models only arrange engine results."""
from __future__ import annotations

from engine.errors import CranfieldError

from .core import _OPENED, ModelCore
from .experiments import ExperimentsView
from .home import HomeView
from .intake import IntakeView
from .leaderboard import LeaderboardView, filter_mask
from .pools import PoolsView, cost_model, pool_preview
from .scores import DEFAULT_MEASURES, Intake, Scores, measure_choices, output_names
from .topics import TopicsView

__all__ = ["CampaignModel", "CranfieldError", "DEFAULT_MEASURES", "Intake", "Scores", "cost_model", "filter_mask",
           "measure_choices", "output_names", "pool_preview", "_OPENED"]


class CampaignModel(ModelCore, LeaderboardView, TopicsView, PoolsView, ExperimentsView, HomeView, IntakeView):
    """A loaded campaign plus its evaluation, shared by every screen: the core model with each screen
    family's view model."""
