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


def lazy_exports(module_name: str, exports: dict[str, str], globals_: dict):
    """(__getattr__, __dir__) for a module whose public names load from other modules on first use:
    `exports` maps a name to the module that defines it."""
    def __getattr__(name: str):
        mod = exports.get(name)
        if mod is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        try:
            value = getattr(importlib.import_module(mod), name)
        except ModuleNotFoundError as exc:
            raise AttributeError(f"{module_name}.{name} is not available in this installation ({exc})") from None
        globals_[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals_) | set(exports))

    return __getattr__, __dir__


class LazyPattern:
    """`re.compile(pattern, flags)` done on first use (a fresh process pays for every compile at import;
    most commands use few of the patterns). Its methods are the compiled pattern's once used."""

    def __init__(self, pattern, flags: int = 0):
        self.pattern, self.flags = pattern, flags

    def __getattr__(self, name: str):
        import re
        compiled = re.compile(self.pattern, self.flags)
        for method in ("match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer"):
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)
