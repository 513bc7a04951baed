"""Running the per-topic-block engine beyond one machine.

`engine.evaluation.blocks` cuts work into `BlockTask`s: pure functions of Parquet part paths, row-group numbers
and a small judgment table, returning a small long table. Any `concurrent.futures.Executor` runs
them (`evaluate_store(..., executor=ex)`, `pool_candidates_store(..., executor=ex)`); Dask's
`distributed.Client.get_executor()` is one, so a Dask cluster needs no other glue. The workers must
see the campaign's `.cranfield-store/` at the same path (a shared file system), and have Cranfield
installed. See docs/scale.md for the design.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from ..errors import CranfieldError


@contextmanager
def dask_executor(address: str | None = None, n_workers: int | None = None,
                  processes: bool = True) -> Iterator:
    """An Executor backed by Dask: the scheduler at `address` (e.g. "tcp://host:8786"), or a local
    cluster of `n_workers` single-threaded worker processes when `address` is None."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise CranfieldError("Dask is not installed: pip install 'cranfield[dask]' (or dask[distributed])") from None
    cluster = None
    if address:
        client = Client(address)
    else:
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=processes,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        yield client.get_executor()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
