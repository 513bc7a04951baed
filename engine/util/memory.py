"""The C library's allocator for a short command on small inputs: freed memory kept for reuse."""
from __future__ import annotations

import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3          # glibc's mallopt parameters (malloc.h)


def keep_freed_memory() -> bool:
    """Ask glibc's malloc to serve blocks up to 32 MB from its heap and to keep freed memory for reuse
    instead of returning it to the system: a command that lives a fraction of a second otherwise pays a
    page fault for every page of every large temporary array, again after each is freed. For commands on
    small inputs only (the memory stays with the process until it exits). False where it does not apply
    (not glibc)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, ImportError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, 1 << 25)) and bool(mallopt(_M_TRIM_THRESHOLD, 1 << 28))
