"""A database of the previous layout (3: ``access_partitions`` held the partitions of reads
only) is brought to the current one when first opened, by a query as by an ingest, and answers
as a database made anew; older layouts are refused with what to do."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from openlineage_subset.lineage import (
    SCHEMA_VERSION,
    DatasetRef,
    ImpactQuery,
    Lineage,
    LineageDatabaseError,
    LineageStore,
    PartitionsQuery,
    datasets,
    impact,
    ingest,
    latest_history,
    provenance,
)
from openlineage_subset.lineage.model._bounds import date_bounds
from openlineage_subset.lineage.store._upgrades import _COUNTING
from tests.lineage.counts import assert_counts_kept
from tests.lineage.events import LAKE, day, pipeline_history, run, write_events


def _twins(tmp_path: Path, source: Path) -> tuple[str, str]:
    """Two databases of the events of ``source``: one to keep as made (``fresh``), one to make
    old (``old``), in that order."""
    fresh, old = str(tmp_path / "fresh.db"), str(tmp_path / "old.db")
    ingest([source], fresh)
    ingest([source], old)
    return fresh, old


def _links(db: str) -> list[tuple[int, int]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT partition_id, access_id FROM access_partitions ORDER BY 1, 2"
        ).fetchall()


def _as_layout_3(db: str) -> None:
    connection = sqlite3.connect(db, isolation_level=None)
    connection.execute(
        "DELETE FROM access_partitions WHERE access_id IN "
        "(SELECT access_id FROM accesses WHERE direction = 'output')"
    )
    connection.execute("ALTER TABLE events DROP COLUMN facets")
    connection.execute("PRAGMA user_version = 3")
    connection.close()


def _as_layout_4(db: str) -> None:
    connection = sqlite3.connect(db, isolation_level=None)
    connection.execute("ALTER TABLE events DROP COLUMN facets")
    # layout 4 stored ranges only for reads of comparisons alone, not for partition lists
    # and a filter
    unbounded = [
        (access_id,)
        for access_id, text in connection.execute(
            "SELECT access_id, condition FROM accesses WHERE access_id IN "
            "(SELECT access_id FROM access_bounds)"
        )
        if not date_bounds(json.loads(text))
    ]
    connection.executemany("DELETE FROM access_bounds WHERE access_id = ?", unbounded)
    connection.execute("PRAGMA user_version = 4")
    connection.close()


def _bounds(db: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT * FROM access_bounds ORDER BY 1, 2").fetchall()


def _facets(db: str) -> list[object]:
    with sqlite3.connect(db) as connection:
        return [
            row[0] is not None
            for row in connection.execute("SELECT facets FROM events ORDER BY event_time, digest")
        ]


def _answers(db: str) -> list[object]:
    return [
        provenance(db, "rolling", partition={"day": "2024-10-05"}).as_json(),
        provenance(db, "raw", partition={"day": "2024-10-02", "country": "DE"}).as_json(),
        impact(db, "raw", partition={"day": "2024-10-02"}).as_json(),
    ]


def test_a_layout_3_database_is_upgraded_when_a_query_opens_it(tmp_path: Path) -> None:
    source = write_events(tmp_path / "events.jsonl", pipeline_history(6))
    fresh, old = _twins(tmp_path, source)
    _as_layout_3(old)
    assert len(_links(old)) < len(_links(fresh))
    assert _answers(old) == _answers(fresh)
    assert _links(old) == _links(fresh)
    with sqlite3.connect(old) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def test_a_layout_3_database_is_upgraded_by_an_ingest_into_it(tmp_path: Path) -> None:
    first = write_events(tmp_path / "first.jsonl", run(1, 0, 1, writes=[("raw", day("d1"))]))
    more = write_events(tmp_path / "more.jsonl", run(2, 2, 3, writes=[("raw", day("d2"))]))
    db = str(tmp_path / "lineage.db")
    ingest([first], db)
    _as_layout_3(db)
    assert ingest([more], db).stored == 2
    assert len(_links(db)) == 2  # each write's partition, the old one's too
    (writer,) = provenance(db, "raw", partition={"day": "d1"}).writers
    assert writer.run.run_id.endswith("1")


def _with_run_facets(events: list[dict[str, object]]) -> list[dict[str, object]]:
    for item in events:
        facet = {"_producer": "tests", "_schemaURL": "https://example.com/facet.json"}
        item["run"] = {**item["run"], "facets": {"note": facet}}  # type: ignore[dict-item]
    return events


def test_a_layout_4_database_gets_the_facets_column_and_keeps_the_new_events_facets(
    tmp_path: Path,
) -> None:
    first = write_events(
        tmp_path / "first.jsonl", _with_run_facets(run(1, 0, 1, writes=[("raw", day("d1"))]))
    )
    more = write_events(
        tmp_path / "more.jsonl", _with_run_facets(run(2, 2, 3, writes=[("raw", day("d2"))]))
    )
    db = str(tmp_path / "lineage.db")
    assert ingest([first], db).stored == 2
    assert _facets(db) == [True, True]
    _as_layout_4(db)
    assert ingest([more], db).stored == 2
    # what was stored before the upgrade had no facets kept, and still has none; the new do
    assert _facets(db) == [False, False, True, True]
    assert [w.run.run_id[-1] for w in provenance(db, "raw", partition={"day": "d1"}).writers] == [
        "1"
    ]
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def test_a_layout_4_database_gets_the_ranges_of_reads_of_partitions_and_a_filter(
    tmp_path: Path,
) -> None:
    source = write_events(tmp_path / "events.jsonl", pipeline_history(6))
    fresh, old = _twins(tmp_path, source)
    _as_layout_4(old)
    assert len(_bounds(old)) < len(_bounds(fresh)), "the scored reads lost their ranges"
    assert _answers(old) == _answers(fresh)
    assert _bounds(old) == _bounds(fresh)


def test_an_older_layout_is_refused_with_what_to_do(tmp_path: Path) -> None:
    db = str(tmp_path / "lineage.db")
    ingest([write_events(tmp_path / "a.jsonl", run(1, 0, 1, writes=[("raw", None)]))], db)
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA user_version = 2")
    with pytest.raises(LineageDatabaseError, match="layout version 2, which this version does"):
        provenance(db, "raw")


def test_a_layout_7_database_gets_the_index_of_runs_by_parent(tmp_path: Path) -> None:
    db = str(tmp_path / "lineage.db")
    ingest([write_events(tmp_path / "events.jsonl", pipeline_history(2))], db)
    with sqlite3.connect(db) as connection:
        connection.execute("DROP INDEX run_parents_by_parent")
        connection.execute("PRAGMA user_version = 7")
    before = _answers(db)  # a query opens it: upgraded
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        plan = connection.execute(
            "EXPLAIN QUERY PLAN SELECT run_id FROM run_parents WHERE parent_run_id = 'x'"
        ).fetchall()
    assert any("run_parents_by_parent" in str(step) for step in plan), plan
    assert _answers(db) == before


def _located(db: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT a.access_id, a.located, l.place FROM accesses a "
            "LEFT JOIN access_locations l USING (access_id) ORDER BY 1, 3"
        ).fetchall()


def _files(*places: str) -> dict[str, object]:
    return {"type": "location", "locations": list(places)}


def test_a_layout_8_database_gets_the_places_of_its_reads(tmp_path: Path) -> None:
    inbox = [f"file:/in/part-{n}.json" for n in range(3)]
    events: list[dict[str, object]] = []
    for number, place in enumerate(inbox, 1):
        events += run(number, number, number + 0.5, reads=[("inbox", _files(place))])
    events += run(9, 9, 10, reads=[("inbox", None)])  # the whole inbox: not located
    source = write_events(tmp_path / "events.jsonl", events)
    fresh, old = _twins(tmp_path, source)
    with sqlite3.connect(old) as connection:
        connection.execute("DROP INDEX accesses_by_location")
        connection.execute("DROP INDEX accesses_naming_places")  # layout 11's
        connection.execute("DROP TABLE access_locations")
        connection.execute("ALTER TABLE accesses DROP COLUMN located")
        connection.execute("PRAGMA user_version = 8")
    bad = "file:/in/part-1.json"
    answer = impact(old, "inbox", location=bad).as_json()  # a query opens it: upgraded
    assert _located(old) == _located(fresh)
    assert [row[1] for row in _located(fresh)] == [1, 1, 1, 0]
    assert answer == impact(fresh, "inbox", location=bad).as_json()
    assert [r["runId"][-1] for r in answer["runs"]] == ["2", "9"]  # type: ignore[index]


_LAYOUT_10 = {
    "ranges": "SELECT * FROM access_ranges ORDER BY access_id",
    "done": "SELECT access_id, done FROM accesses ORDER BY access_id",
    "places": "SELECT * FROM access_locations ORDER BY access_id, place",
}


def _layout_10(db: str) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(db) as connection:
        return {name: connection.execute(sql).fetchall() for name, sql in _LAYOUT_10.items()}


def test_a_layout_9_database_gets_the_ranges_of_its_reads_and_its_writes_done(
    tmp_path: Path,
) -> None:
    """The index of ranges, the writes of completed runs (and the trigger that keeps them) and
    the places again (a layout-9 merge could have left some under a removed dataset): equal to
    a new file's, and kept alike by a later ingest in which a stored run completes."""
    events = pipeline_history(6, failed_day=2)
    events += run(90, 90, 91, reads=[("inbox", _files("file:/in/a.json"))], writes=[("raw", None)])
    start, end = events[-2:]
    first = write_events(tmp_path / "first.jsonl", events[:-1])  # the last run's end: later
    fresh, old = _twins(tmp_path, first)
    with sqlite3.connect(old) as connection:
        connection.execute("DROP TABLE access_ranges")
        connection.execute("DROP TRIGGER writes_done_kept")
        connection.execute("DROP INDEX writes_done")
        connection.execute("DROP INDEX writes_not_done")  # layout 12's
        connection.execute("ALTER TABLE accesses DROP COLUMN done")
        connection.execute("UPDATE access_locations SET dataset_id = dataset_id + 100")
        connection.execute("PRAGMA user_version = 9")
    asked = {"day": "2024-10-02"}
    answer = impact(old, "clean", partition=asked).as_json()  # a query opens it: upgraded
    assert answer == impact(fresh, "clean", partition=asked).as_json()
    assert _layout_10(old) == _layout_10(fresh)
    tables = _layout_10(fresh)
    assert {row[1] for row in tables["ranges"]} == {"", "day"}, "windows and whole reads"
    assert (0,) in {row[1:] for row in tables["done"]}, "the failed run's write is not done"
    later = write_events(tmp_path / "later.jsonl", [end])
    ingest([later], fresh)
    ingest([later], old)
    assert _layout_10(old) == _layout_10(fresh)
    assert _layout_10(fresh)["done"] != tables["done"], "the stored run completed: its write is"
    assert start["eventType"] == "START"


