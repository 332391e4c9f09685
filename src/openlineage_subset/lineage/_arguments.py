"""What every lineage query checks before it reads anything: the database it is given, the
partition asked about, ``since``, ``depth`` and ``limit`` (a count from 1 to
:data:`LARGEST_COUNT`, also when given as text); and :class:`LineageQueryError`, what a query
raises for a question it cannot answer as asked (:class:`UnknownPartitionColumnError`: a
partition column the dataset never had)."""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeAlias

from openlineage_subset import OpenLineageSubsetError
from openlineage_subset.lineage._model import DatasetRef
from openlineage_subset.lineage._store import LineageStore
from openlineage_subset.lineage._time import normal_time
from openlineage_subset.producer import NULL_PARTITION

LARGEST_COUNT = 1_000_000_000
"""The largest ``depth`` or ``limit`` a query takes: more is no limit in practice, and a number
the database cannot hold (over 2**63 - 1) would be a failure of ours, not a refusal."""
_COUNT = f"a whole number from 1 to {LARGEST_COUNT}"


class LineageQueryError(ValueError, OpenLineageSubsetError):
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


def checked_count(name: str, value: int | None) -> int | None:
    """``value`` when it is None (no limit) or a whole number from 1 to :data:`LARGEST_COUNT`;
    ``name``: the argument, as the error names it.

    >>> checked_count("depth", 2)
    2
    >>> checked_count("limit", 10**20)
    Traceback (most recent call last):
    ...
    openlineage_subset.lineage._arguments.LineageQueryError: limit must be a whole number \
from 1 to 1000000000, got 100000000000000000000
    """
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= LARGEST_COUNT
    ):
        raise LineageQueryError(f"{name} must be {_COUNT}, got {value!r}")
    return value


def count_from_text(name: str, text: str) -> int:
    """The count written ``text`` (ASCII digits, as a query parameter or an option gives it),
    checked as :func:`checked_count` checks it; ``name``: the argument, as the error names it.

    >>> count_from_text("limit", "50")
    50
    >>> count_from_text("depth", "\u0663")
    Traceback (most recent call last):
    ...
    openlineage_subset.lineage._arguments.LineageQueryError: depth must be a whole number \
from 1 to 1000000000, got '\u0663'
    """
    # Digits only, and few of them: int() also reads '+1', ' 1', '1_000' and other scripts'
    # digits, and spends quadratic time on thousands of them.
    if not (text.isascii() and text.isdigit() and len(text) <= len(str(LARGEST_COUNT))):
        raise LineageQueryError(f"{name} must be {_COUNT}, got {text!r}")
    found = checked_count(name, int(text))
    assert found is not None
    return found


def checked_depth(depth: int | None) -> int | None:
    """``depth`` when it is None (no limit) or a whole number from 1 to :data:`LARGEST_COUNT`.

    >>> checked_depth(2)
    2
    """
    return checked_count("depth", depth)


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
        values[name] = None if value == NULL_PARTITION else value
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
