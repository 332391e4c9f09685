"""The lineage queries: impact, provenance, history and partitions of a dataset.

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
import collections
import dataclasses
import datetime as _dt
import difflib
import functools
import json
import operator
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from openlineage_subset._evaluate import _guessed_type, partition_overlap
from openlineage_subset._issues import SubsetDocumentError
from openlineage_subset._render import render
from openlineage_subset.lineage._model import (
    AffectedRun,
    DatasetRef,
    Dimensions,
    HistoryEntry,
    HistoryReport,
    ImpactReport,
    Label,
    PartitionRef,
    PartitionSet,
    PartitionsReport,
    PartitionState,
    ProvenanceInput,
    ProvenanceReport,
    ProvenanceStep,
    RunRef,
    stronger,
)
from openlineage_subset.lineage._store import LineageStore
from openlineage_subset.lineage._time import normal_time

# Conditions here are parsed JSON: their objects are dicts, and isinstance(node, dict) skips the
# abstract class check of Mapping (a third of a microsecond, tens of thousands of times a query).
Values = tuple[str | None, ...]
"""A partition's values, in the order of its sorted columns."""
Unit = Dimensions | None
"""A part of a dataset a query tracks: one partition, or None for the whole dataset."""
_NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_SIMPLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SHOWN_CANDIDATES = 10


class LineageQueryError(ValueError):
    """A query that cannot be answered as asked: an unknown or ambiguous dataset, a bad time."""


@dataclasses.dataclass(frozen=True)
class _Access:
    run: RunRef
    dataset_id: int
    direction: str
    text: str | None  # the condition's canonical JSON; None: the whole dataset

    @functools.cached_property
    def condition(self) -> Any:
        """The condition (JSON), read when first asked: most accesses a query loads are only
        compared by time."""
        return None if self.text is None else json.loads(self.text)

    @property
    def rendered(self) -> str | None:
        return _rendered(self.condition)


def _rendered(condition: Any) -> str | None:
    if condition is None:
        return None
    try:
        return render(condition)
    except (SubsetDocumentError, ValueError, TypeError):
        return json.dumps(condition)


