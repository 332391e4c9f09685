"""The SQL that narrows what a query reads to what its question needs: the known partitions
inside a coarser partition (a day of partitions by day and country), those a read's date range
keeps, the reads and writes that list some partitions (the ``access_partitions`` index), and
the reads whose ranges of dates may meet some partitions' (the ``access_ranges`` index).

The partitions of a dataset are keyed by their canonical JSON (keys sorted), so those whose
first columns have given values, or whose first column is an ISO date within a range, are a
range of the ``partitions`` key: found without reading the others. A query uses these only for
a dataset of one set of columns whose values compare as their text
(``PartitionCatalog.plain_shape``), where they give exactly what evaluating every partition
gives (tests/lineage/test_fast_paths.py and test_query_scaling.py hold them to that).
"""

from __future__ import annotations

import bisect
import json
import re
import sqlite3
from collections.abc import Collection, Sequence
from typing import Any

from openlineage_subset.lineage.model import Dimensions, canonical_unit, plain_values

Where = tuple[str, list[Any]]
"""An SQL condition on a ``partitions`` row, and its parameters."""
Bound = tuple[str | None, str | None]

SIMPLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DATES = frozenset({"date", "null"})
_RUN = (
    "SELECT r.run_id, r.job_namespace, r.job_name, r.status, r.started_at, r.ended_at, "
    "a.condition FROM accesses a JOIN runs r USING (run_id) "
)


def _listing_any(by_id: bool) -> str:
    """The accesses that list one of some partitions: their ids (``by_id``, a JSON array),
    else the dataset id and their canonical JSON (a JSON array)."""
    if by_id:
        return (
            "SELECT l.access_id FROM access_partitions l "
            "WHERE l.partition_id IN (SELECT value FROM json_each(?))"
        )
    return (
        "SELECT l.access_id FROM partitions p JOIN access_partitions l USING (partition_id) "
        "WHERE p.dataset_id = ? AND p.dimensions IN (SELECT value FROM json_each(?))"
    )


def listing(direction: str, *, by_id: bool, done: bool = False) -> str:
    """Where the reads (``input``) or writes (``output``) of a dataset are that do not only list
    partitions (with ``done``, only the writes of completed runs: ``writes_done``), or list one
    of some: found with the indexes (``accesses_by_dataset``, ``access_partitions``), not by
    reading every access of the dataset. Parameters: dataset id, then the partitions: their ids
    (``by_id``, a JSON array), else the dataset id and their canonical JSON (a JSON array)."""
    # SQLite would rather take accesses_by_dataset (more columns), and read each row's done
    index = "INDEXED BY writes_done " if done else ""
    return (
        f"a.access_id IN (SELECT access_id FROM accesses {index}WHERE dataset_id = ? "
        f"AND direction = '{direction}' AND listed = 0 {'AND done = 1 ' * done}"
        f"UNION {_listing_any(by_id)}) AND a.direction = '{direction}' "
    )


def reading(*, by_id: bool) -> str:
    """Where the reads of a dataset are that may hold some partitions: those that list one of
    them, and of the others (``access_ranges``) those whose range of a column of dates may
    meet the partitions' dates (``range_probes()``) and those bounded in no column the
    partitions all have a date in; not every read of the dataset. Parameters: the probes (a
    JSON array), dataset id, dataset id, the columns whose reads are all taken (a JSON array:
    '' for the reads bounded in none), then the partitions as :func:`listing`'s."""
    return (
        "a.access_id IN (SELECT g.access_id FROM json_each(?) q CROSS JOIN access_ranges g "
        "ON g.dataset_id = ? AND g.column_name = json_extract(q.value, '$[0]') "
        "AND g.span = json_extract(q.value, '$[1]') "
        "AND g.key BETWEEN json_extract(q.value, '$[2]') AND json_extract(q.value, '$[3]') "
        "UNION SELECT access_id FROM access_ranges WHERE dataset_id = ? "
        "AND column_name IN (SELECT value FROM json_each(?)) "
        f"UNION {_listing_any(by_id)}) AND a.direction = 'input' "
    )


