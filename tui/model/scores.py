"""What every screen's view model shares: the evaluated scores as matrices, measure names, the intake outcome."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.measures import load_all, resolve
from engine.measures.registry import REGISTRY

DEFAULT_MEASURES = ["map", "P.10", "ndcg_cut.10", "bpref"]


def output_names(spec: str) -> list[str]:
    """Output names of one measure spec (P.10 -> P_10)."""
    return [n for req in resolve([spec]) for n in req.names]


def measure_choices() -> list[str]:
    """Specs a user can pick: every per-topic float measure, one entry per default cut-off."""
    load_all()
    out = []
    from engine.measures.registry import DERIVED
    for m in sorted(REGISTRY.values(), key=lambda m: m.order):
        if m.name in DERIVED:            # made on demand earlier in this process (gd_ndcg@3): not a fixed choice
            continue
        if m.value_kind != "float" or not m.per_topic or not m.summary or m.aggregate != "mean":
            continue
        if m.param_kind in ("int_cut", "float_cut") and m.params:
            out += [f"{m.name}.{p:g}" if isinstance(p, float) else f"{m.name}.{p}" for p in m.params]
        elif m.param_kind == "none" or m.params:
            out.append(m.name)
    return out


@dataclass
class Scores:
    """Every (run, topic) value of the chosen measures, as matrices."""

    measures: list[str]                 # output names, in the user's order
    runs: list[str]
    topics: list[str]
    matrix: dict[str, np.ndarray]       # measure -> (n_runs, n_topics); NaN where the run has no list
    means: pd.DataFrame                 # run x measure summaries (engine.summarize)
    judged10: np.ndarray                # per run: mean share of the top 10 that is judged
    ranked: object                      # engine Ranked (row data for drill-downs); None for large campaigns
    group_of: np.ndarray                # (n_runs, n_topics) group index or -1
    t_num_rel: np.ndarray = None        # per topic: relevant documents judged
    depth_t: np.ndarray = None          # per topic: deepest k with every run's top k judged
    holes: np.ndarray = None            # per run: unjudged documents in its top 10s
    n_top: np.ndarray = None            # per run: documents in its top 10s
    judgments: str = "official"         # the judgment spec the scores used (engine.judgments.sources)
    filled10: np.ndarray = None         # per run: share of its top 10s judged by a non-official source


@dataclass
class Intake:
    """The outcome of a submission: accepted or refused, the report's lines, the accepted run tags."""

    accepted: bool
    lines: list[str]
    tags: list[str]


class quiet:
    """Silence numpy's RuntimeWarnings (means of all-NaN columns) inside a `with` block."""

    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        self._w.__exit__(*exc)


