"""Which judgment format a file holds (by suffix, then by content), and the readers by kind."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..util.lazy import lazy_module
from ..errors import FormatError, Problem, Warnings
from .grammar import parse_float, parse_int
from .files import PathLike, read_bytes
from .sampled import read_prels, read_sample, write_prels, write_sample
from .qrels import read_qrels, write_qrels
from .runs import read_run

pd = lazy_module("pandas")      # the plain readers (small clean files) never import it


JUDGMENT_READERS: dict[str, Callable] = {"qrels": read_qrels, "prels": read_prels, "sample": read_sample}


JUDGMENT_SUFFIXES = {".qrels": "qrels", ".prels": "prels", ".sample": "sample"}


def _base_suffix(path: PathLike) -> str:
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).suffix


def detect_judgment_kind(path: PathLike, data: bytes | None = None) -> str:
    """'qrels', 'prels' or 'sample': by suffix (.qrels/.prels/.sample), else by the first data lines."""
    kind = JUDGMENT_SUFFIXES.get(_base_suffix(path))
    if kind:
        return kind
    text = (read_bytes(path) if data is None else data)[:65536]
    lines = [ln.split() for ln in text.splitlines()[:200] if ln.strip() and not ln.lstrip().startswith(b"#")]
    if not lines:
        return "qrels"
    n = max(set(len(t) for t in lines), key=[len(t) for t in lines].count)
    if n != 5:
        return "qrels"
    five = [t for t in lines if len(t) == 5]
    # only the documented layouts: prels = field 3 an integer grade, field 5 a probability in (0, 1];
    # sample = field 2 an iteration marker (0/Q0), fields 4 and 5 integers. Anything else is read as
    # qrels, whose reader refuses the fifth field (never a shifted reading).
    if all(_is_int(t[2]) and _is_prob(t[4]) for t in five) and \
            any(b"." in t[4] or b"e" in t[4].lower() for t in five):
        return "prels"
    if all(_is_int(t[3]) and _is_int(t[4]) for t in five) and len({t[1] for t in five}) == 1 \
            and len({t[2] for t in five}) > 1:
        return "sample"
    if all(_is_int(t[2]) and _is_prob(t[4]) for t in five):
        return "prels"
    return "qrels"


def _is_int(tok: bytes) -> bool:
    try:
        parse_int(tok.decode("ascii"))
        return True
    except (ValueError, UnicodeDecodeError):
        return False


def _is_prob(tok: bytes) -> bool:
    try:
        return 0 < parse_float(tok.decode("ascii")) <= 1
    except (ValueError, UnicodeDecodeError):
        return False


def read_judgments(path: PathLike, warnings: Warnings | None = None, rule: str = "last",
                   kind: str | None = None) -> pd.DataFrame:
    """Read any judgment file (qrels, prels or sample_eval), detected by suffix or content."""
    data = read_bytes(path)
    kind = kind or detect_judgment_kind(path, data)
    if kind not in JUDGMENT_READERS:
        raise FormatError(Problem(str(path), None, f"unknown judgment format {kind!r}"),
                          hint=f"use one of: {', '.join(JUDGMENT_READERS)}")
    return JUDGMENT_READERS[kind](path, warnings, rule=rule, data=data)


def write_judgments(path: PathLike, table: pd.DataFrame, kind: str | None = None) -> None:
    """Write a judgment table as qrels, prels or sample_eval (by `kind`, else by suffix, else qrels)."""
    kind = kind or JUDGMENT_SUFFIXES.get(_base_suffix(path), "qrels")
    {"qrels": write_qrels, "prels": write_prels, "sample": write_sample}[kind](path, table)


READERS: dict[str, Callable] = {"run": read_run, "qrels": read_qrels, "prels": read_prels,
                                "sample": read_sample}

