"""Whether a read (or write) condition may select rows of a partition, and so which known
partitions an access covers: the question every lineage query reduces to.

It is answered by :func:`openlineage_subset.partition_overlap` in three values; unknown is
never dropped, it makes the answer *possible* instead of *definite* (docs/lineage.md):

- a whole-dataset read or write overlaps everything; a partition list or a location is exact;
- a write's partitions are those it lists; a write by another condition covers the known
  partitions of its dataset that the condition may select (all of them for a whole write).

A condition is compiled once per query into a tree (``_conditions``); the answers are kept by
the columns a comparison names, so that the partitions agreeing on those share one.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from openlineage_subset import partition_overlap
from openlineage_subset.lineage.engine._narrowing import Bound
from openlineage_subset.lineage.engine._partition_catalog import PartitionCatalog
from openlineage_subset.lineage.engine._timeline import Access, Timeline
from openlineage_subset.lineage.model import (
    UNDECIDED,
    ConditionNode,
    Dimensions,
    Label,
    Side,
    Unit,
    Values,
    all_text,
    canonical_unit,
    compile_condition,
    date_bounds,
    dimensions_of,
    lists_no_partition,
    only_partitions,
    quick_overlap,
)

__all__ = ["Evaluation"]


class Evaluation:
    """Evaluates the conditions of one query's accesses on its dataset's partitions."""

    def __init__(self, catalog: PartitionCatalog, timeline: Timeline) -> None:
        self.catalog = catalog
        self.timeline = timeline
        self._overlaps: dict[tuple[int, int, Unit], bool | Exception | None] = {}
        self._compiled: dict[str, ConditionNode] = {}
        self._serials = itertools.count(1)
        self._candidate_sets: dict[tuple[str, int], frozenset[Values] | None] = {}
        self._agreeing: tuple[Any, Any, list[list[tuple[Unit, Label]]]] = ((), None, [])
        self._bounds: dict[str, dict[str, Bound]] = {}
        self._by_values: dict[int, tuple[object, dict[Values, Dimensions]]] = {}

    def seen(self, dataset_id: int, units: Iterable[Unit]) -> bool:
        """Whether some recorded run read or wrote any of the units, or may have: False only
        when every read and every write of the dataset leaves each unit out."""
        units = list(units)
        if None in units:
            return True  # the whole dataset: some run read or wrote it, or it would be unknown
        partitions = self.catalog.of(dataset_id)
        partitions.look_up(units)
        if any(partitions.identifier(unit) is not None for unit in units):
            return True  # a known partition: some read or write lists it
        # A partition no run listed (mistyped, not written yet): the reads and writes that only
        # list partitions list none of it, nor do the reads whose date ranges leave it out
        # (Timeline.touching, when indexed); the others are asked.
        return any(
            self._may_touch(access, unit)
            for side in Side
            for access in self.timeline.touching(dataset_id, side, units)
            for unit in units
        )

    def _may_touch(self, access: Access, unit: Unit) -> bool:
        if self.overlap(access, unit) is not False:
            return True
        # A location is compared with the partition's directory: its columns in an order no
        # identifier or location told column_order() are a guess, not sure enough for "no".
        if unit is None or len(unit) < 2 or '"location"' not in (access.text or ""):
            return False
        placed = self.catalog.of(access.dataset_id).placed()
        return not all(column in placed for column, _ in unit)

    def listed_values(self, access: Access) -> frozenset[Values] | None:
        """The values of the partitions the access's condition lists, when it is partition
        lists of the dataset's ``plain_shape``'s columns: then it overlaps a known
        partition without nulls exactly when that is among them (as ``Listing.overlap``
        decides); else None."""
        if access.text is None or self.compiled(access).kind != "listing":
            return None
        if self.catalog.of(access.dataset_id).plain_shape() is None:
            return None
        return self.candidates(access)

    def plain_values_of(self, dataset_id: int, unit: Unit) -> Values | None:
        """A known partition's values (see :meth:`listed_values`) when the dataset has a
        ``plain_shape`` and none of them is null, else None."""
        if unit is None or self.catalog.of(dataset_id).plain_shape() is None:
            return None
        values = tuple([value for _, value in unit])  # a list first: faster than a generator
        if None in values or self.catalog.of(dataset_id).identifier(unit) is None:
            return None
        return values

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

    def write_overlap(self, write: Access, unit: Unit) -> bool | None:
        """May ``write`` have written ``unit``: as :meth:`overlap`, except that a write by a
        condition covers the whole dataset only possibly (never, if it lists no partition)."""
        if unit is None and write.condition is not None:
            return False if lists_no_partition(write.condition) else None
        return self.overlap(write, unit)

    def compiled(self, access: Access) -> ConditionNode:
        """The access's condition as a tree :meth:`_evaluate` walks, made once per text."""
        assert access.text is not None
        found = self._compiled.get(access.text)
        if found is None:
            found = self._compiled[access.text] = compile_condition(access.condition, self._serials)
        return found

    def _evaluate(self, tree: ConditionNode, dataset_id: int, unit: Dimensions) -> bool | None:
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
            path = (
                self.catalog.of(dataset_id).partition_path(unit) if tree.kind == "other" else None
            )
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
        lists: the values of those (in the order of ``plain_shape``'s columns; known or
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

    def _candidates(self, tree: ConditionNode, dataset_id: int) -> frozenset[Values] | None:
        if tree.kind == "listing":
            assert tree.listing is not None
            shape = self.catalog.of(dataset_id).plain_shape()
            return None if shape is None else tree.listing.values_in(shape)
        if tree.kind != "both":
            return None
        left, right = (self._candidates(part, dataset_id) for part in tree.parts)
        if not tree.is_and:
            return None if left is None or right is None else left | right
        # AND: outside one side's partitions that side is false, so AND is false, unless the
        # other side cannot be evaluated (then partition_overlap raises: unknown).
        for narrow, other in ((left, tree.parts[1]), (right, tree.parts[0])):
            if narrow is not None and _evaluable(other):
                return narrow
        return None

    def written(self, access: Access, label: Label) -> list[tuple[Unit, Label]]:
        """The parts of its dataset a write covers, each labelled."""
        if access.condition is None:
            return [(None, label)]
        listed = only_partitions(access.condition)
        if listed is not None:
            units: dict[Unit, Label] = {}
            shape = self.catalog.of(access.dataset_id).plain_shape()
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
                for unit in self.catalog.of(access.dataset_id).expand(dimensions):
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
            return [(unit, "definite") for unit in self.catalog.of(access.dataset_id).whole_units()]
        covered: list[tuple[Unit, Label]] = [
            (unit, "definite" if found else "possible") for unit, found in self.selected(access)
        ]
        if not covered and not self.catalog.of(access.dataset_id).shapes():
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
            and self.catalog.of(access.dataset_id).plain_shape() is not None
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
        narrows to them, else all, in the order of ``known``."""
        catalog = self.catalog
        found = self.candidates(access)
        shape = catalog.of(access.dataset_id).plain_shape()
        if shape is None:
            return list(catalog.of(access.dataset_id).known())
        if found is None:
            within = self._within_dates(access, shape, by_dates)
            return list(catalog.of(access.dataset_id).known()) if within is None else within
        # strict=False: each listed tuple has the shape's columns (Listing), and it is faster.
        if catalog.of(access.dataset_id).restricted():  # those of the few it knows, in memory
            by_values = self._known_values(access.dataset_id)
            return sorted(
                [by_values[values] for values in found if values in by_values], key=canonical_unit
            )
        units = [tuple(zip(shape, values, strict=False)) for values in found]
        partitions = catalog.of(access.dataset_id)
        partitions.look_up(units)  # in one query, not one each
        # By their key, as known orders them (a value may be null: units do not compare).
        return sorted(
            (u for u in units if partitions.identifier(u) is not None), key=canonical_unit
        )

    def _known_values(self, dataset_id: int) -> dict[Values, Dimensions]:
        """The dataset's known partitions (all read) by their values, in the order of the
        columns of its ``plain_shape``: made once per query."""
        known = self.catalog.of(dataset_id).known()
        made = self._by_values.get(dataset_id)
        if made is None or made[0] is not known:
            made = self._by_values[dataset_id] = (
                known,
                {tuple([value for _, value in unit]): unit for unit in known},
            )
        return made[1]

    def _within_dates(
        self, access: Access, shape: tuple[str, ...], by_dates: bool
    ) -> list[Dimensions] | None:
        """The known partitions within the date ranges of the access's condition (see
        ``PartitionCatalog.within_dates``), its ranges read once per condition."""
        if self.catalog.of(access.dataset_id).loaded() and not by_dates:
            return None
        bounds = self._bounds.get(access.text or "")
        if bounds is None:
            bounds = self._bounds[access.text or ""] = date_bounds(access.condition)
        return self.catalog.of(access.dataset_id).within_dates(shape, bounds, by_dates)


def _evaluable(tree: ConditionNode) -> bool:
    """Whether evaluating the tree never raises, whatever the partition (a well-formed
    condition of partition lists and comparisons)."""
    if tree.kind == "both":
        return all(_evaluable(part) for part in tree.parts)
    if tree.kind == "listing":
        return True
    if tree.kind == "compared":
        try:
            partition_overlap(tree.node, {})
        except (ValueError, TypeError):
            return False
        return True
    return False
