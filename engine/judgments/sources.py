"""Judgment sources: who (or what) judged, kept apart so they can be compared and combined.

A campaign's sources:
- `human`: the campaign's judgments as before (imported files in judgments/ plus the assessor log);
- `assessor:NAME`: the log's judgments by one assessor (double judging gives two such sources);
- imported label sets in judgments/sources/: `NAME.qrels` with `NAME.meta.json` (kind, model,
  prompt_version, origin), written by `cranfield judgments import`; a 6-column relevance-judgment file
  (`topic Q0 docid judgment confidence runid`) gives one source per runid;
- automatic judges' logs `judgments/sources/NAME.jsonl` (`cranfield judgments auto`): each record
  carries kind `auto`, model and prompt version.

campaign.yaml's `sources:` key names the official source and how sources combine:

    sources:
      official: human          # the source official scores use (default human)
      combine: official        # official | fill | majority | precedence
      fill: llm                # combine fill: this source judges what the official one left unjudged
      precedence: [human, llm] # combine precedence / majority: the sources, first wins / votes

`combine_spec` reads the same rules written inline (`official+llm`, `majority:a,b,c`) for
`cranfield eval --judgments`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import CranfieldError, FormatError, Problem, Warnings
from ..util import fs

SOURCES_DIR = Path("judgments") / "sources"
HUMAN = "human"
COMBINE_RULES = ("official", "fill", "majority", "precedence")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]*$")
RJ6_LABEL = "topic Q0 docid judgment confidence runid"


@dataclass
class Source:
    """One judgment source and what is known about it."""

    name: str
    kind: str                    # human | assessor | imported | auto
    model: str = ""
    prompt_version: str = ""
    path: str = ""
    meta: dict = field(default_factory=dict)


def check_name(name: str, where: str = "source name") -> str:
    if not _NAME_RE.match(str(name)) or name in ("official", "campaign"):
        raise CranfieldError(f"{where} {name!r}: use letters, digits and . _ : @ - (not 'official' or "
                             f"'campaign', which name rules)")
    return str(name)


def sources_dir(root) -> Path:
    """judgments/sources/ of the campaign, confined."""
    from engine.util.confine import campaign_path
    return campaign_path(root, "sources")


# ---------------------------------------------------------------------------- import

def read_rj6(path, warnings: Warnings | None = None) -> dict[str, pd.DataFrame]:
    """A 6-column relevance-judgment file: one judgment table (topic, doc, grade, confidence, line)
    per runid, in file order. Malformed lines raise FormatError naming file:line."""
    from ..formats.files import _Col, read_table
    cols = [_Col("topic", "str", "a topic id"), _Col("q0", "str", "the literal Q0"),
            _Col("doc", "str", "a document id"), _Col("grade", "int", "an integer grade"),
            _Col("confidence", "float", "a number (the judge's confidence)"), _Col("runid", "str", "a run id")]
    df = read_table(path, cols, RJ6_LABEL)
    if not len(df):
        raise FormatError(Problem(str(path), None, "file is empty (holds no judgments)"),
                          hint=f"a line reads: {RJ6_LABEL}")
    out = {}
    for rid, g in df.groupby("runid", sort=False):
        check_name(rid, f"{path}:{int(g['line'].iat[0])}: runid")
        out[str(rid)] = g[["topic", "doc", "grade", "confidence", "line"]].reset_index(drop=True)
    return out


def detect_rj6(path) -> bool:
    """True when the first data line has 6 fields (topic Q0 docid judgment confidence runid)."""
    from ..formats.files import read_bytes
    for ln in read_bytes(path).split(b"\n"):
        t = ln.split()
        if t and not t[0].startswith(b"#"):
            return len(t) == 6
    return False


def import_source(root, path, name: str | None = None, fmt: str | None = None, kind: str = "imported",
                  model: str = "", prompt_version: str = "", warnings: Warnings | None = None) -> list[str]:
    """Import an external label set as named source(s) of the campaign at `root`: a qrels file (one
    source, `name` or the file's stem) or a 6-column file (one source per runid, prefixed with `name.`
    when given). Returns the source names written."""
    from ..formats.detect import read_judgments
    from ..formats.qrels import write_qrels
    from ..formats.files import write_text
    w = warnings if warnings is not None else Warnings()
    p = Path(path)
    fmt = fmt or ("rj6" if detect_rj6(p) else "qrels")
    if fmt == "rj6":
        tables = {(f"{name}.{rid}" if name else rid): t for rid, t in read_rj6(p, w).items()}
    elif fmt == "qrels":
        t = read_judgments(p, w)
        tables = {name or p.name.split(".")[0]: t}
    else:
        raise CranfieldError(f"import format {fmt!r}: qrels or rj6")
    d = sources_dir(root)
    written = []
    for n, t in tables.items():
        check_name(n)
        if n == HUMAN or n.startswith("assessor:"):
            raise CranfieldError(f"source name {n!r} is reserved; pass --name")
        write_qrels(d / f"{n}.qrels", t[["topic", "doc", "grade"]].assign(
            topic=t["topic"].astype(str), doc=t["doc"].astype(str)))
        meta = {"name": n, "kind": kind, "model": model, "prompt_version": prompt_version, "origin": str(p),
                "format": fmt, "judgments": int(len(t))}
        if "confidence" in t:
            meta["mean_confidence"] = float(t["confidence"].mean())
        write_text(d / f"{n}.meta.json", json.dumps(meta, indent=1) + "\n")
        written.append(n)
    return written


# ---------------------------------------------------------------------------- listing and reading

def list_sources(camp) -> list[Source]:
    """Every source of a campaign: human, one per assessor in the log, imported and automatic ones."""
    out = [Source(HUMAN, "human", path=str(camp.root / "judgments"))]
    log = camp.log()
    if log is not None and len(log):
        judges = log[log["op"] == "judge"]
        for a in sorted(set(judges["assessor"].astype(str)) - {""}):
            out.append(Source(f"assessor:{a}", "assessor", path=str(camp.log_path())))
    d = sources_dir(camp.root)
    if fs.is_dir(d):
        from engine.util.confine import confine
        for p in fs.glob(d):
            if p.name.startswith("."):
                continue
            confine(camp.root, p)
            if p.suffix == ".qrels":
                meta = {}
                mp = p.with_suffix(".meta.json")
                if fs.is_file(mp):
                    from ..formats.safeload import json_line
                    try:
                        meta = json_line(fs.read_text(mp), mp, 1)
                    except (OSError, ValueError):
                        meta = {}
                out.append(Source(p.stem, str(meta.get("kind") or "imported"), str(meta.get("model") or ""),
                                  str(meta.get("prompt_version") or ""), str(p), meta))
            elif p.suffix == ".jsonl" and not p.name.endswith(".errors.jsonl"):
                meta = _auto_meta(p)
                out.append(Source(p.stem, "auto", meta.get("model", ""), meta.get("prompt_version", ""), str(p), meta))
    return out


def model_sources(camp) -> list[str]:
    """The campaign's non-human judgment sources (imported, automatic, simulated)."""
    return [s.name for s in list_sources(camp) if s.kind not in ("human", "assessor")]