def test_a_layout_10_database_gets_the_index_of_conditions_naming_places(tmp_path: Path) -> None:
    """Layout 11's partial index of the conditions naming a location that no list decides (a
    dataset's column order is looked for there), as a new file has it; the answers unchanged."""
    events = pipeline_history(4)
    events += run(90, 90, 91, reads=[("inbox", _files("file:/in/a.json"))], writes=[("raw", None)])
    source = write_events(tmp_path / "events.jsonl", events)
    fresh, old = _twins(tmp_path, source)
    index = "SELECT sql FROM sqlite_master WHERE name = 'accesses_naming_places'"
    with sqlite3.connect(old) as connection:
        connection.execute("DROP INDEX accesses_naming_places")
        connection.execute("PRAGMA user_version = 10")
        assert connection.execute(index).fetchall() == []
    answer = provenance(old, "raw", partition={"day": "2024-10-02"}).as_json()  # upgraded
    assert answer == provenance(fresh, "raw", partition={"day": "2024-10-02"}).as_json()
    with sqlite3.connect(old) as connection, sqlite3.connect(fresh) as made:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert connection.execute(index).fetchall() == made.execute(index).fetchall() != []


_LAYOUT_12 = (
    "TRIGGER writes_timed",
    "TRIGGER accesses_started",
    "INDEX writes_by_time",
    "INDEX reads_by_start",
    "INDEX writes_by_start",
    "INDEX writes_not_done",
    "INDEX runs_failed",
    *(f"TRIGGER {name}" for name in _COUNTING),
    "TABLE dataset_counts",
)


