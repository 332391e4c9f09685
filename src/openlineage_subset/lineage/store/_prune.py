"""Retention: the runs that ended before a time removed, with their events and what the store
keeps of them, while every answer about what remains stays sound (``ol-subset lineage prune``).

- A run stays, however old, while one of its writes may still be what a partition holds: the
  latest completed write that only lists partitions keeps each partition it lists; a write
  that does not only list them (a filter, locations, the whole dataset) stays until a later
  completed run wrote the whole dataset. The partitions, their ids and identifiers stay.
- The time is kept (``pruned_before`` in ``settings``, the latest of those given), and the
  answers that reach before it say that runs before it were pruned: they may have read or
  written what the answer is about (:func:`pruned_note`).
- Runs are removed a few hundred at a time, each batch in a write transaction of its own (with
  its accesses' rows in every index), so that an ingest or the service waits for one batch,
  never for the whole prune; what an answer reads between two batches is sound (a removed run
  is absent, with the note). ``VACUUM`` then gives the space back to the file system (it holds
  the write lock while it copies the file: ``vacuum=False`` leaves the space to be reused).
- What a prune holds does not grow with the history: the old runs, the last writers and the
  runs to remove are found by SQL into temporary tables (SQLite's temporary file), a batch at
  a time read from them (38 MB at ten million events, where holding them in Python took 2.4
  GB).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import sqlite3

from openlineage_subset.lineage.model import (
    LineageQueryError,
    dimensions_text,
    listed_partitions,
    listed_places,
    normal_time,
    shown_time,
)
from openlineage_subset.lineage.store._database import Database, LineageStore, opened
from openlineage_subset.lineage.store._ranges import DELETE_RANGE, stored_range_rows

PRUNED_BEFORE = "pruned_before"
"""The ``settings`` row holding the time before which runs were pruned (stored form)."""
_BATCH = 200  # runs removed per write transaction


@dataclasses.dataclass(frozen=True)
class PruneReport:
    """What :func:`prune` removed and kept."""

    before: str  # stored form
    runs: int  # runs removed
    events: int  # their events
    kept: int  # runs that ended before the time, kept: a partition's last writer
    bytes_before: int
    bytes_after: int

    def as_json(self) -> dict[str, object]:
        return {
            "before": shown_time(self.before),
            "runsRemoved": self.runs,
            "eventsRemoved": self.events,
            "runsKept": self.kept,
            "bytesBefore": self.bytes_before,
            "bytesAfter": self.bytes_after,
        }

    def summary(self) -> str:
        return (
            f"{self.runs} run(s) that ended before {shown_time(self.before)} removed, with "
            f"{self.events} event(s); {self.kept} older run(s) kept, the last writers of what "
            f"partitions hold; {self.bytes_before:,} bytes before, {self.bytes_after:,} after"
        )


def pruned_before(connection: sqlite3.Connection) -> str | None:
    """The time before which runs were pruned (stored form); None when never."""
    row = connection.execute(
        "SELECT value FROM settings WHERE name = ?", (PRUNED_BEFORE,)
    ).fetchone()
    return None if row is None else str(row[0])


def pruned_note(before: str) -> str:
    """What an answer that reaches before a prune's time says."""
    return (
        f"runs that ended before {shown_time(before)} were pruned (ol-subset lineage prune) but "
        "for the last writers of partitions: one of them may have read or written this too"
    )


def prune(db: Database, before: str | _dt.datetime, *, vacuum: bool = True) -> PruneReport:
    """Remove from the database ``db`` the runs that ended (or, never ending, had their latest
    event) before ``before`` (ISO 8601; a date is its midnight, UTC), with their events, but
    for the last writers of what partitions hold; then ``VACUUM`` it (unless ``vacuum`` is
    False). What remains answers soundly, saying that runs before ``before`` were pruned where
    an answer reaches before it. Safe while another process ingests: it waits for one batch
    of a few hundred runs at a time. Raises :class:`LineageQueryError` for a time that is not
    ISO 8601, :class:`LineageDatabaseError` as the queries do.
    """
    if isinstance(before, _dt.datetime):  # a naive one is UTC
        before = before.isoformat() + ("" if before.tzinfo else "Z")
    cutoff = normal_time(before)
    if cutoff is None:
        raise LineageQueryError(
            f"before: {before!r} is not an ISO-8601 time; write it like 2024-10-15T10:00:00Z "
            "or 2024-10-15"
        )
    with opened(db) as store:
        return _prune(store, cutoff, vacuum)


def _prune(store: LineageStore, before: str, vacuum: bool) -> PruneReport:
    connection = store.connection
    size = _bytes(store)
    try:
        connection.execute("BEGIN")  # one snapshot for the runs and the writers read
        try:
            old = _mark_gone(connection, before)
        finally:
            connection.execute("COMMIT")
        store.begin_write()
        try:
            kept = pruned_before(connection)
            connection.execute(
                "INSERT OR REPLACE INTO settings (name, value) VALUES (?, ?)",
                (PRUNED_BEFORE, max(before, kept or before)),
            )
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        events, removed = _remove_gone(store)
    finally:
        connection.execute("DROP TABLE IF EXISTS temp.prune_gone")
    if vacuum and removed:
        connection.execute("VACUUM")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return PruneReport(before, removed, events, old - removed, size, _bytes(store))


