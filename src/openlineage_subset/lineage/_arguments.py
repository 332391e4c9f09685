"""What every lineage query checks before it reads anything: the database it is given, the
partition asked about, ``since`` and ``depth``; and :class:`LineageQueryError`, what a query
raises for a question it cannot answer as asked (:class:`UnknownPartitionColumnError`: a
partition column the dataset never had)."""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping, Sequence
from typing import Any

from openlineage_subset.lineage._model import DatasetRef
from openlineage_subset.lineage._store import LineageStore
from openlineage_subset.lineage._time import normal_time

_NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"


class LineageQueryError(ValueError):
    """A query that cannot be answered as asked: an unknown or ambiguous dataset, a bad time."""


class UnknownPartitionColumnError(LineageQueryError):
    """The partition asked about names a column the dataset never had: none of its known
    partitions has it and no condition on it names it (a typo such as ``dayy`` for ``day``).

    >>> error = UnknownPartitionColumnError(
    ...     DatasetRef("file", "/lake/sales"), ("dayy",), ("day", "country"), (), {"dayy": "day"})
    >>> print(error)
    file:/lake/sales has no partition column 'dayy' (did you mean 'day'?): its partition \
columns are day, country; ask about a partition by those
    """

    dataset: DatasetRef
    unknown: tuple[str, ...]
    """The columns asked about that the dataset never had."""
    columns: tuple[str, ...]
    """Its partition columns (those of its known partitions), in the order its events give."""
    named: tuple[str, ...]
    """Other columns its conditions name (compared, or in a location's directories)."""
    closest: dict[str, str]
    """For an unknown column, the known one closest to it, when one is close."""

    def __init__(
        self,
        dataset: DatasetRef,
        unknown: tuple[str, ...],
        columns: tuple[str, ...],
        named: tuple[str, ...] = (),
        closest: Mapping[str, str] | None = None,
    ) -> None:
        self.dataset = dataset
        self.unknown = tuple(unknown)
        self.columns = tuple(columns)
        self.named = tuple(named)
        self.closest = dict(closest or {})
        asked = ", ".join(
            repr(column)
            + (f" (did you mean {self.closest[column]!r}?)" if column in self.closest else "")
            for column in self.unknown
        )
        if self.columns:
            has = f"its partition columns are {', '.join(self.columns)}"
        else:
            has = "no read or write of it listed a partition"
        if self.named:
            has += f"; its conditions name {', '.join(self.named)}"
        plural = "s" if len(self.unknown) > 1 else ""
        super().__init__(
            f"{dataset} has no partition column{plural} {asked}: {has}; ask about a partition "
            "by those"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            type(self),
            (self.dataset, self.unknown, self.columns, self.named, self.closest),
        )


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
