"""`cranfield measures`: list every registered measure with its parameters and nicknames."""
from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser("measures", help="list the measures (name, default parameters, nicknames, description)")
    p.add_argument("names", nargs="*", help="show the full description of these measures")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..errors import CranfieldError
    from ..measures import load_all
    from ..measures.registry import lookup

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
    for m in sorted(reg.values(), key=lambda m: (m.extension, m.order, m.name)):
        params = ",".join(str(p) for p in m.params) if m.params else ""
        nick = ",".join(sorted(m.nicknames))
        first = (m.doc.splitlines() or [""])[0]
        out.write(f"{m.name:<24} {params[:28]:<28} {nick:<22} {first[:70]}\n")
    return 0
