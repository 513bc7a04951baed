"""All measures. Each `m_*.py` module registers one measure; adding a measure touches one file."""
from __future__ import annotations

import importlib
import pkgutil
import threading

from .registry import REGISTRY, Measure, MeasureError, MeasureRequest, measure, register, resolve

_loaded = False
_lock = threading.RLock()


def load_all() -> dict[str, Measure]:
    """Import every measure module of this package (and return the registry); safe across threads."""
    global _loaded
    if not _loaded:
        with _lock:
            if not _loaded:
                for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
                    if info.name.startswith("m_"):
                        importlib.import_module(f"{__name__}.{info.name}")
                _loaded = True
    return REGISTRY


__all__ = ["REGISTRY", "Measure", "MeasureError", "MeasureRequest", "measure", "register", "resolve", "load_all"]
