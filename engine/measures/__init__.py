"""All measures. Each `m_*.py` module registers one measure; adding a measure touches one file."""
from __future__ import annotations

from .registry import REGISTRY, Measure, MeasureError, MeasureRequest, load_all, measure, register, resolve


__all__ = ["REGISTRY", "Measure", "MeasureError", "MeasureRequest", "measure", "register", "resolve", "load_all"]
