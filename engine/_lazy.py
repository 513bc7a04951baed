"""A module imported on first attribute access, so a module can name pandas or pyarrow at its top
without paying for the import until a function really uses it (the fast paths never do)."""
from __future__ import annotations

import importlib
import types


class LazyModule(types.ModuleType):
    """Stands for the module `name`; the first attribute read imports it."""

    def __init__(self, name: str):
        super().__init__(name)
        self.__dict__["_lazy_target"] = None

    def __getattr__(self, attr: str):
        mod = self.__dict__["_lazy_target"]
        if mod is None:
            mod = importlib.import_module(self.__name__)
            self.__dict__["_lazy_target"] = mod
        return getattr(mod, attr)


def lazy_module(name: str) -> LazyModule:
    """`name`, imported when first used."""
    return LazyModule(name)
