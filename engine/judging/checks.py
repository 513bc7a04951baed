"""Checks on a new judgment before it is written (grade in the campaign's scale, known topic, sane time)."""
from __future__ import annotations

import math
from pathlib import Path

from ..errors import CranfieldError
from ..formats.grammar import GRADE_MAX, GRADE_MIN, parse_int


def default_assessor(given: str | None = None) -> str:
    """The assessor name of every face: `given` (a --assessor / --by option), else $CRANFIELD_ASSESSOR, else
    $USER, else "" (refused by `check_new_judgment` with what to do)."""
    import os
    if given is not None:
        return given
    return os.environ.get("CRANFIELD_ASSESSOR") or os.environ.get("USER") or ""


def _campaign_facts(root: Path) -> tuple[set[int] | None, set[str] | None]:
    """(grades on the scale, known topics) of the campaign at `root`; (None, None) without campaign.yaml."""
    from ..campaign.campaign import CONFIG_NAME, load_campaign
    if not (root / CONFIG_NAME).is_file():
        return None, None
    camp = load_campaign(root)
    scale = {int(g) for g in camp.scale()}
    known = set(camp.topics()["topic"].astype(str))
    return scale, known


def _judged_topics(root: Path) -> set[str]:
    from ..campaign.campaign import load_campaign
    camp = load_campaign(root)
    q = camp.qrels()
    return set(q["topic"].astype(str)) if len(q) else set()


def check_new_judgment(root, topic: str, grade, seconds, assessor: str, strategy: str | None,
                       new_topic: bool = False, op: str = "judge") -> None:
    """Raise CranfieldError (naming the value and what to do) for a judgment that must not be written."""
    root = Path(root)
    try:
        if isinstance(grade, bool) or not isinstance(grade, (int, str)):
            raise ValueError
        g = grade if isinstance(grade, int) else parse_int(grade)
    except ValueError:
        raise CranfieldError(f"grade {grade!r}: must be an integer on the campaign's scale") from None
    if seconds is not None:
        try:
            s = float(seconds)
        except (TypeError, ValueError):
            raise CranfieldError(f"--seconds {seconds!r}: must be a number of seconds >= 0") from None
        if not math.isfinite(s) or s < 0:
            raise CranfieldError(f"--seconds {seconds!r}: must be a finite number of seconds >= 0 "
                                 f"(the time spent judging)")
    if not str(assessor or "").strip():
        raise CranfieldError("the assessor is empty: give --assessor NAME (or set CRANFIELD_ASSESSOR)")
    if strategy is not None and not str(strategy).strip():
        raise CranfieldError("--strategy is empty: name the strategy that selected the document, or leave it out")
    scale, known = _campaign_facts(root)
    if op == "judge":
        if scale is None:
            if not GRADE_MIN <= g <= GRADE_MAX:
                raise CranfieldError(f"grade {g}: outside [{GRADE_MIN}, {GRADE_MAX}]")
        elif g not in scale:
            raise CranfieldError(f"grade {g} is not on the campaign's scale ({', '.join(map(str, sorted(scale)))}); "
                                 f"use one of those, or add the grade to relevance.scale in campaign.yaml")
    if known is not None and not new_topic and str(topic) not in known and str(topic) not in _judged_topics(root):
        raise CranfieldError(f"topic {topic} is not in the campaign's topics (topics/) nor judged yet; "
                             f"check the id, or pass --new-topic to judge a topic the topic files do not list")

