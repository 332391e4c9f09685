"""The catalog a query reads: a dataset's name, its known partitions (their columns, how their
values compare, their identifiers and directories) and the order of its partition columns,
read from SQL once per query and kept.

A dataset's partitions are read whole only when a question needs them all; a partition asked
about is looked up by its key, and those inside a coarser partition or within a date range are
found by SQLite (``_narrowing``) for a dataset of one set of columns whose values compare as
their text (:meth:`PartitionCatalog.plain_shape`).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from openlineage_subset import partition_overlap
from openlineage_subset.lineage.engine._narrowing import (
    SIMPLE_NAME,
    Bound,
    DateIndex,
    Where,
    inside,
    partitions_keyed,
    partitions_where,
    within_dates,
)
from openlineage_subset.lineage.model import (
    DatasetRef,
    Dimensions,
    Label,
    PartitionRef,
    PartitionSet,
    Unit,
    canonical_unit,
    column_order,
    compares_as_text,
    dimensions_of,
    equality_key,
    location_paths,
    plain_values,
    sort_key,
    value_kind,
)
from openlineage_subset.lineage.store import ReadCounts

__all__ = ["DatasetCatalog", "PartitionCatalog"]

_PLAIN = re.compile(r"[ !#-\[\]-~]+")
"""Printable ASCII but for ``"`` and backslash: a value whose JSON is itself in quotes."""
_ORDER_SAMPLE = 64
"""Partitions of a dataset whose identifiers are read for the order of its columns."""
_NAMING_A_LOCATION = (
    # not decided by places, nor only partition lists, by access: the index holds these alone
    # (neither the located reads of a dataset read by folders, nor the partition lists of one
    # whose partitions came from paths, nor its filters)
    "SELECT condition FROM accesses INDEXED BY accesses_naming_places WHERE dataset_id = ? "
    "AND direction = ? AND listed = 0 AND located = 0 AND instr(condition, '\"location\"') > 0 "
    "LIMIT ?",
    # decided by places: each names one (by access)
    "SELECT condition FROM accesses INDEXED BY accesses_by_location WHERE dataset_id = ? "
    "AND direction = ? AND located = 1 LIMIT ?",
)
"""The conditions of a dataset's reads or writes that name a location, in two parts; each
reads at most :data:`_ORDER_ROWS` rows (a dataset read by one folder every day names it a
million times)."""
_ORDER_ROWS = 4 * _ORDER_SAMPLE


class PartitionCatalog:
    """The datasets of one query, each one's partitions read from the database as it asks."""

    def __init__(self, db: sqlite3.Connection, counts: ReadCounts | None = None) -> None:
        self.db = db
        self.counts = counts if counts is not None else ReadCounts()
        self._datasets: dict[int, DatasetCatalog] = {}

    def of(self, dataset_id: int) -> DatasetCatalog:
        """The dataset's partitions, made once per query."""
        found = self._datasets.get(dataset_id)
        if found is None:
            found = self._datasets[dataset_id] = DatasetCatalog(self.db, dataset_id, self.counts)
        return found