def _auto_meta(p: Path) -> dict:
    from ..formats.safeload import json_line
    try:
        with fs.open(p, "rb") as fh:
            first = fh.readline()
        rec = json_line(first, p, 1)
        return {k: str(rec.get(k) or "") for k in ("model", "prompt_version", "endpoint")}
    except (OSError, ValueError):
        return {}


def source_names(camp) -> list[str]:
    return [s.name for s in list_sources(camp)]


def _refuse_off_scale(camp, q: pd.DataFrame, path) -> None:
    """An automatic source's grades must lie on the campaign's scale (a model's 3 on a 0-2 scale is refused
    when recorded; a log written before that check is refused here, not used)."""
    scale = set(camp.scale())
    g = q["grade"].to_numpy(np.int64)
    bad = sorted(set(g[(g >= 0) & ~np.isin(g, list(scale))].tolist()))
    if bad:
        from ..errors import FormatError, Problem
        raise FormatError(Problem(str(path), None, f"grade(s) {bad} are not on the campaign's relevance.scale "
                                                   f"({', '.join(map(str, sorted(scale)))})"),
                          hint=f"judge again with `cranfield judgments auto ... --grade-map {bad[-1]}={max(scale)}` "
                               f"under a new source name, or add the grade to relevance.scale")


def source_judgments(camp, name: str, warnings: Warnings | None = None, canaries: bool = False) -> pd.DataFrame:
    """One source's judgments: topic, doc, grade (one per document; repeated judgments by the
    campaign's conflict rule), only grades >= 0; without the canaries planted in pools
    (engine.judgments.audit) unless `canaries` (the audit's view)."""
    from .log import apply_undo, read_log, resolve_judgments
    w = warnings if warnings is not None else camp.warnings
    name = resolve_name(camp, name)
    rule = camp.conflict_rule()
    if name == HUMAN:
        q = camp.qrels()
        q = q[q["grade"] >= 0]
    elif name.startswith("assessor:"):
        log = camp.log()
        if log is None:
            raise CranfieldError(f"source {name}: the campaign has no assessor log")
        j = apply_undo(log, w, str(camp.log_path()))
        j = j[j["assessor"].astype(str) == name.split(":", 1)[1]]
        if not len(j):
            raise CranfieldError(f"source {name}: no judgments by this assessor in the log")
        q = resolve_judgments(j, rule, w, str(camp.log_path()))
    else:
        d = sources_dir(camp.root)
        from engine.util.confine import confine
        qp, lp = confine(camp.root, d / f"{name}.qrels"), confine(camp.root, d / f"{name}.jsonl")
        if qp.is_file():
            from ..formats.qrels import read_qrels
            q = read_qrels(qp, w)
        elif lp.is_file():
            q = resolve_judgments(apply_undo(read_log(lp, w), w, str(lp)), "last", w, str(lp))
            _refuse_off_scale(camp, q, lp)
        else:
            raise CranfieldError(f"unknown judgment source {name!r}; the campaign has: "
                                 f"{', '.join(source_names(camp))} (import one with `cranfield judgments import`)")
    q = q[q["grade"] >= 0]
    if not canaries or name == HUMAN:       # the human table (camp.qrels) never holds canaries
        from .canaries import drop_canaries
        q = drop_canaries(camp.root, q)
    out = pd.DataFrame({"topic": q["topic"].astype(str).to_numpy(object), "doc": q["doc"].astype(str).to_numpy(object),
                        "grade": q["grade"].to_numpy(np.int64)})
    return out.sort_values(["topic", "doc"], kind="mergesort").reset_index(drop=True)