class _Graph:
    """Reads the database for one query, caching what a query asks many times."""

    def __init__(self, store: LineageStore) -> None:
        self.db = store.connection
        self._datasets: dict[int, DatasetRef] = {}
        self._known: dict[int, dict[Dimensions, str | None]] = {}
        self._accesses: dict[tuple[int, str], list[_Access]] = {}
        self._starts: dict[tuple[int, str], list[str]] = {}
        self._by_run: dict[tuple[str, str], list[_Access]] = {}
        self._overlaps: dict[tuple[int, int, Unit], bool | Exception | None] = {}
        self._compiled: dict[str, _Node] = {}
        self._serial = 0
        self._shapes: dict[int, frozenset[tuple[str, ...]]] = {}
        self._kinds: dict[int, dict[str, frozenset[str]]] = {}
        self._identifiers: dict[tuple[int, Dimensions], str | None] = {}
        self._candidate_sets: dict[tuple[str, int], frozenset[Values] | None] = {}
        self._agreeing: tuple[Any, Any, list[list[tuple[Unit, Label]]]] = ((), None, [])

    def resolve(self, name: str, namespace: str | None) -> int:
        """The id of the dataset called ``name``, or whose name ends with ``/name``."""
        if not isinstance(name, str) or not name:
            raise LineageQueryError("name the dataset: its name, or the end of it after a '/'")
        suffix = "/" + name.lstrip("/")
        rows = self.db.execute(
            "SELECT dataset_id, namespace, name FROM datasets WHERE (name = ? OR "
            "(length(name) > ? AND substr(name, -?) = ?)) AND (? IS NULL OR namespace = ?) "
            "ORDER BY namespace, name",
            (name, len(suffix), len(suffix), suffix, namespace, namespace),
        ).fetchall()
        exact = [row for row in rows if row[2] == name]
        found = exact if exact else rows
        if len(found) == 1:
            return int(found[0][0])
        where = f" in namespace {namespace!r}" if namespace is not None else ""
        if found:
            listed = "\n  ".join(f"{ns} {nm}" for _, ns, nm in found[:_SHOWN_CANDIDATES])
            more = len(found) - _SHOWN_CANDIDATES
            raise LineageQueryError(
                f"{name!r} names {len(found)} datasets{where}; give more of the name, or "
                f"--namespace:\n  {listed}" + (f"\n  and {more} more" if more > 0 else "")
            )
        names = [
            f"{ns} {nm}"
            for ns, nm in self.db.execute(
                "SELECT namespace, name FROM datasets WHERE ? IS NULL OR namespace = ? "
                "ORDER BY namespace, name",
                (namespace, namespace),
            )
        ]
        close = difflib.get_close_matches(name, names, n=5, cutoff=0.3) or names[:5]
        hint = ("; datasets like it:\n  " + "\n  ".join(close)) if close else ""
        raise LineageQueryError(
            f"no dataset named {name!r} (or ending in {suffix!r}){where} in the lineage "
            f"database{hint or ': it holds no dataset yet; ingest events first'}"
        )

    def dataset(self, dataset_id: int) -> DatasetRef:
        found = self._datasets.get(dataset_id)
        if found is None:
            namespace, name = self.db.execute(
                "SELECT namespace, name FROM datasets WHERE dataset_id = ?", (dataset_id,)
            ).fetchone()
            found = self._datasets[dataset_id] = DatasetRef(namespace, name)
        return found

    def known(self, dataset_id: int) -> dict[Dimensions, str | None]:
        """The dataset's known partitions (listed by some read or write), with identifiers."""
        found = self._known.get(dataset_id)
        if found is None:
            found = {}
            shapes = self.shapes(dataset_id)
            (shape,) = shapes if len(shapes) == 1 else ((),)
            if shape and all(_SIMPLE_NAME.fullmatch(column) for column in shape):
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
                    found[_key(json.loads(text))] = identifier
            self._known[dataset_id] = found
        return found

    def accesses(self, dataset_id: int, direction: str) -> list[_Access]:
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

    def readers_after(self, dataset_id: int, after: str | None, inclusive: bool) -> list[_Access]:
        """Reads of the dataset by runs started after ``after`` (None: any time)."""
        reads = self.accesses(dataset_id, "input")
        if after is None:
            return reads
        starts = self._starts[(dataset_id, "input")]
        cut = bisect.bisect_left if inclusive else bisect.bisect_right
        return reads[cut(starts, after) :]

    def readers_of(
        self, dataset_id: int, units: Iterable[Unit], after: str | None, inclusive: bool
    ) -> list[_Access]:
        """:meth:`readers_after`, less the reads that only list partitions and list none of
        ``units``: known partitions of a dataset with a :meth:`plain_shape`, which such a read
        does not select (found with the ``access_partitions`` index), and the reads whose date
        ranges (``access_bounds``) leave every unit out. In the same order."""
        units = list(units)
        wanted = json.dumps([_canonical_unit(unit) for unit in units if unit is not None])
        since = "r.started_at >= ?" if inclusive else "r.started_at > ?"
        rows = self.db.execute(
            "SELECT r.run_id, r.job_namespace, r.job_name, r.status, r.started_at, "
            "r.ended_at, a.condition FROM accesses a JOIN runs r USING (run_id) "
            f"WHERE a.dataset_id = ? AND a.direction = 'input' AND (? IS NULL OR {since}) "
            "AND (a.listed = 0 OR a.access_id IN (SELECT l.access_id FROM partitions p "
            "JOIN access_partitions l USING (partition_id) WHERE p.dataset_id = ? "
            "AND p.dimensions IN (SELECT value FROM json_each(?)))) "
            # A range below the units' least date of a column, or above their greatest.
            "AND NOT EXISTS (SELECT 1 FROM access_bounds b JOIN json_each(?) u "
            "ON u.key = b.column_name WHERE b.access_id = a.access_id "
            "AND (b.high < json_extract(u.value, '$[0]') "
            "OR b.low > json_extract(u.value, '$[1]'))) "
            "ORDER BY r.started_at, r.run_id",
            (dataset_id, after, after, dataset_id, wanted, json.dumps(_date_spans(units))),
        )
        return [self._access(row, dataset_id, "input") for row in rows]

    def outputs(self, run: RunRef) -> list[_Access]:
        return self._of_run(run, "output")

    def inputs(self, run: RunRef) -> list[_Access]:
        return self._of_run(run, "input")

    def _of_run(self, run: RunRef, direction: str) -> list[_Access]:
        key = (run.run_id, direction)
        found = self._by_run.get(key)
        if found is None:
            found = [
                _Access(run, dataset_id, direction, text)
                for dataset_id, text in self.db.execute(
                    "SELECT dataset_id, condition FROM accesses WHERE run_id = ? AND "
                    "direction = ? ORDER BY dataset_id",
                    key,
                )
            ]
            self._by_run[key] = found
        return found

    @staticmethod
    def _access(row: tuple[Any, ...], dataset_id: int, direction: str) -> _Access:
        return _Access(RunRef(*row[:6]), dataset_id, direction, row[6])

    def overlap(self, access: _Access, unit: Unit) -> bool | None:
        """May ``access`` select rows of ``unit``: yes, no, or unknown (None)."""
        if access.text is None:
            return True  # a whole-dataset access overlaps everything
        if unit is None:
            return not _lists_no_partition(access.condition)
        tree = self.compiled(access)
        try:
            return self._evaluate(tree, access.dataset_id, unit)
        except (ValueError, TypeError):
            return None  # a condition this version cannot evaluate: it may select anything

    def compiled(self, access: _Access) -> _Node:
        """The access's condition as a tree :meth:`_evaluate` walks, made once per text."""
        assert access.text is not None
        found = self._compiled.get(access.text)
        if found is None:
            found = self._compiled[access.text] = self._compile(access.condition)
        return found

    def _compile(self, node: Any) -> _Node:
        fields = _compared_fields(node)
        if fields is not None:
            self._serial += 1
            return _Node("compared", node, serial=self._serial, fields=fields)
        if (
            isinstance(node, dict)
            and node.get("type") == "binary"
            and node.get("operator") in ("AND", "OR")
        ):
            left, right = self._compile(node.get("left")), self._compile(node.get("right"))
            return _Node("both", node, node.get("operator") == "AND", (left, right))
        self._serial += 1
        listing = _Listing.of(node) if isinstance(node, dict) else None
        if listing is not None and node.get("type") == "partition":
            return _Node("listing", node, serial=self._serial, listing=listing)
        return _Node("other", node, serial=self._serial)

    def _evaluate(self, tree: _Node, dataset_id: int, unit: Dimensions) -> bool | None:
        """Three-valued, as :func:`partition_overlap` decides it; raises as it raises."""
        if tree.kind == "both":
            left, right = (self._evaluate(part, dataset_id, unit) for part in tree.parts)
            if tree.is_and:
                return False if False in (left, right) else (True if left and right else None)
            return True if True in (left, right) else (False if left is right is False else None)
        if tree.kind == "listing":
            assert tree.listing is not None
            quick = tree.listing.overlap(unit)
            if quick is not _UNDECIDED:
                return quick  # type: ignore[return-value]
        # Comparisons depend only on the columns they name: the partitions that agree on those
        # share one answer (a range of days: every country's partition of a day).
        seen = unit if tree.fields is None else tuple(p for p in unit if p[0] in tree.fields)
        key = (tree.serial, dataset_id, seen)
        found: bool | Exception | None = self._overlaps.get(key, _UNDECIDED)
        if found is _UNDECIDED:
            values = dict(unit)
            if tree.kind == "compared":
                found = _quick_overlap(tree.node, values)
        if found is _UNDECIDED:
            path = self.partition_path(dataset_id, unit) if tree.kind == "other" else None
            try:
                found = partition_overlap(tree.node, values, path=path)
            except (ValueError, TypeError) as error:
                found = error
        self._overlaps[key] = found
        if isinstance(found, Exception):
            raise found
        return found

    def candidates(self, access: _Access) -> frozenset[Values] | None:
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

    def _candidates(self, tree: _Node, dataset_id: int) -> frozenset[Values] | None:
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
        shapes = self.shapes(dataset_id)
        if len(shapes) != 1:
            return None
        (shape,) = shapes
        kinds = self.kinds(dataset_id)
        if all(
            kinds.get(column, _TEXT) <= _TEXT or kinds.get(column, _DATE) <= _DATE
            for column in shape
        ):
            return shape
        return None

    def _evaluable(self, tree: _Node) -> bool:
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
        key = (dataset_id, unit)
        if key not in self._identifiers:
            row = self.db.execute(
                "SELECT identifier FROM partitions WHERE dataset_id = ? AND dimensions = ?",
                (dataset_id, _canonical_unit(unit)),
            ).fetchone()
            self._identifiers[key] = None if row is None else (row[0] or "")
        return self._identifiers[key]

    def look_up(self, dataset_id: int, units: Iterable[Unit]) -> None:
        """Have :meth:`identifier` know the units, found in one query rather than one each."""
        if dataset_id in self._known:
            return
        wanted = {
            _canonical_unit(unit): unit
            for unit in units
            if unit is not None and (dataset_id, unit) not in self._identifiers
        }
        if not wanted:
            return
        for unit in wanted.values():
            self._identifiers[dataset_id, unit] = None
        for text, identifier in self.db.execute(
            "SELECT dimensions, identifier FROM partitions WHERE dataset_id = ? "
            "AND dimensions IN (SELECT value FROM json_each(?))",
            (dataset_id, json.dumps(list(wanted))),
        ):
            self._identifiers[dataset_id, wanted[text]] = identifier or ""

    def partition_path(self, dataset_id: int, unit: Dimensions) -> str | None:
        """The partition's directory, to decide location conditions; None when unknown."""
        dataset = self.dataset(dataset_id)
        identifier = self.identifier(dataset_id, unit) or str(PartitionRef(unit))
        if dataset.namespace == "file":
            return dataset.name.rstrip("/") + "/" + identifier
        if "://" in dataset.namespace:
            return f"{str(dataset).rstrip('/')}/{identifier}"
        return None

    def expand(self, dataset_id: int, dimensions: Mapping[str, str | None]) -> list[Unit]:
        """The known partitions inside the given one (itself, or finer ones), else itself."""
        itself = _key(dimensions)
        shape = tuple(name for name, _ in itself)
        if _plain(dimensions.values()) and all(
            not set(shape) < set(known) for known in self.shapes(dataset_id)
        ):
            # Values of text and dates are equal exactly when their text is (partition_overlap
            # compares them typed), and no known partition is finer: it is itself.
            return [itself]
        listed = {"type": "partition", "partitions": [{"dimensions": dict(dimensions)}]}
        inside = []
        for known in self.known(dataset_id):
            try:
                if partition_overlap(listed, dict(known)) is True:
                    inside.append(known)
            except (ValueError, TypeError):
                continue
        return list(inside) if inside else [itself]

    def whole_units(self, dataset_id: int) -> list[Unit]:
        """The whole dataset as units: its known partitions, or None when it has none."""
        known = list(self.known(dataset_id))
        return list(known) if known else [None]

    def written(self, access: _Access, label: Label) -> list[tuple[Unit, Label]]:
        """The parts of its dataset a write covers, each labelled."""
        if access.condition is None:
            return [(None, label)]
        listed = _only_partitions(access.condition)
        if listed is not None:
            units: dict[Unit, Label] = {}
            for dimensions in listed:
                for unit in self.expand(access.dataset_id, dimensions):
                    units[unit] = label
            return list(units.items())
        covered: list[tuple[Unit, Label]] = []
        for unit, found in self._selected(access):
            covered.append((unit, label if found else "possible"))
        # A condition that selects no known partition wrote somewhere nobody listed.
        return covered or [(None, "possible")]

    def read_units(self, access: _Access) -> list[tuple[Unit, Label]]:
        """The parts of its dataset a read may cover, each labelled."""
        if access.condition is None:
            return [(unit, "definite") for unit in self.whole_units(access.dataset_id)]
        covered: list[tuple[Unit, Label]] = [
            (unit, "definite" if found else "possible") for unit, found in self._selected(access)
        ]
        if not covered and not self.shapes(access.dataset_id):
            covered.append((None, "possible"))
        return covered

    def _selected(self, access: _Access) -> Iterator[tuple[Dimensions, bool | None]]:
        """The known partitions the access's condition may select, each with its overlap:
        True (yes) or None (unknown)."""
        tree = self.compiled(access)
        # Comparisons decide alike for partitions that agree on the columns they name.
        fields = tree.fields if tree.kind == "compared" else None
        answers: dict[Dimensions, bool | None] = {}
        for unit in self._may_select(access):
            if fields is None:
                found = self.overlap(access, unit)
            else:
                seen = tuple(pair for pair in unit if pair[0] in fields)
                if seen not in answers:
                    answers[seen] = self.overlap(access, unit)
                found = answers[seen]
            if found is not False:
                yield unit, found

    def _may_select(self, access: _Access) -> list[Dimensions]:
        """The known partitions to evaluate the access's condition on: those it lists when it
        narrows to them, else all, in the order of :meth:`known`."""
        found = self.candidates(access)
        shape = self.plain_shape(access.dataset_id)
        if found is None or shape is None:
            return list(self.known(access.dataset_id))
        units = (tuple(zip(shape, values, strict=True)) for values in found)
        return sorted(u for u in units if self.identifier(access.dataset_id, u) is not None)

    def partition_set(self, dataset_id: int, units: Mapping[Unit, Label]) -> PartitionSet:
        def refs(label: Label) -> tuple[PartitionRef, ...]:
            return tuple(
                PartitionRef(unit, self.identifier(dataset_id, unit) or None)
                for unit in sorted(u for u, found in units.items() if u is not None)
                if units[unit] == label
            )

        return PartitionSet(
            self.dataset(dataset_id), units.get(None), refs("definite"), refs("possible")
        )