class DatasetCatalog:
    """One dataset of a query: its name, its known partitions (their columns, how their values
    compare, their identifiers and ids) and the order of its columns, each read once."""

    def __init__(self, db: sqlite3.Connection, dataset_id: int, counts: ReadCounts) -> None:
        self.db = db
        self.dataset_id = dataset_id
        self.counts = counts
        self._ref: DatasetRef | None = None
        self._known: dict[Dimensions, str | None] | None = None
        self._shapes: frozenset[tuple[str, ...]] | None = None
        self._plain: tuple[tuple[str, ...] | None] | None = None  # (the shape,) once decided
        self._kinds: dict[str, frozenset[str]] | None = None
        # The identifiers of the partitions asked about (None: not known), and the partition
        # ids of those found (for WRITERS_BY_ID).
        self._identifiers: dict[Dimensions, str | None] = {}
        self._ids: dict[Dimensions, int] = {}
        self._order: tuple[str, ...] | None = None
        self._rank: dict[str, int] | None = None
        self._placed: frozenset[str] = frozenset()
        self._refs: dict[Dimensions, tuple[PartitionRef, bool]] = {}  # with nulls?
        self._dated: DateIndex | None = None
        self._restricted = False
        self._exact_sets: frozenset[frozenset[str]] | None = None
        self._equal: dict[object, list[Dimensions]] | None = None

    def dataset(self) -> DatasetRef:
        found = self._ref
        if found is None:
            namespace, name = self.db.execute(
                "SELECT namespace, name FROM datasets WHERE dataset_id = ?", (self.dataset_id,)
            ).fetchone()
            found = self._ref = DatasetRef(namespace, name)
        return found

    def conditions(self) -> Iterator[Any]:
        """Each distinct condition (JSON) some run read or wrote the dataset by."""
        for (text,) in self.db.execute(
            "SELECT DISTINCT condition FROM accesses WHERE dataset_id = ? "
            "AND condition IS NOT NULL",
            (self.dataset_id,),
        ):
            yield json.loads(text)

    def column_order(self) -> tuple[str, ...]:
        """The dataset's partition columns in the order its events give them: as the
        identifiers of its partitions name them (``day=2024-10-15/country=PL``: day, then
        country), else as the ``column=value`` directories of the locations its conditions
        read; after those, the columns neither places, by name. Every answer shows a
        partition's columns in this order (its dimensions, its conditions, its grid), and a
        partition no identifier names has its directory in this order."""
        found = self._order
        if found is None:
            identifiers = self.db.execute(
                "SELECT identifier FROM (SELECT identifier FROM partitions WHERE dataset_id = ? "
                "LIMIT ?) WHERE identifier IS NOT NULL",
                (self.dataset_id, _ORDER_SAMPLE),
            )

            found, self._placed = column_order(
                self.shapes(), (identifier for (identifier,) in identifiers), self._locations
            )
            self._order = found
        return found

    def _locations(self) -> Iterator[str]:
        """The paths of the first :data:`_ORDER_SAMPLE` distinct conditions of the dataset
        that name a location (by direction, those lists of places do not decide before those
        they do, each by access), in the order of their text: the order of a dataset's
        columns does not depend on the order its events arrived in (beyond the sample). A
        condition that only lists partitions names none: those are left unread, which for a
        dataset whose partitions came from paths are all its conditions."""
        for text in self._location_sample():
            yield from location_paths(json.loads(text))

    def _location_sample(self) -> list[str]:
        """:meth:`_locations`' conditions, in the order of their text."""
        sample: set[str] = set()
        for direction in ("input", "output"):
            for sql in _NAMING_A_LOCATION:
                for (text,) in self.db.execute(sql, (self.dataset_id, direction, _ORDER_ROWS)):
                    sample.add(text)
                    if len(sample) >= _ORDER_SAMPLE:
                        return sorted(sample)
        return sorted(sample)

    def placed(self) -> frozenset[str]:
        """The columns whose place in :meth:`column_order` an identifier or a location gave
        (the others are placed by name: a guess)."""
        self.column_order()
        return self._placed

    def in_order(self, unit: Dimensions) -> Dimensions:
        """A partition's (column, value) pairs in the dataset's :meth:`column_order`."""
        rank = self._rank
        if rank is None:
            order = self.column_order()
            # Columns in the order of their names (one column, most often): units are already.
            rank = self._rank = (
                {} if list(order) == sorted(order) else {c: n for n, c in enumerate(order)}
            )
        if not rank:
            return unit
        return tuple(sorted(unit, key=lambda pair: (rank.get(pair[0], len(rank)), pair[0])))

    def loaded(self) -> bool:
        """Whether the dataset's known partitions are read already (all of them)."""
        return self._known is not None

    def known(self) -> dict[Dimensions, str | None]:
        """The dataset's known partitions (listed by some read or write), with identifiers."""
        found = self._known
        if found is None:
            self.counts.whole_datasets += 1
            found = {}
            shapes = self.shapes()
            (shape,) = shapes if len(shapes) == 1 else ((),)
            if shape and all(SIMPLE_NAME.fullmatch(column) for column in shape):
                # One set of columns: SQLite takes the values out, faster than json.loads.
                values = ", ".join(f"json_extract(dimensions, '$.{c}')" for c in shape)
                for identifier, *row in self.db.execute(
                    f"SELECT identifier, {values} FROM partitions WHERE dataset_id = ? "
                    "ORDER BY dimensions",
                    (self.dataset_id,),
                ):
                    found[tuple(zip(shape, row, strict=True))] = identifier
            else:
                for text, identifier in self.db.execute(
                    "SELECT dimensions, identifier FROM partitions WHERE dataset_id = ? "
                    "ORDER BY dimensions",
                    (self.dataset_id,),
                ):
                    found[dimensions_of(json.loads(text))] = identifier
            self._known = found
        return found

    def in_answer_order(self) -> Iterator[Dimensions] | None:
        """The dataset's known partitions one at a time, in the order answers list them (by
        their values in :meth:`column_order`, the null value first: ``sort_key``), sorted by
        SQLite (whose temporary files hold what does not fit its cache): none of them is held
        here. None when they do not all have one set of simple column names: then only
        :meth:`known`, sorted in Python, gives that order."""
        shapes = self.shapes()
        if len(shapes) != 1:
            return None
        (shape,) = shapes
        if not shape or not all(SIMPLE_NAME.fullmatch(column) for column in shape):
            return None
        values = ", ".join(f"json_extract(dimensions, '$.{column}')" for column in shape)
        ordered = [name for name, _ in self.in_order(tuple((column, None) for column in shape))]
        # One shape: the names are alike at each place, the values decide (NULL first, then
        # the text's code points: SQLite's BINARY order of UTF-8).
        keys = ", ".join(str(1 + shape.index(column)) for column in ordered)
        rows = self.db.execute(
            f"SELECT {values} FROM partitions WHERE dataset_id = ? ORDER BY {keys}",
            (self.dataset_id,),
        )
        return (tuple(zip(shape, row, strict=True)) for row in rows)

    def first_values(self, most: int) -> tuple[str, list[str]] | None:
        """The first column (by name) of a dataset of one set of simple column names, and its
        distinct values in order, found by SQLite a value at a time (one search of the key
        each, not a read of every partition). None when the dataset is otherwise, has more
        than ``most`` such values, or one that is null or not plain ASCII text (whose key's
        order may not be its text's)."""
        found = self.first_values_or_more(most)
        return None if found is None or found[2] else found[:2]

    def first_values_or_more(self, most: int) -> tuple[str, list[str], bool] | None:
        """:meth:`first_values`, and whether the column has more than ``most`` values (then
        the first ``most`` of them, all plain text): None as it says None otherwise."""
        first = self.plain_first()
        if first is None:
            return None
        # From the least key on: every value, even "", is at or after the pair of "".
        found = self.first_values_near(first, "", most + 1, later=True)
        if found is None:
            return None
        return first, found[:most], len(found) > most

    def plain_first(self) -> str | None:
        """The first column (by name) of a dataset whose partitions all have one set of simple
        column names; None for another dataset."""
        shape = self.plain_shape()
        if shape is None or not all(SIMPLE_NAME.fullmatch(column) for column in shape):
            return None
        return shape[0]

    def first_values_near(
        self, first: str, value: str | None, most: int, *, later: bool
    ) -> list[str] | None:
        """At most ``most`` values of the column ``first`` (:meth:`first_values`' column) next
        to ``value`` in the order of their text: those before it (the nearest first; None: the
        greatest values), or with ``later`` it and those after it (in order); one search of the
        key each. None when one is null or not plain ASCII text, as :meth:`first_values`."""
        found: list[str] = []
        if later:
            assert value is not None
            sql = "SELECT MIN(dimensions) FROM partitions WHERE dataset_id = ? AND dimensions > ?"
            bound = canonical_unit(((first, value),))[:-1]  # the value's keys and after
        else:
            sql = "SELECT MAX(dimensions) FROM partitions WHERE dataset_id = ? AND dimensions < ?"
            bound = "\uffff" if value is None else canonical_unit(((first, value),))[:-1]
        while len(found) < most:
            (key,) = self.db.execute(sql, (self.dataset_id, bound)).fetchone()
            if key is None:
                break
            pair = json.loads(key).get(first)
            if not isinstance(pair, str) or not _PLAIN.fullmatch(pair):
                return None
            found.append(pair)
            start = canonical_unit(((first, pair),))[:-1]
            # after: past every key of this value (each below "~"); before: below its first
            bound = start + "~" if later else start
        return found

    def known_from(self, first: str, value: str, before: str | None = None) -> list[Dimensions]:
        """The known partitions whose first column (:meth:`first_values`) is ``value`` or
        after (and before ``before``), in the key's order: one range of it."""
        shape = self.plain_shape()
        assert shape is not None and shape[0] == first
        where = "dimensions >= ?"
        params = [canonical_unit(((first, value),))[:-1]]
        if before is not None:
            where += " AND dimensions < ?"
            params.append(canonical_unit(((first, before),))[:-1])
        return self._known_where(shape, [(where, params)])

    def restrict(self, units: Iterable[Dimensions]) -> None:
        """Take the dataset's known partitions to be those of ``units`` that are known: a
        query of those alone then evaluates each read and write on them only, as it would
        evaluate it on all and keep those."""
        units = list(units)
        self.look_up(units)
        identifiers = self._identifiers
        self._known = {
            unit: identifiers[unit] or None
            for unit in sorted(units, key=canonical_unit)
            if identifiers.get(unit) is not None
        }
        self._dated = None
        self._equal = None
        self._restricted = True

    def restricted(self) -> bool:
        """Whether :meth:`restrict` chose the dataset's known partitions."""
        return self._restricted

    def whole_units(self) -> list[Unit]:
        """The whole dataset as units: its known partitions, or None when it has none."""
        known = list(self.known())
        return list(known) if known else [None]

    def plain_shape(self) -> tuple[str, ...] | None:
        """The columns of every known partition of the dataset, when they all have the same
        ones and each column's values compare as their text (all text, or all ISO dates; or
        null): then a partition list selects exactly the known partitions it names. Every
        partition any condition on the dataset lists is known, so this holds for those too."""
        if self._plain is not None:
            return self._plain[0]
        shapes = self.shapes()
        found = None
        if len(shapes) == 1:
            (shape,) = shapes
            kinds = self.kinds()
            if all(compares_as_text(kinds.get(column, frozenset())) for column in shape):
                found = shape
        self._plain = (found,)
        return found

    def shapes(self) -> frozenset[tuple[str, ...]]:
        """The sets of partition columns of the dataset's known partitions."""
        found = self._shapes
        if found is None:
            found = self._shapes = frozenset(
                tuple(json.loads(text))
                for (text,) in self.db.execute(
                    "SELECT columns FROM partition_columns WHERE dataset_id = ?",
                    (self.dataset_id,),
                )
            )
        return found

    def kinds(self) -> dict[str, frozenset[str]]:
        """How the values of each partition column of the dataset compare (see ingest)."""
        found = self._kinds
        if found is None:
            by_column: dict[str, set[str]] = {}
            for column, kind in self.db.execute(
                "SELECT column_name, kind FROM partition_kinds WHERE dataset_id = ?",
                (self.dataset_id,),
            ):
                by_column.setdefault(column, set()).add(kind)
            found = self._kinds = {k: frozenset(v) for k, v in by_column.items()}
        return found

    def identifier(self, unit: Unit) -> str | None:
        """The directory of a known partition ("" when it has none), None when not known."""
        if unit is None:
            return None
        known = self._known
        if known is not None:
            if unit not in known:
                return None
            return known[unit] or ""
        identifiers = self._identifiers
        if unit not in identifiers:
            row = self.db.execute(
                "SELECT identifier FROM partitions WHERE dataset_id = ? AND dimensions = ?",
                (self.dataset_id, canonical_unit(unit)),
            ).fetchone()
            identifiers[unit] = None if row is None else (row[0] or "")
        return identifiers[unit]

    def partition_ids(self) -> Mapping[Dimensions, int]:
        """The partition ids of the dataset's partitions found by key so far."""
        return self._ids

    def look_up(self, units: Iterable[Unit]) -> None:
        """Have :meth:`identifier` know the units, found in one query rather than one each."""
        if self._known is not None:
            return
        identifiers = self._identifiers
        wanted = {
            canonical_unit(unit): unit
            for unit in units
            if unit is not None and unit not in identifiers
        }
        if not wanted:
            return
        for unit in wanted.values():
            identifiers[unit] = None
        ids = self._ids
        for text, identifier, partition_id in partitions_keyed(self.db, self.dataset_id, wanted):
            unit = wanted[text]
            identifiers[unit] = identifier or ""
            ids[unit] = partition_id

    def partition_path(self, unit: Dimensions) -> str | None:
        """The partition's directory, to decide location conditions; None when unknown."""
        dataset = self.dataset()
        identifier = self.identifier(unit) or str(PartitionRef(self.in_order(unit)))
        if dataset.namespace == "file":
            return dataset.name.rstrip("/") + "/" + identifier
        if "://" in dataset.namespace:
            return f"{str(dataset).rstrip('/')}/{identifier}"
        return None

    def expand(self, dimensions: Mapping[str, str | None]) -> list[Unit]:
        """The known partitions inside the given one (itself, or finer ones), else itself."""
        itself = dimensions_of(dimensions)
        shape = tuple(name for name, _ in itself)
        if plain_values(dimensions.values()) and all(
            not set(shape) < set(known) for known in self.shapes()
        ):
            # Values of text and dates are equal exactly when their text is (partition_overlap
            # compares them typed), and no known partition is finer: it is itself.
            return [itself]
        coarser = self.coarser(itself)
        if coarser is not None:
            return list(coarser) if coarser else [itself]
        listed = {"type": "partition", "partitions": [{"dimensions": dict(dimensions)}]}
        candidates: Iterable[Dimensions] = self.known()
        sure = False
        if frozenset(shape) in self._column_sets():
            # Only known partitions of these columns may be inside it (no known partition has
            # more), and only those of an equal key (a write listing thousands of partitions
            # asked each against every known one).
            candidates = self._by_equality().get(equality_key(itself), ())
            sure = True
        kinds = _kinds(itself)
        inside = []
        for known in candidates:
            if sure and _kinds(known) == kinds:
                # equal keys of values of one kind each: equal values, as the evaluator
                # compares them (a number as a number, a date or a text as its text)
                inside.append(known)
                continue
            try:
                if partition_overlap(listed, dict(known)) is True:
                    inside.append(known)
            except (ValueError, TypeError):
                continue
        return list(inside) if inside else [itself]

    def _column_sets(self) -> frozenset[frozenset[str]]:
        """The column sets of the known partitions when none is a strict subset of another
        (a partition of some of them may hold finer ones); else empty."""
        if self._exact_sets is None:
            sets = frozenset(frozenset(shape) for shape in self.shapes())
            nested = any(one < other for one in sets for other in sets)
            self._exact_sets = frozenset() if nested else sets
        return self._exact_sets

    def _by_equality(self) -> dict[object, list[Dimensions]]:
        """The known partitions by :func:`equality_key`, in the order of :meth:`known`."""
        if self._equal is None:
            self._equal = {}
            for known in self.known():
                self._equal.setdefault(equality_key(known), []).append(known)
        return self._equal

    def coarser(self, itself: Dimensions) -> list[Dimensions] | None:
        """The known partitions inside a partition of some of the columns of a dataset with a
        :meth:`plain_shape` (a day of partitions by day and country), found by SQLite: those
        whose values of its columns are its values (see ``_narrowing.inside``); None: not such
        a partition, or the dataset's partitions are read already."""
        shape = self.plain_shape()
        if shape is None or self._known is not None:
            return None
        wheres = inside(shape, itself)
        return None if wheres is None else self._known_where(shape, wheres)

    def _known_where(self, shape: tuple[str, ...], wheres: list[Where]) -> list[Dimensions]:
        """The known partitions that SQL conditions keep (``_narrowing.partitions_where``);
        their identifiers are known to :meth:`identifier` after."""
        found = []
        identifiers = self._identifiers
        ids = self._ids
        for unit, identifier, partition_id in partitions_where(
            self.db, self.dataset_id, shape, wheres
        ):
            identifiers[unit] = identifier or ""
            ids[unit] = partition_id
            found.append(unit)
        return found

    def within_dates(
        self,
        shape: tuple[str, ...],
        bounds: dict[str, Bound],
        by_dates: bool = False,
    ) -> list[Dimensions] | None:
        """The known partitions outside none of the date ranges ``bounds`` (of a condition:
        see ``_bounds``) keep a partition column of ISO dates in, found by SQLite; None when
        they keep none in a range, or the dataset's partitions are read already (with
        ``by_dates``, those found in memory then). A partition left out is one the condition
        does not select (``outside()``), so evaluating the condition on these gives what it
        gives on all."""
        known = self._known
        if known is not None and not by_dates:
            return None
        if known is not None:
            index = self._dated
            if index is None:
                index = self._dated = DateIndex(list(known))
            return index.within(shape, bounds, self.kinds())
        wheres = within_dates(shape, bounds, self.kinds())
        return None if wheres is None else self._known_where(shape, wheres)

    def partition_refs(self, units: Iterable[Unit]) -> tuple[PartitionRef, ...]:
        """The units that are partitions (not None), as :class:`PartitionRef`, their columns
        and their order by the dataset's :meth:`column_order`."""
        made = self._refs
        found = []
        nulls = False
        for unit in units:
            if unit is None:
                continue
            made_ref = made.get(unit)
            if made_ref is None:
                # One object per partition and query: an answer lists many partitions more
                # than once (what a run read, and what to recompute).
                shown = self.in_order(unit)
                ref = PartitionRef(shown, self.identifier(unit) or None)
                made_ref = made[unit] = (ref, None in [value for _, value in shown])
            found.append(made_ref[0])
            nulls = nulls or made_ref[1]
        # Without a null, the partitions order as sort_key() orders them (and faster).
        found.sort(key=_shown_key if nulls else _shown)
        return tuple(found)

    def partition_set(self, units: Mapping[Unit, Label]) -> PartitionSet:
        def refs(label: Label) -> tuple[PartitionRef, ...]:
            return self.partition_refs(u for u, found in units.items() if found == label)

        return PartitionSet(self.dataset(), units.get(None), refs("definite"), refs("possible"))


def _kinds(unit: Dimensions) -> tuple[str | None, ...]:
    return tuple(None if value is None else value_kind(value) for _, value in unit)


def _shown(ref: PartitionRef) -> Dimensions:
    return ref.dimensions


def _shown_key(ref: PartitionRef) -> tuple[tuple[str, bool, str], ...]:
    return sort_key(ref.dimensions)
