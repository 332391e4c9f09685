"""A lineage database built from events in a temporary folder."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from openlineage_subset.lineage import ingest
from tests.lineage.events import Json, write_events

Build = Callable[[Iterable[Json]], str]


@pytest.fixture
def lineage_db(tmp_path: Path) -> Build:
    """Write the events as JSON Lines, ingest them, and return the database path."""

    def build(events: Iterable[Json]) -> str:
        source = write_events(tmp_path / "events.jsonl", events)
        db = str(tmp_path / "lineage.db")
        report = ingest([source], db)
        assert report.invalid == 0, report.problems
        return db

    return build
