"""Opening a campaign for the UI: `engine.campaign.load_campaign` when present, else a small fallback reader.

The fallback exists only until the engine's campaign module lands; it reads the documented directory
layout (campaign.yaml, runs/, topics/, judgments/, docs/) with the engine's own file readers.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from engine.errors import CranfieldError, Warnings


def is_campaign(path: Path) -> bool:
    """A directory holding campaign.yaml."""
    return (Path(path) / "campaign.yaml").is_file()


def find_campaigns(folder: Path) -> list[Path]:
    """Campaign directories directly inside `folder` (sorted by name)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and is_campaign(p))


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

    @property
    def name(self) -> str:
        return str(self.config.get("name") or self.root.name)

    def categories(self) -> dict[str, str]:
        cats = ((self.config.get("topics") or {}).get("categories") or {})
        return {str(k): str(v) for k, v in cats.items()}

    def targets(self) -> dict[str, int]:
        t = ((self.config.get("topics") or {}).get("targets") or {})
        return {str(k): int(v) for k, v in t.items()}


def _frame(obj, columns: list[str]) -> pd.DataFrame:
    if obj is None:
        return pd.DataFrame({c: pd.Series([], dtype=object) for c in columns})
    if isinstance(obj, pd.DataFrame):
        return obj
    if isinstance(obj, dict):  # mapping tag -> metadata
        rows = [{"run": str(k), **(v or {})} for k, v in obj.items()]
        return pd.DataFrame(rows) if rows else _frame(None, columns)
    return pd.DataFrame(obj)


def _normalize_meta(meta: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    names = list(dict.fromkeys(runs["run"].astype(str))) if len(runs) else []
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
    """Read a campaign directory (engine loader first, fallback reader otherwise)."""
    root = Path(root)
    if not is_campaign(root):
        raise CranfieldError(f"{root}: not a campaign directory (no campaign.yaml); "
                             f"`cranfield tui DIR` expects a campaign or a folder of campaigns")
    try:
        from engine.campaign import load_campaign  # type: ignore
    except ImportError:
        load_campaign = None
    if load_campaign is not None:
        w = Warnings()
        c = load_campaign(root, warnings=w)
        runs = c.runs()
        qrels = c.qrels()
        topics = _normalize_topics(_frame(c.topics(), ["topic", "title"]))
        meta = _normalize_meta(_frame(c.run_meta(), ["run", "group", "type", "pooled"]), runs)
        cfg = dict(getattr(c, "config", {}) or {})
        return Opened(Path(getattr(c, "root", root)), cfg, runs, qrels, topics, meta, w, c)
    return _fallback(root)


# ------------------------------------------------------------------------------ fallback reader

def _fallback(root: Path) -> Opened:
    import yaml

    from engine.formats import read_qrels, read_runs

    w = Warnings()
    try:
        cfg = yaml.safe_load((root / "campaign.yaml").read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise CranfieldError(f"{root / 'campaign.yaml'}: not valid YAML ({exc})") from None
    files = sorted(p for p in (root / "runs").glob("*") if p.is_file()) if (root / "runs").is_dir() else []
    runs = read_runs(files, w)
    rule = str((cfg.get("judgments") or {}).get("conflict_rule", "last"))
    frames = []
    jdir = root / "judgments"
    if jdir.is_dir():
        for p in sorted(jdir.iterdir()):
            if p.name == "log.jsonl" or not p.is_file():
                continue
            frames.append(read_qrels(p, w, rule="max" if rule == "max" else "last")[["topic", "doc", "grade"]])
        log = jdir / "log.jsonl"
        if log.is_file():
            frames.append(_read_log(log, w))
    qrels = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        {"topic": pd.Series([], dtype=object), "doc": pd.Series([], dtype=object), "grade": pd.Series([], dtype="int64")})
    qrels = qrels.drop_duplicates(["topic", "doc"], keep="last").reset_index(drop=True)
    qrels["grade"] = qrels["grade"].astype("int64")
    topics = _read_topics(root / "topics")
    meta = _normalize_meta(_frame(cfg.get("runs") or {}, ["run"]), runs)
    return Opened(root, cfg, runs, qrels, topics, meta, w)


def _read_log(path: Path, w: Warnings) -> pd.DataFrame:
    state: dict[tuple[str, str], list[int]] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            w.add(str(path), i, "unreadable log line ignored")
            continue
        key = (str(rec.get("topic")), str(rec.get("doc")))
        if rec.get("op", "judge") == "undo":
            if state.get(key):
                state[key].pop()
        else:
            state.setdefault(key, []).append(int(rec.get("grade", 0)))
    rows = [(t, d, g[-1]) for (t, d), g in state.items() if g]
    return pd.DataFrame(rows, columns=["topic", "doc", "grade"])


def _read_topics(folder: Path) -> pd.DataFrame:
    import re

    rows: list[tuple[str, str]] = []
    if folder.is_dir():
        for p in sorted(folder.iterdir()):
            if p.suffix == ".tsv":
                for line in p.read_text(encoding="utf-8").splitlines():
                    parts = line.split("\t")
                    if parts and parts[0].strip():
                        rows.append((parts[0].strip(), parts[1].strip() if len(parts) > 1 else ""))
            elif p.suffix == ".jsonl":
                for line in p.read_text(encoding="utf-8").splitlines():
                    if line.strip():
                        rec = json.loads(line)
                        rows.append((str(rec.get("id", rec.get("topic", ""))), str(rec.get("title", ""))))
            elif p.suffix in (".txt", ".sgml"):
                text = p.read_text(encoding="utf-8", errors="replace")
                for top in re.findall(r"<top>(.*?)</top>", text, flags=re.S | re.I):
                    num = re.search(r"<num>\s*(?:Number:)?\s*(\S+)", top, flags=re.I)
                    title = re.search(r"<title>\s*(?:Topic:)?\s*(.*?)\s*(?:<|$)", top, flags=re.I | re.S)
                    if num:
                        rows.append((num.group(1), title.group(1).strip() if title else ""))
    return pd.DataFrame(rows, columns=["topic", "title"]) if rows else _normalize_topics(None)


def load_docs(root: Path) -> dict[str, dict]:
    """The campaign's document store (docs/docs.jsonl) as id -> {title, text}; empty when absent."""
    p = Path(root) / "docs" / "docs.jsonl"
    out: dict[str, dict] = {}
    if p.is_file():
        for line in p.read_text(encoding="utf-8").splitlines():
            if line.strip():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue
                out[str(rec.get("id"))] = rec
    return out
