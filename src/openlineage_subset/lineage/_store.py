"""The lineage database: one SQLite file, made and recognised by ``ol-subset lineage``.

The file says it is ours with ``PRAGMA application_id`` (:data:`APPLICATION_ID`) and which
layout it has with ``PRAGMA user_version`` (:data:`SCHEMA_VERSION`). Any other file (another
application's SQLite database, a file that is not SQLite at all, a layout newer than this
version reads) is refused with :class:`LineageDatabaseError` before anything is written to it;
only an empty file (no schema object, ``user_version`` and ``application_id`` 0) is made one.

Several processes may share a database: the schema is made under the write lock (so of two
processes making one new file, the second finds it made), a writer waits for the lock as long
as its holder keeps committing (:func:`begin_immediate`), and a new database uses a write-ahead
log, so that queries read while an ingest writes.

The file is only ever opened by SQLite, never read by Python (not even its first bytes): POSIX
locks belong to the process, and closing any descriptor of the file drops every lock the
process holds on it. In ``lineage serve``, where the writer's connection stays open while
queries open their own, such a close let another process (a CLI query ending) take itself for
the last user of the database, checkpoint it and delete its ``-wal`` and ``-shm`` files under
the writer: what it committed next went to a deleted log, and readers failed with "disk I/O
error". A file that is not SQLite is told by SQLite's own answer (``SQLITE_NOTADB``).

Tables:

- ``runs``: one row per run id, merged over its events (status, start and end times);
- ``events``: the digest of every event stored, so that reading it again changes nothing, and
  its facets but the conditions, compressed, for the UI's pages (see ``lineage/_facets.py``);
- ``datasets``: (namespace, name);
- ``accesses``: what a run read (``input``) or wrote (``output``) of a dataset, with the
  condition (JSON, the ``OR`` of the distinct ones its events gave; NULL: the whole dataset);
- ``access_conditions``: those distinct conditions, one row each, of the accesses that have
  several (an access with one has it as its condition alone);
- ``partitions``: the partitions of each dataset that some read or write listed, each with a
  ``partition_id``;
- ``access_partitions``: the partitions each read's and each write's conditions list
  (partition and access ids), to find the reads (impact) and the writes (provenance) of a
  partition without reading every condition;
- ``access_bounds``: the ranges of ISO dates the condition of a read that is not only
  partition lists keeps partition columns in (``business_date`` within the last seven days, a
  day's partitions ``AND amount > 0``), to leave out the reads of other days without reading
  their conditions (see ``lineage/_bounds.py``; a database ingested before this version has
  no ranges for the latter, and reads their conditions);
- ``partition_columns``, ``partition_kinds``: the sets of columns of each dataset's partitions,
  and how their values compare (text, date, number, null), so that a query knows without reading
  every partition whether some are finer than others, or compare otherwise than as text;
- ``partition_tails``: the distinct ends of each dataset's partition keys after the first
  column (the other columns' values together, as the partitions have them), kept by a
  trigger, so that a page draws a grid of a dataset's partitions without reading them all;
- ``dataset_names``: the other names of datasets (a table and its location, that an event's
  ``symlinks`` facet or the location its ``storage``/``catalog`` facet names says are one), with
  why; a name two datasets not otherwise joined claim is ambiguous: it is kept apart from both
  (see ``lineage/_identities.py``);
- ``run_parents``: the parent and root run each run's ``parent`` facet names, and for an
  orchestrator's task run its DAG, task and logical date (``airflow`` facet), so that impact
  tells which task runs to re-run (see ``lineage/_task_runs.py``);
- ``settings``: the store's settings, by name (layout 6): ``partition_directories``, whether a
  dataset named as a partition directory is read as a partition of its table (``as-partitions``,
  the default when absent) or stays a dataset (``as-datasets``; see ``lineage/_settings.py``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import time
from pathlib import Path
from types import TracebackType

from openlineage_subset import OpenLineageSubsetError
from openlineage_subset.lineage._bounds import read_bounds
from openlineage_subset.lineage._events import dimensions_text, listed_partitions
from openlineage_subset.lineage._facets import facets_of
from openlineage_subset.lineage._task_runs import UPSERT_PARENTS, parents_row, run_parents

APPLICATION_ID = 0x4F4C5342  # "OLSB": openlineage-subset lineage
"""The ``PRAGMA application_id`` of a lineage database."""
SCHEMA_VERSION = 7
"""The ``PRAGMA user_version`` of the layout this version writes and reads. A database of
layout 3 (whose ``access_partitions`` held reads only), 4 (which kept no facets), 5 (no other
names of datasets, no ``run_parents``, no settings) or 6 (no ``partition_tails``) is brought
to 7 when first opened
(:func:`_upgrade`); older ones are refused, saying to ingest again."""
UPGRADABLE = 3
"""The oldest layout :func:`_upgrade` brings to :data:`SCHEMA_VERSION`."""
LOCK_WAIT = 60.0
"""Seconds an open or a write waits for the write lock while its holder commits nothing."""
_POLL_MS = 200  # how long SQLite waits for the lock before the holder's commits are looked at
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_NOTADB = 5, 6, 26

_SCHEMA = """
CREATE TABLE runs (
    run_id          TEXT PRIMARY KEY,
    job_namespace   TEXT NOT NULL,
    job_name        TEXT NOT NULL,
    -- the terminal state (COMPLETE, FAIL, ABORT) if any, else the latest (START, RUNNING, OTHER)
    status          TEXT NOT NULL,
    -- the START event's time, else the earliest event's
    started_at      TEXT NOT NULL,
    -- the terminal event's time; NULL while no terminal event is known
    ended_at        TEXT,
    -- what status and the times are merged from, whatever order the events come in
    start_event_at  TEXT,
    first_event_at  TEXT NOT NULL,
    latest_state    TEXT NOT NULL,
    latest_state_at TEXT NOT NULL,
    terminal_state  TEXT
);
CREATE INDEX runs_by_start ON runs (started_at);
CREATE INDEX runs_by_end ON runs (ended_at);
CREATE INDEX runs_by_job ON runs (job_namespace, job_name);

