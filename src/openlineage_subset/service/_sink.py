"""The service's one writer: events posted to it, checked and stored as ``ingest`` does, by one
thread with one connection.

A request hands its body to :meth:`EventSink.store` and waits for the outcome. The writer
thread takes every body waiting, checks them together (:func:`~openlineage_subset.lineage.
_events.check_chunk`, as ``ingest`` checks a chunk) and stores them in one transaction
(:class:`~openlineage_subset.lineage.Writer`, as ``ingest`` stores one); each request
is answered only once that transaction is committed. Under load, many events share one commit
(a batch waits up to :data:`GATHER` for as many bodies as the last one had: a commit costs
several events' storing); alone, an event is committed at once. A WAL database is committed
without an fsync each time (:func:`~openlineage_subset.lineage.relax_sync`): a killed
server keeps every event it acknowledged.

The requests' event loop is woken once per batch, not once per event: the writer hands it the
batch's outcomes in one call (:meth:`EventSink._answer`), which sets each request's future.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future
from typing import Any

from openlineage_subset import input_start
from openlineage_subset.lineage import (
    EventOutcome,
    Item,
    Line,
    LineageDatabaseError,
    LineageStore,
    Stored,
    Writer,
    alias_note,
    check_chunk,
    groups_directories,
    relax_sync,
)
from openlineage_subset.producer import scrubbed_logger

_LOG = scrubbed_logger(__name__)

LOCK_WAIT = 3.0
"""Seconds the writer waits for the write lock another process holds without committing: then
the events waiting are answered 503 (a producer's retry sends them again), well within the
5 seconds openlineage-python's HttpTransport waits for an answer by default."""
_BATCH = 500  # bodies stored in one transaction at most: a bounded wait for the first of them
GATHER = 0.002
"""Seconds a batch waits at most for the bodies of the producers that posted with the last
one (:meth:`EventSink._gather`)."""


@dataclasses.dataclass(frozen=True)
class NotStored:
    """A posted event the service could not store, whatever the event: the database refused
    the write, or the service is stopping."""

    message: str


Posted = EventOutcome | NotStored
"""What became of one posted event: what ingest tells of an event
(:data:`~openlineage_subset.lineage.EventOutcome`), or :class:`NotStored`."""


_Item = tuple[Line, "asyncio.Future[Posted]"]
"""A body handed over, as a line to check (its bytes, where it came from), and the future its
request awaits."""


class EventSink:
    """One thread storing posted events into the lineage database ``db`` (made if missing).

    Opening it opens the database in that thread, raising
    :class:`~openlineage_subset.lineage.LineageDatabaseError` for a file that cannot be used.
    :meth:`close` stores what was handed over before it, commits and closes the database.
    """

    def __init__(self, db: str | os.PathLike[str]) -> None:
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        # By producer, the places other than the spec's its events put the subset facet in,
        # each said once in the log (read by the writer thread only).
        self._aliased: dict[str, tuple[str, ...]] = {}
        opened: Future[None] = Future()
        self._thread = threading.Thread(
            target=self._run, args=(os.fspath(db), opened), name="ol-subset-writer", daemon=True
        )
        self._thread.start()
        opened.result()  # raises what opening raised

    async def store(self, body: bytes, source: str) -> Posted:
        """Check and store one event (the bytes of its JSON, a byte order mark skipped as at
        the start of any input); returns once it is committed."""
        done: asyncio.Future[Posted] = asyncio.get_running_loop().create_future()
        self._queue.put((Line(source, None, *input_start(body)), done))
        if not self._thread.is_alive():
            self._abandon()  # the writer stopped: nothing would ever answer
        return await done

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()

    def _run(self, db: str, opened: Future[None]) -> None:
        try:
            store = LineageStore.open(db, create=True, wait=LOCK_WAIT)
        except BaseException as error:  # handed to the opener, which raises it
            opened.set_exception(error)
            return
        relax_sync(store.connection)
        opened.set_result(None)
        writer: Writer | None = None
        expected = 1  # how many bodies the last batch gathered
        try:
            while True:
                first = self._queue.get()
                if first is None:
                    return
                batch = [first]
                self._gather(batch, expected)
                expected = len(batch)
                writer = self._store(store, writer, batch)
        finally:
            if writer is not None:
                writer.rollback()  # nothing is left open: every batch commits or rolls back
            store.close()
            self._abandon()

    def _gather(self, batch: list[_Item], expected: int) -> None:
        """Add the bodies waiting to ``batch``; while it holds fewer than the last batch did
        (producers posting together), wait up to :data:`GATHER` seconds for the others.

        A commit costs several times what storing one more event in it does, so under load
        events share commits. Alone (the last batch held one body), nothing is waited for.
        """
        deadline = None
        while len(batch) < _BATCH:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                if len(batch) >= expected:
                    return
                if deadline is None:
                    deadline = time.monotonic() + GATHER
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                try:
                    item = self._queue.get(timeout=left)
                except queue.Empty:
                    return
            if item is None:
                self._queue.put(None)  # stop once this batch is stored
                return
            batch.append(item)

    def _abandon(self) -> None:
        """Answer what is still waiting once the writer has stopped: not stored."""
        stopped = NotStored("the service is stopping; nothing was stored")
        left = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                left.append((item[1], stopped))
        self._answer(left)

    @staticmethod
    def _answer(answers: Iterable[tuple[asyncio.Future[Posted], Posted | BaseException]]) -> None:
        """Hand each request its outcome (or the error that stopped the writer): one call into
        each event loop for them all, where the futures are set (a future is only ever set in
        its own loop's thread)."""
        by_loop: dict[asyncio.AbstractEventLoop, list[Any]] = {}
        for done, outcome in answers:
            by_loop.setdefault(done.get_loop(), []).append((done, outcome))
        for loop, settled in by_loop.items():
            # A loop already closed has no request left waiting on it.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, settled)

    def _store(
        self,
        store: LineageStore,
        writer: Writer | None,
        batch: list[_Item],
    ) -> Writer | None:
        outcomes: list[Posted] = []

        def count(outcome: EventOutcome) -> None:
            outcomes.append(outcome)
            if isinstance(outcome, Stored) and outcome.event.misplaced:
                self._note_aliases(outcome.event.producer, outcome.event.misplaced)

        try:
            items: list[Item] = [line for line, _ in batch]
            checked, conditions = check_chunk(items, group=groups_directories(store))
            if writer is None:
                writer = Writer(store)
            writer.store(checked, conditions, count)  # in a transaction of its own
            writer.commit()
        except (sqlite3.Error, OSError, LineageDatabaseError) as error:
            if writer is not None:
                with contextlib.suppress(sqlite3.Error):
                    writer.rollback()
            # Whatever the failed transaction added to the writer's caches is gone: start anew.
            failed = NotStored(f"the lineage database refused the write: {error}")
            self._answer((done, failed) for _, done in batch)
            return None
        except BaseException as error:
            self._answer((done, error) for _, done in batch)
            raise
        self._answer((done, outcome) for (_, done), outcome in zip(batch, outcomes, strict=True))
        return writer

    def _note_aliases(self, producer: str, places: tuple[str, ...]) -> None:
        """One line in the log the first time a producer's event holds the subset facet in a
        place other than the spec's (and again for a place not said yet)."""
        known = self._aliased.get(producer, ())
        more = tuple(place for place in places if place not in known)
        if more:
            self._aliased[producer] = known + more
            _LOG.warning("%s (said once per producer and place)", alias_note(producer, None, more))


def _settle(answers: list[tuple[asyncio.Future[Posted], Posted | BaseException]]) -> None:
    """In the event loop: set each future not given up on (a request cancelled meanwhile)."""
    for done, outcome in answers:
        if done.done():
            continue
        if isinstance(outcome, BaseException):
            done.set_exception(outcome)
        else:
            done.set_result(outcome)
