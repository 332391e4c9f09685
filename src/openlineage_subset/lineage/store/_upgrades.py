"""Older layouts of the lineage database brought to this one, in the write transaction that
opens the file: what each layout added, filled from what the file already holds."""

from __future__ import annotations

import json
import sqlite3

from openlineage_subset.lineage.model import (
    dimensions_text,
    listed_partitions,
    listed_places,
    read_bounds,
)
from openlineage_subset.lineage.store._facets import facets_of
from openlineage_subset.lineage.store._layout import (
    SCHEMA,
    SCHEMA_VERSION,
    statements,
)
from openlineage_subset.lineage.store._ranges import INSERT_RANGE, range_row
from openlineage_subset.lineage.store._run_parents import UPSERT_PARENTS, parents_row, run_parents


def upgrade(connection: sqlite3.Connection) -> None:
    """Bring a database of layout 3, 4 or 5 to :data:`SCHEMA_VERSION`, in the open write
    transaction. From 3: link each write to the partitions its condition lists, as ingest now
    links them (layout 3 linked reads only); this takes about as long as ingesting the writes'
    partitions did. From 4: add the column of the events' facets (empty for the events already
    stored: their facets were not kept), and store the date range of each read that lists
    partitions and filters (which layout 4 stored none of). From 5: each run's parent, root
    and orchestrator task, from the facets kept (:func:`_add_run_parents`). From 6: the ends
    of the partition keys (:func:`_add_partition_tails`). From 7: the index of runs by their
    parent. From 8: the places of the accesses whose conditions a list of them decides
    (:func:`_add_access_locations`), and the families of runs (:func:`_add_run_families`).
    From 9: the index of reads by their ranges of dates (:func:`_add_access_ranges`), the
    writes of completed runs (:func:`_add_writes_done`), and the places again (layout 9's
    merges of datasets left some under the dataset they removed). From 10: the index of the
    conditions naming a location that no list decides (``accesses_naming_places``). From 11:
    each dataset's counts and the time of each write (:func:`_add_dataset_counts`), the index
    of failed runs. From 12: the reads, and the writes, of a dataset by start, each an index
    of its own (one of both before); the trigger that kept ``partition_tails`` goes (the
    writer keeps it). From 13: events known by their run and digest (:func:`_key_events`)."""
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version < 4:
        writes = connection.execute(
            "SELECT access_id, dataset_id, condition FROM accesses "
            "WHERE direction = 'output' AND condition IS NOT NULL"
        ).fetchall()
        for access_id, dataset_id, text in writes:
            listed, _ = listed_partitions(json.loads(text))
            connection.executemany(
                "INSERT OR IGNORE INTO access_partitions (partition_id, access_id) "
                "SELECT partition_id, ? FROM partitions WHERE dataset_id = ? AND dimensions = ?",
                [(access_id, dataset_id, dimensions_text(dimensions)) for dimensions, _ in listed],
            )
    if version < 5:
        connection.execute("ALTER TABLE events ADD COLUMN facets BLOB")
        # Since 5, a read that is partition lists and a filter (a day's partitions AND
        # amount > 0) has the range of dates it lists, as ingest now stores it.
        unbounded = connection.execute(
            "SELECT access_id, condition FROM accesses a WHERE direction = 'input' "
            "AND condition IS NOT NULL AND listed = 0 AND NOT EXISTS "
            "(SELECT 1 FROM access_bounds b WHERE b.access_id = a.access_id)"
        ).fetchall()
        connection.executemany(
            "INSERT INTO access_bounds (access_id, column_name, low, high) VALUES (?, ?, ?, ?)",
            [
                (access_id, column, low, high)
                for access_id, text in unbounded
                for column, (low, high) in read_bounds(json.loads(text)).items()
            ],
        )
    if version < 6:
        # Since 6, a dataset's other names (symlinks, storage locations); none were kept before:
        # events ingested again add them.
        connection.execute(
            "CREATE TABLE IF NOT EXISTS dataset_names (namespace TEXT NOT NULL, "
            "name TEXT NOT NULL, dataset_id INTEGER NOT NULL REFERENCES datasets (dataset_id), "
            "reason TEXT NOT NULL, PRIMARY KEY (namespace, name, dataset_id)) WITHOUT ROWID"
        )
        connection.execute(
            "CREATE INDEX IF NOT EXISTS dataset_names_by_dataset ON dataset_names (dataset_id)"
        )
        _add_run_parents(connection)
        # Since 6, the store's settings; none set: each has its default.
        connection.execute(
            "CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) "
            "WITHOUT ROWID"
        )
    if version < 7:
        _add_partition_tails(connection)
    if version < 8:
        connection.execute(
            "CREATE INDEX IF NOT EXISTS run_parents_by_parent ON run_parents (parent_run_id)"
        )
    if version < 9:
        _add_access_locations(connection)
        _add_run_families(connection)
    if version < 10:
        _add_access_ranges(connection)
        _add_writes_done(connection)
        if version == 9:
            # Merges of datasets before layout 10 left the places of the accesses they moved
            # or joined under the dataset they removed: found again from the conditions.
            connection.execute("DELETE FROM access_locations")
            connection.execute("UPDATE accesses SET located = 0 WHERE located = 1")
            _add_access_locations(connection)
    if version < 11:
        _create(connection, "INDEX accesses_naming_places")
    if version < 12:
        _add_dataset_counts(connection)
        _create(connection, "INDEX runs_failed")
    if version < 13:
        connection.execute("DROP TRIGGER IF EXISTS partition_tails_kept")  # the writer's now
        connection.execute("DROP INDEX IF EXISTS accesses_by_start")
        _create(connection, "INDEX reads_by_start", "INDEX writes_by_start")
    if version < 14:
        _key_events(connection)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _add_access_locations(connection: sqlite3.Connection) -> None:
    """Layout 9's ``located`` column, its index and ``access_locations``, filled from the
    conditions that name a location (one pass over them)."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(accesses)")}
    if "located" not in columns:
        connection.execute("ALTER TABLE accesses ADD COLUMN located INTEGER NOT NULL DEFAULT 0")
    _create(connection, "INDEX accesses_by_location", "TABLE access_locations")
    rows = connection.execute(
        "SELECT access_id, dataset_id, condition FROM accesses "
        "WHERE condition LIKE '%\"location\"%'"
    ).fetchall()
    located: list[tuple[int]] = []
    places: list[tuple[int, str, int]] = []
    for access_id, dataset_id, text in rows:
        found = listed_places(json.loads(text))
        if found is not None:
            located.append((access_id,))
            places.extend((dataset_id, place, access_id) for place in found)
    connection.executemany("UPDATE accesses SET located = 1 WHERE access_id = ?", located)
    connection.executemany(
        "INSERT OR IGNORE INTO access_locations (dataset_id, place, access_id) VALUES (?, ?, ?)",
        places,
    )


def _add_access_ranges(connection: sqlite3.Connection) -> None:
    """Layout 10's ``access_ranges``, filled from the reads that do not only list partitions
    and their ranges in ``access_bounds`` (one pass over them)."""
    _create(connection, "TABLE access_ranges")
    reads: dict[tuple[int, int], dict[str, tuple[str | None, str | None]]] = {}
    for access_id, dataset_id, column, low, high in connection.execute(
        "SELECT a.access_id, a.dataset_id, b.column_name, b.low, b.high FROM accesses a "
        "LEFT JOIN access_bounds b USING (access_id) "
        "WHERE a.direction = 'input' AND a.listed = 0"
    ):
        bounds = reads.setdefault((dataset_id, access_id), {})
        if column is not None:
            bounds[column] = (low, high)
    connection.executemany(INSERT_RANGE, [range_row(*key, bounds) for key, bounds in reads.items()])


def _add_writes_done(connection: sqlite3.Connection) -> None:
    """Layout 10's ``done`` column of accesses, set for the writes of completed runs, its
    index and the trigger that keeps it."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(accesses)")}
    if "done" not in columns:
        connection.execute("ALTER TABLE accesses ADD COLUMN done INTEGER NOT NULL DEFAULT 0")
    _create(connection, "INDEX writes_done", "TRIGGER writes_done_kept")
    connection.execute(
        "UPDATE accesses SET done = 1 WHERE direction = 'output' AND run_id IN "
        "(SELECT run_id FROM runs WHERE status = 'COMPLETE')"
    )


