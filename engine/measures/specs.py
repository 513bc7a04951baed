"""Typed parameter specs: each measure that takes parameters says what they are called, their type, their
default and what they mean. `cranfield measures` lists them; the request parser (`Measure.parse_params`,
`params.KVMeasure`) checks and converts the values given against them.

Types: `ints` / `floats` (comma-separated, trec_eval's cut-offs: `P.5,10`), `int`, `float`, `list`
(numbers separated by ':', `gains=0:1:3`), `choice`. A parameter named `GRADE` stands for any integer grade
(trec_eval's gain pairs: `ndcg.1=3,2=9`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ..errors import CranfieldError


class MeasureError(CranfieldError):
    """An unknown measure name or malformed measure parameters."""

GRADE = "<grade>"

TYPES = ("ints", "floats", "int", "float", "list", "choice")


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


@dataclass(frozen=True)
class Param:
    """One parameter of a measure. `default` None: computed from the data (said in `default_text`)."""

    name: str
    type: str
    default: Any = None
    doc: str = ""
    default_text: str = ""
    choices: tuple = ()
    minimum: float | None = None

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(f"parameter {self.name}: unknown type {self.type!r} (one of {', '.join(TYPES)})")

    @property
    def shown_default(self) -> str:
        """The default as written after the measure's '.' (or in words when computed)."""
        if self.default is None:
            return self.default_text or "-"
        if isinstance(self.default, tuple):
            return ("," if self.type in ("ints", "floats") else ":").join(_fmt(v) for v in self.default)
        return _fmt(self.default)

    def check(self, measure: str, value):
        """`value` (text, or a number for trec_eval's pairs) checked against the type; the number for an
        int or float given as a number, the text as given otherwise. MeasureError names what is wrong."""
        def bad(what: str):
            return MeasureError(f"{measure}: parameter {self.name}={value!r} {what} (see `cranfield measures "
                                f"{measure}`)")

        if self.type == "choice":
            ok = value in self.choices or ("log<b>" in self.choices and re.fullmatch(r"log\d+(\.\d+)?", value))
            if not ok:
                raise bad(f"is not one of {', '.join(self.choices)}")
            return value
        if self.type == "list":
            try:
                nums = [float(x) for x in str(value).split(":")]
            except ValueError:
                raise bad("must be numbers separated by ':'") from None
            if not all(math.isfinite(x) for x in nums):
                raise bad("must be finite numbers")
            return value
        try:
            num = float(value)
        except ValueError:
            raise bad(f"is not {'an integer' if self.type == 'int' else 'a number'}") from None
        if not math.isfinite(num):
            raise bad("is not a finite number")
        if self.type == "int":
            if isinstance(value, str):
                try:
                    int(value)
                except ValueError:
                    raise bad("is not an integer") from None
            elif not num.is_integer():
                raise bad("is not an integer")
        if self.choices and num not in self.choices:
            raise bad(f"must be one of {', '.join(_fmt(c) for c in self.choices)}")
        if self.minimum is not None and num < self.minimum:
            raise MeasureError(f"{measure}: parameter {self.name} must be at least {self.minimum:g} (got {value})")
        return value


TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)     # trec_eval's default cut-offs (P, recall, ...)
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def cutoffs(default: tuple, doc: str = "cut-offs: documents retrieved") -> tuple[Param, ...]:
    """The one positional parameter of a measure at integer cut-offs (`P.5,10`)."""
    return (Param("k", "ints", tuple(default), doc),)


PERSISTENCE = Param("p", "float", 0.9, "persistence: the chance of going on to the next document (rbp)")

GRADE_GAINS = Param(GRADE, "float", None, "gain of documents judged at this grade (ndcg.1=3,2=9, as trec_eval)",
                    default_text="the grade")


GAINS = Param("gains", "list", None, "gain per grade g0:g1:... (grade 0 first)",
              default_text="campaign gains, else the grade")


def find(specs: tuple, key: str) -> Param | None:
    """The spec of parameter `key` (an integer key matches GRADE)."""
    for s in specs:
        if s.name == key:
            return s
    if re.fullmatch(r"[+-]?[0-9]+", key):
        for s in specs:
            if s.name == GRADE:
                return s
    return None


def positional_defaults(specs: tuple) -> tuple | None:
    """The default parameters of a positional measure: a list parameter's values, or one per scalar."""
    if len(specs) == 1 and specs[0].type in ("ints", "floats"):
        return tuple(specs[0].default)
    if specs and all(s.type in ("int", "float") and s.default is not None for s in specs):
        return tuple(float(s.default) if s.type == "float" else s.default for s in specs)
    return None
