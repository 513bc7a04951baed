"""Opening a campaign for the UI through `engine.campaign.campaign.load_campaign`, normalized to the columns the
screens use; the document store reader for the judging screen."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from engine.errors import CranfieldError, Warnings
from engine.util import fs


def is_campaign(path: Path) -> bool:
    """A directory holding campaign.yaml."""
    return (Path(path) / "campaign.yaml").is_file()


def find_campaigns(folder: Path) -> list[Path]:
    """Campaign directories directly inside `folder` (sorted by name)."""
    folder = Path(folder)
    if not fs.is_dir(folder):
        return []
    return [p for p in fs.glob(folder) if fs.is_dir(p) and is_campaign(p)]


@dataclass
class Opened:
    """A campaign as the UI sees it, whichever loader read it."""

    root: Path
    config: dict
    runs: pd.DataFrame          # run, topic, doc, rank, score
    qrels: pd.DataFrame         # topic, doc, grade (+ stratum, prob, method when known)
    topics: pd.DataFrame        # topic, title
    run_meta: pd.DataFrame      # run, group, type, pooled
    warnings: Warnings = field(default_factory=Warnings)
    engine_campaign: object = None
    store: object = None        # engine.evaluation.store.RunStore when the campaign has one
    large: bool = False         # engine.evaluation.is_large: runs are read per topic, never whole
    errors: list = field(default_factory=list)  # problems that cost a run file (file:line: what), shown on Home

    @property
    def name(self) -> str:
        return str(self.config.get("name") or self.root.name)

    def categories(self) -> dict[str, str]:
        """Topic id -> query category (the campaign's accessor, topics.categories)."""
        return {str(k): str(v) for k, v in self.engine_campaign.categories().items()}

    def targets(self) -> dict[str, int]:
        """Topic id -> judgment target (the campaign's accessor, topics.targets)."""
        return {str(k): int(v) for k, v in self.engine_campaign.targets().items()}


def _frame(obj, columns: list[str]) -> pd.DataFrame:
    if obj is None:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in columns})
    if isinstance(obj, pd.DataFrame):
        return obj
    if isinstance(obj, dict):  # mapping tag -> metadata
        rows = [{"run": str(k), **(v or {})} for k, v in obj.items()]
        return pd.DataFrame(rows) if rows else _frame(None, columns)
    return pd.DataFrame(obj)


def empty_runs() -> pd.DataFrame:
    return pd.DataFrame({"run": pd.Series([], dtype=object), "topic": pd.Series([], dtype=object),
                         "doc": pd.Series([], dtype=object), "rank": pd.Series([], dtype="int64"),
                         "score": pd.Series([], dtype="float64")})


def _normalize_meta(meta: pd.DataFrame, runs: pd.DataFrame, names: list[str] | None = None) -> pd.DataFrame:
    if names is None:
        names = [str(x) for x in runs["run"].drop_duplicates()] if len(runs) else []
    meta = meta.copy()
    if "run" not in meta.columns:
        meta = meta.reset_index().rename(columns={"index": "run"})
    meta["run"] = meta["run"].astype(str)
    meta = meta.set_index("run").reindex(names)
    out = pd.DataFrame({"run": names})
    out["group"] = meta["group"].fillna("").astype(str).to_numpy() if "group" in meta else ""
    out["type"] = meta["type"].fillna("automatic").astype(str).to_numpy() if "type" in meta else "automatic"
    if "pooled" in meta:
        out["pooled"] = meta["pooled"].astype(object).where(meta["pooled"].notna(), False).astype(bool).to_numpy()
    else:
        out["pooled"] = False
    return out


def _normalize_topics(t: pd.DataFrame) -> pd.DataFrame:
    if t is None or len(t) == 0:
        return pd.DataFrame({"topic": pd.Series([], dtype=object), "title": pd.Series([], dtype=object)})
    t = t.copy()
    if "topic" not in t.columns:
        for c in ("id", "num", "qid"):
            if c in t.columns:
                t = t.rename(columns={c: "topic"})
                break
    if "title" not in t.columns:
        t["title"] = ""
    t["topic"] = t["topic"].astype(str)
    t["title"] = t["title"].fillna("").astype(str)
    return t


def open_campaign(root: Path) -> Opened:
    """Read a campaign directory with the engine's loader."""
    root = Path(root)
    if not is_campaign(root):
        raise CranfieldError(f"{root}: not a campaign directory (no campaign.yaml); "
                             f"`cranfield tui DIR` expects a campaign or a folder of campaigns")
    from engine.campaign.campaign import load_campaign
    from engine.evaluation.seam import is_large

    w = Warnings()
    c = load_campaign(root, warnings=w)
    errors: list = []
    st = _without_bad_runs(c, c.store, errors)
    large = is_large(c)
    runs = empty_runs() if large else _without_bad_runs(c, c.runs, errors)
    qrels = c.qrels()
    topics = _normalize_topics(_frame(c.topics(), ["topic", "title"]))
    raw_meta = _frame(c.run_meta(), ["run", "group", "type", "pooled"])
    meta = _normalize_meta(raw_meta, runs, raw_meta["run"].astype(str).tolist() if large else None)
    cfg = dict(getattr(c, "config", {}) or {})
    return Opened(Path(getattr(c, "root", root)), cfg, runs, qrels, topics, meta, w, c, st, large, errors)


def _without_bad_runs(c, read, errors: list):
    """read() (the campaign's store or runs); a run file with malformed lines is set aside (its problems
    go to `errors`) and the rest is read: one bad line costs its run, not the campaign."""
    from engine.errors import FormatError
    skip = set(getattr(c, "skip_runs", None) or ())
    while True:
        try:
            return read()
        except FormatError as exc:
            runs_dir = (Path(c.root) / "runs").resolve()
            bad = {Path(p.path).resolve() for p in exc.problems if p.path}
            bad = {p for p in bad if p.is_file() and p.parent == runs_dir or p in _named_run_files(c)} - skip
            if not bad:
                raise
            skip |= bad
            c.skip_runs = skip
            errors.extend(f"{p} (run left out until fixed; ctrl+r re-reads)" for p in exc.problems
                          if p.path and Path(p.path).resolve() in bad)


def _named_run_files(c) -> set:
    return {(Path(c.root) / m["file"]).resolve() for m in (c.config.get("runs") or {}).values()
            if isinstance(m, dict) and m.get("file")}


class DocMap:
    """Read-only id -> {id, title, text} view of the campaign's document store (`error` when unreadable)."""

    def __init__(self, store=None, error: str = ""):
        self._store = store
        self.error = error

    def get(self, doc_id, default=None):
        d = self._store.get(str(doc_id)) if self._store is not None else None
        return d.as_dict() if d is not None else default

    def __contains__(self, doc_id) -> bool:
        return self._store is not None and str(doc_id) in self._store

    def __len__(self) -> int:
        return len(self._store) if self._store is not None else 0


def load_docs(root: Path) -> DocMap:
    """The campaign's document store (docs/docs.sqlite, else docs/docs.jsonl read into memory) as a
    read-only mapping; empty when absent, with `error` saying why when it cannot be read."""
    from engine.documents.store import DocStore
    from engine.errors import CranfieldError
    try:
        return DocMap(DocStore.for_campaign(root))
    except CranfieldError as exc:
        return DocMap(None, str(exc))
