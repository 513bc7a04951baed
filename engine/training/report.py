"""Tables and terminal plots of the training experiments, and where a campaign keeps them
(`<campaign>/training/learn.tsv`, `sensitivity.tsv`, `select.tsv`), read by the TUI's Training screen."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd

from ..errors import CranfieldError
from ..util import fs

RESULT_NAMES = ("select", "learn", "sensitivity")


def results_dir(campaign_root) -> Path:
    return Path(campaign_root) / "training"


def save_result(folder, name: str, df: pd.DataFrame) -> Path:
    """Write one result table as TSV (`name` in RESULT_NAMES)."""
    if name not in RESULT_NAMES:
        raise CranfieldError(f"unknown training result {name!r}")
    p = Path(folder) / f"{name}.tsv"
    with fs.atomic_file(p, "w", encoding="utf-8", newline="") as fh:
        df.to_csv(fh, sep="\t", index=False)
    return p


def load_results(folder) -> dict[str, pd.DataFrame]:
    """The saved result tables found in `folder` (missing ones are absent from the dict)."""
    out = {}
    for n in RESULT_NAMES:
        p = Path(folder) / f"{n}.tsv"
        if fs.is_file(p):
            try:
                with fs.open(p, "rb") as fh:
                    out[n] = pd.read_csv(fh, sep="\t")
            except (OSError, ValueError, pd.errors.ParserError) as exc:
                raise CranfieldError(f"{p}: cannot read the saved training table ({exc}); rerun the command") from None
    return out


def best_selection(learn: pd.DataFrame, measure: str = "map") -> pd.DataFrame:
    """Per ranker and percentage: the selection method with the highest mean test `measure`, its
    value and the full-pool value (the best choice per judging budget)."""
    d = learn[learn["method"] != "full"]
    full = learn[learn["method"] == "full"].groupby("ranker")[measure].mean()
    idx = d.groupby(["ranker", "percent"])[measure].idxmax()
    out = d.loc[idx, ["ranker", "percent", "method", measure, "docs"]].reset_index(drop=True)
    out["full"] = out["ranker"].map(full)
    return out


def best_measure(summary: pd.DataFrame) -> pd.DataFrame:
    """Per incompleteness level: the training measure whose chosen setting has the highest test MAP
    (on a tie, MAP itself, then the first measure listed)."""
    summary = summary.assign(_m=summary["measure"] != "map").sort_values(["level", "_m"], kind="stable")
    idx = summary.groupby("level")["test_map"].idxmax()
    out = summary.loc[idx, ["level", "measure", "test_map"]].reset_index(drop=True)
    mapv = summary[summary["measure"] == "map"].set_index("level")["test_map"]
    out["map_trained"] = out["level"].map(mapv)
    return out


def curves(df: pd.DataFrame, x: str, y: str, series: str) -> dict[str, tuple[list, list]]:
    """Series name -> (xs, ys) sorted by x."""
    out = {}
    for name, g in df.groupby(series, sort=True):
        g = g.groupby(x, sort=True)[y].mean()
        out[str(name)] = (g.index.astype(float).tolist(), g.tolist())
    return out


def plot_text(series: dict[str, tuple[list, list]], xlabel: str, ylabel: str, title: str = "",
              logx: bool = True, width: int = 78, height: int = 20) -> str:
    """A plotext line chart as text (uncolored unless the terminal is a tty and NO_COLOR is unset)."""
    import plotext as plt
    plt.clear_figure()
    plt.plot_size(width, height)
    for name, (xs, ys) in series.items():
        if xs:
            plt.plot(xs, ys, label=name, marker="dot")
    if logx:
        plt.xscale("log")
    plt.xlabel(xlabel)
    plt.ylabel(ylabel)
    if title:
        plt.title(title)
    plt.theme("clear")
    text = plt.build()
    if os.environ.get("NO_COLOR") or not sys.stdout.isatty():
        text = plt.uncolorize(text)
    return text
