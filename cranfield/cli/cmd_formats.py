"""`cranfield check FILE|DIR ...`: validate run, judgment, topic, log and campaign files.

Prints every problem as `file:line: what is wrong` and every warning; exits non-zero on any error.
"""
from __future__ import annotations

import sys
from pathlib import Path

from engine.errors import CranfieldError, FormatError, Warnings

KINDS = ("run", "qrels", "prels", "sample", "topics", "log", "yaml", "campaign")


def register(sub) -> None:
    p = sub.add_parser("check", help="validate input files (runs, qrels, prels, sample, topics, logs, campaigns)",
                       description="Validate files and report every malformed line as file:line: what is wrong. "
                                   "The kind of each file is detected from its name and content unless --kind "
                                   "is given; a directory is checked as a campaign. Exit status 3 on errors.")
    p.add_argument("paths", nargs="+", help="files or campaign directories")
    p.add_argument("--kind", choices=KINDS, help="treat every file as this kind")
    p.add_argument("--topics", help="a topics file: warn about run topics it does not define")
    p.set_defaults(func=run)


def detect_kind(path: Path) -> str:
    """The kind of an input file, from its name, then its first data line."""
    from engine.formats.detect import detect_judgment_kind
    from engine.formats.files import read_bytes
    if path.is_dir():
        return "campaign"
    name = path.name.lower().removesuffix(".gz")
    if name in ("campaign.yaml", "campaign.yml") or name.endswith((".yaml", ".yml")):
        return "yaml"
    if name.endswith((".jsonl", ".json")):
        first = read_bytes(path)[:65536].lstrip().split(b"\n")[0]
        try:
            from engine.formats.safeload import loads_json
            obj = loads_json(first, str(path))
        except ValueError:
            return "log"
        if path.parent.name == "topics":
            return "topics"
        return "topics" if isinstance(obj, dict) and not {"doc", "grade", "op"} & set(obj) else "log"
    if name.endswith((".tsv", ".sgml", ".sgm")) or b"<top" in read_bytes(path)[:4096].lower():
        return "topics"
    if name.endswith((".qrels", ".prels", ".sample")):
        return name.rsplit(".", 1)[1]
    data = read_bytes(path)
    first = next((ln.split() for ln in data[:65536].split(b"\n") if ln.strip() and not ln.lstrip().startswith(b"#")),
                 [])
    if len(first) == 6:
        return "run"
    if len(first) == 5:
        return detect_judgment_kind(path, data)
    return "qrels"


def check_path(path: Path, kind: str | None, w: Warnings, topics=None) -> str:
    """Read `path` as `kind`; returns a one-line summary, raises FormatError/CranfieldError on errors."""
    from engine import formats
    from engine.campaign.campaign import load_campaign, read_config, read_judgment_log
    from engine.formats.topics import read_topics

    kind = kind or detect_kind(path)
    if kind == "run":
        df = formats.read_run(path, w)
        if topics is not None and len(df):
            formats.warn_unknown_topics(df, topics, w, source=str(path))
        tag = df["run"].iat[0] if len(df) else "-"
        return f"run {tag}: {df['topic'].nunique()} topics, {len(df)} results"
    if kind in ("qrels", "prels", "sample"):
        df = formats.read_judgments(path, w, kind=kind)
        return (f"{kind}: {df['topic'].nunique()} topics, {len(df)} judgments, "
                f"{int((df['grade'] >= 1).sum())} with grade >= 1")
    if kind == "topics":
        df = read_topics(path, w)
        return f"topics: {len(df)} topics"
    if kind == "log":
        df = read_judgment_log(path, w)
        return f"assessor log: {len(df)} entries ({int((df['op'] == 'judge').sum())} judgments)"
    if kind == "yaml":
        cfg = read_config(path)
        return f"campaign.yaml: valid ({cfg['name']!r})"
    camp = load_campaign(path, w)
    runs, qrels, topics_df = camp.runs(), camp.qrels(), camp.topics()
    camp.run_meta()
    camp.truth_qrels()
    from engine.judgments.sources import list_sources, source_judgments
    for src in list_sources(camp):
        if src.kind == "auto":
            source_judgments(camp, src.name, w)        # an automatic grade off the scale is an error
    return (f"campaign {camp.name!r}: {runs['run'].nunique() if len(runs) else 0} runs, {len(topics_df)} topics, "
            f"{len(qrels)} judgments")


def run(args) -> int:
    topics = None
    if args.topics:
        from engine.formats.topics import read_topics
        topics = read_topics(args.topics)["topic"].tolist()
    failed = 0
    for p in args.paths:
        path = Path(p)
        w = Warnings()
        try:
            summary = check_path(path, args.kind, w, topics)
        except FormatError as exc:
            failed += 1
            for prob in exc.problems:
                print(f"error: {prob}", file=sys.stderr)
            if exc.hint:
                print(f"hint: {exc.hint}", file=sys.stderr)
            summary = None
        except CranfieldError as exc:
            failed += 1
            print(f"error: {exc}", file=sys.stderr)
            summary = None
        for prob in w:
            print(f"warning: {prob}", file=sys.stderr)
        if summary is not None:
            print(f"{p}: ok — {summary}" + (f" ({len(w)} warnings)" if len(w) else ""))
    return 3 if failed else 0
