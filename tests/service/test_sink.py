"""The service's writer: events handed over together share a commit, each answered alone; none
waits forever once the writer has stopped."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from openlineage_subset.service import EventSink, Outcome
from tests.lineage.events import pipeline_history
from tests.service.conftest import run_async


def test_events_handed_over_together_are_each_answered(tmp_path: Path) -> None:
    events = pipeline_history(days=4)
    bodies = [json.dumps(event).encode() for event in events]
    sink = EventSink(tmp_path / "lineage.db")

    async def send() -> list[Outcome]:
        return list(
            await asyncio.gather(
                *(sink.store(body, "test") for body in [*bodies, bodies[0], b"[]"])
            )
        )

    try:
        outcomes = run_async(send())
    finally:
        sink.close()
    assert [item.kind for item in outcomes[: len(bodies)]] == ["stored"] * len(bodies)
    assert outcomes[len(bodies)].kind == "duplicate"
    assert outcomes[-1].kind == "invalid"
    assert outcomes[-1].message is not None and "got list" in outcomes[-1].message
    with sqlite3.connect(tmp_path / "lineage.db") as connection:
        assert connection.execute("SELECT count(*) FROM events").fetchone()[0] == len(bodies)
    connection.close()


def test_after_the_writer_stopped_an_event_is_answered_not_stored(tmp_path: Path) -> None:
    sink = EventSink(tmp_path / "lineage.db")
    sink.close()
    body = json.dumps(pipeline_history(days=1)[0]).encode()
    outcome = run_async(asyncio.wait_for(sink.store(body, "test"), timeout=10))
    assert outcome.kind == "failed"
    with sqlite3.connect(tmp_path / "lineage.db") as connection:
        assert connection.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    connection.close()
