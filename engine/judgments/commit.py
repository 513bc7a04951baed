"""Group commit for the append-only logs that many threads write at once (the automatic judge's and
nugget labeller's cache and source logs).

`GroupCommit.submit(writes, then)` queues records and returns at once; one writer thread appends
everything queued since its last write together (one locked append and one fsync per file per group
instead of per record, the same `locked_file` / `write_lines` as `append_records`, the group's lines in one write), and only after the
fsync calls `then()`, which acknowledges the records (counts them as judged). So a caller's threads go
on asking the endpoint while the disk catches up, and a record is never acknowledged before it is on
disk: a killed run loses only unacknowledged answers, asked again on resume. Files are written in the
order their first record was queued (a cache before the source log that names it), each file's lines
in the order queued. `close()` waits for everything queued and raises the first failed write (disk
full), after which nothing more is written or acknowledged.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from .log import locked_file, record_lines, write_lines

MAX_QUEUED = 20000          # records queued before `submit` waits for the writer (bounded memory)


class GroupCommit:
    """Durable appends from many threads, committed in groups by one writer thread (see the module)."""

    def __init__(self, max_queued: int = MAX_QUEUED) -> None:
        self._cv = threading.Condition()
        self._pending: dict[Path, list[bytes]] = {}
        self._then: list[Callable[[], None]] = []
        self._queued = 0
        self._max = max_queued
        self._closed = False
        self.error: BaseException | None = None
        self.groups = 0              # groups written (for tests and benchmarks)
        self._thread = threading.Thread(target=self._run, name="group-commit", daemon=True)
        self._thread.start()

    def submit(self, writes: list[tuple[Path, list[dict]]], then: Callable[[], None] | None = None) -> None:
        """Queue each (path, records); `then()` runs in the writer thread once they are fsynced. Raises
        the writer's error once a write has failed."""
        self.submit_lines([(p, record_lines(recs)) for p, recs in writes if recs], then)

    def submit_lines(self, writes: list[tuple[Path, list[bytes]]], then: Callable[[], None] | None = None) -> None:
        """`submit` of records already encoded: each (path, complete lines as `record_lines` gives them)."""
        lines = [(p, ls) for p, ls in writes if ls]
        n = sum(len(ls) for _, ls in lines)
        with self._cv:
            while self._queued and self._queued + n > self._max and self.error is None:
                self._cv.wait()
            if self.error is not None:
                raise self.error
            for p, ls in lines:
                self._pending.setdefault(p, []).extend(ls)
            if then is not None:
                self._then.append(then)
            self._queued += n
            self._cv.notify_all()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._pending and not self._then and not self._closed:
                    self._cv.wait()
                if not self._pending and not self._then:
                    return
                batch, thens = self._pending, self._then
                self._pending, self._then = {}, []
            try:
                for p, ls in batch.items():
                    with locked_file(p) as fd:       # the group's lines in one write (a torn tail is cut on the next open)
                        write_lines(fd, p, [b"".join(ls)])
            except BaseException as exc:           # noqa: BLE001 - raised by submit() and close()
                with self._cv:
                    self.error = exc
                    self._queued = 0
                    self._pending, self._then = {}, []
                    self._cv.notify_all()
                return
            for fn in thens:
                fn()
            with self._cv:
                self.groups += 1
                self._queued -= sum(len(ls) for ls in batch.values())
                self._cv.notify_all()

    def close(self) -> None:
        """Write everything queued, stop the writer; raises the first failed write."""
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        self._thread.join()
        if self.error is not None:
            raise self.error
