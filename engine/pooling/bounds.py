"""Stratum bounds against the pool depth (`cranfield pool --strategy stratified --param bounds=...`).

Candidates are read only to the pool depth, so a stratum bound beyond it would silently stop there.
`depth_for_bounds` extends the depth to the deepest bound when the depth was not given explicitly,
and refuses with a clear message when it was.
"""
from __future__ import annotations

from ..errors import CranfieldError

DEFAULT_DEPTH = 100


def depth_for_bounds(strategy: str, params: dict, depth: int | None) -> tuple[int, str | None]:
    """(depth to pool to, note to print or None); raises when an explicit depth is shallower than a bound."""
    bounds = params.get("bounds")
    if strategy != "stratified" or bounds is None:
        return (DEFAULT_DEPTH if depth is None else depth), None
    bl = bounds if isinstance(bounds, (list, tuple)) else [bounds]
    deepest = max(int(b) for b in bl)
    if depth is None:
        if deepest > DEFAULT_DEPTH:
            return deepest, (f"pool depth extended from {DEFAULT_DEPTH} to {deepest}, the deepest stratum bound "
                             f"(bounds={','.join(str(int(b)) for b in bl)})")
        return DEFAULT_DEPTH, None
    if deepest > depth:
        raise CranfieldError(f"stratum bound {deepest} is beyond the pool depth {depth}: documents below rank "
                             f"{depth} are never pooled, so that stratum would silently stop at {depth} "
                             f"(use --depth {deepest}, or bounds no deeper than {depth})")
    return depth, None