def _add_dataset_counts(connection: sqlite3.Connection) -> None:
    """Layout 12's ``written_at`` of writes and ``started_at`` of accesses, their indexes and
    triggers, the index of writes not done, and ``dataset_counts`` with its triggers, filled
    from what the file holds (a pass over accesses and partitions)."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(accesses)")}
    for column in ("written_at", "started_at"):
        if column not in columns:
            connection.execute(f"ALTER TABLE accesses ADD COLUMN {column} TEXT")
    connection.execute(
        "UPDATE accesses SET (started_at, written_at) = (SELECT r.started_at, "
        "CASE accesses.direction WHEN 'output' THEN coalesce(r.ended_at, r.started_at) END "
        "FROM runs r WHERE r.run_id = accesses.run_id)"
    )
    _create(
        connection,
        "INDEX writes_by_time",
        "INDEX writes_not_done",
        "TRIGGER accesses_started",
        "TRIGGER writes_timed",
        "TABLE dataset_counts",
        *(f"TRIGGER {name}" for name in _COUNTING),
    )
    connection.execute(
        "INSERT OR REPLACE INTO dataset_counts (dataset_id, reads, writes, known_partitions) "
        "SELECT d.dataset_id, "
        "(SELECT count(*) FROM accesses a WHERE a.dataset_id = d.dataset_id "
        "AND a.direction = 'input'), "
        "(SELECT count(*) FROM accesses a WHERE a.dataset_id = d.dataset_id "
        "AND a.direction = 'output'), "
        "(SELECT count(*) FROM partitions p WHERE p.dataset_id = d.dataset_id) FROM datasets d"
    )


_COUNTING = (
    "dataset_counts_made",
    "dataset_counts_gone",
    "accesses_uncounted",
    "accesses_recounted",
    "partitions_uncounted",
    "partitions_recounted",
)
"""The triggers that keep ``dataset_counts``."""


def _add_run_families(connection: sqlite3.Connection) -> None:
    """Layout 9's ``parented`` column of runs, its index, ``run_families`` and the triggers
    that keep it, filled from the parents stored (one pass over them)."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(runs)")}
    if "parented" not in columns:
        connection.execute("ALTER TABLE runs ADD COLUMN parented INTEGER NOT NULL DEFAULT 0")
    _create(
        connection,
        "INDEX runs_alone_by_start",
        "TABLE run_families",
        "INDEX run_families_by_newest",
        "TRIGGER run_families_joined",
        "TRIGGER run_families_joined_later",
        "TRIGGER run_families_moved",
    )
    connection.execute(
        "UPDATE runs SET parented = 1 WHERE run_id IN "
        "(SELECT run_id FROM run_parents WHERE parent_run_id IS NOT NULL)"
    )
    # Each family's count and newest start, then its newest run (the least id at that start).
    connection.execute(
        "INSERT OR REPLACE INTO run_families "
        "(parent_run_id, job_namespace, job_name, runs, newest_at, newest_run) "
        "SELECT p.parent_run_id, r.job_namespace, r.job_name, count(*), max(r.started_at), '' "
        "FROM run_parents p JOIN runs r USING (run_id) WHERE p.parent_run_id IS NOT NULL "
        "GROUP BY p.parent_run_id, r.job_namespace, r.job_name"
    )
    connection.execute(
        "UPDATE run_families SET newest_run = (SELECT min(r.run_id) FROM run_parents p "
        "JOIN runs r USING (run_id) WHERE p.parent_run_id = run_families.parent_run_id "
        "AND r.job_namespace = run_families.job_namespace "
        "AND r.job_name = run_families.job_name AND r.started_at = run_families.newest_at)"
    )