_UNDECIDED: Any = object()


@dataclasses.dataclass(frozen=True)
class _Node:
    """A condition prepared for :meth:`_Graph._evaluate`: ``both`` (AND, OR of two parts),
    ``listing`` (partition lists), ``compared`` (comparisons only: ``fields`` are the columns
    they name), or ``other`` (evaluated as is, with the partition's path)."""

    kind: str
    node: Any
    is_and: bool = False
    parts: tuple[_Node, ...] = ()
    serial: int = 0
    fields: frozenset[str] | None = None
    listing: _Listing | None = None


def _plain(values: Iterable[str | None]) -> bool:
    """Whether partition values compare typed exactly when their text is equal: nulls, text,
    and ISO dates (a text partition value is never read as a number or a date)."""
    return all(
        value is None or (isinstance(value, str) and _kind(value) in _PLAIN) for value in values
    )


_PLAIN = ("string", "date")
_TEXT = frozenset({"string", "null"})
_DATE = frozenset({"date", "null"})


@functools.lru_cache(maxsize=65536)
def _kind(value: str) -> str:
    """How :func:`partition_overlap` types a partition value: bigint, decimal, date or string."""
    return _guessed_type(value)


def _canonical_unit(unit: Dimensions) -> str:
    """The ``partitions.dimensions`` text of a unit: canonical JSON, keys sorted."""
    return _CANONICAL.encode(dict(unit))