def _remove_gone(store: LineageStore) -> tuple[int, int]:
    """Remove the runs of ``temp.prune_gone`` that are as they were when it was made, a batch
    a write transaction; the events and the runs removed."""
    connection = store.connection
    events = removed = 0
    last = 0
    # The rows that refer to a run removed go first, each found by its key: the foreign
    # keys' checks would scan the tables not indexed by access, once per access removed.
    checked = connection.execute("PRAGMA foreign_keys").fetchone()[0]
    connection.execute("PRAGMA foreign_keys = OFF")
    try:
        while True:
            store.begin_write()
            try:
                # A run an ingest changed since the snapshot (an event that came meanwhile:
                # it may have completed, and be a last writer now) stays.
                batch = connection.execute(_NEXT_GONE, (last, _BATCH)).fetchall()
                same = [run_id for _, run_id, unchanged in batch if unchanged]
                events += _remove(connection, same)
                removed += len(same)
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            if len(batch) < _BATCH:
                return events, removed
            last = batch[-1][0]
    finally:
        connection.execute(f"PRAGMA foreign_keys = {int(checked)}")


def _bytes(store: LineageStore) -> int:
    """The database's size in bytes: its file, and its write-ahead log."""
    return sum(
        os.path.getsize(path) for path in (store.path, store.path + "-wal") if os.path.exists(path)
    )


_ROW = (
    "status",
    "started_at",
    "ended_at",
    "start_event_at",
    "first_event_at",
    "latest_state",
    "latest_state_at",
    "terminal_state",
)  # what merging an event into a run may change

# The next batch of the runs to remove (after a row of ``temp.prune_gone``, by rowid: a run
# id may be any string, the empty one too): each with whether the run is still as the
# snapshot saw it (a run gone since is not).
_NEXT_GONE = (
    "SELECT g.rowid, g.run_id, "
    + " AND ".join(f"r.{column} IS g.{column}" for column in _ROW)
    + " FROM temp.prune_gone g LEFT JOIN runs r ON r.run_id = g.run_id "
    "WHERE g.rowid > ? ORDER BY g.rowid LIMIT ?"
)

# A completed write's place among the writes of a dataset, as provenance orders them (by end,
# then run id): the later, the greater; the run id is what follows its first space (a stored
# time has none).
_MARK = "r.ended_at || ' ' || r.run_id"


def _mark_gone(connection: sqlite3.Connection, before: str) -> int:
    """Fill the table ``temp.prune_gone`` with the runs to remove, each with what :data:`_ROW`
    says of it now: those whose end (or, never ending, latest event) is before ``before``, but
    the last writers (:func:`_fill_last_writers`); how many runs are that old, kept or not.

    The runs are found and held by SQLite, in temporary tables of this connection (SQLite's
    temporary file, in TMPDIR, read through its page cache), never in Python's memory: a
    history of years has millions of old runs, nearly all kept.
    """
    columns = ", ".join(_ROW)
    for table in ("prune_gone", "prune_kept", "prune_wholes"):  # a failed prune's, if any
        connection.execute(f"DROP TABLE IF EXISTS temp.{table}")
    connection.execute(f"CREATE TEMP TABLE prune_gone (run_id TEXT NOT NULL, {columns})")
    connection.execute("CREATE TEMP TABLE prune_kept (run_id TEXT PRIMARY KEY) WITHOUT ROWID")
    try:
        _fill_last_writers(connection, before)
        connection.execute(
            f"INSERT INTO temp.prune_gone SELECT run_id, {columns} FROM runs "
            "WHERE coalesce(ended_at, latest_state_at) < ? "
            "AND run_id NOT IN (SELECT run_id FROM temp.prune_kept) ORDER BY run_id",
            (before,),
        )
    finally:
        connection.execute("DROP TABLE temp.prune_kept")
    (old,) = connection.execute(
        "SELECT count(*) FROM runs WHERE coalesce(ended_at, latest_state_at) < ?", (before,)
    ).fetchone()
    return int(old)


