"""The C library's allocator for a short command on small inputs, or a worker that runs task after
task: freed memory kept for reuse."""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3          # glibc's mallopt parameters (malloc.h)
_kept: bool | None = None                              # set once per process


def keep_freed_memory() -> bool:
    """Ask glibc's malloc to serve blocks up to 32 MB from its heap and to keep freed memory for reuse
    instead of returning it to the system: a command that lives a fraction of a second otherwise pays a
    page fault for every page of every large temporary array, again after each is freed. For commands on
    small inputs and for worker processes that run task after task (up to 256 MB of freed memory stays
    with the process until it exits). False where it does not apply (not glibc)."""
    global _kept
    if _kept is not None:
        return _kept
    _kept = False
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, ImportError):
        return False
    _kept = bool(mallopt(_M_MMAP_THRESHOLD, 1 << 25)) and bool(mallopt(_M_TRIM_THRESHOLD, 1 << 28))
    return _kept


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