_OUT_OF_RANGE = (
    # A range below the units' least date of a column, or above their greatest.
    "AND NOT EXISTS (SELECT 1 FROM access_bounds b JOIN json_each(?) u "
    "ON u.key = b.column_name WHERE b.access_id = a.access_id "
    "AND (b.high < json_extract(u.value, '$[0]') "
    "OR b.low > json_extract(u.value, '$[1]'))) "
)
_SINCE = "AND (? IS NULL OR {since}) "
READERS = (
    _RUN
    + "WHERE "
    + reading(by_id=False)
    + _SINCE
    + _OUT_OF_RANGE
    + "ORDER BY r.started_at, r.run_id"
)
"""The reads of a dataset by runs started after a time (``{since}``: ``>`` or ``>=``), less
those that only list partitions and list none of some, and those whose date ranges leave all of
them out (found by :func:`reading`, then checked: ``access_bounds``). Parameters:
:func:`reading`'s (the partitions' canonical JSON), time twice, their date spans (JSON, see
``date_spans``)."""
READERS_BY_ID = (
    _RUN
    + "WHERE "
    + reading(by_id=True)
    + _SINCE
    + _OUT_OF_RANGE
    + "ORDER BY r.started_at, r.run_id"
)
"""``READERS`` for partitions of known ids (found already: SQLite need not look their keys
up again). Parameters: :func:`reading`'s (the partition ids), time twice, the date spans."""
_COMPLETED_BEFORE = (
    "AND r.status = 'COMPLETE' AND r.ended_at IS NOT NULL AND (? IS NULL OR r.ended_at < ?) "
    "ORDER BY r.ended_at DESC, r.run_id DESC"
)
WRITERS = _RUN + "WHERE " + listing("output", by_id=False, done=True) + _COMPLETED_BEFORE
"""The writes of a dataset by runs completed before a time, the latest first, less those that
only list partitions and list none of some. Parameters: dataset id twice, the partitions'
canonical JSON (a JSON array), time twice."""
WRITERS_BY_ID = _RUN + "WHERE " + listing("output", by_id=True, done=True) + _COMPLETED_BEFORE
"""``WRITERS`` for partitions of known ids. Parameters: dataset id, the partition ids (a JSON
array), time twice."""
WRITES = _RUN + "WHERE " + listing("output", by_id=False) + "ORDER BY r.started_at, r.run_id"
"""The writes of a dataset by any run, by start, less those that only list partitions and list
none of some. Parameters: dataset id twice, the partitions' canonical JSON (a JSON array)."""
WRITES_BY_ID = _RUN + "WHERE " + listing("output", by_id=True) + "ORDER BY r.started_at, r.run_id"
"""``WRITES`` for partitions of known ids. Parameters: dataset id, the partition ids."""


def inside(shape: tuple[str, ...], itself: Dimensions) -> list[Where] | None:
    """Where the partitions of the columns ``shape`` inside ``itself`` (a partition of some of
    them) are: those whose values of its columns are its values, as text. None when it names
    all the columns or others, or a null or a value that is not text or an ISO date."""
    columns = [column for column, _ in itself]
    values = [value for _, value in itself]
    if (
        not set(columns) < set(shape)
        or not all(SIMPLE_NAME.fullmatch(column) for column in shape)
        or None in values
        or not plain_values(values)
    ):
        return None
    where = [f"json_extract(dimensions, '$.{column}') = ?" for column in columns]
    params: list[Any] = list(values)
    first = 0
    while first < len(shape) and shape[first] in columns:
        first += 1
    if first:
        # Their text starts with those columns' pairs, then a comma: a range of the key.
        prefix = canonical_unit(tuple(p for p in itself if p[0] in shape[:first]))[:-1]
        where.append("dimensions >= ? AND dimensions < ?")
        params += [prefix + ",", prefix + "-"]
    return [(" AND ".join(where), params)]


def within_dates(
    shape: tuple[str, ...], bounds: dict[str, Bound], kinds: dict[str, frozenset[str]]
) -> list[Where] | None:
    """Where the partitions of the columns ``shape`` are that are outside none of the date
    ranges ``bounds`` (of a condition: see ``_bounds``), for the columns whose values
    (``kinds``) are all ISO dates or null; None when no such column is bounded."""
    dated = [
        column for column in shape if column in bounds and kinds.get(column, frozenset()) <= _DATES
    ]
    if not dated or not all(SIMPLE_NAME.fullmatch(column) for column in shape):
        return None
    where, params = [], []
    for column in dated:
        low, high = bounds[column]
        value = f"json_extract(dimensions, '$.{column}')"
        sides = [f"{value} >= ?"] * (low is not None) + [f"{value} <= ?"] * (high is not None)
        where.append(f"({value} IS NULL OR ({' AND '.join(sides or ['1'])}))")
        params += [bound for bound in (low, high) if bound is not None]
    kept = " AND ".join(where)
    if dated[0] != shape[0]:
        return [(kept, params)]
    # The first column's pair starts the key's text ('{"day":"2024-10-15",...'), and ISO
    # dates order as their text: a range of the key holds those dates, one after it the null
    # values; one query each (SQLite uses the key for neither of two ranges joined by OR).
    low, high = bounds[shape[0]]
    start = '{"' + shape[0] + '":'
    dates = [f'{start}"{low or ""}', f'{start}"{high}"}}' if high is not None else f'{start}"~']
    nulls = [f"{start}null,", f"{start}null}}"]
    return [(f"dimensions BETWEEN ? AND ? AND {kept}", span + params) for span in (dates, nulls)]