# ---------------------------------------------------------------------------- configuration and combining

def source_config(camp) -> dict:
    """campaign.yaml `sources:` with defaults, checked: official, combine, fill, precedence."""
    raw = camp.config.get("sources") or {}
    cp = str(camp.config_path)
    if not isinstance(raw, dict):
        raise FormatError(Problem(cp, None, "sources: must be a mapping (official, combine, fill, precedence)"))
    unknown = set(raw) - {"official", "combine", "fill", "precedence"}
    if unknown:
        raise FormatError(Problem(cp, None, f"sources.{sorted(unknown)[0]}: unknown key; allowed: official, "
                                            f"combine, fill, precedence"))
    cfg = {"official": str(raw.get("official") or HUMAN), "combine": str(raw.get("combine") or "official"),
           "fill": raw.get("fill"), "precedence": list(raw.get("precedence") or [])}
    if cfg["combine"] not in COMBINE_RULES:
        raise FormatError(Problem(cp, None, f"sources.combine: {cfg['combine']!r} is not a rule; use one of "
                                            f"{', '.join(COMBINE_RULES)}"))
    if cfg["combine"] == "fill" and not cfg["fill"]:
        raise FormatError(Problem(cp, None, "sources.combine is fill but sources.fill names no source; add "
                                            "`fill: NAME`"))
    if cfg["combine"] in ("precedence", "majority") and len(cfg["precedence"]) < 2:
        raise FormatError(Problem(cp, None, f"sources.combine is {cfg['combine']}: list at least two sources in "
                                            f"sources.precedence"))
    return cfg


def resolve_name(camp, name: str) -> str:
    """`official` -> the configured official source; other names unchanged."""
    return source_config(camp)["official"] if name == "official" else name


