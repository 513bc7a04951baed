"""Process settings for a short command (`cranfield eval`): no idle BLAS threads, no start-up garbage
collections, no collection at exit over what the command built, and the C library's allocator keeping
freed memory for reuse on small inputs. Each is for a process that runs one command and exits, set by the
command line's entry point (never by a library call, whose process is the caller's)."""
from __future__ import annotations

import gc
import os
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3          # glibc's mallopt parameters (malloc.h)

START_GC_THRESHOLD = 50_000
"""Container allocations between young-generation collections during a short command (Python's default
is 700): importing numpy alone makes some 30 collections that find nothing, all of it live module state."""


def start_short_command() -> None:
    """Before anything imports numpy: one BLAS thread (OpenBLAS otherwise starts a thread per core at
    import, which spins and costs a short command a third of numpy's start-up in CPU; evaluation does no
    BLAS work), unless the user set OPENBLAS_NUM_THREADS; and collections of the young generation only
    every `START_GC_THRESHOLD` allocations (the collector stays on, for inputs of any size)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    gc.set_threshold(START_GC_THRESHOLD, *gc.get_threshold()[1:])


def end_short_command() -> None:
    """After the command's output is written: every object moved out of the collector's reach
    (`gc.freeze`), so that the interpreter's teardown does not traverse all of numpy's and the command's
    objects again for cycles (a tenth of a short command); they are freed with the process."""
    gc.freeze()


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
