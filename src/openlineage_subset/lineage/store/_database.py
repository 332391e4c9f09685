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

Its tables are :mod:`._layout`'s; an older layout is brought to this one by :mod:`._upgrades`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import TypeAlias

from openlineage_subset import OpenLineageSubsetError
from openlineage_subset.lineage.store._layout import (
    APPLICATION_ID,
    SCHEMA,
    SCHEMA_VERSION,
    UPGRADABLE,
    statements,
)
from openlineage_subset.lineage.store._upgrades import (
    upgrade,
)

LOCK_WAIT = 60.0
"""Seconds an open or a write waits for the write lock while its holder commits nothing."""
_POLL_MS = 200  # how long SQLite waits for the lock before the holder's commits are looked at
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_NOTADB = 5, 6, 26


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
    14
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
            upgrade(connection)
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
    :func:`upgrade` brings to it, or empty (then make the schema, with ``create``); whether
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
        for statement in statements(SCHEMA):
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


Database: TypeAlias = str | os.PathLike[str] | LineageStore
"""What a query reads: an open :class:`LineageStore`, or the path of one."""


def open_store(db: Database) -> tuple[LineageStore, bool]:
    """The store ``db`` is, or names, and whether it was opened here (the caller closes it
    then): a query takes an open :class:`LineageStore` or a path alike.

    >>> store = LineageStore.open(":memory:", create=True)
    >>> open_store(store) == (store, False)
    True
    >>> store.close()
    """
    if isinstance(db, LineageStore):
        return db, False
    return LineageStore.open(db), True


@contextlib.contextmanager
def opened(db: Database) -> Iterator[LineageStore]:
    """The store ``db`` is, or names: opened here and closed on leaving if a path, left open
    if a store the caller opened."""
    store, close = open_store(db)
    try:
        yield store
    finally:
        if close:
            store.close()