CREATE TABLE events (
    digest      TEXT PRIMARY KEY,  -- SHA-256 of the event's canonical JSON
    run_id      TEXT NOT NULL REFERENCES runs (run_id),
    event_type  TEXT NOT NULL,
    event_time  TEXT NOT NULL,
    source      TEXT NOT NULL,     -- file:line where it was first read
    -- what lineage/_facets.py keeps of its facets (zlib-compressed JSON; empty: it had none);
    -- NULL: not kept (the event was stored before layout 5)
    facets      BLOB
);
CREATE INDEX events_by_run ON events (run_id);

CREATE TABLE datasets (
    dataset_id  INTEGER PRIMARY KEY,
    namespace   TEXT NOT NULL,
    name        TEXT NOT NULL,
    UNIQUE (namespace, name)
);
CREATE INDEX datasets_by_name ON datasets (name);

CREATE TABLE accesses (
    access_id   INTEGER PRIMARY KEY,
    run_id      TEXT NOT NULL REFERENCES runs (run_id),
    dataset_id  INTEGER NOT NULL REFERENCES datasets (dataset_id),
    direction   TEXT NOT NULL CHECK (direction IN ('input', 'output')),
    condition   TEXT,  -- canonical JSON; NULL: the whole dataset
    -- 1 when the condition only lists partitions (partition lists joined by OR), each listed
    -- in access_partitions: then it selects no partition it does not list
    listed      INTEGER NOT NULL DEFAULT 0,
    UNIQUE (run_id, dataset_id, direction)
);
-- with listed: the reads of a partition are found without reading each row (and its condition)
CREATE INDEX accesses_by_dataset ON accesses (dataset_id, direction, listed);

CREATE TABLE access_conditions (
    access_id   INTEGER NOT NULL REFERENCES accesses (access_id),
    condition   TEXT NOT NULL,
    PRIMARY KEY (access_id, condition)
) WITHOUT ROWID;

