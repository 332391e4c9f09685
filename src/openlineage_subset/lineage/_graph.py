"""The graph walk every lineage query shares: a dataset's reads and writes, and whether a
condition may select rows of a partition.

Every question reduces to one: may a read (or write) condition select rows of a partition? It
is answered by :func:`openlineage_subset.partition_overlap` in three values; unknown is never
dropped, it makes the answer *possible* instead of *definite*. The rules (docs/lineage.md):

- a read depends on a write only if the write's run completed before the read's run started;
- a whole-dataset read or write overlaps everything; a partition list or a location is exact;
- a write's partitions are those it lists; a write by another condition covers the known
  partitions of its dataset that the condition may select (all of them for a whole write);
- only completed runs wrote anything: a failed, aborted or unfinished run is listed when it read
  affected data, and its outputs go no further.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from openlineage_subset._evaluate import partition_overlap
from openlineage_subset.lineage._bounds import date_bounds
from openlineage_subset.lineage._conditions import (
    UNDECIDED,
    Node,
    Unit,
    Values,
    all_text,
    canonical_unit,
    column_order,
    compares_as_text,
    compile_condition,
    date_spans,
    dimensions_of,
    lists_no_partition,
    location_paths,
    only_partitions,
    plain_values,
    quick_overlap,
    sort_key,
)
from openlineage_subset.lineage._model import (
    DatasetRef,
    Dimensions,
    Label,
    PartitionRef,
    PartitionSet,
    RunRef,
)
from openlineage_subset.lineage._names import check_columns, resolve
from openlineage_subset.lineage._narrowing import (
    READERS,
    SIMPLE_NAME,
    WRITERS,
    WRITERS_BY_ID,
    DateIndex,
    Where,
    inside,
    partitions_keyed,
    partitions_where,
    within_dates,
)
from openlineage_subset.lineage._rendering import ConditionText
from openlineage_subset.lineage._store import LineageStore

_SHOWN_CANDIDATES = 10
_ORDER_SAMPLE = 64
"""Partitions of a dataset whose identifiers are read for the order of its columns."""


@dataclasses.dataclass(frozen=True)
class Access:
    """A run's read (``input``) or write (``output``) of a dataset, under its condition."""

    run: RunRef
    dataset_id: int
    direction: str
    text: str | None  # the condition's canonical JSON; None: the whole dataset
    parsed: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    """The conditions read, by their JSON: shared by the accesses of a query, so that a
    condition many accesses have (a day's partition list, read and written) is read once."""

    @functools.cached_property
    def condition(self) -> Any:
        """The condition (JSON), read when first asked: most accesses a query loads are only
        compared by time."""
        if self.text is None:
            return None
        found = self.parsed.get(self.text)
        if found is None:
            found = self.parsed[self.text] = json.loads(self.text)
        return found


