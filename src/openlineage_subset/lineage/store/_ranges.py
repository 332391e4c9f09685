"""The rows of ``access_ranges`` (layout 10): every read that does not only list partitions,
keyed by one of the ranges of dates its condition keeps (:func:`range_key`), so that a query
finds the reads a partition's date may be in by a few ranges of keys (``range_probes()``).

A read's row is a function of its dataset and of its ranges in ``access_bounds``: whoever
changes those (ingest, when a run's read gains a condition; a merge of two datasets) finds the
old row again from them, without an index by access."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from openlineage_subset.lineage.model import range_key

INSERT_RANGE = (
    "INSERT OR IGNORE INTO access_ranges (dataset_id, column_name, span, key, access_id) "
    "VALUES (?, ?, ?, ?, ?)"
)
DELETE_RANGE = (
    "DELETE FROM access_ranges WHERE dataset_id = ? AND column_name = ? AND span = ? "
    "AND key = ? AND access_id = ?"
)

RangeRow = tuple[int, str, int, str, int]
Bounds = dict[str, tuple[str | None, str | None]]


def range_row(dataset_id: int, access_id: int, bounds: Bounds) -> RangeRow:
    """The ``access_ranges`` row of a read of ``dataset_id`` whose ranges are ``bounds``."""
    return (dataset_id, *range_key(bounds), access_id)


def stored_range_rows(
    db: sqlite3.Connection, accesses: Iterable[tuple[int, int]]
) -> list[RangeRow]:
    """The rows ``access_ranges`` has for reads (dataset id, access id) that do not only list
    partitions, from their ranges in ``access_bounds``."""
    rows = []
    for dataset_id, access_id in accesses:
        bounds = {
            column: (low, high)
            for column, low, high in db.execute(
                "SELECT column_name, low, high FROM access_bounds WHERE access_id = ?",
                (access_id,),
            )
        }
        rows.append(range_row(dataset_id, access_id, bounds))
    return rows
