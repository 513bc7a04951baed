"""Process settings for a short command (`cranfield eval`): no idle BLAS threads, no start-up garbage
collections, no collection at exit over what the command built, and on small inputs the C library's
allocator keeping freed memory for reuse, from huge pages where the kernel offers them. Each is for a
process that runs one command and exits, set by the command line's entry point (never by a library call,
whose process is the caller's), or for a worker process that runs task after task (`keep_freed_memory`,
`WORKER_ENV`)."""
from __future__ import annotations

import gc
import os
import sys
from contextlib import contextmanager

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3          # glibc's mallopt parameters (malloc.h)
_kept: bool | None = None                              # set once per process

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


_MADV_HUGEPAGE = 14                                    # madvise advice (linux/mman.h)
_HUGE_PAGE = 1 << 21
HUGE_HEAP = 24 << 20
"""Bytes of heap `keep_freed_memory` sets aside for huge pages (below its 32 MB mmap threshold, so that the
block comes from the heap and returns to it when freed)."""


def keep_freed_memory() -> bool:
    """Ask glibc's malloc to serve blocks up to 32 MB from its heap and to keep freed memory for reuse
    instead of returning it to the system: a command that lives a fraction of a second otherwise pays a
    page fault for every page of every large temporary array, again after each is freed. The next
    `HUGE_HEAP` bytes of the heap are then advised for transparent huge pages where the kernel offers them
    on request: one fault per 2 MB touched instead of one per 4 KB (an evaluation of a 2 MB run touches
    some 10 MB). For commands on small inputs and for worker processes that run task after task (up to
    256 MB of freed memory stays with the process until it exits). Once per process; False where it does
    not apply (not glibc)."""
    global _kept
    if _kept is not None:
        return _kept
    _kept = False
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError, ImportError):
        return False
    if not (mallopt(_M_MMAP_THRESHOLD, 1 << 25) and mallopt(_M_TRIM_THRESHOLD, 1 << 28)):
        return False
    _huge_heap(libc, ctypes)
    _kept = True
    return True


def _huge_heap(libc, ctypes) -> None:
    """Grow the heap by `HUGE_HEAP` bytes (a block allocated and freed: kept, by the trim threshold) and
    advise its whole 2 MB pages for transparent huge pages; nothing where madvise refuses (no THP)."""
    try:
        malloc, free, madvise = libc.malloc, libc.free, libc.madvise
    except AttributeError:
        return
    malloc.restype, malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    free.restype, free.argtypes = None, [ctypes.c_void_p]
    madvise.restype, madvise.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    block = malloc(HUGE_HEAP)
    if not block:
        return
    lo = -(-block // _HUGE_PAGE) * _HUGE_PAGE
    hi = (block + HUGE_HEAP) // _HUGE_PAGE * _HUGE_PAGE
    if hi > lo:
        madvise(lo, hi - lo, _MADV_HUGEPAGE)
    free(block)


# Arrow's allocator (mimalloc) in worker processes: freed pages kept for the next task instead of
# returned to the system and faulted in again (at Million-Query size, 8.8 -> 2.6 s of system time in the
# two evaluation workers). Read by the allocator when the process starts, so set while workers spawn.
WORKER_ENV = {"MIMALLOC_PURGE_DELAY": "-1"}


@contextmanager
def worker_environment():
    """`WORKER_ENV` in the environment (where the user has not set the variables) while processes are
    started, restored afterwards; from the main thread only (another thread, e.g. under the TUI, leaves
    the environment alone: native code may read it meanwhile)."""
    import threading
    main = threading.current_thread() is threading.main_thread()
    added = [k for k in WORKER_ENV if k not in os.environ] if main else []
    for k in added:
        os.environ[k] = WORKER_ENV[k]
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)