# One encoder for every unit: json.dumps with options makes a new one each call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclasses.dataclass(frozen=True)
class _Listing:
    """Partition lists, as sets of listed values, one set per set of columns.

    Decides overlap with a partition by lookup where the text of the values decides it as
    :func:`partition_overlap` does: a listed partition whose values all equal the partition's
    (as text) overlaps it; none does when every listed partition's columns are the
    partition's, and for each such column the partition's value is text (compared as text) or
    an ISO date and every value listed for that column an ISO date (or null) too.
    """

    shapes: tuple[tuple[tuple[str, ...], frozenset[tuple[str | None, ...]]], ...]

    @classmethod
    def of(cls, condition: Any) -> _Listing | None:
        listed = _only_partitions(condition)
        if listed is None:
            return None
        shapes: dict[tuple[str, ...], set[tuple[str | None, ...]]] = {}
        sorted_keys: dict[tuple[str, ...], tuple[str, ...]] = {}
        for dimensions in listed:
            keys = tuple(dimensions)
            shape = sorted_keys.get(keys)
            if shape is None:
                shape = sorted_keys[keys] = tuple(sorted(keys))
            values = tuple(dimensions[column] for column in shape)
            if not all(value is None or isinstance(value, str) for value in values):
                return None
            shapes.setdefault(shape, set()).add(values)
        return cls(tuple((shape, frozenset(values)) for shape, values in shapes.items()))

    @functools.cached_property
    def dates(self) -> frozenset[str]:
        """Columns whose listed values are all ISO dates (or null)."""
        found: set[str] = set()
        other: set[str] = set()
        for shape, listed in self.shapes:
            for values in listed:
                for column, value in zip(shape, values, strict=True):
                    if value is not None and _kind(value) != "date":
                        other.add(column)
                    else:
                        found.add(column)
        return frozenset(found - other)

    def overlap(self, unit: Dimensions) -> object:
        """True, False, or ``_UNDECIDED`` when only :func:`partition_overlap` can tell."""
        values = dict(unit)
        for shape, listed in self.shapes:
            if not all(column in values for column in shape):
                return _UNDECIDED  # a finer partitioning than the partition's: unknown
            if tuple(values[column] for column in shape) in listed:
                return True
        for shape, _ in self.shapes:
            for column in shape:
                value = values[column]
                if value is None:
                    return _UNDECIDED
                kind = _kind(value)
                if kind == "string" or (kind == "date" and column in self.dates):
                    continue
                return _UNDECIDED
        return False

    def values_in(self, shape: tuple[str, ...]) -> frozenset[tuple[str | None, ...]] | None:
        """The listed partitions' values when they all have these columns, else None."""
        if len(self.shapes) == 1 and self.shapes[0][0] == shape:
            return self.shapes[0][1]
        if not self.shapes:
            return frozenset()
        return None


