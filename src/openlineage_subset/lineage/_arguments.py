"""What every lineage query checks before it reads anything: the database it is given, the
partition asked about, ``since`` and ``depth``; and :class:`LineageQueryError`, what a query
raises for a question it cannot answer as asked."""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping, Sequence

from openlineage_subset.lineage._store import LineageStore
from openlineage_subset.lineage._time import normal_time

_NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"


class LineageQueryError(ValueError):
    """A query that cannot be answered as asked: an unknown or ambiguous dataset, a bad time."""


def open_store(db: str | os.PathLike[str] | LineageStore) -> tuple[LineageStore, bool]:
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


def checked_since(since: str | _dt.datetime | None) -> str | None:
    """``since`` as the database stores times (UTC), None for none; a naive datetime is UTC.

    >>> checked_since("2024-10-15")
    '2024-10-15T00:00:00.000000000Z'
    """
    if since is None:
        return None
    if isinstance(since, _dt.datetime):
        text = since.isoformat() if since.tzinfo else since.isoformat() + "Z"
    else:
        text = since
    found = normal_time(text)
    if found is None:
        raise LineageQueryError(
            f"since: {since!r} is not an ISO-8601 time; write it like 2024-10-15T10:00:00Z "
            "or 2024-10-15"
        )
    return found


def checked_depth(depth: int | None) -> int | None:
    """``depth`` when it is None (no limit) or a whole number of at least 1.

    >>> checked_depth(2)
    2
    """
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise LineageQueryError(f"depth must be a whole number of at least 1, got {depth!r}")
    return depth


def checked_partition(partition: Mapping[str, str | None] | None) -> dict[str, str | None] | None:
    """The partition asked about, column to value (None: the null partition, also written
    ``__HIVE_DEFAULT_PARTITION__`` as in directory names); None for the whole dataset.

    >>> checked_partition({"day": "2024-10-15", "country": "__HIVE_DEFAULT_PARTITION__"})
    {'day': '2024-10-15', 'country': None}
    """
    if partition is None:
        return None
    if not isinstance(partition, Mapping) or not partition:
        raise LineageQueryError(
            f"partition must map partition columns to values, such as {{'day': '2024-10-15'}}; "
            f"got {partition!r}"
        )
    values: dict[str, str | None] = {}
    for name, value in partition.items():
        if not isinstance(name, str) or not (value is None or isinstance(value, str)):
            raise LineageQueryError(
                f"partition values are strings as in directory names (None: the null "
                f"partition); got {name!r}: {value!r}"
            )
        values[name] = None if value == _NULL_PARTITION else value
    return values


def partition_from_text(
    items: Sequence[str] | None, option: str = "--partition"
) -> dict[str, str] | None:
    """The partition given as ``COLUMN=VALUE`` items (a command-line option or a query
    parameter, named ``option`` in the error); None for none.

    >>> partition_from_text(["day=2024-10-15", "country=PL"])
    {'day': '2024-10-15', 'country': 'PL'}
    """
    if not items:
        return None
    values = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise LineageQueryError(
                f"{option} takes COLUMN=VALUE, such as {option} day=2024-10-15; got {item!r}"
            )
        values[name] = value
    return values
