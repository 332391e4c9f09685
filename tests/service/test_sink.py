"""The service's writer: events handed over together share a commit, each answered alone; none
waits forever once the writer has stopped."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from openlineage_subset.lineage import AlreadyStored, CheckedEvent, Invalid, Stored, Writer
from openlineage_subset.service import EventSink, NotStored, Posted
from openlineage_subset.service import _sink as sink_module
from tests.lineage.events import pipeline_history
from tests.service.conftest import run_async


def test_events_handed_over_together_are_each_answered(tmp_path: Path) -> None:
    events = pipeline_history(days=4)
    bodies = [json.dumps(event).encode() for event in events]
    sink = EventSink(tmp_path / "lineage.db")

    async def send() -> list[Posted]:
        return list(
            await asyncio.gather(
                *(sink.store(body, "test") for body in [*bodies, bodies[0], b"[]"])
            )
        )

    try:
        outcomes = run_async(send())
    finally:
        sink.close()
    assert [type(item) for item in outcomes[: len(bodies)]] == [Stored] * len(bodies)
    assert isinstance(outcomes[len(bodies)], AlreadyStored)
    invalid = outcomes[-1]
    assert isinstance(invalid, Invalid) and "got list" in invalid.message
    with sqlite3.connect(tmp_path / "lineage.db") as connection:
        assert connection.execute("SELECT count(*) FROM events").fetchone()[0] == len(bodies)
    connection.close()


def test_after_the_writer_stopped_an_event_is_answered_not_stored(tmp_path: Path) -> None:
    sink = EventSink(tmp_path / "lineage.db")
    sink.close()
    body = json.dumps(pipeline_history(days=1)[0]).encode()
    outcome = run_async(asyncio.wait_for(sink.store(body, "test"), timeout=10))
    assert isinstance(outcome, NotStored)
    with sqlite3.connect(tmp_path / "lineage.db") as connection:
        assert connection.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    connection.close()


class _CountingWriter(Writer):
    """The writer, noting how many events each commit stored; its first store waits for
    :attr:`go`, so that what is posted meanwhile waits in the queue together."""

    commits: ClassVar[list[int]] = []
    go: ClassVar[threading.Event] = threading.Event()
    storing: ClassVar[threading.Event] = threading.Event()

    def store(self, outcomes: Any, conditions: Any, count: Any) -> None:
        _CountingWriter.storing.set()
        _CountingWriter.go.wait(timeout=60)
        self.batch = sum(1 for outcome in outcomes if isinstance(outcome, CheckedEvent))
        super().store(outcomes, conditions, count)

    def commit(self) -> None:
        if self.open:
            _CountingWriter.commits.append(self.batch)
        super().commit()


def test_producers_posting_together_share_a_commit_and_one_alone_waits_for_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sink_module, "Writer", _CountingWriter)
    # longer than a stall of a busy machine
    monkeypatch.setattr(sink_module, "GATHER", 3.0, raising=False)
    monkeypatch.setattr(_CountingWriter, "commits", [])
    monkeypatch.setattr(_CountingWriter, "go", threading.Event())
    monkeypatch.setattr(_CountingWriter, "storing", threading.Event())
    bodies = [json.dumps(event).encode() for event in pipeline_history(days=3)]
    sink = EventSink(tmp_path / "lineage.db")

    async def later(body: bytes, delay: float) -> Posted:
        await asyncio.sleep(delay)
        return await sink.store(body, "test")

    async def send() -> tuple[list[Posted], float]:
        # One event is being stored while three producers post: those three wait together and
        # share the next commit.
        alone = asyncio.ensure_future(sink.store(bodies[0], "test"))
        while not _CountingWriter.storing.is_set():
            await asyncio.sleep(0.01)  # the writer is storing the first one
        together = asyncio.gather(*(later(body, 0) for body in bodies[1:4]))
        deadline = time.monotonic() + 30
        while sink._queue.qsize() < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)  # until the three wait in the queue behind the held writer
        _CountingWriter.go.set()
        outcomes = [await alone, *await together]
        # Then each of the three posts its next event a moment after the others: the writer
        # waits for as many as the last commit held, and they still share one.
        outcomes += await asyncio.gather(
            *(later(body, 0.05 * number) for number, body in enumerate(bodies[4:7]))
        )
        # Then a producer alone, twice: the first waits for the two that posted with it last
        # time (in vain, until GATHER); the next is committed at once.
        outcomes.append(await sink.store(bodies[7], "test"))
        began = time.monotonic()
        outcomes.append(await sink.store(bodies[8], "test"))
        return outcomes, time.monotonic() - began

    try:
        outcomes, alone = run_async(send())
    finally:
        _CountingWriter.go.set()
        sink.close()
    assert [type(outcome) for outcome in outcomes] == [Stored] * 9
    assert _CountingWriter.commits == [1, 3, 3, 1, 1]
    assert alone < 2.5, "an event posted alone waited for others"


def test_a_batch_whose_storing_fails_stores_its_other_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = Writer._dataset_ids

    def failing(self: Any, events: list[CheckedEvent]) -> Any:
        if any(read.name.endswith("boom") for event in events for read in event.accesses):
            raise ValueError("cannot store this dataset")
        return original(self, events)

    monkeypatch.setattr(Writer, "_dataset_ids", failing)
    history = pipeline_history(days=2)
    broken = json.loads(json.dumps(history[1]))
    broken["run"]["runId"] = "0192f3c1-5a4e-7c3d-9b1a-2f6e8d4c0aff"
    broken["outputs"][0]["name"] = "boom"
    sink = EventSink(tmp_path / "lineage.db")

    async def send() -> list[Posted]:
        before = await sink.store(json.dumps(history[0]).encode(), "test")
        together = await asyncio.gather(
            *(
                sink.store(json.dumps(item).encode(), "test")
                for item in (history[1], broken, history[2])
            )
        )
        return [before, *together]

    try:
        outcomes = run_async(send())
    finally:
        sink.close()
    assert [type(outcome) for outcome in outcomes] == [Stored, Stored, Invalid, Stored]
    refused = outcomes[2]
    assert (
        isinstance(refused, Invalid) and refused.message == "not stored: cannot store this dataset"
    )
    with sqlite3.connect(tmp_path / "lineage.db") as connection:
        names = connection.execute("SELECT name FROM datasets").fetchall()
        count = connection.execute("SELECT count(*) FROM events").fetchone()[0]
    connection.close()
    assert count == 3 and ("boom",) not in names


def test_a_batch_wakes_the_requests_event_loop_once_and_answers_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Handing outcomes back costs one call into the event loop per batch, not per event (each
    call writes to the loop's wake-up pipe and runs a callback there)."""
    monkeypatch.setattr(sink_module, "Writer", _CountingWriter)
    monkeypatch.setattr(sink_module, "GATHER", 3.0, raising=False)
    monkeypatch.setattr(_CountingWriter, "commits", [])
    monkeypatch.setattr(_CountingWriter, "go", threading.Event())
    monkeypatch.setattr(_CountingWriter, "storing", threading.Event())
    bodies = [json.dumps(event).encode() for event in pipeline_history(days=2)]
    sink = EventSink(tmp_path / "lineage.db")
    wakes: list[str] = []

    async def send() -> list[Posted]:
        loop = asyncio.get_running_loop()
        original = loop.call_soon_threadsafe

        def counted(callback: Any, *args: Any, **kwargs: Any) -> Any:
            wakes.append(threading.current_thread().name)
            return original(callback, *args, **kwargs)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        alone = asyncio.ensure_future(sink.store(bodies[0], "test"))
        while not _CountingWriter.storing.is_set():
            await asyncio.sleep(0.01)  # the writer holds the first one
        together = asyncio.gather(*(sink.store(body, "test") for body in bodies[1:4]))
        deadline = time.monotonic() + 30
        while sink._queue.qsize() < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)  # until the three wait in the queue behind the held writer
        _CountingWriter.go.set()
        return [await alone, *await together]

    try:
        outcomes = run_async(send())
    finally:
        _CountingWriter.go.set()
        sink.close()
    assert [type(outcome) for outcome in outcomes] == [Stored] * 4
    assert _CountingWriter.commits == [1, 3]
    assert wakes == ["ol-subset-writer"] * 2, "one hand-off for each of the two batches"