_ORDERS: dict[str, Callable[[str, str], bool]] = {
    "EQUAL": operator.eq,
    "GREATER_THAN": operator.gt,
    "GREATER_EQUAL_THAN": operator.ge,
    "LESS_THAN": operator.lt,
    "LESS_EQUAL_THAN": operator.le,
}


def _quick_overlap(node: Any, values: Mapping[str, str | None]) -> Any:
    """:func:`partition_overlap` of comparisons of columns with ISO-date literals (a range of
    days), for partitions whose values of those columns are ISO dates: such dates compare as
    their text. ``_UNDECIDED`` for any other condition or value, which it leaves to
    :func:`partition_overlap`."""
    kind = node.get("type") if isinstance(node, dict) else None
    if kind == "binary":
        assert isinstance(node, dict)
        operator_name = node.get("operator")
        if operator_name not in ("AND", "OR"):
            return _UNDECIDED
        left = _quick_overlap(node.get("left"), values)
        right = _quick_overlap(node.get("right"), values)
        if _UNDECIDED in (left, right):
            return _UNDECIDED
        if operator_name == "AND":
            return False if False in (left, right) else (True if left and right else None)
        return True if True in (left, right) else (False if left is right is False else None)
    if kind != "compare":
        return _UNDECIDED
    assert isinstance(node, dict)
    compare = _ORDERS.get(node.get("comparison"))  # type: ignore[arg-type]
    field, literal = node.get("left"), node.get("right")
    if (
        compare is None
        or not isinstance(field, dict)
        or not isinstance(literal, dict)
        or field.get("type") != "field"
        or literal.get("type") != "literal"
    ):
        return _UNDECIDED
    name, text = field.get("field"), literal.get("value")
    if not isinstance(name, str) or not name or "." in name or not isinstance(text, str):
        return _UNDECIDED
    if name not in values:
        return None  # a column other than the partition's: unknown
    value = values[name]
    if value is None or _kind(value) != "date" or _kind(text) != "date":
        return _UNDECIDED
    return compare(value, text)


def _date_spans(units: list[Unit]) -> dict[str, list[str]]:
    """The least and the greatest value of each column that every unit has an ISO date in."""
    spans: dict[str, list[str]] | None = None
    for unit in units:
        if unit is None:
            return {}  # the whole dataset: every date
        dates = {
            name: value for name, value in unit if value is not None and _kind(value) == "date"
        }
        if spans is None:
            spans = {name: [value, value] for name, value in dates.items()}
            continue
        for name in list(spans):
            value = dates.get(name)
            if value is None:
                del spans[name]
            else:
                span = spans[name]
                span[0], span[1] = min(span[0], value), max(span[1], value)
    return spans or {}