def _fill_last_writers(connection: sqlite3.Connection, before: str) -> None:
    """Fill ``temp.prune_kept`` with the runs that ended before ``before`` and may hold what a
    partition holds now: the latest completed write listing each partition (of those that
    only list partitions), and every completed write that does not only list partitions with
    no later whole write (``temp.prune_wholes``: the latest whole write of each dataset)."""
    connection.execute(
        "CREATE TEMP TABLE prune_wholes (dataset_id INTEGER PRIMARY KEY, mark TEXT NOT NULL)"
    )
    try:
        connection.execute(
            f"INSERT INTO temp.prune_wholes SELECT a.dataset_id, max({_MARK}) FROM accesses a "
            "JOIN runs r USING (run_id) WHERE a.direction = 'output' AND a.done = 1 "
            f"AND a.condition IS NULL GROUP BY a.dataset_id HAVING max({_MARK}) IS NOT NULL"
        )
        later_whole = (
            "coalesce((SELECT w.mark FROM temp.prune_wholes w WHERE w.dataset_id = {dataset}), '')"
        )
        # the latest write listing each partition, among those that only list partitions
        connection.execute(
            "INSERT OR IGNORE INTO temp.prune_kept "
            "SELECT substr(latest.mark, instr(latest.mark, ' ') + 1) FROM ("
            f"SELECT a.dataset_id AS dataset_id, max({_MARK}) AS mark "
            "FROM access_partitions l JOIN accesses a USING (access_id) "
            "JOIN runs r USING (run_id) WHERE a.direction = 'output' AND a.done = 1 "
            "AND a.listed = 1 GROUP BY l.partition_id) latest "
            "WHERE latest.mark < ? AND latest.mark > "
            + later_whole.format(dataset="latest.dataset_id"),
            (before,),
        )
        connection.execute(
            "INSERT OR IGNORE INTO temp.prune_kept "
            "SELECT r.run_id FROM accesses a INDEXED BY writes_done JOIN runs r USING (run_id) "
            "WHERE a.direction = 'output' AND a.listed = 0 AND a.done = 1 "
            f"AND r.ended_at < ? AND {_MARK} >= " + later_whole.format(dataset="a.dataset_id"),
            (before,),
        )
    finally:
        connection.execute("DROP TABLE temp.prune_wholes")


def _remove(connection: sqlite3.Connection, runs: list[str]) -> int:
    """Remove the runs, their events, accesses (and their rows in each index), parents and
    families' counts; the number of events removed."""
    listed = json.dumps(runs)
    accesses = connection.execute(
        "SELECT access_id, dataset_id, direction, condition FROM accesses "
        "WHERE run_id IN (SELECT value FROM json_each(?))",
        (listed,),
    ).fetchall()
    for access_id, dataset_id, direction, condition in accesses:
        texts = [
            text
            for (text,) in connection.execute(
                "SELECT condition FROM access_conditions WHERE access_id = ?", (access_id,)
            )
        ] or ([condition] if condition is not None else [])
        _forget_access(connection, access_id, dataset_id, direction, texts)
    families = connection.execute(
        "SELECT DISTINCT p.parent_run_id, r.job_namespace, r.job_name FROM run_parents p "
        "JOIN runs r USING (run_id) WHERE p.run_id IN (SELECT value FROM json_each(?)) "
        "AND p.parent_run_id IS NOT NULL",
        (listed,),
    ).fetchall()
    events = connection.execute(
        "DELETE FROM events WHERE run_id IN (SELECT value FROM json_each(?))", (listed,)
    ).rowcount
    for table in ("accesses", "run_parents", "runs"):
        connection.execute(
            f"DELETE FROM {table} WHERE run_id IN (SELECT value FROM json_each(?))", (listed,)
        )
    for family in families:
        _recount(connection, family)
    return events


def _forget_access(
    connection: sqlite3.Connection,
    access_id: int,
    dataset_id: int,
    direction: str,
    texts: list[str],
) -> None:
    """Remove an access's rows from every index, found from its conditions (none of them is
    indexed by access)."""
    if direction == "input":
        connection.executemany(
            DELETE_RANGE, stored_range_rows(connection, [(dataset_id, access_id)])
        )
    for table in ("access_bounds", "access_conditions"):
        connection.execute(f"DELETE FROM {table} WHERE access_id = ?", (access_id,))
    for text in texts:
        condition = json.loads(text)
        rows, _ = listed_partitions(condition)
        connection.executemany(
            "DELETE FROM access_partitions WHERE access_id = ? AND partition_id = "
            "(SELECT partition_id FROM partitions WHERE dataset_id = ? AND dimensions = ?)",
            [(access_id, dataset_id, dimensions_text(dimensions)) for dimensions, _ in rows],
        )
        connection.executemany(
            "DELETE FROM access_locations WHERE dataset_id = ? AND place = ? AND access_id = ?",
            [(dataset_id, place, access_id) for place in listed_places(condition) or ()],
        )


def _recount(connection: sqlite3.Connection, family: tuple[str, str, str]) -> None:
    """A family's count and newest run again, from the runs that remain; gone when none."""
    found = connection.execute(
        "SELECT count(*), max(r.started_at) FROM run_parents p JOIN runs r USING (run_id) "
        "WHERE p.parent_run_id = ? AND r.job_namespace = ? AND r.job_name = ?",
        family,
    ).fetchone()
    if not found[0]:
        connection.execute(
            "DELETE FROM run_families WHERE parent_run_id = ? AND job_namespace = ? "
            "AND job_name = ?",
            family,
        )
        return
    (newest,) = connection.execute(
        "SELECT min(r.run_id) FROM run_parents p JOIN runs r USING (run_id) "
        "WHERE p.parent_run_id = ? AND r.job_namespace = ? AND r.job_name = ? "
        "AND r.started_at = ?",
        (*family, found[1]),
    ).fetchone()
    connection.execute(
        "UPDATE run_families SET runs = ?, newest_at = ?, newest_run = ? "
        "WHERE parent_run_id = ? AND job_namespace = ? AND job_name = ?",
        (found[0], found[1], newest, *family),
    )