def _add_partition_tails(connection: sqlite3.Connection) -> None:
    """Layout 7's ``partition_tails``, filled from the partitions stored (one pass over
    them); the writer adds to it (layouts 7 to 12 by a trigger)."""
    _create(connection, "TABLE partition_tails")
    connection.execute(
        "INSERT OR IGNORE INTO partition_tails (dataset_id, tail) "
        "SELECT dataset_id, substr(dimensions, instr(dimensions, '\",') + 2) FROM partitions "
        "WHERE instr(dimensions, '\",') > 0"
    )


def _add_run_parents(connection: sqlite3.Connection) -> None:
    """Layout 6's ``run_parents``, filled from the run facets layout 5 kept of each event
    (events stored before layout 5 kept none: their runs get theirs when ingested again)."""
    _create(connection, "TABLE run_parents")
    rows = []
    for run_id, body in connection.execute(
        "SELECT run_id, facets FROM events WHERE length(facets) > 0 ORDER BY event_time"
    ):
        document = facets_of(body) or {}
        parents = run_parents(document.get("run"))
        if parents is not None:
            rows.append(parents_row(run_id, parents))
    connection.executemany(UPSERT_PARENTS, rows)


def _key_events(connection: sqlite3.Connection) -> None:
    """Layout 14's events, known by (run id, digest) rather than by their digest alone: the
    table is made again (SQLite cannot drop a primary key), each row with its rowid, and the
    index made once it is filled (a sort, not a million inserts). Digests were unique, so the
    pairs are; 7 s at a million events."""
    connection.execute("DROP INDEX IF EXISTS events_by_run")
    connection.execute("ALTER TABLE events RENAME TO events_layout_13")
    _create(connection, "TABLE events")
    connection.execute(
        "INSERT INTO events (rowid, digest, run_id, event_type, event_time, source, facets) "
        "SELECT rowid, digest, run_id, event_type, event_time, source, facets "
        "FROM events_layout_13 ORDER BY rowid"
    )
    connection.execute("DROP TABLE events_layout_13")
    _create(connection, "INDEX events_by_run")


def _create(connection: sqlite3.Connection, *names: str) -> None:
    """Create the tables, indexes and triggers ``names`` ("TABLE runs", "INDEX events_by_run"
    for a unique one too) as the layout's script does, unless the file has them."""
    for name in names:
        kind, _, rest = name.partition(" ")
        for create in (f"\nCREATE {name} ", f"\nCREATE UNIQUE {name} "):
            found = [text for text in statements(SCHEMA) if create in f"\n{text}"]
            if found:
                (statement,) = found
                made = f"\n{statement}".replace(
                    f"{kind} {rest} ", f"{kind} IF NOT EXISTS {rest} ", 1
                )
                connection.execute(made)
                break
        else:  # pragma: no cover - a name the layout's script does not have
            raise ValueError(f"the layout has no {name}")