class Graph:
    """Reads the database for one query, caching what a query asks many times."""

    def __init__(self, store: LineageStore) -> None:
        self.db = store.connection
        self._datasets: dict[int, DatasetRef] = {}
        self._known: dict[int, dict[Dimensions, str | None]] = {}
        self._accesses: dict[tuple[int, str], list[Access]] = {}
        self._starts: dict[tuple[int, str], list[str]] = {}
        self._by_run: dict[tuple[str, str], list[Access]] = {}
        self._overlaps: dict[tuple[int, int, Unit], bool | Exception | None] = {}
        self._compiled: dict[str, Node] = {}
        self._serials = itertools.count(1)
        self._shapes: dict[int, frozenset[tuple[str, ...]]] = {}
        self._plain: dict[int, tuple[str, ...] | None] = {}
        self._kinds: dict[int, dict[str, frozenset[str]]] = {}
        # By dataset: the identifiers of the partitions asked about (None: not known), and
        # the partition ids of those found (for WRITERS_BY_ID).
        self._identifiers: dict[int, dict[Dimensions, str | None]] = {}
        self._ids: dict[int, dict[Dimensions, int]] = {}
        self._candidate_sets: dict[tuple[str, int], frozenset[Values] | None] = {}
        self._agreeing: tuple[Any, Any, list[list[tuple[Unit, Label]]]] = ((), None, [])
        self._orders: dict[int, tuple[str, ...]] = {}
        self._ranks: dict[int, dict[str, int]] = {}
        self._placed: dict[int, frozenset[str]] = {}
        self._parsed: dict[str, Any] = {}
        self._refs: dict[int, dict[Dimensions, tuple[PartitionRef, bool]]] = {}  # with nulls?
        self._text = ConditionText()
        self._bounds: dict[str, dict[str, tuple[str | None, str | None]]] = {}
        self._dated: dict[int, DateIndex] = {}

    def resolve(self, name: str, namespace: str | None) -> int:
        """The id of the dataset called ``name``, or whose name ends with ``/name``."""
        return resolve(self.db, name, namespace)

    def dataset(self, dataset_id: int) -> DatasetRef:
        found = self._datasets.get(dataset_id)
        if found is None:
            namespace, name = self.db.execute(
                "SELECT namespace, name FROM datasets WHERE dataset_id = ?", (dataset_id,)
            ).fetchone()
            found = self._datasets[dataset_id] = DatasetRef(namespace, name)
        return found

    def column_order(self, dataset_id: int) -> tuple[str, ...]:
        """The dataset's partition columns in the order its events give them: as the
        identifiers of its partitions name them (``day=2024-10-15/country=PL``: day, then
        country), else as the ``column=value`` directories of the locations its conditions
        read; after those, the columns neither places, by name. Every answer shows a
        partition's columns in this order (its dimensions, its conditions, its grid), and a
        partition no identifier names has its directory in this order."""
        found = self._orders.get(dataset_id)
        if found is None:
            identifiers = self.db.execute(
                "SELECT identifier FROM (SELECT identifier FROM partitions WHERE dataset_id = ? "
                "LIMIT ?) WHERE identifier IS NOT NULL",
                (dataset_id, _ORDER_SAMPLE),
            )

            def locations() -> Iterator[str]:
                for (text,) in self.db.execute(
                    "SELECT DISTINCT condition FROM accesses WHERE dataset_id = ? AND "
                    "condition LIKE '%\"location\"%' LIMIT ?",
                    (dataset_id, _ORDER_SAMPLE),
                ):
                    yield from location_paths(json.loads(text))

            found, self._placed[dataset_id] = column_order(
                self.shapes(dataset_id), (identifier for (identifier,) in identifiers), locations
            )
            self._orders[dataset_id] = found
        return found

    def in_order(self, dataset_id: int, unit: Dimensions) -> Dimensions:
        """A partition's (column, value) pairs in the dataset's :meth:`column_order`."""
        rank = self._ranks.get(dataset_id)
        if rank is None:
            order = self.column_order(dataset_id)
            # Columns in the order of their names (one column, most often): units are already.
            rank = self._ranks[dataset_id] = (
                {} if list(order) == sorted(order) else {c: n for n, c in enumerate(order)}
            )
        if not rank:
            return unit
        return tuple(sorted(unit, key=lambda pair: (rank.get(pair[0], len(rank)), pair[0])))

    def rendered(self, access: Access) -> str | None:
        """The access's condition as text (None: the whole dataset), the columns of the
        partitions it lists in the dataset's :meth:`column_order`."""
        if access.text is None:
            return None
        order = self.column_order(access.dataset_id)
        return self._text.text(access.text, access.condition, order)

    def check_columns(self, dataset_id: int, partition: Mapping[str, str | None] | None) -> None:
        """Raise :class:`UnknownPartitionColumnError` when ``partition`` names a column the
        dataset never had (see ``_names.check_columns``)."""
        check_columns(self, dataset_id, partition)

    def seen(self, dataset_id: int, units: Iterable[Unit]) -> bool:
        """Whether some recorded run read or wrote any of the units, or may have: False only
        when every read and every write of the dataset leaves each unit out."""
        units = list(units)
        if None in units:
            return True  # the whole dataset: some run read or wrote it, or it would be unknown
        self.look_up(dataset_id, units)
        if any(self.identifier(dataset_id, unit) is not None for unit in units):
            return True  # a known partition: some read or write lists it
        return any(
            self._may_touch(access, unit)
            for direction in ("input", "output")
            for access in self.accesses(dataset_id, direction)
            for unit in units
        )

    def _may_touch(self, access: Access, unit: Unit) -> bool:
        if self.overlap(access, unit) is not False:
            return True
        # A location is compared with the partition's directory: its columns in an order no
        # identifier or location told column_order() are a guess, not sure enough for "no".
        if unit is None or len(unit) < 2 or '"location"' not in (access.text or ""):
            return False
        self.column_order(access.dataset_id)
        return not all(column in self._placed[access.dataset_id] for column, _ in unit)

    def known(self, dataset_id: int) -> dict[Dimensions, str | None]:
        """The dataset's known partitions (listed by some read or write), with identifiers."""
        found = self._known.get(dataset_id)
        if found is None:
            found = {}
            shapes = self.shapes(dataset_id)
            (shape,) = shapes if len(shapes) == 1 else ((),)
            if shape and all(SIMPLE_NAME.fullmatch(column) for column in shape):
                # One set of columns: SQLite takes the values out, faster than json.loads.
                values = ", ".join(f"json_extract(dimensions, '$.{c}')" for c in shape)
                for identifier, *row in self.db.execute(
                    f"SELECT identifier, {values} FROM partitions WHERE dataset_id = ? "
                    "ORDER BY dimensions",
                    (dataset_id,),
                ):
                    found[tuple(zip(shape, row, strict=True))] = identifier
            else:
                for text, identifier in self.db.execute(
                    "SELECT dimensions, identifier FROM partitions WHERE dataset_id = ? "
                    "ORDER BY dimensions",
                    (dataset_id,),
                ):
                    found[dimensions_of(json.loads(text))] = identifier
            self._known[dataset_id] = found
        return found

    def accesses(self, dataset_id: int, direction: str) -> list[Access]:
        """Reads (``input``) or writes (``output``) of a dataset, by run start time."""
        key = (dataset_id, direction)
        found = self._accesses.get(key)
        if found is None:
            found = [
                self._access(row, dataset_id, direction)
                for row in self.db.execute(
                    "SELECT r.run_id, r.job_namespace, r.job_name, r.status, r.started_at, "
                    "r.ended_at, a.condition FROM accesses a JOIN runs r USING (run_id) "
                    "WHERE a.dataset_id = ? AND a.direction = ? ORDER BY r.started_at, r.run_id",
                    key,
                )
            ]
            self._accesses[key] = found
            self._starts[key] = [access.run.started_at for access in found]
        return found

    def readers_after(self, dataset_id: int, after: str | None, inclusive: bool) -> list[Access]:
        """Reads of the dataset by runs started after ``after`` (None: any time)."""
        reads = self.accesses(dataset_id, "input")
        if after is None:
            return reads
        starts = self._starts[(dataset_id, "input")]
        cut = bisect.bisect_left if inclusive else bisect.bisect_right
        return reads[cut(starts, after) :]

    def readers_of(
        self, dataset_id: int, units: Iterable[Unit], after: str | None, inclusive: bool
    ) -> list[Access]:
        """:meth:`readers_after`, less the reads that only list partitions and list none of
        ``units``: known partitions of a dataset with a :meth:`plain_shape`, which such a read
        does not select (found with the ``access_partitions`` index), and the reads whose date
        ranges (``access_bounds``) leave every unit out. In the same order."""
        units = list(units)
        wanted = json.dumps([canonical_unit(unit) for unit in units if unit is not None])
        since = "r.started_at >= ?" if inclusive else "r.started_at > ?"
        rows = self.db.execute(
            READERS.format(since=since),
            (dataset_id, after, after, dataset_id, wanted, json.dumps(date_spans(units))),
        )
        return [self._access(row, dataset_id, "input") for row in rows]

    def writers_of(self, dataset_id: int, units: list[Unit], before: str | None) -> list[Access]:
        """The writes of the dataset by runs that completed before ``before`` (None: ever),
        the latest first; less, when every unit is a known partition of a dataset with a
        :meth:`plain_shape`, the writes that only list partitions and list none of the units
        (found with the ``access_partitions`` index), which do not write them."""
        listed = all(self.identifier(dataset_id, unit) is not None for unit in units)
        if not units or not listed or self.plain_shape(dataset_id) is None:
            writes = [
                write
                for write in self.accesses(dataset_id, "output")
                if write.run.status == "COMPLETE"
                and write.run.ended_at is not None
                and (before is None or write.run.ended_at < before)
            ]
            writes.sort(key=lambda write: (write.run.ended_at or "", write.run.run_id))
            return writes[::-1]
        ids = self._ids.get(dataset_id, {})
        found = [ids.get(unit) for unit in units]  # type: ignore[arg-type]
        if None not in found:
            # Their partition ids, known from finding them: the index without the key's text.
            params: tuple[Any, ...] = (dataset_id, before, before, json.dumps(found))
            rows = self.db.execute(WRITERS_BY_ID, params)
        else:
            wanted = json.dumps([canonical_unit(unit) for unit in units if unit is not None])
            rows = self.db.execute(WRITERS, (dataset_id, before, before, dataset_id, wanted))
        return [self._access(row, dataset_id, "output") for row in rows]

    def listed_values(self, access: Access) -> frozenset[Values] | None:
        """The values of the partitions the access's condition lists, when it is partition
        lists of the dataset's :meth:`plain_shape`'s columns: then it overlaps a known
        partition without nulls exactly when that is among them (as ``Listing.overlap``
        decides); else None."""
        if access.text is None or self.compiled(access).kind != "listing":
            return None
        return None if self.plain_shape(access.dataset_id) is None else self.candidates(access)

    def plain_values_of(self, dataset_id: int, unit: Unit) -> Values | None:
        """A known partition's values (see :meth:`listed_values`) when the dataset has a
        :meth:`plain_shape` and none of them is null, else None."""
        if unit is None or self.plain_shape(dataset_id) is None:
            return None
        values = tuple([value for _, value in unit])  # a list first: faster than a generator
        if None in values or self.identifier(dataset_id, unit) is None:
            return None
        return values

    def outputs(self, run: RunRef) -> list[Access]:
        return self._of_run(run, "output")

    def inputs(self, run: RunRef) -> list[Access]:
        return self._of_run(run, "input")

    def _of_run(self, run: RunRef, direction: str) -> list[Access]:
        key = (run.run_id, direction)
        found = self._by_run.get(key)
        if found is None:
            found = [
                Access(run, dataset_id, direction, text, self._parsed)
                for dataset_id, text in self.db.execute(
                    "SELECT dataset_id, condition FROM accesses WHERE run_id = ? AND "
                    "direction = ? ORDER BY dataset_id",
                    key,
                )
            ]
            self._by_run[key] = found
        return found

    def _access(self, row: tuple[Any, ...], dataset_id: int, direction: str) -> Access:
        return Access(RunRef(*row[:6]), dataset_id, direction, row[6], self._parsed)

    def overlap(self, access: Access, unit: Unit) -> bool | None:
        """May ``access`` select rows of ``unit``: yes, no, or unknown (None)."""
        if access.text is None:
            return True  # a whole-dataset access overlaps everything
        if unit is None:
            return not lists_no_partition(access.condition)
        tree = self.compiled(access)
        try:
            return self._evaluate(tree, access.dataset_id, unit)
        except (ValueError, TypeError):
            return None  # a condition this version cannot evaluate: it may select anything

    def compiled(self, access: Access) -> Node:
        """The access's condition as a tree :meth:`_evaluate` walks, made once per text."""
        assert access.text is not None
        found = self._compiled.get(access.text)
        if found is None:
            found = self._compiled[access.text] = compile_condition(access.condition, self._serials)
        return found

    def _evaluate(self, tree: Node, dataset_id: int, unit: Dimensions) -> bool | None:
        """Three-valued, as :func:`partition_overlap` decides it; raises as it raises."""
        if tree.kind == "both":
            left, right = (self._evaluate(part, dataset_id, unit) for part in tree.parts)
            if tree.is_and:
                return False if False in (left, right) else (True if left and right else None)
            return True if True in (left, right) else (False if left is right is False else None)
        if tree.kind == "listing":
            assert tree.listing is not None
            quick = tree.listing.overlap(unit)
            if quick is UNDECIDED and tree.listing.misses(unit):
                quick = False  # rows of a coarser partition no listed one is inside
            if quick is not UNDECIDED:
                return quick  # type: ignore[return-value]
        # Comparisons depend only on the columns they name: the partitions that agree on those
        # share one answer (a range of days: every country's partition of a day).
        seen = unit if tree.fields is None else tuple(p for p in unit if p[0] in tree.fields)
        key = (tree.serial, dataset_id, seen)
        found: bool | Exception | None = self._overlaps.get(key, UNDECIDED)
        if found is UNDECIDED:
            values = dict(unit)
            if tree.kind == "compared":
                found = quick_overlap(tree.node, values)
        if found is UNDECIDED:
            path = self.partition_path(dataset_id, unit) if tree.kind == "other" else None
            try:
                found = partition_overlap(tree.node, values, path=path)
            except (ValueError, TypeError) as error:
                found = error
        self._overlaps[key] = found
        if isinstance(found, Exception):
            raise found
        return found

    def candidates(self, access: Access) -> frozenset[Values] | None:
        """When the access's condition narrows the known partitions it may select to some it
        lists: the values of those (in the order of :meth:`plain_shape`'s columns; known or
        not; a known partition not among them it does not select). None: any known partition
        may be selected."""
        assert access.text is not None
        key = (access.text, access.dataset_id)
        if key not in self._candidate_sets:
            found = self._candidates(self.compiled(access), access.dataset_id)
            self._candidate_sets[key] = None if found is None else frozenset(found)
        return self._candidate_sets[key]

    def agreeing(
        self, units: tuple[tuple[Unit, Label], ...], fields: frozenset[str] | None
    ) -> list[list[tuple[Unit, Label]]]:
        """The units in groups that agree on the given columns (the whole dataset, None, in a
        group of its own): what a comparison of those columns decides alike. Asked for each
        read of a dataset, with the same units (the same tuple: hashing it each time would
        cost more than the rest of a read's check): made once."""
        last_units, last_fields, found = self._agreeing
        if units is last_units and fields == last_fields:
            return found
        groups: dict[Any, list[tuple[Unit, Label]]] = {}
        for unit, label in units:
            seen = None if unit is None else tuple(p for p in unit if p[0] in (fields or ()))
            groups.setdefault((unit is None, seen), []).append((unit, label))
        found = list(groups.values())
        self._agreeing = (units, fields, found)
        return found

    def _candidates(self, tree: Node, dataset_id: int) -> frozenset[Values] | None:
        if tree.kind == "listing":
            assert tree.listing is not None
            shape = self.plain_shape(dataset_id)
            return None if shape is None else tree.listing.values_in(shape)
        if tree.kind != "both":
            return None
        left, right = (self._candidates(part, dataset_id) for part in tree.parts)
        if not tree.is_and:
            return None if left is None or right is None else left | right
        # AND: outside one side's partitions that side is false, so AND is false, unless the
        # other side cannot be evaluated (then partition_overlap raises: unknown).
        for narrow, other in ((left, tree.parts[1]), (right, tree.parts[0])):
            if narrow is not None and self._evaluable(other):
                return narrow
        return None

    def plain_shape(self, dataset_id: int) -> tuple[str, ...] | None:
        """The columns of every known partition of the dataset, when they all have the same
        ones and each column's values compare as their text (all text, or all ISO dates; or
        null): then a partition list selects exactly the known partitions it names. Every
        partition any condition on the dataset lists is known, so this holds for those too."""
        if dataset_id in self._plain:
            return self._plain[dataset_id]
        shapes = self.shapes(dataset_id)
        found = None
        if len(shapes) == 1:
            (shape,) = shapes
            kinds = self.kinds(dataset_id)
            if all(compares_as_text(kinds.get(column, frozenset())) for column in shape):
                found = shape
        self._plain[dataset_id] = found
        return found

    def _evaluable(self, tree: Node) -> bool:
        """Whether evaluating the tree never raises, whatever the partition (a well-formed
        condition of partition lists and comparisons)."""
        if tree.kind == "both":
            return all(self._evaluable(part) for part in tree.parts)
        if tree.kind == "listing":
            return True
        if tree.kind == "compared":
            try:
                partition_overlap(tree.node, {})
            except (ValueError, TypeError):
                return False
            return True
        return False

    def shapes(self, dataset_id: int) -> frozenset[tuple[str, ...]]:
        """The sets of partition columns of the dataset's known partitions."""
        found = self._shapes.get(dataset_id)
        if found is None:
            found = self._shapes[dataset_id] = frozenset(
                tuple(json.loads(text))
                for (text,) in self.db.execute(
                    "SELECT columns FROM partition_columns WHERE dataset_id = ?", (dataset_id,)
                )
            )
        return found

    def kinds(self, dataset_id: int) -> dict[str, frozenset[str]]:
        """How the values of each partition column of the dataset compare (see ingest)."""
        found = self._kinds.get(dataset_id)
        if found is None:
            by_column: dict[str, set[str]] = {}
            for column, kind in self.db.execute(
                "SELECT column_name, kind FROM partition_kinds WHERE dataset_id = ?", (dataset_id,)
            ):
                by_column.setdefault(column, set()).add(kind)
            found = self._kinds[dataset_id] = {k: frozenset(v) for k, v in by_column.items()}
        return found

    def identifier(self, dataset_id: int, unit: Unit) -> str | None:
        """The directory of a known partition ("" when it has none), None when not known."""
        if unit is None:
            return None
        known = self._known.get(dataset_id)
        if known is not None:
            if unit not in known:
                return None
            return known[unit] or ""
        identifiers = self._identifiers.get(dataset_id)
        if identifiers is None:
            identifiers = self._identifiers[dataset_id] = {}
        if unit not in identifiers:
            row = self.db.execute(
                "SELECT identifier FROM partitions WHERE dataset_id = ? AND dimensions = ?",
                (dataset_id, canonical_unit(unit)),
            ).fetchone()
            identifiers[unit] = None if row is None else (row[0] or "")
        return identifiers[unit]

    def look_up(self, dataset_id: int, units: Iterable[Unit]) -> None:
        """Have :meth:`identifier` know the units, found in one query rather than one each."""
        if dataset_id in self._known:
            return
        identifiers = self._identifiers.get(dataset_id)
        if identifiers is None:
            identifiers = self._identifiers[dataset_id] = {}
        wanted = {
            canonical_unit(unit): unit
            for unit in units
            if unit is not None and unit not in identifiers
        }
        if not wanted:
            return
        for unit in wanted.values():
            identifiers[unit] = None
        ids = self._ids.setdefault(dataset_id, {})
        for text, identifier, partition_id in partitions_keyed(self.db, dataset_id, wanted):
            unit = wanted[text]
            identifiers[unit] = identifier or ""
            ids[unit] = partition_id

    def partition_path(self, dataset_id: int, unit: Dimensions) -> str | None:
        """The partition's directory, to decide location conditions; None when unknown."""
        dataset = self.dataset(dataset_id)
        identifier = self.identifier(dataset_id, unit) or str(
            PartitionRef(self.in_order(dataset_id, unit))
        )
        if dataset.namespace == "file":
            return dataset.name.rstrip("/") + "/" + identifier
        if "://" in dataset.namespace:
            return f"{str(dataset).rstrip('/')}/{identifier}"
        return None

    def expand(self, dataset_id: int, dimensions: Mapping[str, str | None]) -> list[Unit]:
        """The known partitions inside the given one (itself, or finer ones), else itself."""
        itself = dimensions_of(dimensions)
        shape = tuple(name for name, _ in itself)
        if plain_values(dimensions.values()) and all(
            not set(shape) < set(known) for known in self.shapes(dataset_id)
        ):
            # Values of text and dates are equal exactly when their text is (partition_overlap
            # compares them typed), and no known partition is finer: it is itself.
            return [itself]
        coarser = self._coarser(dataset_id, itself)
        if coarser is not None:
            return list(coarser) if coarser else [itself]
        listed = {"type": "partition", "partitions": [{"dimensions": dict(dimensions)}]}
        inside = []
        for known in self.known(dataset_id):
            try:
                if partition_overlap(listed, dict(known)) is True:
                    inside.append(known)
            except (ValueError, TypeError):
                continue
        return list(inside) if inside else [itself]

    def _coarser(self, dataset_id: int, itself: Dimensions) -> list[Dimensions] | None:
        """The known partitions inside a partition of some of the columns of a dataset with a
        :meth:`plain_shape` (a day of partitions by day and country), found by SQLite: those
        whose values of its columns are its values (see ``_narrowing.inside``); None: not such
        a partition, or the dataset's partitions are read already."""
        shape = self.plain_shape(dataset_id)
        if shape is None or dataset_id in self._known:
            return None
        wheres = inside(shape, itself)
        return None if wheres is None else self._known_where(dataset_id, shape, wheres)

    def _known_where(
        self, dataset_id: int, shape: tuple[str, ...], wheres: list[Where]
    ) -> list[Dimensions]:
        """The known partitions that SQL conditions keep (``_narrowing.partitions_where``);
        their identifiers are known to :meth:`identifier` after."""
        found = []
        identifiers = self._identifiers.setdefault(dataset_id, {})
        ids = self._ids.setdefault(dataset_id, {})
        for unit, identifier, partition_id in partitions_where(self.db, dataset_id, shape, wheres):
            identifiers[unit] = identifier or ""
            ids[unit] = partition_id
            found.append(unit)
        return found

    def _within_dates(
        self, access: Access, shape: tuple[str, ...], by_dates: bool = False
    ) -> list[Dimensions] | None:
        """The known partitions outside none of the date ranges (``_bounds``) the access's
        condition keeps a partition column of ISO dates in, found by SQLite; None when it
        keeps none in a range, or the dataset's partitions are read already (with ``by_dates``,
        those found in memory then). A partition left out is one the condition does not select
        (``outside()``), so evaluating the condition on these gives what it gives on all."""
        loaded = access.dataset_id in self._known
        if loaded and not by_dates:
            return None
        bounds = self._bounds.get(access.text or "")
        if bounds is None:
            bounds = self._bounds[access.text or ""] = date_bounds(access.condition)
        if loaded:
            index = self._dated.get(access.dataset_id)
            if index is None:
                index = self._dated[access.dataset_id] = DateIndex(
                    list(self._known[access.dataset_id])
                )
            return index.within(shape, bounds, self.kinds(access.dataset_id))
        wheres = within_dates(shape, bounds, self.kinds(access.dataset_id))
        return None if wheres is None else self._known_where(access.dataset_id, shape, wheres)

    def whole_units(self, dataset_id: int) -> list[Unit]:
        """The whole dataset as units: its known partitions, or None when it has none."""
        known = list(self.known(dataset_id))
        return list(known) if known else [None]

    def written(self, access: Access, label: Label) -> list[tuple[Unit, Label]]:
        """The parts of its dataset a write covers, each labelled."""
        if access.condition is None:
            return [(None, label)]
        listed = only_partitions(access.condition)
        if listed is not None:
            units: dict[Unit, Label] = {}
            shape = self.plain_shape(access.dataset_id)
            for dimensions in listed:
                if shape is not None and tuple(dimensions) == shape:
                    # A partition of the columns of every known one (in order, as canonical
                    # JSON has them), listed: known, its values text or ISO dates
                    # (plain_shape), so expand() gives itself.
                    values = tuple(dimensions.values())
                    if all_text(values):
                        units[tuple(zip(shape, values, strict=True))] = label
                        continue
                if (
                    shape is not None
                    and len(dimensions) == len(shape)
                    and all_text(dimensions.values())
                ):
                    itself = dimensions_of(dimensions)
                    if tuple(column for column, _ in itself) == shape:
                        units[itself] = label  # as above, its columns in another order
                        continue
                for unit in self.expand(access.dataset_id, dimensions):
                    units[unit] = label
            return list(units.items())
        covered: list[tuple[Unit, Label]] = []
        for unit, found in self.selected(access):
            covered.append((unit, label if found else "possible"))
        # A condition that selects no known partition wrote somewhere nobody listed.
        return covered or [(None, "possible")]

    def read_units(self, access: Access) -> list[tuple[Unit, Label]]:
        """The parts of its dataset a read may cover, each labelled."""
        if access.condition is None:
            return [(unit, "definite") for unit in self.whole_units(access.dataset_id)]
        covered: list[tuple[Unit, Label]] = [
            (unit, "definite" if found else "possible") for unit, found in self.selected(access)
        ]
        if not covered and not self.shapes(access.dataset_id):
            covered.append((None, "possible"))
        return covered

    def selected(
        self, access: Access, *, by_dates: bool = False
    ) -> Iterator[tuple[Dimensions, bool | None]]:
        """The known partitions the access's condition may select, each with its overlap:
        True (yes) or None (unknown). ``by_dates``: narrow to the partitions within its date
        ranges with SQLite even when the dataset's partitions are read already (for a query
        that evaluates many accesses, each on a few partitions)."""
        tree = self.compiled(access)
        if (
            tree.kind == "listing"
            and self.candidates(access) is not None
            and self.plain_shape(access.dataset_id) is not None
        ):
            # Those _may_select() gives are the known partitions it lists: each selected.
            for unit in self._may_select(access, by_dates):
                yield unit, True
            return
        # Comparisons decide alike for partitions that agree on the columns they name.
        fields = tree.fields if tree.kind == "compared" else None
        answers: dict[Dimensions, bool | None] = {}
        for unit in self._may_select(access, by_dates):
            if fields is None:
                found = self.overlap(access, unit)
            else:
                seen = tuple(pair for pair in unit if pair[0] in fields)
                if seen not in answers:
                    answers[seen] = self.overlap(access, unit)
                found = answers[seen]
            if found is not False:
                yield unit, found

    def _may_select(self, access: Access, by_dates: bool = False) -> list[Dimensions]:
        """The known partitions to evaluate the access's condition on: those it lists when it
        narrows to them, else all, in the order of :meth:`known`."""
        found = self.candidates(access)
        shape = self.plain_shape(access.dataset_id)
        if shape is None:
            return list(self.known(access.dataset_id))
        if found is None:
            within = self._within_dates(access, shape, by_dates)
            return list(self.known(access.dataset_id)) if within is None else within
        # strict=False: each listed tuple has the shape's columns (Listing), and it is faster.
        units = [tuple(zip(shape, values, strict=False)) for values in found]
        self.look_up(access.dataset_id, units)  # in one query, not one each
        return sorted(u for u in units if self.identifier(access.dataset_id, u) is not None)

    def partition_refs(self, dataset_id: int, units: Iterable[Unit]) -> tuple[PartitionRef, ...]:
        """The units that are partitions (not None), as :class:`PartitionRef`, their columns
        and their order by the dataset's :meth:`column_order`."""
        made = self._refs.get(dataset_id)
        if made is None:
            made = self._refs[dataset_id] = {}
        found = []
        nulls = False
        for unit in units:
            if unit is None:
                continue
            made_ref = made.get(unit)
            if made_ref is None:
                # One object per partition and query: an answer lists many partitions more
                # than once (what a run read, and what to recompute).
                shown = self.in_order(dataset_id, unit)
                ref = PartitionRef(shown, self.identifier(dataset_id, unit) or None)
                made_ref = made[unit] = (ref, None in [value for _, value in shown])
            found.append(made_ref[0])
            nulls = nulls or made_ref[1]
        # Without a null, the partitions order as sort_key() orders them (and faster).
        found.sort(key=_shown_key if nulls else _shown)
        return tuple(found)

    def partition_set(self, dataset_id: int, units: Mapping[Unit, Label]) -> PartitionSet:
        def refs(label: Label) -> tuple[PartitionRef, ...]:
            return self.partition_refs(
                dataset_id, (u for u, found in units.items() if found == label)
            )

        return PartitionSet(
            self.dataset(dataset_id), units.get(None), refs("definite"), refs("possible")
        )


def _shown(ref: PartitionRef) -> Dimensions:
    return ref.dimensions


def _shown_key(ref: PartitionRef) -> tuple[tuple[str, bool, str], ...]:
    return sort_key(ref.dimensions)


def region(graph: Graph, dataset_id: int, partition: dict[str, str | None] | None) -> list[Unit]:
    """The units a query asks about: the known partitions inside ``partition`` (see
    :meth:`Graph.expand`), or the whole dataset for None."""
    if partition is None:
        return [None]
    return graph.expand(dataset_id, partition)


def write_overlap(graph: Graph, write: Access, unit: Unit) -> bool | None:
    """May ``write`` have written ``unit``: as :meth:`Graph.overlap`, except that a write by
    a condition covers the whole dataset only possibly (never, if it lists no partition)."""
    if unit is None and write.condition is not None:
        return False if lists_no_partition(write.condition) else None
    return graph.overlap(write, unit)