def test_a_layout_11_database_gets_its_datasets_counts_and_the_times_of_its_writes(
    tmp_path: Path,
) -> None:
    """Layout 12's counts of each dataset, the time of each write and their triggers: as a new
    file has them, the listing of datasets unchanged, and kept alike by a later ingest in which
    a stored run ends and new reads come."""
    events = pipeline_history(5, failed_day=2)
    events += run(90, 90, 91, reads=[("raw", day("2024-10-02"))], writes=[("raw", None)])
    start, end = events[-2:]
    first = write_events(tmp_path / "first.jsonl", events[:-1])  # the last run's end: later
    fresh, old = _twins(tmp_path, first)
    with sqlite3.connect(old) as connection:
        for name in _LAYOUT_12:
            connection.execute(f"DROP {name}")
        connection.execute("ALTER TABLE accesses DROP COLUMN written_at")
        connection.execute("ALTER TABLE accesses DROP COLUMN started_at")
        connection.execute("PRAGMA user_version = 11")
    listing = datasets(old).as_json()  # a query opens it: upgraded
    assert listing == datasets(fresh).as_json()
    assert_counts_kept(old)
    named = ", ".join(repr(name.split()[1]) for name in _LAYOUT_12)
    schema = f"SELECT type, name, sql FROM sqlite_master WHERE name IN ({named}) ORDER BY name"
    with sqlite3.connect(old) as connection, sqlite3.connect(fresh) as made:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        made_here = [row[:2] for row in made.execute(schema)]
        assert len(made_here) == len(_LAYOUT_12)
        assert [row[:2] for row in connection.execute(schema)] == made_here
    later = write_events(tmp_path / "later.jsonl", [end, *run(91, 95, 96, reads=[("raw", None)])])
    ingest([later], fresh)
    ingest([later], old)
    assert_counts_kept(old)
    assert datasets(old).as_json() == datasets(fresh).as_json() != listing
    assert start["eventType"] == "START"