def combine_spec(camp, spec: str | None = None) -> tuple[str, list[str]]:
    """(rule, sources) from an inline spec (`official`, `a+b[+c]`, `majority:a,b,c`, `campaign`) or,
    when None / `campaign`, from campaign.yaml."""
    if spec is None or spec == "campaign":
        c = source_config(camp)
        if c["combine"] == "official":
            return "official", [c["official"]]
        if c["combine"] == "fill":
            return "precedence", [c["official"], str(c["fill"])]
        return c["combine"], [resolve_name(camp, s) for s in c["precedence"]]
    spec = spec.strip()
    if spec.startswith("majority:"):
        names = [resolve_name(camp, s.strip()) for s in spec[9:].split(",") if s.strip()]
        if len(names) < 2:
            raise CranfieldError(f"--judgments {spec}: majority needs at least two sources (majority:a,b,c)")
        return "majority", names
    names = [resolve_name(camp, s.strip()) for s in spec.split("+") if s.strip()]
    if not names:
        raise CranfieldError(f"--judgments {spec!r}: name a source, e.g. official, official+llm, majority:a,b,c")
    return ("official" if len(names) == 1 else "precedence"), names


def combine(tables: dict[str, pd.DataFrame], rule: str, order: list[str]) -> pd.DataFrame:
    """Combine per-source judgment tables: `precedence` (the first source in `order` that judged a
    document gives its grade; with two sources this is hole filling), `majority` (the most frequent
    grade among the sources; ties go to the earliest source in `order` among the tied grades),
    `official` (the first source only). Columns topic, doc, grade, source (which source gave the grade)."""
    if rule == "official":
        order = order[:1]
    parts = []
    for i, n in enumerate(order):
        t = tables[n][["topic", "doc", "grade"]].copy()
        t["source"] = n
        t["_pos"] = i
        parts.append(t)
    df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["topic", "doc", "grade", "source", "_pos"])
    if rule in ("official", "precedence"):
        out = df.sort_values("_pos", kind="mergesort").drop_duplicates(["topic", "doc"], keep="first")
    elif rule == "majority":
        cnt = df.groupby(["topic", "doc", "grade"], sort=False).agg(votes=("_pos", "size"), first=("_pos", "min"))
        cnt = cnt.reset_index().sort_values(["votes", "first"], ascending=[False, True], kind="mergesort")
        best = cnt.drop_duplicates(["topic", "doc"], keep="first")
        out = best.merge(df[["topic", "doc", "grade", "_pos", "source"]], left_on=["topic", "doc", "grade", "first"],
                         right_on=["topic", "doc", "grade", "_pos"], how="left")
    else:
        raise CranfieldError(f"combine rule {rule!r}: use one of {', '.join(COMBINE_RULES)}")
    out = out[["topic", "doc", "grade", "source"]].sort_values(["topic", "doc"], kind="mergesort")
    return out.astype({"grade": np.int64}).reset_index(drop=True)


def combined_judgments(camp, spec: str | None = None, warnings: Warnings | None = None) -> pd.DataFrame:
    """The judgments a spec (or campaign.yaml's rule) gives: topic, doc, grade, source."""
    rule, names = combine_spec(camp, spec)
    tables = {n: source_judgments(camp, n, warnings) for n in dict.fromkeys(names)}
    return combine(tables, rule, names)


def source_counts(combined: pd.DataFrame) -> dict[str, int]:
    """How many judgments each source contributed to a combined table."""
    return {str(k): int(v) for k, v in combined["source"].value_counts(sort=False).items()}


# ---------------------------------------------------------------------------- hole filling

def hole_filling(camp, fill: str, measures: list[str] | None = None, base: str = "official",
                 warnings: Warnings | None = None) -> pd.DataFrame:
    """Evaluate every run with `base` judgments alone and with `fill` judging the documents `base`
    left unjudged. Per (measure, run): score and rank under each, their change. Ranks by decreasing
    mean (1 = best; ties share the better rank)."""
    from .agreement import mean_scores
    w = warnings if warnings is not None else camp.warnings
    base = resolve_name(camp, base)
    fill = resolve_name(camp, fill)
    a = source_judgments(camp, base, w)
    tables = {base: a, fill: source_judgments(camp, fill, w)}
    filled = combine(tables, "precedence", [base, fill])
    runs = camp.runs()
    opt = camp.eval_options()
    rows = []
    for m in (measures or camp.measures()):
        s0 = mean_scores(a, runs, m, opt, camp.gains())
        s1 = mean_scores(filled, runs, m, opt, camp.gains())
        t = pd.DataFrame({"measure": m, "run": s0.index.astype(str), "score": s0.to_numpy(),
                          "filled_score": s1.reindex(s0.index).to_numpy()})
        t["rank"] = t["score"].rank(ascending=False, method="min").astype(np.int64)
        t["filled_rank"] = t["filled_score"].rank(ascending=False, method="min").astype(np.int64)
        t["delta"] = t["filled_score"] - t["score"]
        t["rank_change"] = t["rank"] - t["filled_rank"]
        rows.append(t.sort_values("rank", kind="mergesort"))
    out = pd.concat(rows, ignore_index=True)
    # which judgments the filled scores used: share of each run's top 10 judged by the fill source
    share = judged_by(runs, filled, [fill], 10)
    out["filled@10"] = out["run"].map(share).fillna(0.0).to_numpy(float)
    out.attrs["filled"] = int((filled["source"] == fill).sum())
    out.attrs["base"], out.attrs["fill"] = base, fill
    return out