def _compared_fields(condition: Any) -> frozenset[str] | None:
    """The fields named by a condition made of comparisons (AND, OR) only, else None."""
    names: set[str] = set()
    stack = [condition]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            return None
        kind = node.get("type")
        if kind == "binary":
            stack.extend((node.get("left"), node.get("right")))
        elif kind == "compare":
            for side in (node.get("left"), node.get("right")):
                if isinstance(side, dict) and side.get("type") == "field":
                    if not isinstance(side.get("field"), str):
                        return None
                    names.add(side["field"])
        else:
            return None
    return frozenset(names)


def _key(dimensions: Mapping[str, Any]) -> Dimensions:
    return tuple(
        sorted((str(name), None if v is None else str(v)) for name, v in dimensions.items())
    )


def _lists_no_partition(condition: Any) -> bool:
    return (
        isinstance(condition, dict)
        and condition.get("type") == "partition"
        and condition.get("partitions") == []
    )


def _only_partitions(condition: Any) -> list[Mapping[str, Any]] | None:
    """The dimensions a condition lists when it is partition lists joined by OR, else None."""
    found: list[Mapping[str, Any]] = []
    stack = [condition]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            return None
        if node.get("type") == "binary" and node.get("operator") == "OR":
            stack.extend((node.get("right"), node.get("left")))
        elif node.get("type") == "partition" and isinstance(node.get("partitions"), list):
            for item in node["partitions"]:
                dimensions = item.get("dimensions") if isinstance(item, dict) else None
                if not isinstance(dimensions, dict) or not dimensions:
                    return None
                found.append(dimensions)
        else:
            return None
    return found


def _open(db: str | os.PathLike[str] | LineageStore) -> tuple[LineageStore, bool]:
    if isinstance(db, LineageStore):
        return db, False
    return LineageStore.open(db), True


def _since(since: str | _dt.datetime | None) -> str | None:
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


def _depth(depth: int | None) -> int | None:
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise LineageQueryError(f"depth must be a whole number of at least 1, got {depth!r}")
    return depth


def _partition(partition: Mapping[str, str | None] | None) -> dict[str, str | None] | None:
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


def _region(graph: _Graph, dataset_id: int, partition: dict[str, str | None] | None) -> list[Unit]:
    if partition is None:
        return [None]
    return graph.expand(dataset_id, partition)


def impact(
    db: str | os.PathLike[str] | LineageStore,
    dataset: str,
    *,
    partition: Mapping[str, str | None] | None = None,
    since: str | _dt.datetime | None = None,
    depth: int | None = None,
    namespace: str | None = None,
) -> ImpactReport:
    """What depends on a dataset (or one partition of it): the runs affected, and what to redo.

    The starting region is ``partition`` of ``dataset`` (or the whole dataset), as present from
    ``since`` on (from the first recorded run without it). A run that started then or later and
    read an overlapping part is affected: *definite* when its read condition selects the region
    as far as partition values decide, *possible* when that depends on other columns. What an
    affected run that completed wrote is affected from its completion on, and so on, ``depth``
    run hops at most. ``dataset`` is a dataset name or the end of one after a ``/``;
    ``namespace`` tells apart datasets of one name. Raises :class:`LineageQueryError` for an
    unknown or ambiguous dataset, :class:`LineageDatabaseError` for a database it cannot read.

    The example in docs/lineage.md runs a three-step pipeline end to end.
    """
    region_values = _partition(partition)
    start_time = _since(since)
    limit = _depth(depth)
    store, close = _open(db)
    try:
        graph = _Graph(store)
        start_id = graph.resolve(dataset, namespace)
        start_units = _region(graph, start_id, region_values)
        start = graph.partition_set(start_id, dict.fromkeys(start_units, "definite"))
        runs, backfill = _affected(graph, start_id, start_units, start_time, limit)
    finally:
        if close:
            store.close()
    return ImpactReport(start, start_time, limit, runs, backfill)


@dataclasses.dataclass(frozen=True)
class _Reached:
    """Part of a dataset affected from a time on: what a work item of impact() follows."""

    dataset_id: int
    units: tuple[tuple[Unit, Label], ...]
    after: str | None
    inclusive: bool
    hops: int
    upstream: str | None