CREATE TABLE partitions (
    dataset_id   INTEGER NOT NULL REFERENCES datasets (dataset_id),
    -- canonical JSON object: column -> value (null: the null partition)
    dimensions   TEXT NOT NULL,
    identifier   TEXT,
    -- a short key for access_partitions, which has a row per partition a read lists
    partition_id INTEGER NOT NULL UNIQUE,
    PRIMARY KEY (dataset_id, dimensions)
) WITHOUT ROWID;

-- the distinct ends of each dataset's partition keys after the first column's pair (for
-- {"a":"x","b":"y"}: "b":"y"}), so that a grid knows the other columns' values without
-- reading every partition; kept by the trigger below (a key of one column has none)
CREATE TABLE partition_tails (
    dataset_id   INTEGER NOT NULL REFERENCES datasets (dataset_id),
    tail         TEXT NOT NULL,
    PRIMARY KEY (dataset_id, tail)
) WITHOUT ROWID;

CREATE TRIGGER partition_tails_kept AFTER INSERT ON partitions
WHEN instr(NEW.dimensions, '",') > 0
BEGIN
    INSERT OR IGNORE INTO partition_tails (dataset_id, tail)
    VALUES (NEW.dataset_id, substr(NEW.dimensions, instr(NEW.dimensions, '",') + 2));
END;

CREATE TABLE access_partitions (
    partition_id INTEGER NOT NULL REFERENCES partitions (partition_id),
    access_id    INTEGER NOT NULL REFERENCES accesses (access_id),
    PRIMARY KEY (partition_id, access_id)
) WITHOUT ROWID;

CREATE TABLE access_bounds (
    access_id   INTEGER NOT NULL REFERENCES accesses (access_id),
    column_name TEXT NOT NULL,
    low         TEXT,  -- the least ISO date the column may hold; NULL: no least
    high        TEXT,  -- the greatest; NULL: no greatest
    PRIMARY KEY (access_id, column_name)
) WITHOUT ROWID;

CREATE TABLE partition_columns (
    dataset_id  INTEGER NOT NULL REFERENCES datasets (dataset_id),
    columns     TEXT NOT NULL,  -- canonical JSON array of a partition's column names, sorted
    PRIMARY KEY (dataset_id, columns)
) WITHOUT ROWID;

CREATE TABLE partition_kinds (
    dataset_id  INTEGER NOT NULL REFERENCES datasets (dataset_id),
    column_name TEXT NOT NULL,
    -- how partition_overlap() types the column's values: string, date, bigint, decimal; null
    kind        TEXT NOT NULL,
    PRIMARY KEY (dataset_id, column_name, kind)
) WITHOUT ROWID;

CREATE TABLE dataset_names (
    namespace   TEXT NOT NULL,
    name        TEXT NOT NULL,
    -- the dataset that name is another name of (several: ambiguous, kept apart from each)
    dataset_id  INTEGER NOT NULL REFERENCES datasets (dataset_id),
    reason      TEXT NOT NULL,  -- 'symlink', 'storage location'
    PRIMARY KEY (namespace, name, dataset_id)
) WITHOUT ROWID;
CREATE INDEX dataset_names_by_dataset ON dataset_names (dataset_id);

CREATE TABLE run_parents (
    run_id           TEXT PRIMARY KEY REFERENCES runs (run_id),
    -- the parent run facet's run, job and root (NULL: not named)
    parent_run_id    TEXT,
    parent_namespace TEXT,
    parent_name      TEXT,
    root_run_id      TEXT,
    root_namespace   TEXT,
    root_name        TEXT,
    -- an orchestrator's task run ('airflow': its airflow facet): DAG, task, DAG run, logical
    -- date (stored form); NULL for other runs
    orchestrator     TEXT,
    dag_id           TEXT,
    task_id          TEXT,
    dag_run_id       TEXT,
    logical_date     TEXT,
    nominal_time     TEXT   -- the nominalTime facet's start (stored form)
) WITHOUT ROWID;

