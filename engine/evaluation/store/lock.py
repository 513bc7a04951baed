"""The run store's lock: one process ingests at a time."""
from __future__ import annotations

from pathlib import Path

from ...util import fs


class _Lock:
    """An exclusive lock on the store (fcntl), so two processes never ingest at the same time."""

    def __init__(self, path: Path):
        self.path = path
        self.held = None

    def __enter__(self):
        self.held = fs.lock(self.path)
        self.held.__enter__()
        return self

    def __exit__(self, *exc):
        self.held.__exit__(*exc)
