"""The lineage store's settings, kept in its database (table ``settings``, layout 6).

- ``partition_directories``: whether ingest reads a dataset named as a partition directory
  (``/lake/raw/day=2024-11-03``, as openlineage-spark before 1.39 names them) as a partition of
  its table (``as-partitions``, the default) or keeps it as a dataset of its own
  (``as-datasets``);
- ``other_names``: whether ingest joins the names an event's ``symlinks`` facet or a storage
  location gives a dataset into one dataset (``join``, the default; see
  ``lineage/store/_dataset_names.py``) or leaves each name a dataset of its own (``ignore``: a
  store fed by producers that should not be able to join another team's datasets with theirs).

A setting applies to the events ingested after it is set: the events stored before keep the
reading they were stored with.
"""

from __future__ import annotations

from openlineage_subset.lineage.store._database import LineageDatabaseError, LineageStore

__all__ = [
    "OTHER_NAMES",
    "OTHER_NAMES_CHOICES",
    "PARTITION_DIRECTORIES",
    "PARTITION_DIRECTORIES_CHOICES",
    "SETTINGS",
    "groups_directories",
    "joins_other_names",
    "partition_directories",
    "set_partition_directories",
    "set_setting",
    "setting",
]

PARTITION_DIRECTORIES = "partition_directories"
"""The name of the setting in the ``settings`` table."""
PARTITION_DIRECTORIES_CHOICES = ("as-partitions", "as-datasets")
"""Its values; the first is the default."""
OTHER_NAMES = "other_names"
OTHER_NAMES_CHOICES = ("join", "ignore")
SETTINGS = {
    PARTITION_DIRECTORIES: PARTITION_DIRECTORIES_CHOICES,
    OTHER_NAMES: OTHER_NAMES_CHOICES,
}
"""Each setting's name and its values, the default first."""


def setting(store: LineageStore, name: str) -> str:
    """The store's setting ``name`` (one of :data:`SETTINGS`; its default when never set).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "lineage.db")
    >>> with LineageStore.open(path, create=True) as store:
    ...     before = setting(store, OTHER_NAMES)
    ...     _ = set_setting(store, OTHER_NAMES, "ignore")
    ...     before, setting(store, OTHER_NAMES)
    ('join', 'ignore')
    """
    choices = SETTINGS[name]
    row = store.connection.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
    if row is None:
        return choices[0]
    if row[0] not in choices:
        option = name.replace("_", "-")
        raise LineageDatabaseError(
            f"{store.path}: setting {name} is {row[0]!r}, not one of {', '.join(choices)}; set "
            f"it again with 'ol-subset lineage settings --{option} CHOICE --db {store.path}'"
        )
    return str(row[0])


def set_setting(store: LineageStore, name: str, value: str) -> str:
    """Set the setting ``name`` to ``value`` (one of its :data:`SETTINGS` choices; else
    ValueError saying which); the value it had."""
    choices = SETTINGS[name]
    if value not in choices:
        raise ValueError(f"{name.replace('_', ' ')}: {value!r} is not one of {', '.join(choices)}")
    before = setting(store, name)
    store.begin_write()
    try:
        store.connection.execute(
            "INSERT INTO settings (name, value) VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (name, value),
        )
    except BaseException:
        store.connection.execute("ROLLBACK")
        raise
    store.connection.execute("COMMIT")
    return before


def partition_directories(store: LineageStore) -> str:
    """The store's ``partition_directories`` setting (``as-partitions`` when never set)."""
    return setting(store, PARTITION_DIRECTORIES)


def groups_directories(store: LineageStore) -> bool:
    """Whether ingest reads datasets named as partition directories as partitions."""
    return partition_directories(store) == PARTITION_DIRECTORIES_CHOICES[0]


def joins_other_names(store: LineageStore) -> bool:
    """Whether ingest joins a dataset's other names (``other_names`` is ``join``)."""
    return setting(store, OTHER_NAMES) == OTHER_NAMES_CHOICES[0]


def set_partition_directories(store: LineageStore, value: str) -> str:
    """Set ``partition_directories`` to ``value`` (one of
    :data:`PARTITION_DIRECTORIES_CHOICES`; else ValueError saying which); the value it had."""
    return set_setting(store, PARTITION_DIRECTORIES, value)