CREATE TABLE settings (
    name        TEXT PRIMARY KEY,  -- absent: the setting's default
    value       TEXT NOT NULL
) WITHOUT ROWID;
"""


class LineageDatabaseError(OpenLineageSubsetError):
    """A lineage database that cannot be used: missing, not ours, of a newer layout, or held
    by another process for longer than the wait allows.

    >>> str(LineageDatabaseError("x.db: not a SQLite database"))
    'x.db: not a SQLite database'
    """


@dataclasses.dataclass
class ReadCounts:
    """What the queries over a store have read, counted: what a question costs, for the tests
    and benchmarks that hold a query to reading what it needs, not the whole history."""

    conditions: int = 0
    """Conditions (distinct JSON texts, per query) parsed."""
    whole_datasets: int = 0
    """Datasets whose every known partition a query read."""


class LineageStore:
    """An open lineage database; use :meth:`open`, and close it (or use ``with``).

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> with LineageStore.open(os.path.join(folder, "lineage.db"), create=True) as store:
    ...     store.connection.execute("PRAGMA user_version").fetchone()[0]
    7
    """

    def __init__(self, connection: sqlite3.Connection, path: str, wait: float = LOCK_WAIT) -> None:
        self.connection = connection
        self.path = path
        self.wait = wait
        """Seconds to wait for the write lock while its holder commits nothing."""
        self.reads = ReadCounts()
        """What the queries over this store have read (see :class:`ReadCounts`)."""

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, create: bool = False, wait: float = LOCK_WAIT
    ) -> LineageStore:
        """Open the database at ``path``; with ``create``, make it when the file is missing or
        empty (no schema object, ``user_version`` and ``application_id`` 0). Raises
        :class:`LineageDatabaseError` for a file that is not a lineage database, and when
        another process holds the write lock for ``wait`` seconds without committing."""
        where = os.fspath(path)
        file = Path(where)
        if file.is_dir():
            raise LineageDatabaseError(
                f"{where}: is a folder; --db takes the lineage database file (lineage.db)"
            )
        exists = file.is_file() and file.stat().st_size > 0
        if not exists and not create:
            raise LineageDatabaseError(
                f"{where}: no lineage database there; make one with "
                f"'ol-subset lineage ingest EVENTS... --db {where}'"
            )
        try:
            connection = sqlite3.connect(where, isolation_level=None, timeout=wait)
        except sqlite3.Error as error:
            raise LineageDatabaseError(f"{where}: cannot open: {error}") from None
        try:
            _prepare(connection, where, create=create, wait=wait)
        except sqlite3.DatabaseError as error:
            connection.close()
            if is_busy(error):
                raise LineageDatabaseError(locked_message(where, wait)) from None
            if _is_not_a_database(error):
                raise LineageDatabaseError(
                    f"{where}: not a SQLite database (SQLite does not recognise its header); "
                    "--db must name a lineage database made by 'ol-subset lineage ingest', or a "
                    "new file"
                ) from None
            raise LineageDatabaseError(
                f"{where}: not a usable SQLite database ({_said(error)}); --db must name a lineage "
                "database made by 'ol-subset lineage ingest', or a new file"
            ) from None
        except BaseException:
            connection.close()
            raise
        return cls(connection, where, wait)

    def begin_write(self) -> None:
        """Start a write transaction (``BEGIN IMMEDIATE``), waiting for the write lock while
        another process holds it; see :func:`begin_immediate`."""
        begin_immediate(self.connection, self.path, self.wait)

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> LineageStore:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def is_busy(error: BaseException) -> bool:
    """Whether a SQLite error says another connection holds a lock that was needed."""
    if not isinstance(error, sqlite3.OperationalError):
        return False
    code = getattr(error, "sqlite_errorcode", None)  # Python 3.11 and later
    if code is not None:
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    return "locked" in str(error) or "busy" in str(error)


def locked_message(where: str, wait: float) -> str:
    """What to say when the wait for another process's lock on the database ran out."""
    return (
        f"{where}: the database is locked by another process (another ingest, or a program "
        f"holding a transaction open) that committed nothing for {wait:g} s; what was stored "
        "before stays stored: run this again when that process has ended (events already "
        "stored are counted as already there, never stored twice)"
    )