_LAYOUT_12_BY_START = (
    "CREATE INDEX accesses_by_start ON accesses (dataset_id, started_at, direction)"
)
"""Layout 12's one index of a dataset's reads and writes by their runs' start."""
_LAYOUT_12_TAILS = (
    "CREATE TRIGGER partition_tails_kept AFTER INSERT ON partitions "
    "WHEN instr(NEW.dimensions, '\",') > 0 BEGIN "
    "INSERT OR IGNORE INTO partition_tails (dataset_id, tail) VALUES "
    "(NEW.dataset_id, substr(NEW.dimensions, instr(NEW.dimensions, '\",') + 2)); END"
)
"""Layout 12's trigger that kept ``partition_tails``."""


def test_a_layout_12_database_gets_an_index_of_reads_and_one_of_writes_by_start(
    tmp_path: Path,
) -> None:
    """Layout 13's indexes of a dataset's reads, and of its writes, by their runs' start
    replace layout 12's one of both: as a new file has them, layout 12's gone; a dataset's
    latest runs, its facets and an impact from a time on answered alike. Layout 12's trigger
    that kept ``partition_tails`` is gone (the writer keeps them): a later ingest adds a new
    day's tail once, as into a new file."""
    events = pipeline_history(5, failed_day=2)
    fresh, old = _twins(tmp_path, write_events(tmp_path / "events.jsonl", events))
    with sqlite3.connect(old) as connection:
        connection.execute("DROP INDEX reads_by_start")
        connection.execute("DROP INDEX writes_by_start")
        connection.execute(_LAYOUT_12_BY_START)
        connection.execute(_LAYOUT_12_TAILS)
        connection.execute("PRAGMA user_version = 12")
    clean = DatasetRef("file", f"{LAKE}/clean")
    with LineageStore.open(fresh) as made:
        (since,) = made.connection.execute(
            "SELECT started_at FROM runs ORDER BY started_at LIMIT 1 OFFSET 9"
        ).fetchone()

    def answers(db: str) -> list[object]:
        with Lineage(db) as lineage:
            latest = latest_history(lineage.store, PartitionsQuery("clean"), 7)
            facets = lineage.dataset_facets(clean)
            return [
                latest[0].as_json(),
                latest[1],
                None if facets is None else facets.run_id,
                lineage.impact(ImpactQuery("clean", since=since)).as_json(),
            ]

    assert answers(old) == answers(fresh)  # the first opens it: upgraded
    schema = (
        "SELECT type, name, sql FROM sqlite_master WHERE name IN "
        "('reads_by_start', 'writes_by_start', 'accesses_by_start') ORDER BY name"
    )
    with sqlite3.connect(old) as connection, sqlite3.connect(fresh) as made:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        indexes = made.execute(schema).fetchall()
        assert [row[1] for row in indexes] == ["reads_by_start", "writes_by_start"]
        assert connection.execute(schema).fetchall() == indexes
        trigger = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'partition%'"
        assert connection.execute(trigger).fetchall() == made.execute(trigger).fetchall()
    later = write_events(
        tmp_path / "later.jsonl", run(90, 100, 101, writes=[("raw", day("2024-12-01", "ES"))])
    )
    tails = "SELECT dataset_id, tail FROM partition_tails ORDER BY dataset_id, tail"
    for db in (old, fresh):
        assert ingest([later], db).stored == 2
    with sqlite3.connect(old) as connection, sqlite3.connect(fresh) as made:
        assert connection.execute(tails).fetchall() == made.execute(tails).fetchall()
        assert ('"day":"2024-12-01"}',) in [row[1:] for row in made.execute(tails)]