class DateIndex:
    """A dataset's known partitions (already read) by the value of each column of ISO dates:
    those :func:`within_dates` keeps are found in memory, without SQLite (for a query that
    evaluates thousands of reads, each within a few days)."""

    def __init__(self, units: Sequence[Dimensions]) -> None:
        self.units = units
        self._columns: dict[str, tuple[list[str], list[Dimensions], list[Dimensions]]] = {}

    def within(
        self, shape: tuple[str, ...], bounds: dict[str, Bound], kinds: dict[str, frozenset[str]]
    ) -> list[Dimensions] | None:
        """The partitions :func:`within_dates` keeps, in no particular order; None as it."""
        dated = [
            column
            for column in shape
            if column in bounds and kinds.get(column, frozenset()) <= _DATES
        ]
        if not dated:
            return None
        values, sorted_units, nulls = self._column(dated[0])
        low, high = bounds[dated[0]]
        start = 0 if low is None else bisect.bisect_left(values, low)
        end = len(values) if high is None else bisect.bisect_right(values, high)
        found = sorted_units[start:end] + nulls  # a null value is never outside a range
        rest = [(column, bounds[column]) for column in dated[1:]]
        if rest:
            found = [unit for unit in found if all(_kept(unit, *each) for each in rest)]
        return found

    def _column(self, column: str) -> tuple[list[str], list[Dimensions], list[Dimensions]]:
        found = self._columns.get(column)
        if found is None:
            pairs = sorted(
                ((value, unit) for unit in self.units if (value := dict(unit)[column]) is not None),
                key=lambda pair: pair[0],
            )
            nulls = [unit for unit in self.units if dict(unit)[column] is None]
            found = self._columns[column] = ([v for v, _ in pairs], [u for _, u in pairs], nulls)
        return found


def _kept(unit: Dimensions, column: str, bound: Bound) -> bool:
    value = dict(unit)[column]
    low, high = bound
    return value is None or ((low is None or value >= low) and (high is None or value <= high))


def partitions_where(
    db: sqlite3.Connection, dataset_id: int, shape: tuple[str, ...], wheres: list[Where]
) -> list[tuple[Dimensions, str | None, int]]:
    """The partitions of a dataset of the (simple) columns ``shape`` each condition keeps, one
    condition after the other, each's in the order of their key: with their identifiers and
    partition ids."""
    values = ", ".join(f"json_extract(dimensions, '$.{column}')" for column in shape)
    found: list[tuple[Dimensions, str | None, int]] = []
    for where, params in wheres:
        for identifier, partition_id, *row in db.execute(
            f"SELECT identifier, partition_id, {values} FROM partitions WHERE dataset_id = ? "
            f"AND ({where}) ORDER BY dimensions",
            (dataset_id, *params),
        ):
            found.append((tuple(zip(shape, row, strict=False)), identifier, partition_id))
    return found


def partitions_keyed(
    db: sqlite3.Connection, dataset_id: int, wanted: Collection[str]
) -> list[tuple[str, str | None, int]]:
    """The known partitions of a dataset among those of the keys (canonical JSON) ``wanted``:
    key, identifier, partition id. Partitions listed together are most often neighbours in
    the key's order (a day's countries): one range of the key is read rather than a search
    per key, when it holds few others; the keys it did not hold are searched each."""
    found: list[tuple[str, str | None, int]] = []
    missing = set(wanted)
    limit = 2 * len(missing) + 16
    try:
        rows = db.execute(
            "SELECT dimensions, identifier, partition_id FROM partitions WHERE dataset_id = ? "
            "AND dimensions BETWEEN ? AND ? LIMIT ?",
            (dataset_id, min(missing), max(missing), limit),
        ).fetchall()
    except UnicodeEncodeError:
        rows = []  # a lone surrogate: only JSON (escaped) takes it to SQLite
    if len(rows) < limit:  # the whole range: those of it that are wanted
        for row in rows:
            if row[0] in missing:
                found.append(row)
                missing.discard(row[0])
    if missing:
        found += db.execute(
            "SELECT dimensions, identifier, partition_id FROM partitions WHERE dataset_id = ? "
            "AND dimensions IN (SELECT value FROM json_each(?))",
            (dataset_id, json.dumps(sorted(missing))),
        ).fetchall()
    return found