def begin_immediate(connection: sqlite3.Connection, where: str, wait: float) -> None:
    """``BEGIN IMMEDIATE`` on ``connection``, waiting for the write lock as long as its holder
    keeps committing, and at most ``wait`` seconds after its last commit; then
    :class:`LineageDatabaseError`.

    The wait is measured from the holder's last commit, not from the start: another ingest
    commits every few thousand events, so this one waits for it however long it runs, while a
    process that holds the lock and commits nothing (a transaction left open) is given up on.
    """
    connection.execute(f"PRAGMA busy_timeout = {_POLL_MS}")
    try:
        seen = _data_version(connection)
        since = time.monotonic()
        while True:
            try:
                connection.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                if not is_busy(error):
                    raise
            now = time.monotonic()
            version = _data_version(connection)
            if version is not None and version != seen:
                seen, since = version, now  # the holder committed: it is at work
            elif now - since >= wait:
                raise LineageDatabaseError(locked_message(where, wait))
    finally:
        connection.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")


def _data_version(connection: sqlite3.Connection) -> int | None:
    """A number that changes whenever another connection commits (None: not known now)."""
    try:
        return int(connection.execute("PRAGMA data_version").fetchone()[0])
    except sqlite3.OperationalError as error:
        if is_busy(error):
            return None
        raise


def _is_not_a_database(error: sqlite3.Error) -> bool:
    """Whether SQLite found the file is not a database (no SQLite header)."""
    code = getattr(error, "sqlite_errorcode", None)  # Python 3.11 and later
    if code is not None:
        return bool(code & 0xFF == _SQLITE_NOTADB)
    return "not a database" in str(error)


def _prepare(connection: sqlite3.Connection, where: str, *, create: bool, wait: float) -> None:
    # Read the file's identity and make the schema in one transaction: with create, one that
    # holds the write lock, so that of two processes making the same new file, the second
    # finds the first one's schema finished; else one snapshot, so that all reads agree.
    if create:
        begin_immediate(connection, where, wait)
    else:
        connection.execute("BEGIN")
    try:
        made, stale = _check_or_create(connection, where, create=create)
        if stale and not create:
            # The upgrade writes: it is done under the write lock, to the file as found then
            # (another process may have upgraded it in between).
            connection.execute("COMMIT")
            begin_immediate(connection, where, wait)
            made, stale = _check_or_create(connection, where, create=False)
        if stale:
            _upgrade(connection)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    if made:
        _use_wal(connection)
    connection.execute("PRAGMA foreign_keys = ON")


def _check_or_create(
    connection: sqlite3.Connection, where: str, *, create: bool
) -> tuple[bool, bool]:
    """Refuse the file unless it is a lineage database of this layout or one
    :func:`_upgrade` brings to it, or empty (then make the schema, with ``create``); whether
    it made the schema, and whether the file needs the upgrade."""
    application_id = connection.execute("PRAGMA application_id").fetchone()[0]
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    objects = connection.execute(
        "SELECT type, name FROM sqlite_master ORDER BY type = 'table' DESC, name"
    ).fetchall()
    if application_id == APPLICATION_ID:
        _check_version(where, version)
        return False, version < SCHEMA_VERSION
    if application_id == 0 and version == 0 and not objects and create:
        for statement in _statements(_SCHEMA):
            connection.execute(statement)
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        return True, False
    owner = f"application_id {application_id:#x}" if application_id else "no application_id"
    if version:
        owner += f", user_version {version}"
    named = [f"{name} ({kind})" if kind != "table" else name for kind, name in objects]
    shown = ", ".join(named[:8]) + (f" and {len(named) - 8} more" if len(named) > 8 else "")
    raise LineageDatabaseError(
        f"{where}: a SQLite database of another application ({owner}; schema: "
        f"{shown or 'empty'}), not a lineage database, left unchanged; give "
        "'ol-subset lineage' a file of its own with --db"
    )