def _affected(
    graph: _Graph,
    start_id: int,
    start_units: list[Unit],
    start_time: str | None,
    limit: int | None,
) -> tuple[tuple[AffectedRun, ...], tuple[PartitionSet, ...]]:
    queue = collections.deque(
        [_Reached(start_id, tuple((u, "definite") for u in start_units), start_time, True, 1, None)]
    )
    found: dict[str, AffectedRun] = {}
    backfill: dict[int, dict[Unit, Label]] = {}
    while queue:
        reached = queue.popleft()
        if limit is not None and reached.hops > limit:
            continue
        graph.look_up(reached.dataset_id, (unit for unit, _ in reached.units))
        known: dict[Unit, Values] = {
            unit: tuple(value for _, value in unit)
            for unit, _ in reached.units
            if unit is not None and graph.identifier(reached.dataset_id, unit) is not None
        }
        if graph.plain_shape(reached.dataset_id) is None:
            known = {}
        if known and len(known) == len(reached.units):
            reads = graph.readers_of(reached.dataset_id, known, reached.after, reached.inclusive)
        else:
            reads = graph.readers_after(reached.dataset_id, reached.after, reached.inclusive)
        for read in reads:
            label, matched = _read_label(graph, read, reached.units, known)
            if label is None:
                continue
            previous = found.get(read.run.run_id)
            if previous is not None and stronger(previous.label, label) == previous.label:
                continue  # seen already with this label or a stronger one: once per label
            found[read.run.run_id] = AffectedRun(
                read.run,
                label,
                reached.hops,
                graph.dataset(read.dataset_id),
                None if None in matched else tuple(_refs(graph, read.dataset_id, matched)),
                read.rendered,
                reached.upstream,
            )
            if read.run.status != "COMPLETE" or read.run.ended_at is None:
                continue  # nothing it wrote is known to be there
            for write in graph.outputs(read.run):
                units = graph.written(write, label)
                parts = backfill.setdefault(write.dataset_id, {})
                for unit, unit_label in units:
                    parts[unit] = stronger(parts.get(unit), unit_label) or unit_label
                queue.append(
                    _Reached(
                        write.dataset_id,
                        tuple(units),
                        read.run.ended_at,
                        False,
                        reached.hops + 1,
                        read.run.run_id,
                    )
                )
    runs = tuple(sorted(found.values(), key=lambda item: (item.run.started_at, item.run.run_id)))
    plan = tuple(
        sorted(
            (graph.partition_set(dataset_id, parts) for dataset_id, parts in backfill.items()),
            key=lambda item: (item.dataset.namespace, item.dataset.name),
        )
    )
    return runs, plan


def _read_label(
    graph: _Graph,
    read: _Access,
    units: tuple[tuple[Unit, Label], ...],
    known: Mapping[Unit, Values] | None = None,
) -> tuple[Label | None, list[Unit]]:
    """How sure it is that ``read`` overlaps the units, and which it may overlap. ``known``:
    the values of those of the units that are known partitions of the read's dataset, when it
    has a :meth:`~_Graph.plain_shape`."""
    known = known or {}
    label: Label | None = None
    matched = []
    listed = None if read.text is None else graph.candidates(read)
    tree = None if read.text is None else graph.compiled(read)
    if tree is not None and tree.kind == "compared":
        # Comparisons decide alike for the partitions that agree on the columns they name: one
        # evaluation per distinct value of those (a day), not per partition (a day's
        # countries). No partition list narrows them (listed is None).
        for group in graph.agreeing(units, tree.fields):
            found = graph.overlap(read, group[0][0])
            if found is False:
                continue
            for unit, unit_label in group:
                matched.append(unit)
                label = stronger(
                    label, "definite" if found and unit_label == "definite" else "possible"
                )
        return label, matched
    for unit, unit_label in units:
        if listed is not None and unit in known and known[unit] not in listed:
            continue  # a known partition the read's partition lists leave out
        found = graph.overlap(read, unit)
        if found is False:
            continue
        matched.append(unit)
        label = stronger(label, "definite" if found and unit_label == "definite" else "possible")
    return label, matched


def _refs(graph: _Graph, dataset_id: int, units: Iterable[Unit]) -> Iterator[PartitionRef]:
    for unit in sorted(u for u in units if u is not None):
        yield PartitionRef(unit, graph.identifier(dataset_id, unit) or None)


def provenance(
    db: str | os.PathLike[str] | LineageStore,
    dataset: str,
    *,
    partition: Mapping[str, str | None] | None = None,
    depth: int | None = None,
    namespace: str | None = None,
) -> ProvenanceReport:
    """Where a partition's data came from: its last writer, that run's inputs, and so on.

    The writers of the part asked about are, per partition, the latest completed run whose
    write overlaps it, and earlier ones too while the later ones only *possibly* wrote it. For
    each writer, its reads and the known input partitions each may cover (definite or
    possible), then the writers of those that completed before the reading run started,
    ``depth`` levels of runs at most. A run shown once is not expanded again.
    """
    values = _partition(partition)
    limit = _depth(depth)
    store, close = _open(db)
    try:
        graph = _Graph(store)
        target_id = graph.resolve(dataset, namespace)
        units = _region(graph, target_id, values) if values else graph.whole_units(target_id)
        labelled: dict[Unit, Label] = dict.fromkeys(units, "definite")
        target = graph.partition_set(target_id, labelled)
        writers = _ProvenanceWalk(graph, limit).writers(target_id, list(labelled.items()), None, 1)
    finally:
        if close:
            store.close()
    return ProvenanceReport(target, limit, writers)


