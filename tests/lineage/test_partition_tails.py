"""``partition_tails`` (layout 7): the distinct ends of each dataset's partition keys after the
first column, which the answer pages' grids read instead of every partition. It must hold
exactly what a scan of ``partitions`` gives, however the partitions came: a fresh ingest, an
upgrade of a layout-6 database, later ingests into it, and two datasets merged when an event
says they are one (the files in tests/data/symlinks/, given a second partition column)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from openlineage_subset.lineage import SCHEMA_VERSION, impact, ingest
from tests.helpers import ROOT
from tests.lineage.events import day, pipeline_history, run, write_events

_SCAN = (
    "SELECT DISTINCT dataset_id, substr(dimensions, instr(dimensions, '\",') + 2) "
    "FROM partitions WHERE instr(dimensions, '\",') > 0"
)


def _tails(db: Path) -> set[tuple[int, str]]:
    with sqlite3.connect(db) as connection:
        return set(connection.execute("SELECT dataset_id, tail FROM partition_tails"))


def _scanned(db: Path) -> set[tuple[int, str]]:
    with sqlite3.connect(db) as connection:
        return set(connection.execute(_SCAN))


def test_ingest_keeps_the_tails_of_the_partitions_it_stores(tmp_path: Path) -> None:
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "events.jsonl", pipeline_history(6))], db)
    found = _tails(db)
    # (country, day): the first column by name is country, the tails are the days
    assert {tail for _, tail in found} >= {'"day":"2024-10-01"}', '"day":"2024-10-06"}'}
    assert found == _scanned(db)


def test_a_layout_6_database_gets_the_tails_and_keeps_them_after(tmp_path: Path) -> None:
    db = tmp_path / "lineage.db"
    ingest([write_events(tmp_path / "a.jsonl", pipeline_history(6))], db)
    connection = sqlite3.connect(db, isolation_level=None)
    connection.execute("DROP TABLE partition_tails")
    connection.execute("PRAGMA user_version = 6")
    connection.close()
    impact(str(db), "raw", partition={"day": "2024-10-02"})  # a query opens it: upgraded
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert _tails(db) and _tails(db) == _scanned(db)
    # the writer keeps them: a partition of a new day ingested after has its tail
    later = run(90, 100, 101, writes=[("raw", day("2024-12-01", "ES"))])
    ingest([write_events(tmp_path / "b.jsonl", later)], db)
    assert any(tail == '"day":"2024-12-01"}' for _, tail in _tails(db))
    assert _tails(db) == _scanned(db)


def _with_region(item: Any, region: str) -> Any:
    """The event with a ``region`` column added to every partition it lists."""
    if isinstance(item, dict):
        if "dimensions" in item and "identifier" in item:
            dimensions = {**item["dimensions"], "region": region}
            return {"dimensions": dimensions, "identifier": f"{item['identifier']}/region={region}"}
        return {key: _with_region(value, region) for key, value in item.items()}
    if isinstance(item, list):
        return [_with_region(value, region) for value in item]
    return item


def _regional(tmp_path: Path, name: str, region: str) -> Path:
    lines = (ROOT / "tests" / "data" / "symlinks" / name).read_text().splitlines()
    events = [_with_region(json.loads(line), region) for line in lines if line.strip()]
    return write_events(tmp_path / f"{region}-{name}", events)


def _datasets_of(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as connection:
        found = connection.execute("SELECT dataset_id, name FROM datasets")
        return {name: number for number, name in found}


def test_two_datasets_merged_keep_the_tails_of_both(tmp_path: Path) -> None:
    db = tmp_path / "lineage.db"
    table, location = "db.events", "/warehouse/db.db/events"
    # the table and its location, not known to be one: two datasets (the location read by
    # region us, both by eu)
    ingest([_regional(tmp_path, "table_only.jsonl", "eu")], db)
    ingest([_regional(tmp_path, "location_reader.jsonl", "us")], db)
    ids = _datasets_of(db)
    assert {tail for number, tail in _tails(db) if number == ids[table]} == {'"region":"eu"}'}
    assert '"region":"us"}' in {tail for number, tail in _tails(db) if number == ids[location]}
    # an event saying the table is at that location merges them
    ingest([_regional(tmp_path, "table_writer.jsonl", "eu")], db)
    after = _tails(db)
    assert after == _scanned(db)
    kept = _datasets_of(db)
    assert location not in kept
    assert {tail for number, tail in after if number == kept[table]} == {
        '"region":"eu"}',
        '"region":"us"}',
    }
    assert {number for number, _ in after} <= set(kept.values())  # none of the dataset gone
