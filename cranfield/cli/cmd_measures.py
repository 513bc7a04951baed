"""`cranfield measures`: list every registered measure with its parameters and nicknames."""
from __future__ import annotations

import sys


def register(sub) -> None:
    p = sub.add_parser("measures", help="list the measures (name, parameters, nicknames, description)")
    p.add_argument("names", nargs="*", help="show the full description of these measures")
    p.set_defaults(func=run)


def param_lines(m, indent: str = "    ") -> list[str]:
    """One line per parameter of measure `m`: how it is written, its type, default and meaning."""
    out = []
    for s in m.param_specs:
        out.append(f"{indent}{s.name:<10} {s.type:<6} default {s.shown_default:<30} {s.doc}")
    return out


def _how(m) -> str:
    """How a measure's parameters are written after its name."""
    if m.param_kind in ("int_cut", "float_cut", "float_params"):
        return f"{m.name}.{','.join(s.name if s.type in ('int', 'float') else s.name + ',...' for s in m.param_specs)}"
    return f"{m.name}.name=value,..."


def run(args) -> int:
    from engine.errors import CranfieldError
    from engine.measures import load_all
    from engine.measures.registry import lookup

    load_all()
    out = sys.stdout
    if args.names:
        for n in args.names:
            m = lookup(n)
            if m is None:
                raise CranfieldError(f"unknown measure {n!r}; `cranfield measures` lists them all")
            if m.param_specs:
                params = "\n".join([f"  parameters ({_how(m)}):"] + param_lines(m))
            elif getattr(m, "base", ""):             # gdeval's measures: the cut-off is part of the name
                params = f"  parameters: (none; the cut-off is written in the name: {m.base}@k)"
            else:
                params = "  parameters: (none)"
            out.write(f"{m.name}\n{params}\n  summary over topics: {m.aggregate}\n"
                      f"  nicknames: {', '.join(sorted(m.nicknames)) or '-'}\n  {m.doc}\n\n")
        return 0
    from engine.measures.registry import REGISTRY, measures_table
    for r in measures_table().itertuples(index=False):
        m = REGISTRY[r.name]
        names = ",".join(s.name for s in m.param_specs)
        out.write(f"{r.name:<24} {names[:16]:<16} {r.nicknames:<22} {r.description[:80]}\n")
        for line in param_lines(m):             # indented below the measure's line
            out.write(line + "\n")
    return 0
