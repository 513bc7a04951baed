"""`cranfield docs`: the campaign's document text store (import TREC SGML / JSONL, fetch, count)."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from engine.errors import CranfieldError


def register(sub) -> None:
    p = sub.add_parser("docs", help="document text: import TREC SGML or JSONL into docs/docs.sqlite, fetch by id",
                       description="The campaign's document store (docs/docs.sqlite): random access by id for "
                                   "millions of documents, read by the judging screen and the relevance "
                                   "classifiers. Imports stream (bounded memory) in one transaction.")
    dsub = p.add_subparsers(dest="docs_command", metavar="ACTION")
    i = dsub.add_parser("import", help="import TREC SGML (<DOC><DOCNO>..<TEXT>) or JSONL files")
    i.add_argument("campaign", help="campaign directory")
    i.add_argument("files", nargs="+", help="document files (.gz allowed)")
    i.add_argument("--format", choices=["trec", "jsonl"], default=None,
                   help="file format (default: from the name, else from the first line)")
    i.add_argument("--no-replace", action="store_true", help="refuse documents whose id is already stored")
    i.set_defaults(func=run_import)
    g = dsub.add_parser("get", help="print documents by id")
    g.add_argument("campaign")
    g.add_argument("ids", nargs="+")
    g.add_argument("--format", choices=["text", "json"], default="text")
    g.set_defaults(func=run_get)
    s = dsub.add_parser("stats", help="how many documents the store holds")
    s.add_argument("campaign")
    s.set_defaults(func=run_stats)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def _campaign_root(path: str) -> Path:
    root = Path(path)
    if not (root / "campaign.yaml").is_file():
        raise CranfieldError(f"{root}: not a campaign directory (no campaign.yaml)")
    return root


def run_import(args) -> int:
    from engine.documents.store import STORE_NAME, DocStore

    root = _campaign_root(args.campaign)
    t0 = time.perf_counter()
    with DocStore.open(root / "docs" / STORE_NAME, create=True) as st:
        total = 0
        for f in args.files:
            n = st.import_file(f, args.format, replace=not args.no_replace)
            print(f"{f}: {n} documents", file=sys.stderr)
            total += n
        print(f"imported {total} documents into {st.path} ({len(st)} stored) "
              f"in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


def _open(root: Path):
    from engine.documents.store import DocStore
    st = DocStore.for_campaign(root)
    if st is None:
        raise CranfieldError(f"{root}: no document text (docs/docs.sqlite or docs/docs.jsonl); "
                             f"import some with cranfield docs import {root} FILE")
    return st


def run_get(args) -> int:
    st = _open(_campaign_root(args.campaign))
    rc = 0
    for i in args.ids:
        d = st.get(i)
        if d is None:
            print(f"cranfield: {i}: no such document in the store", file=sys.stderr)
            rc = 3
        elif args.format == "json":
            print(json.dumps(d.as_dict(), ensure_ascii=False))
        else:
            print(f"{d.id}\n{d.title}\n{d.text}\n")
    return rc


def run_stats(args) -> int:
    st = _open(_campaign_root(args.campaign))
    print(f"{len(st)} documents ({st.path or 'docs/docs.jsonl, read in memory'})")
    return 0
