"""One dataset, many names: a table and its location, told apart by nothing but what events say.

openlineage-spark names a catalog table by its location (``file`` + ``/warehouse/db.db/t``)
and lists the table's name in the dataset's ``symlinks`` facet (``hive://host:9083`` +
``db.t``, or the warehouse's location + ``db.t`` without a metastore); another producer may name
the same table by its table name with the location as the symlink, or by its location alone (as
this package's adapter does). A ``storage`` or ``catalog`` facet may carry a ``location`` of its
own (an additional property the spec allows). Each such name, another name of the dataset the
event names, is a claim (:class:`Alias`) read at ingest (:func:`other_names`), and the writer
makes the names one dataset (``join_names`` in ``ingestion/_merges.py``):

- a name no dataset holds becomes another name of the claiming dataset (``dataset_names``);
- a name stored as a dataset of its own, or another dataset's name, is merged with the claiming
  dataset (its reads and writes, partitions and what they list: ``merge_datasets`` in
  ``ingestion/_merges.py``), whichever came first; two tables over one location so become one
  dataset (what a run writes through one, a run reading the other reads).

Joined names are never parted, so the datasets are the same whatever order the claims come in;
the answers name a dataset by a rule of its names alone (``printed_name`` in
``ingestion/_merges.py``: the least of its tables' names); any of its names finds it
(:func:`also_named`). The store's ``other_names`` setting (``store/_settings.py``) may tell the
writer to leave claims alone. A database of an earlier version may hold a name two datasets
claim (kept apart then): the writer joins them at its first write; until then the answers that
name them say so (:func:`kept_apart_notes`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from openlineage_subset.lineage.model import DatasetRef
from openlineage_subset.producer import dataset_identity

SYMLINK = "symlink"
STORAGE = "storage facet"
TABLE = "table"
"""What ``dataset_names.reason`` starts with for a table's name (else ``location``)."""
NAMING_FACETS = ("symlinks", "storage", "catalog")
"""The dataset facets that may give a dataset another name: an event's dataset without any of
them costs nothing more to ingest."""

Key = tuple[str, str]


def other_names(namespace: str, name: str, facets: Mapping[str, Any]) -> list[Alias]:
    """The other names a dataset's facets give it: each identifier of its ``symlinks`` facet,
    and the ``location`` of its ``storage`` or ``catalog`` facet (named as the OpenLineage naming
    spec names a location); a malformed one is left out."""
    primary = (namespace, name)
    found: dict[Alias, None] = {}
    symlinks = facets.get("symlinks")
    identifiers = symlinks.get("identifiers") if isinstance(symlinks, dict) else None
    for identifier in identifiers if isinstance(identifiers, list) else ():
        if not isinstance(identifier, dict):
            continue
        namespace_, name_ = identifier.get("namespace"), identifier.get("name")
        if _is_name(namespace_) and _is_name(name_) and (namespace_, name_) != primary:
            kind = identifier.get("type")
            is_table = not (isinstance(kind, str) and kind.upper() == "LOCATION")
            found[Alias(primary, (namespace_, name_), is_table, SYMLINK)] = None
    for key in ("storage", "catalog"):
        facet = facets.get(key)
        location = facet.get("location") if isinstance(facet, dict) else None
        if not isinstance(location, str) or ":" not in location:
            continue
        try:
            other = dataset_identity(location)
        except ValueError:
            continue
        if other != primary:
            found[Alias(primary, other, False, STORAGE)] = None
    return list(found)


def _is_name(part: object) -> TypeGuard[str]:
    return isinstance(part, str) and bool(part)


def also_named(
    db: sqlite3.Connection, name: str, namespace: str | None
) -> list[tuple[int, str, str]]:
    """(id, namespace, name) of each dataset ``name`` (in ``namespace``, when given) is another
    name of: what a query asking for it by that name means."""
    return [
        (int(dataset_id), found_namespace, found_name)
        for dataset_id, found_namespace, found_name in db.execute(
            "SELECT DISTINCT d.dataset_id, d.namespace, d.name FROM dataset_names n "
            "JOIN datasets d ON d.dataset_id = n.dataset_id WHERE n.name = ? "
            "AND (? IS NULL OR n.namespace = ?) ORDER BY d.namespace, d.name",
            (name, namespace, namespace),
        )
    ]


def names_of(db: sqlite3.Connection, dataset: DatasetRef) -> tuple[tuple[DatasetRef, str], ...]:
    """Each other name of the dataset stored as ``dataset``, and why (``table, symlink``...)."""
    return tuple(
        (DatasetRef(namespace, name), reason)
        for namespace, name, reason in db.execute(
            "SELECT n.namespace, n.name, n.reason FROM dataset_names n JOIN datasets d "
            "ON d.dataset_id = n.dataset_id WHERE d.namespace = ? AND d.name = ? "
            "AND NOT (n.namespace = d.namespace AND n.name = d.name) ORDER BY 1, 2",
            (dataset.namespace, dataset.name),
        )
    )


def kept_apart_notes(db: sqlite3.Connection, dataset_ids: Iterable[int]) -> list[str]:
    """One line per name of the datasets that several of them claim: a location two tables
    claimed, kept apart by an earlier version of the writer until it next writes."""
    wanted = json.dumps(sorted(set(dataset_ids)))
    rows = db.execute(
        "SELECT n.namespace, n.name, n.dataset_id, d.namespace, d.name FROM dataset_names n "
        "JOIN datasets d ON d.dataset_id = n.dataset_id WHERE (n.namespace, n.name) IN ("
        "SELECT namespace, name FROM dataset_names WHERE dataset_id IN "
        "(SELECT value FROM json_each(?)) UNION SELECT namespace, name FROM datasets "
        "WHERE dataset_id IN (SELECT value FROM json_each(?))) AND (n.namespace, n.name) IN ("
        "SELECT namespace, name FROM dataset_names GROUP BY namespace, name "
        "HAVING count(*) > 1) ORDER BY n.namespace, n.name, d.namespace, d.name",
        (wanted, wanted),
    ).fetchall()
    claimed: dict[Key, list[str]] = {}
    for namespace, name, dataset_id, own_namespace, own_name in rows:
        tables = [
            str(DatasetRef(*table))
            for table in db.execute(
                "SELECT namespace, name FROM dataset_names WHERE dataset_id = ? "
                "AND reason LIKE 'table%' AND NOT (namespace = ? AND name = ?) "
                "ORDER BY namespace, name",
                (dataset_id, namespace, name),
            )
        ]
        claimed.setdefault((namespace, name), []).extend(
            tables or [str(DatasetRef(own_namespace, own_name))]
        )
    return [
        f"{DatasetRef(*key)} is also named by {' and '.join(owners)}: kept apart by an earlier "
        "version of ol-subset; the next ingest joins them into one dataset"
        for key, owners in claimed.items()
    ]


@dataclass(frozen=True, slots=True)
class Alias:
    """An event's claim that ``other`` names the dataset it names ``primary`` (a symlink, a
    storage location: ``reason``); see :mod:`._dataset_names`."""

    primary: tuple[str, str]
    other: tuple[str, str]
    other_is_table: bool
    """Whether ``other`` is the table (a symlink of type ``TABLE``, openlineage-spark's) and
    ``primary`` its location; else ``other`` is the location of the table ``primary``."""
    reason: str