_LAYOUT_13_EVENTS = (
    "CREATE TABLE events (digest TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs (run_id), "
    "event_type TEXT NOT NULL, event_time TEXT NOT NULL, source TEXT NOT NULL, facets BLOB)",
    "CREATE INDEX events_by_run ON events (run_id)",
)
"""Layout 13's events, keyed by their digest alone."""
_EVENT_COLUMNS = "digest, run_id, event_type, event_time, source, facets"


def test_a_layout_13_database_gets_its_events_known_by_run_and_digest(tmp_path: Path) -> None:
    """Layout 14's events are known by (run id, digest): the table made again without layout
    13's key on the digest, every row kept with its rowid; the same events ingested again are
    each already there, a new one is stored, and the answers are a new file's."""
    events = pipeline_history(4, failed_day=2)
    source = write_events(tmp_path / "events.jsonl", events)
    fresh, old = _twins(tmp_path, source)
    rows = "SELECT rowid, * FROM events ORDER BY rowid"
    with sqlite3.connect(old, isolation_level=None) as connection:
        kept = connection.execute(rows).fetchall()
        connection.execute("ALTER TABLE events RENAME TO events_14")
        connection.execute("DROP INDEX events_by_run")
        for statement in _LAYOUT_13_EVENTS:
            connection.execute(statement)
        connection.execute(
            f"INSERT INTO events (rowid, {_EVENT_COLUMNS}) SELECT rowid, * FROM events_14"
        )
        connection.execute("DROP TABLE events_14")
        connection.execute("PRAGMA user_version = 13")
        assert connection.execute(rows).fetchall() == kept
    schema = "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'events' ORDER BY name"
    assert _answers(old) == _answers(fresh)  # the first opens it: upgraded
    with sqlite3.connect(old) as connection, sqlite3.connect(fresh) as made:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert connection.execute(schema).fetchall() == made.execute(schema).fetchall()
        assert [row[1] for row in made.execute(schema)] == ["events", "events_by_run"]
        assert connection.execute(rows).fetchall() == kept
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
    again = ingest([source], old)
    assert (again.stored, again.duplicates, again.invalid) == (0, len(events), 0)
    later = write_events(
        tmp_path / "later.jsonl", run(90, 100, 101, writes=[("raw", day("2024-12-01", "ES"))])
    )
    for db in (old, fresh):
        assert ingest([later], db).stored == 2
    digests = "SELECT run_id, digest, event_type FROM events ORDER BY rowid"
    with sqlite3.connect(old) as connection, sqlite3.connect(fresh) as made:
        assert connection.execute(digests).fetchall() == made.execute(digests).fetchall()
