"""`cranfield measures`: list every registered measure with its parameters and nicknames."""
from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser("measures", help="list the measures (name, default parameters, nicknames, description)")
    p.add_argument("names", nargs="*", help="show the full description of these measures")
    p.set_defaults(func=run)


def run(args) -> int:
    from engine.errors import CranfieldError
    from engine.measures import load_all
    from engine.measures.registry import lookup

    reg = load_all()
    out = sys.stdout
    if args.names:
        for n in args.names:
            m = lookup(n)
            if m is None:
                raise CranfieldError(f"unknown measure {n!r}; `cranfield measures` lists them all")
            out.write(f"{m.name}\n  parameters: {m.params if m.params else '-'} ({m.param_kind})\n"
                      f"  summary over topics: {m.aggregate}\n  nicknames: {', '.join(sorted(m.nicknames)) or '-'}\n"
                      f"  {m.doc}\n\n")
        return 0
    from engine.measures.registry import measures_table
    for r in measures_table().itertuples(index=False):
        out.write(f"{r.name:<24} {r.parameters[:28]:<28} {r.nicknames:<22} {r.description[:70]}\n")
    return 0
