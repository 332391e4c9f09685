"""A bulk ingest's checkpoints, in a thread of their own.

In WAL mode SQLite appends each commit to the log, and copies the log back into the database
(a checkpoint, with an fsync of each file) in the commit that takes the log past 1,000 pages:
the storing thread waits for the copy. At a million events, where each chunk's rows land on
pages all over the indexes, that wait was a fifth of storing an event (105 to 123 us an event
of wall time, 84 to 93 us of CPU). :class:`Checkpoints` turns the writer's own checkpoints off
and has a thread with a connection of its own copy the log after each commit, while the writer
goes on storing: a ``PASSIVE`` checkpoint waits for no reader and no writer, copies what it may,
and leaves the rest to the next one (85 us an event of wall time).

Should the thread fail (a checkpoint, or opening its connection), the writer's checkpoints are
turned back on at its next commit: the log never grows without bound, and the error is kept
(:attr:`Checkpoints.failed`); what is committed is the writer's and is never at stake.
"""

from __future__ import annotations

import sqlite3
import threading
from types import TracebackType

from openlineage_subset.lineage.store import LineageStore

CHECKPOINT = "PRAGMA wal_checkpoint(PASSIVE)"


class Checkpoints:
    """Checkpoints of ``store``'s log by a thread while the ``with`` block runs (a database
    in WAL mode; any other is left as it is). Call :meth:`committed` after each commit."""

    def __init__(self, store: LineageStore) -> None:
        self.store = store
        self.done = 0
        """Checkpoints the thread has run (at least one after the last commit, by the end of
        the ``with`` block)."""
        self.failed: sqlite3.Error | None = None
        """What stopped the thread, if something did."""
        self._wake = threading.Event()
        self._commits = 0
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._automatic: int | None = None
        """The writer's ``wal_autocheckpoint`` before, to be put back (None: not changed)."""

    def __enter__(self) -> Checkpoints:
        connection = self.store.connection
        mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            return self
        self._automatic = int(connection.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
        connection.execute("PRAGMA wal_autocheckpoint = 0")
        self._thread = threading.Thread(target=self._run, name="ol-subset checkpoints", daemon=True)
        self._thread.start()
        return self

    def committed(self) -> None:
        """A commit was made: the log has more to copy. Called by the writer's thread, which
        turns its own checkpoints back on when the thread has failed."""
        if self.failed is not None:
            self._restore()
        self._commits += 1
        self._wake.set()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._thread is not None:
            self._stopping = True
            self._wake.set()
            self._thread.join()
            self._thread = None
        self._restore()

    def _restore(self) -> None:
        if self._automatic is not None:
            self.store.connection.execute(f"PRAGMA wal_autocheckpoint = {self._automatic}")
            self._automatic = None

    def _run(self) -> None:
        try:
            connection = sqlite3.connect(self.store.path, isolation_level=None)
        except sqlite3.Error as error:
            self.failed = error
            return
        copied = 0
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                commits = self._commits
                if commits > copied:  # the last commit's log is copied before the thread ends
                    connection.execute(CHECKPOINT).fetchall()
                    self.done += 1
                    copied = commits
                if self._stopping and self._commits == copied:  # no commit after the stop
                    return
        except sqlite3.Error as error:
            self.failed = error
        finally:
            connection.close()
