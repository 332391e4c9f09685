"""The writer's side of a dataset's many names (``store/_dataset_names.py``): a claimed name
joined to its dataset, two datasets stored apart merged into one when an event says they are
one.

Called by the writer only for events whose datasets carry another name (a ``symlinks`` facet, a
storage location), and once per distinct claim while the writer's ids are cached: the events of
this package's adapter, and most of openlineage-spark's, cost nothing here.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable

from openlineage_subset.lineage.model import any_of_json, canonical, listed_places, read_bounds
from openlineage_subset.lineage.store import (
    DELETE_RANGE,
    INSERT_RANGE,
    TABLE,
    Alias,
    range_row,
    stored_range_rows,
)

Key = tuple[str, str]


def aliased(db: sqlite3.Connection, keys: list[Key]) -> dict[Key, int]:
    """The datasets the names ``keys`` (stored as no dataset) are the one other name of."""
    found: dict[Key, set[int]] = {}
    for dataset_id, namespace, name in db.execute(
        "SELECT n.dataset_id, n.namespace, n.name FROM json_each(?) j JOIN dataset_names n "
        "ON n.namespace = json_extract(j.value, '$[0]') "
        "AND n.name = json_extract(j.value, '$[1]')",
        (json.dumps(keys),),
    ):
        found.setdefault((namespace, name), set()).add(dataset_id)
    return {key: next(iter(ids)) for key, ids in found.items() if len(ids) == 1}


def _claimants(db: sqlite3.Connection, key: Key) -> list[int]:
    return [
        int(row[0])
        for row in db.execute(
            "SELECT dataset_id FROM dataset_names WHERE namespace = ? AND name = ? "
            "ORDER BY dataset_id",
            key,
        )
    ]


def join_names(db: sqlite3.Connection, claims: Iterable[Alias], make: Callable[[Key], int]) -> bool:
    """Record the claims in ``dataset_names``, each a table and its location: one dataset. A
    dataset stored under one of the names is merged with the other's; ``make`` stores a new
    dataset and gives its id. The names a claim joins are one dataset whatever else claims
    them (two tables over one location are one dataset: what one writes there, the other
    reads), so that the datasets are the same whatever order the claims come in; each
    dataset joined is then named by :func:`printed_name`. Whether datasets were merged or
    renamed (ids the caller holds for names may then be gone or wrong)."""
    changed = False
    touched: set[int] = set()
    for claim in claims:
        table, location = (
            (claim.other, claim.primary) if claim.other_is_table else (claim.primary, claim.other)
        )
        why = f"{{}}, {claim.reason}"
        found = {dataset_id for key in (table, location) for dataset_id in _holders(db, key)}
        if found:
            keep, *others = sorted(found)
            for gone in others:
                merge_datasets(db, keep, gone)
                touched.discard(gone)
                changed = True
        else:
            keep = make(claim.primary)
        _name(db, table, keep, why.format(TABLE))
        _name(db, location, keep, why.format("location"))
        touched.add(keep)
    for dataset_id in touched:
        changed = _rename(db, dataset_id) or changed
    return changed


def heal_kept_apart(db: sqlite3.Connection) -> bool:
    """Join the datasets an earlier version kept apart over a name several of them claimed (two
    tables over one location): one dataset each such name's, as :func:`join_names` makes them
    now. Whether any were joined."""
    shared = db.execute(
        "SELECT namespace, name FROM dataset_names GROUP BY namespace, name HAVING count(*) > 1"
    ).fetchall()
    for namespace, name in shared:
        # The claimants, and the dataset stored under the name since (events named by it then
        # were a dataset of their own); an earlier pass of this loop may have joined them.
        holders = sorted(_holders(db, (namespace, name)))
        if len(holders) > 1:
            keep, *others = holders
            for gone in others:
                merge_datasets(db, keep, gone)
            _rename(db, keep)
    return bool(shared)


def _holders(db: sqlite3.Connection, key: Key) -> set[int]:
    """The datasets stored under ``key`` or claiming it as another name."""
    found = set(_claimants(db, key))
    row = db.execute(
        "SELECT dataset_id FROM datasets WHERE namespace = ? AND name = ?", key
    ).fetchone()
    if row is not None:
        found.add(int(row[0]))
    return found


def printed_name(names: Iterable[tuple[str, str, str]]) -> Key:
    """The name a dataset of several names is printed (and stored) by, from its names and why
    (namespace, name, reason): the least of its tables' names, by namespace then name (else the
    least of its names): one rule whatever order the names came in."""
    listed = sorted(names)
    tables = [(namespace, name) for namespace, name, reason in listed if reason.startswith(TABLE)]
    return tables[0] if tables else (listed[0][0], listed[0][1])


def _rename(db: sqlite3.Connection, dataset_id: int) -> bool:
    """Name the dataset by :func:`printed_name` of its names; whether it was renamed."""
    names = db.execute(
        "SELECT namespace, name, reason FROM dataset_names WHERE dataset_id = ?", (dataset_id,)
    ).fetchall()
    if not names:
        return False
    wanted = printed_name(names)
    current = db.execute(
        "SELECT namespace, name FROM datasets WHERE dataset_id = ?", (dataset_id,)
    ).fetchone()
    if current is None or tuple(current) == wanted:
        return False
    db.execute(
        "UPDATE datasets SET namespace = ?, name = ? WHERE dataset_id = ?", (*wanted, dataset_id)
    )
    return True


def _name(db: sqlite3.Connection, key: Key, dataset_id: int, reason: str) -> None:
    """Record ``key`` as a name of the dataset; a name claimed for several reasons keeps the
    greatest (a table's over a location's), whichever came first."""
    db.execute(
        "INSERT INTO dataset_names (namespace, name, dataset_id, reason) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (namespace, name, dataset_id) DO UPDATE "
        "SET reason = max(reason, excluded.reason)",
        (*key, dataset_id, reason),
    )


def merge_datasets(db: sqlite3.Connection, keep: int, gone: int) -> None:
    """Make the dataset ``gone`` part of ``keep``: its name becomes another name of ``keep``
    (the caller records why), its partitions, reads and writes ``keep``'s; a run that accessed
    both in one direction keeps one access whose condition is the ``OR`` of their conditions."""
    _merge_partitions(db, keep, gone)
    for table, columns in (
        ("partition_columns", "columns"),
        ("partition_kinds", "column_name, kind"),
        ("partition_tails", "tail"),
    ):
        db.execute(
            f"INSERT OR IGNORE INTO {table} (dataset_id, {columns}) "
            f"SELECT ?, {columns} FROM {table} WHERE dataset_id = ?",
            (keep, gone),
        )
        db.execute(f"DELETE FROM {table} WHERE dataset_id = ?", (gone,))
    _merge_accesses(db, keep, gone)
    db.execute(
        "INSERT INTO dataset_names (namespace, name, dataset_id, reason) "
        "SELECT namespace, name, ?, reason FROM dataset_names WHERE dataset_id = ? "
        "ON CONFLICT (namespace, name, dataset_id) DO UPDATE "
        "SET reason = max(reason, excluded.reason)",
        (keep, gone),
    )
    db.execute("DELETE FROM dataset_names WHERE dataset_id = ?", (gone,))
    db.execute("DELETE FROM datasets WHERE dataset_id = ?", (gone,))


def _merge_partitions(db: sqlite3.Connection, keep: int, gone: int) -> None:
    kept = dict(
        db.execute("SELECT dimensions, partition_id FROM partitions WHERE dataset_id = ?", (keep,))
    )
    moved = db.execute(
        "SELECT dimensions, identifier, partition_id FROM partitions WHERE dataset_id = ?",
        (gone,),
    ).fetchall()
    for dimensions, identifier, partition_id in moved:
        same = kept.get(dimensions)
        if same is None:
            db.execute(
                "UPDATE partitions SET dataset_id = ? WHERE partition_id = ?", (keep, partition_id)
            )
            continue
        db.execute(
            "UPDATE OR IGNORE access_partitions SET partition_id = ? WHERE partition_id = ?",
            (same, partition_id),
        )
        db.execute("DELETE FROM access_partitions WHERE partition_id = ?", (partition_id,))
        if identifier is not None:  # the least identifier given, as the writer keeps
            db.execute(
                "UPDATE partitions SET identifier = ? WHERE partition_id = ? "
                "AND (identifier IS NULL OR identifier > ?)",
                (identifier, same, identifier),
            )
        db.execute("DELETE FROM partitions WHERE partition_id = ?", (partition_id,))


def _merge_accesses(db: sqlite3.Connection, keep: int, gone: int) -> None:
    kept = {
        (run_id, direction): access_id
        for access_id, run_id, direction in db.execute(
            "SELECT access_id, run_id, direction FROM accesses WHERE dataset_id = ?", (keep,)
        )
    }
    moved = db.execute(
        "SELECT access_id, run_id, direction FROM accesses WHERE dataset_id = ?", (gone,)
    ).fetchall()
    for access_id, run_id, direction in moved:
        same = kept.get((run_id, direction))
        if same is None:
            db.execute("UPDATE accesses SET dataset_id = ? WHERE access_id = ?", (keep, access_id))
        else:
            _one_access(db, (keep, same), (gone, access_id), direction)
    # The rows of the accesses moved whole (those of the accesses joined are gone already).
    for table in ("access_ranges", "access_locations"):
        db.execute(f"UPDATE {table} SET dataset_id = ? WHERE dataset_id = ?", (keep, gone))


def _one_access(
    db: sqlite3.Connection, keep: tuple[int, int], gone: tuple[int, int], direction: str
) -> None:
    """Fold the access ``gone`` into ``keep`` (one run, one direction, two names; each a
    dataset id and an access id)."""
    (kept_texts, kept_lists), (gone_texts, gone_lists) = _texts(db, keep[1]), _texts(db, gone[1])
    texts = kept_texts + [text for text in gone_texts if text not in kept_texts]
    # As the writer merges an access's conditions: it only lists partitions when each does,
    # and lists of places decide it when they decide each.
    lists = bool(texts) and (kept_lists or not kept_texts) and (gone_lists or not gone_texts)
    places = {text: listed_places(json.loads(text)) for text in texts}
    located = bool(texts) and all(found is not None for found in places.values())
    condition = _any_of(texts)
    if direction == "input":
        db.executemany(DELETE_RANGE, stored_range_rows(db, [keep, gone]))
    db.execute(
        "UPDATE accesses SET condition = ?, listed = ?, located = ? WHERE access_id = ?",
        (condition, int(lists), int(located), keep[1]),
    )
    if len(texts) > 1:
        db.executemany(
            "INSERT OR IGNORE INTO access_conditions (access_id, condition) VALUES (?, ?)",
            [(keep[1], text) for text in texts],
        )
    db.execute(
        "UPDATE OR IGNORE access_partitions SET access_id = ? WHERE access_id = ?",
        (keep[1], gone[1]),
    )
    db.executemany(
        "DELETE FROM access_locations WHERE dataset_id = ? AND place = ? AND access_id = ?",
        [(gone[0], place, gone[1]) for text in gone_texts for place in places[text] or ()],
    )
    db.executemany(
        "INSERT OR IGNORE INTO access_locations (dataset_id, place, access_id) VALUES (?, ?, ?)",
        [(keep[0], place, keep[1]) for text in gone_texts for place in places[text] or ()],
    )
    for table in ("access_partitions", "access_conditions", "access_bounds"):
        db.execute(f"DELETE FROM {table} WHERE access_id = ?", (gone[1],))
    db.execute("DELETE FROM access_bounds WHERE access_id = ?", (keep[1],))
    if direction == "input" and not lists:
        bounds = read_bounds(json.loads(condition)) if condition is not None else {}
        db.executemany(
            "INSERT INTO access_bounds (access_id, column_name, low, high) VALUES (?, ?, ?, ?)",
            [(keep[1], column, low, high) for column, (low, high) in bounds.items()],
        )
        db.execute(INSERT_RANGE, range_row(*keep, bounds))
    db.execute("DELETE FROM accesses WHERE access_id = ?", (gone[1],))


def _texts(db: sqlite3.Connection, access_id: int) -> tuple[list[str], bool]:
    """An access's distinct conditions, and whether they only list partitions."""
    condition, listed = db.execute(
        "SELECT condition, listed FROM accesses WHERE access_id = ?", (access_id,)
    ).fetchone()
    several = [
        row[0]
        for row in db.execute(
            "SELECT condition FROM access_conditions WHERE access_id = ? ORDER BY condition",
            (access_id,),
        )
    ]
    if several:
        return several, bool(listed)
    return ([] if condition is None else [condition]), bool(listed)


def _any_of(texts: list[str]) -> str | None:
    """The ``OR`` of distinct conditions, as the writer stores an access's (None: whole)."""
    if len(texts) <= 1:
        return texts[0] if texts else None
    return canonical(any_of_json([json.loads(text) for text in sorted(texts)]))