class _ProvenanceWalk:
    """Follows writers back through their inputs, each run expanded once, ``limit`` levels."""

    def __init__(self, graph: _Graph, limit: int | None) -> None:
        self.graph = graph
        self.limit = limit
        self.expanded: set[str] = set()

    def writers(
        self, dataset_id: int, units: list[tuple[Unit, Label]], before: str | None, level: int
    ) -> tuple[ProvenanceStep, ...]:
        """The latest writers of each unit that completed before ``before`` (None: ever)."""
        writes = [
            write
            for write in self.graph.accesses(dataset_id, "output")
            if write.run.status == "COMPLETE"
            and write.run.ended_at is not None
            and (before is None or write.run.ended_at < before)
        ]
        writes.sort(key=lambda write: (write.run.ended_at or "", write.run.run_id), reverse=True)
        chosen: dict[str, tuple[_Access, Label]] = {}
        for unit, unit_label in units:
            for write in writes:
                found = _write_overlap(self.graph, write, unit)
                if found is False:
                    continue
                label: Label = "definite" if found and unit_label == "definite" else "possible"
                previous = chosen.get(write.run.run_id)
                best = stronger(previous[1] if previous else None, label) or label
                chosen[write.run.run_id] = (write, best)
                if found:
                    break  # it rewrote this part: earlier writes are not what is there now
        steps = [self.step(write, label, level) for write, label in chosen.values()]
        steps.sort(key=lambda step: (step.run.ended_at or "", step.run.run_id), reverse=True)
        return tuple(steps)

    def step(self, write: _Access, label: Label, level: int) -> ProvenanceStep:
        run = write.run
        where = self.graph.dataset(write.dataset_id)
        if run.run_id in self.expanded:
            return ProvenanceStep(run, label, where, write.rendered, (), repeated=True)
        self.expanded.add(run.run_id)
        deeper = self.limit is None or level < self.limit
        inputs = []
        for read in self.graph.inputs(run):
            covered = self.graph.read_units(read)
            writers = (
                self.writers(read.dataset_id, covered, run.started_at, level + 1) if deeper else ()
            )
            inputs.append(
                ProvenanceInput(
                    self.graph.dataset(read.dataset_id),
                    read.rendered,
                    self.graph.partition_set(read.dataset_id, dict(covered)),
                    writers,
                )
            )
        return ProvenanceStep(
            run, label, where, write.rendered, tuple(inputs), truncated=not deeper
        )


def _write_overlap(graph: _Graph, write: _Access, unit: Unit) -> bool | None:
    if unit is None and write.condition is not None:
        return False if _lists_no_partition(write.condition) else None
    return graph.overlap(write, unit)


def history(
    db: str | os.PathLike[str] | LineageStore,
    dataset: str,
    *,
    partition: Mapping[str, str | None] | None = None,
    namespace: str | None = None,
) -> HistoryReport:
    """The runs that read or wrote a dataset (or may have touched ``partition`` of it), in
    the order they started, each with its condition and how sure the overlap is."""
    values = _partition(partition)
    store, close = _open(db)
    try:
        graph = _Graph(store)
        dataset_id = graph.resolve(dataset, namespace)
        units = _region(graph, dataset_id, values)
        target = graph.partition_set(dataset_id, dict.fromkeys(units, "definite"))
        entries = []
        for direction, verb in (("input", "read"), ("output", "write")):
            for access in graph.accesses(dataset_id, direction):
                label: Label | None = "definite"
                if values is not None:
                    label, _ = _read_label(graph, access, tuple((u, "definite") for u in units))
                if label is not None:
                    entries.append(HistoryEntry(access.run, verb, access.rendered, label))  # type: ignore[arg-type]
    finally:
        if close:
            store.close()
    entries.sort(key=lambda e: (e.run.started_at, e.run.run_id, e.direction))
    return HistoryReport(target, tuple(entries))


def dataset_partitions(
    db: str | os.PathLike[str] | LineageStore,
    dataset: str,
    *,
    namespace: str | None = None,
) -> PartitionsReport:
    """Each known partition of a dataset: its last writer (the latest completed run whose
    write may cover it) and how many runs read it (definitely or possibly) since then."""
    store, close = _open(db)
    try:
        graph = _Graph(store)
        dataset_id = graph.resolve(dataset, namespace)
        found = graph.dataset(dataset_id)
        writes = sorted(
            (
                write
                for write in graph.accesses(dataset_id, "output")
                if write.run.status == "COMPLETE" and write.run.ended_at is not None
            ),
            key=lambda write: (write.run.ended_at or "", write.run.run_id),
            reverse=True,
        )
        states = []
        for unit, identifier in graph.known(dataset_id).items():
            writer = next((w for w in writes if graph.overlap(w, unit) is not False), None)
            label: Label | None = None
            if writer is not None:
                label = "definite" if graph.overlap(writer, unit) else "possible"
            after = writer.run.ended_at if writer is not None else None
            readers = {
                read.run.run_id
                for read in graph.readers_after(dataset_id, after, False)
                if graph.overlap(read, unit) is not False
            }
            states.append(
                PartitionState(
                    PartitionRef(unit, identifier),
                    None if writer is None else writer.run,
                    label,
                    len(readers),
                )
            )
    finally:
        if close:
            store.close()
    return PartitionsReport(found, tuple(states))
