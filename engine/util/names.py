"""Names the command line lists (pool strategies, experiment designs), kept free of heavy imports so
`cranfield --help` does not load pandas; the implementing modules check they match (tests/test_startup.py)."""
from __future__ import annotations

STATIC_STRATEGIES = ("depth", "take_n", "uniform", "stratified", "statap")
FUSION_STRATEGIES = ("rrf", "rbp")
ONLINE_STRATEGIES = ("mtf", "hedge", "mtc")
POOL_STRATEGIES = STATIC_STRATEGIES + FUSION_STRATEGIES + ONLINE_STRATEGIES

# experiment design label -> (pool strategy, measure computing the estimate)
DESIGNS: dict[str, tuple[str, str]] = {
    "xinfAP@stratified": ("stratified", "xinfAP"),
    "infAP@uniform": ("uniform", "infAP"),
    "AP@uniform": ("uniform", "map"),
    "AP@stratified": ("stratified", "map"),
    "statAP@statap": ("statap", "statAP"),
    "AP@depth": ("take_n", "map"),
    "AP@mtf": ("mtf", "map"),
    "AP@hedge": ("hedge", "map"),
    "AP@mtc": ("mtc", "map"),
}
DEFAULT_DESIGNS = ("xinfAP@stratified", "infAP@uniform", "AP@uniform", "statAP@statap", "AP@depth", "AP@mtc")


def natural_key(topic: object) -> tuple:
    """Sort key of the natural topic order used by every face: digit runs compare as numbers, the rest
    as text ("2" < "10", "q2" < "q10", numeric ids before named ones); any Unicode text is a valid id."""
    import re
    parts = re.split(r"(\d+)", str(topic))            # even places text, odd places decimal digit runs
    return tuple((int(c), c) if i % 2 else c for i, c in enumerate(parts))


def natural_sorted(topics) -> list:
    """The topics (any iterable of ids) in natural order."""
    return sorted(topics, key=natural_key)