def _check_version(where: str, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise LineageDatabaseError(
            f"{where}: a lineage database of layout version {version}, newer than this version "
            f"of openlineage-subset reads ({SCHEMA_VERSION}); upgrade openlineage-subset, or "
            "ingest the events into a new file"
        )
    if version < UPGRADABLE:
        raise LineageDatabaseError(
            f"{where}: a lineage database of layout version {version}, which this version does "
            "not read; ingest the events into a new file"
        )


def _upgrade(connection: sqlite3.Connection) -> None:
    """Bring a database of layout 3, 4 or 5 to :data:`SCHEMA_VERSION`, in the open write
    transaction. From 3: link each write to the partitions its condition lists, as ingest now
    links them (layout 3 linked reads only); this takes about as long as ingesting the writes'
    partitions did. From 4: add the column of the events' facets (empty for the events already
    stored: their facets were not kept), and store the date range of each read that lists
    partitions and filters (which layout 4 stored none of). From 5: each run's parent, root
    and orchestrator task, from the facets kept (:func:`_add_run_parents`). From 6: the ends
    of the partition keys (:func:`_add_partition_tails`)."""
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
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _add_partition_tails(connection: sqlite3.Connection) -> None:
    """Layout 7's ``partition_tails`` and the trigger that keeps it, filled from the
    partitions stored (one pass over them)."""
    start = _SCHEMA.index("CREATE TABLE partition_tails")
    table, trigger = _statements(_SCHEMA[start:])[:2]
    connection.execute(table.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))
    connection.execute(trigger.replace("CREATE TRIGGER", "CREATE TRIGGER IF NOT EXISTS", 1))
    connection.execute(
        "INSERT OR IGNORE INTO partition_tails (dataset_id, tail) "
        "SELECT dataset_id, substr(dimensions, instr(dimensions, '\",') + 2) FROM partitions "
        "WHERE instr(dimensions, '\",') > 0"
    )


def _add_run_parents(connection: sqlite3.Connection) -> None:
    """Layout 6's ``run_parents``, filled from the run facets layout 5 kept of each event
    (events stored before layout 5 kept none: their runs get theirs when ingested again)."""
    table = _statements(_SCHEMA[_SCHEMA.index("CREATE TABLE run_parents") :])[0]
    connection.execute(table.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))
    rows = []
    for run_id, body in connection.execute(
        "SELECT run_id, facets FROM events WHERE length(facets) > 0 ORDER BY event_time"
    ):
        document = facets_of(body) or {}
        parents = run_parents(document.get("run"))
        if parents is not None:
            rows.append(parents_row(run_id, parents))
    connection.executemany(UPSERT_PARENTS, rows)


def _statements(script: str) -> list[str]:
    """The statements of a script (``executescript`` would commit the open transaction)."""
    statements, lines = [], []
    for line in script.splitlines():
        lines.append(line)
        text = "\n".join(lines)
        if line.rstrip().endswith(";") and sqlite3.complete_statement(text):
            statements.append(text.strip())
            lines = []
    return statements


def _use_wal(connection: sqlite3.Connection) -> None:
    """Write-ahead logging for a new database: queries read while an ingest writes. Left off
    when other connections kept the file busy for the whole wait (the change needs it alone
    for a moment): the database works as well, with readers waiting for writers."""
    try:
        connection.execute("PRAGMA journal_mode = WAL")
    except sqlite3.OperationalError as error:
        if not is_busy(error):
            raise


def _said(error: sqlite3.Error) -> str:
    """SQLite's message, with its extended code where Python gives it (3.11 and later)."""
    name = getattr(error, "sqlite_errorname", None)
    return f"{error}, {name}" if name else str(error)