def judged_by(runs: pd.DataFrame, combined: pd.DataFrame, sources, k: int = 10) -> pd.Series:
    """Per run: the share of its top-k documents (trec_eval order, over all its topics) whose judgment in
    `combined` (topic, doc, source) came from one of `sources` -- filled@k when `sources` is the source
    filling the official judgments' holes (`cranfield holes`, the TUI leaderboard)."""
    from ..ranking.join import judgment_keys, ranked_rows
    if not len(runs):
        return pd.Series([], dtype=np.float64)
    idx, _ = ranked_rows(runs, k)
    top = runs.iloc[idx]
    rk, qk, n_keys = judgment_keys(top, combined)
    hit = np.zeros(n_keys, bool)
    hit[qk] = combined["source"].isin(set(sources)).to_numpy(bool)
    return pd.Series(hit[rk]).groupby(top["run"].astype(str).to_numpy(object)).mean().astype(np.float64)


def judgment_choices(camp) -> list[tuple[str, str]]:
    """The judgment specs a campaign offers (for `eval --judgments` and the TUI's switch), with a
    description: `official`, `official+S` for every other source S not nested with it (S fills the
    official holes), and `campaign` when campaign.yaml's sources.combine is not `official`."""
    cfg = source_config(camp)
    off = cfg["official"]
    out = [("official", f"official ({off}) judgments only")]
    sources = list_sources(camp)
    for s in sources:
        if _nested(off, s.name, sources):       # itself, or part of it: would fill official with itself
            continue
        what = s.kind + (f", model {s.model}" if s.model else "")
        out.append((f"official+{s.name}", f"{off}, unjudged documents judged by {s.name} ({what})"))
    if cfg["combine"] != "official":
        rule, names = combine_spec(camp, "campaign")
        out.append(("campaign", f"campaign.yaml rule: {rule} of {', '.join(names)}"))
    return out


def _nested(a: str, b: str, sources: list[Source]) -> bool:
    kinds = {s.name: s.kind for s in sources}
    return a == b or (a == HUMAN and kinds.get(b) == "assessor") or (b == HUMAN and kinds.get(a) == "assessor")


def nested(camp, a: str, b: str) -> bool:
    """One of sources a, b holds the other's judgments: `human` (imported judgments and the whole
    assessor log) holds every `assessor:NAME`; a source holds itself. Comparing or combining such a
    pair measures a source against part of itself."""
    return _nested(resolve_name(camp, a), resolve_name(camp, b), list_sources(camp))


def agreement_pair(camp) -> tuple[str, str | None]:
    """The two sources to compare first: the official one and the first source not nested with it;
    else the first two sources neither of which holds the other (two assessors of double judging);
    (official, None) when there is no such pair."""
    sources = list_sources(camp)
    off = resolve_name(camp, "official")
    names = [s.name for s in sources]
    others = [n for n in names if not _nested(off, n, sources)]
    if others:
        return off, others[0]
    free = [(x, y) for i, x in enumerate(names) for y in names[i + 1:] if not _nested(x, y, sources)]
    return free[0] if free else (off, None)


def non_official(camp, spec: str | None) -> list[str]:
    """The sources other than the official one that a judgment spec combines ([] for official only)."""
    if spec is None:
        return []
    off = resolve_name(camp, "official")
    rule, names = combine_spec(camp, spec)
    return [n for n in dict.fromkeys(names if rule != "official" else names[:1]) if n != off]
