"""The lineage store's settings, kept in its database (table ``settings``, layout 6).

One setting for now, ``partition_directories``: whether ingest reads a dataset named as a
partition directory (``/lake/raw/day=2024-11-03``, as openlineage-spark before 1.39 names them)
as a partition of its table (``as-partitions``, the default) or keeps it as a dataset of its own
(``as-datasets``). A setting applies to the events ingested after it is set: the events stored
before keep the reading they were stored with.
"""

from __future__ import annotations

from openlineage_subset.lineage.store._database import LineageDatabaseError, LineageStore

__all__ = [
    "PARTITION_DIRECTORIES",
    "PARTITION_DIRECTORIES_CHOICES",
    "groups_directories",
    "partition_directories",
    "set_partition_directories",
]

PARTITION_DIRECTORIES = "partition_directories"
"""The name of the setting in the ``settings`` table."""
PARTITION_DIRECTORIES_CHOICES = ("as-partitions", "as-datasets")
"""Its values; the first is the default."""


def partition_directories(store: LineageStore) -> str:
    """The store's ``partition_directories`` setting (``as-partitions`` when never set).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "lineage.db")
    >>> with LineageStore.open(path, create=True) as store:
    ...     before = partition_directories(store)
    ...     _ = set_partition_directories(store, "as-datasets")
    ...     before, partition_directories(store)
    ('as-partitions', 'as-datasets')
    """
    row = store.connection.execute(
        "SELECT value FROM settings WHERE name = ?", (PARTITION_DIRECTORIES,)
    ).fetchone()
    if row is None:
        return PARTITION_DIRECTORIES_CHOICES[0]
    if row[0] not in PARTITION_DIRECTORIES_CHOICES:
        raise LineageDatabaseError(
            f"{store.path}: setting {PARTITION_DIRECTORIES} is {row[0]!r}, not one of "
            f"{', '.join(PARTITION_DIRECTORIES_CHOICES)}; set it again with 'ol-subset lineage "
            f"settings --partition-directories CHOICE --db {store.path}'"
        )
    return str(row[0])


def groups_directories(store: LineageStore) -> bool:
    """Whether ingest reads datasets named as partition directories as partitions."""
    return partition_directories(store) == PARTITION_DIRECTORIES_CHOICES[0]


def set_partition_directories(store: LineageStore, value: str) -> str:
    """Set ``partition_directories`` to ``value`` (one of
    :data:`PARTITION_DIRECTORIES_CHOICES`; else ValueError saying which); the value it had."""
    if value not in PARTITION_DIRECTORIES_CHOICES:
        raise ValueError(
            f"partition directories: {value!r} is not one of "
            f"{', '.join(PARTITION_DIRECTORIES_CHOICES)}"
        )
    before = partition_directories(store)
    store.begin_write()
    try:
        store.connection.execute(
            "INSERT INTO settings (name, value) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (PARTITION_DIRECTORIES, value),
        )
    except BaseException:
        store.connection.execute("ROLLBACK")
        raise
    store.connection.execute("COMMIT")
    return before
