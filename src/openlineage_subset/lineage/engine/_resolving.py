"""Which dataset a name means, and whether a partition names columns the dataset has: the
checks of a query's arguments that read the database."""

from __future__ import annotations

import difflib
import sqlite3
from collections.abc import Mapping
from typing import Any

from openlineage_subset import printable
from openlineage_subset.lineage.engine._partition_catalog import PartitionCatalog
from openlineage_subset.lineage.model import (
    LineageQueryError,
    UnknownPartitionColumnError,
    named_columns,
)
from openlineage_subset.lineage.store import also_named
from openlineage_subset.producer import dataset_label

_SHOWN_CANDIDATES = 10


def resolve(db: sqlite3.Connection, name: str, namespace: str | None) -> int:
    """The id of the dataset called ``name`` (or having it as another name, a table's location),
    or whose name ends with ``/name``; else of the one every answer prints as ``name``
    (``file:/tmp/lake/raw``, ``s3://bucket/lake/raw``)."""
    if not isinstance(name, str) or not name:
        raise LineageQueryError("name the dataset: its name, or the end of it after a '/'")
    suffix = "/" + name.lstrip("/")
    rows = db.execute(
        "SELECT dataset_id, namespace, name FROM datasets WHERE (name = ? OR "
        "(length(name) > ? AND substr(name, -?) = ?)) AND (? IS NULL OR namespace = ?) "
        "ORDER BY namespace, name",
        (name, len(suffix), len(suffix), suffix, namespace, namespace),
    ).fetchall()
    # a name stored as a dataset, else another name of datasets (a table's location)
    exact = [row for row in rows if row[2] == name] or also_named(db, name, namespace)
    found = exact if exact else rows
    if not found and ":" in name:
        found = _printed(db, name, namespace)
    if len(found) == 1:
        return int(found[0][0])
    where = f" in namespace {namespace!r}" if namespace is not None else ""
    if found:
        listed = "\n  ".join(printable(f"{ns} {nm}") for _, ns, nm in found[:_SHOWN_CANDIDATES])
        more = len(found) - _SHOWN_CANDIDATES
        raise LineageQueryError(
            f"{name!r} names {len(found)} datasets{where}; give more of the name, or "
            f"--namespace:\n  {listed}" + (f"\n  and {more} more" if more > 0 else "")
        )
    names = [  # as answers print them, a form a question takes
        dataset_label(ns, nm)
        for ns, nm in db.execute(
            "SELECT namespace, name FROM datasets WHERE ? IS NULL OR namespace = ? "
            "ORDER BY namespace, name",
            (namespace, namespace),
        )
    ]
    close = difflib.get_close_matches(name, names, n=5, cutoff=0.3) or names[:5]
    # One candidate a line: a name's own line break or escape code is shown, not obeyed.
    hint = ("; datasets like it:\n  " + "\n  ".join(map(printable, close))) if close else ""
    raise LineageQueryError(
        f"no dataset named {name!r} (or ending in {suffix!r}){where} in the lineage "
        f"database{hint or ': it holds no dataset yet; ingest events first'}"
    )


def _printed(db: sqlite3.Connection, text: str, namespace: str | None) -> list[Any]:
    """The datasets (id, namespace, name) an answer prints as ``text``: ``namespace:name``,
    or a location joined to its name (``s3://bucket/lake/sales``), as
    :func:`~openlineage_subset.producer.dataset_label` writes them. Asked only when no name is
    ``text`` nor ends with it: a name may hold ``:`` itself."""
    return db.execute(
        "SELECT dataset_id, namespace, name FROM datasets WHERE (CASE WHEN "
        "instr(namespace, '://') > 0 THEN rtrim(namespace, '/') || '/' || ltrim(name, '/') "
        "ELSE namespace || ':' || name END) = ? AND (? IS NULL OR namespace = ?) "
        "ORDER BY namespace, name",
        (text, namespace, namespace),
    ).fetchall()


def check_columns(
    catalog: PartitionCatalog, dataset_id: int, partition: Mapping[str, str | None] | None
) -> None:
    """Raise :class:`UnknownPartitionColumnError` when ``partition`` names a column the
    dataset never had: no known partition of it has it, and no condition on it names it
    (compares it, or has it in a location's ``column=value`` directory). A dataset of
    which nothing names a column (read and written whole) is not known to lack any."""
    if not partition:
        return
    columns = catalog.of(dataset_id).column_order()
    unknown = [column for column in partition if column not in columns]
    if not unknown:
        return
    named: set[str] = set()
    for condition in catalog.of(dataset_id).conditions():
        named_columns(condition, named)
    unknown = [column for column in unknown if column not in named]
    if not unknown or not (columns or named):
        return
    others = sorted(named.difference(columns))
    closest = {}
    for column in unknown:
        near = difflib.get_close_matches(column, [*columns, *others], n=1, cutoff=0.6)
        if near:
            closest[column] = near[0]
    raise UnknownPartitionColumnError(
        catalog.of(dataset_id).dataset(), tuple(unknown), columns, tuple(others), closest
    )
