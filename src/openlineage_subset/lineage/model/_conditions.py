"""What the queries read off a condition's JSON without a database, and decide without
:func:`~openlineage_subset.partition_overlap` where they can do so exactly as it would.

:class:`Listing` (partition lists, decided by lookup) and :func:`quick_overlap` (comparisons with
ISO dates, decided on their text) answer most questions of a large history; where they cannot,
they say :data:`UNDECIDED` and the evaluator decides (tests/lineage/test_fast_paths.py holds
them to its answers). Also: the columns a condition or an identifier names, and their order.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import operator
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from decimal import Decimal
from json.encoder import encode_basestring as _string  # json.dumps of a str, non-ASCII kept
from typing import Any

from openlineage_subset import guessed_type
from openlineage_subset.lineage.model._answers import Dimensions
from openlineage_subset.producer import clean_location, glob_root, unescape_path_name

Values = tuple[str | None, ...]
"""A partition's values, in the order of its sorted columns."""
Unit = Dimensions | None
"""A part of a dataset a query tracks: one partition, or None for the whole dataset."""
UNDECIDED: Any = object()
"""What a fast path answers when only :func:`~openlineage_subset.partition_overlap` can tell."""

# Conditions here are parsed JSON: their objects are dicts, and isinstance(node, dict) skips the
# abstract class check of Mapping (a third of a microsecond, tens of thousands of times a query).


def plain_values(values: Iterable[str | None]) -> bool:
    """Whether partition values compare typed exactly when their text is equal: nulls, text,
    and ISO dates (a text partition value is never read as a number or a date)."""
    return all(
        value is None or (isinstance(value, str) and value_kind(value) in _PLAIN)
        for value in values
    )


def all_text(values: Iterable[Any]) -> bool:
    """Whether every value is text or null (a listed partition's values, as stored)."""
    for value in values:  # noqa: SIM110  (a loop: all() of a generator costs twice as much)
        if value is not None and not isinstance(value, str):
            return False
    return True


_PLAIN = ("string", "date")
_TEXT = frozenset({"string", "null"})
_DATE = frozenset({"date", "null"})


def compares_as_text(kinds: frozenset[str]) -> bool:
    """Whether values of a partition column of these kinds (as ingest records them) compare as
    their text: all text, or all ISO dates (nulls aside)."""
    return kinds <= _TEXT or kinds <= _DATE


@functools.lru_cache(maxsize=65536)
def value_kind(value: str) -> str:
    """How :func:`partition_overlap` types a partition value: bigint, decimal, date or string."""
    return guessed_type(value)


def equality_key(unit: Dimensions) -> Dimensions | tuple[tuple[str, object], ...]:
    """A key two partitions of the same columns share whenever a partition list naming one
    selects the other (:func:`partition_overlap` compares values typed: ``7`` is ``07`` and
    ``7.0``): numbers by their value, ISO dates and text by their text, null as null. Equal
    keys are necessary, not sufficient (the evaluator decides): a lookup by it finds every
    partition a list may select, among thousands, without comparing each to each.

    >>> equality_key((("day", "2024-01-01"), ("part", "07"))) == equality_key(
    ...     (("day", "2024-01-01"), ("part", "7.0")))
    True
    """
    return tuple((name, None if value is None else _number_or_text(value)) for name, value in unit)


def _number_or_text(value: str) -> object:
    return Decimal(value) if value_kind(value) in ("bigint", "decimal") else value


@functools.lru_cache(maxsize=65536)
def canonical_unit(unit: Dimensions) -> str:
    """The ``partitions.dimensions`` text of a unit: canonical JSON, keys sorted (as
    ``json.dumps(dict(unit), sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
    spells it, a few times faster; a query asks it for thousands of partitions).

    >>> canonical_unit((("day", "2024-10-15"), ("country", None)))
    '{"country":null,"day":"2024-10-15"}'
    """
    return (
        "{"
        + ",".join(
            f"{_string(name)}:{'null' if value is None else _string(value)}"
            for name, value in sorted(unit)
        )
        + "}"
    )


@dataclasses.dataclass(frozen=True)
class Listing:
    """Partition lists, as sets of listed values, one set per set of columns.

    Decides overlap with a partition by lookup where the text of the values decides it as
    :func:`partition_overlap` does: a listed partition whose values all equal the partition's
    (as text) overlaps it; none does when every listed partition's columns are the
    partition's, and for each such column the partition's value is text (compared as text) or
    an ISO date and every value listed for that column an ISO date (or null) too.
    """

    shapes: tuple[tuple[tuple[str, ...], frozenset[tuple[str | None, ...]]], ...]

    @classmethod
    def of(cls, condition: Any) -> Listing | None:
        listed = only_partitions(condition)
        if listed is None:
            return None
        shapes: dict[tuple[str, ...], set[tuple[str | None, ...]]] = {}
        keys: tuple[str, ...] | None = None
        for dimensions in listed:
            if keys is None or len(keys) != len(dimensions) or keys != tuple(dimensions):
                keys = tuple(dimensions)
                shape = tuple(sorted(keys))
                in_order = shape == keys
                found = shapes.setdefault(shape, set())
            # Keys in order (as canonical JSON has them): the values in that order already.
            values = (
                tuple(dimensions.values())
                if in_order
                else tuple(dimensions[column] for column in shape)
            )
            for value in values:
                if value is not None and not isinstance(value, str):
                    return None
            found.add(values)
        return cls(tuple((shape, frozenset(values)) for shape, values in shapes.items()))

    @functools.cached_property
    def dates(self) -> frozenset[str]:
        """Columns whose listed values are all ISO dates (or null)."""
        found: set[str] = set()
        other: set[str] = set()
        for shape, listed in self.shapes:
            for values in listed:
                for column, value in zip(shape, values, strict=True):
                    if value is not None and value_kind(value) != "date":
                        other.add(column)
                    else:
                        found.add(column)
        return frozenset(found - other)

    def overlap(self, unit: Dimensions) -> object:
        """True, False, or ``UNDECIDED`` when only :func:`partition_overlap` can tell."""
        if len(self.shapes) == 1 and self.shapes[0][0] == tuple(column for column, _ in unit):
            # Most often: one set of columns, the partition's (as below, without a dict).
            if tuple(value for _, value in unit) in self.shapes[0][1]:
                return True
            return False if all(self._text_decides(c, v) for c, v in unit) else UNDECIDED
        values = dict(unit)
        for shape, listed in self.shapes:
            if not all(column in values for column in shape):
                return UNDECIDED  # a finer partitioning than the partition's: unknown
            if tuple(values[column] for column in shape) in listed:
                return True
        decided = all(
            self._text_decides(column, values[column])
            for shape, _ in self.shapes
            for column in shape
        )
        return False if decided else UNDECIDED

    def _text_decides(self, column: str, value: str | None) -> bool:
        """Whether a value not listed is surely another one: a string compares by its text,
        and so does an ISO date in a column whose listed values are all dates; a number or
        a null may equal a listed value written otherwise."""
        if value is None:
            return False
        kind = value_kind(value)
        return kind == "string" or (kind == "date" and column in self.dates)

    def misses(self, unit: Dimensions) -> bool:
        """Whether no listed partition holds rows of ``unit``, a partition of fewer columns
        than they have (a day, of partitions by day and country): each listed one has every
        column of it and another value in one of them, as the text of the values decides (as
        :meth:`overlap` decides it). :func:`partition_overlap` leaves that unknown (a finer
        partitioning than the partition's), but rows with another day are not the day's."""
        for column, value in unit:
            if value is None:
                return False
            kind = value_kind(value)
            if kind != "string" and (kind != "date" or column not in self.dates):
                return False
        wanted = tuple(value for _, value in unit)
        for shape, listed in self.shapes:
            try:
                places = [shape.index(column) for column, _ in unit]
            except ValueError:
                return False  # a listed partition without one of its columns: any value
            if any(tuple(values[place] for place in places) == wanted for values in listed):
                return False
        return True

    def values_in(self, shape: tuple[str, ...]) -> frozenset[tuple[str | None, ...]] | None:
        """The listed partitions' values when they all have these columns, else None."""
        if len(self.shapes) == 1 and self.shapes[0][0] == shape:
            return self.shapes[0][1]
        if not self.shapes:
            return frozenset()
        return None


@dataclasses.dataclass(frozen=True)
class ConditionNode:
    """A condition prepared for ``Evaluation._evaluate``: ``both`` (AND, OR of two parts),
    ``listing`` (partition lists), ``compared`` (comparisons only: ``fields`` are the columns
    they name), or ``other`` (evaluated as is, with the partition's path). ``serial`` tells
    apart the leaves of the conditions of one query (its answers are cached by it)."""

    kind: str
    node: Any
    is_and: bool = False
    parts: tuple[ConditionNode, ...] = ()
    serial: int = 0
    fields: frozenset[str] | None = None
    listing: Listing | None = None


def compile_condition(node: Any, serials: Iterator[int]) -> ConditionNode:
    """The condition as a tree of :class:`ConditionNode`, each leaf numbered from ``serials``."""
    fields = compared_fields(node)
    if fields is not None:
        return ConditionNode("compared", node, serial=next(serials), fields=fields)
    if isinstance(node, dict) and node.get("type") == "binary" and node.get("operator") in _BOTH:
        left = compile_condition(node.get("left"), serials)
        right = compile_condition(node.get("right"), serials)
        return ConditionNode("both", node, node.get("operator") == "AND", (left, right))
    serial = next(serials)
    listing = Listing.of(node) if isinstance(node, dict) else None
    if listing is not None and node.get("type") == "partition":
        return ConditionNode("listing", node, serial=serial, listing=listing)
    return ConditionNode("other", node, serial=serial)


_BOTH = ("AND", "OR")
_ORDERS: dict[str, Callable[[str, str], bool]] = {
    "EQUAL": operator.eq,
    "GREATER_THAN": operator.gt,
    "GREATER_EQUAL_THAN": operator.ge,
    "LESS_THAN": operator.lt,
    "LESS_EQUAL_THAN": operator.le,
}


def quick_overlap(node: Any, values: Mapping[str, str | None]) -> Any:
    """:func:`partition_overlap` of comparisons of columns with ISO-date literals (a range of
    days), for partitions whose values of those columns are ISO dates: such dates compare as
    their text. ``UNDECIDED`` for any other condition or value, which it leaves to
    :func:`partition_overlap`."""
    kind = node.get("type") if isinstance(node, dict) else None
    if kind == "binary":
        return _quick_binary(node, values)
    if kind == "compare":
        return _quick_compare(node, values)
    return UNDECIDED


def _quick_binary(node: dict[str, Any], values: Mapping[str, str | None]) -> Any:
    """AND/OR of two sides :func:`quick_overlap` decides; ``UNDECIDED`` if either is not."""
    operator_name = node.get("operator")
    if operator_name not in _BOTH:
        return UNDECIDED
    left = quick_overlap(node.get("left"), values)
    right = quick_overlap(node.get("right"), values)
    if UNDECIDED in (left, right):
        return UNDECIDED
    if operator_name == "AND":
        return False if False in (left, right) else (True if left and right else None)
    return True if True in (left, right) else (False if left is right is False else None)


def _quick_compare(node: dict[str, Any], values: Mapping[str, str | None]) -> Any:
    """A column compared with an ISO-date literal, as text; ``UNDECIDED`` for anything else."""
    compare = _ORDERS.get(node.get("comparison"))  # type: ignore[arg-type]
    field, literal = node.get("left"), node.get("right")
    if (
        compare is None
        or not isinstance(field, dict)
        or not isinstance(literal, dict)
        or field.get("type") != "field"
        or literal.get("type") != "literal"
    ):
        return UNDECIDED
    name, text = field.get("field"), literal.get("value")
    if not isinstance(name, str) or not name or "." in name or not isinstance(text, str):
        return UNDECIDED
    if name not in values:
        return None  # a column other than the partition's: unknown
    value = values[name]
    if value is None or value_kind(value) != "date" or value_kind(text) != "date":
        return UNDECIDED
    return compare(value, text)


def date_spans(units: list[Unit]) -> dict[str, list[str]]:
    """The least and the greatest value of each column that every unit has an ISO date in."""
    spans: dict[str, list[str]] | None = None
    for unit in units:
        if unit is None:
            return {}  # the whole dataset: every date
        dates = {
            name: value for name, value in unit if value is not None and value_kind(value) == "date"
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


def compared_fields(condition: Any) -> frozenset[str] | None:
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


def dimensions_of(dimensions: Mapping[str, Any]) -> Dimensions:
    """A partition's dimensions as a query keys them: sorted pairs, values as text or None.

    >>> dimensions_of({"day": "2024-10-15", "country": None})
    (('country', None), ('day', '2024-10-15'))
    """
    return tuple(
        sorted((str(name), None if v is None else str(v)) for name, v in dimensions.items())
    )


def lists_no_partition(condition: Any) -> bool:
    """Whether the condition is a partition list that lists none: it selects no partition.

    >>> lists_no_partition({"type": "partition", "partitions": []})
    True
    """
    return (
        isinstance(condition, dict)
        and condition.get("type") == "partition"
        and condition.get("partitions") == []
    )


def excludes_location(condition: Any, place: str) -> bool:
    """Whether ``condition`` proves that its access touched nothing at ``place`` (a file or
    directory, as :func:`~openlineage_subset.producer.clean_location` writes it): a location
    list naming neither ``place``, nor a directory above it, nor anything below it (and a
    binary AND of which one side does so, an OR of which both do). Anything else may touch it.

    >>> read = {"type": "location", "locations": ["file:/in/a.json", "file:/in/b.json"]}
    >>> excludes_location(read, "file:/in/c.json"), excludes_location(read, "file:/in/b.json")
    (True, False)
    >>> excludes_location(read, "file:/in"), excludes_location({"type": "compare"}, "file:/x")
    (False, False)
    """
    if not isinstance(condition, dict):
        return False
    kind = condition.get("type")
    if kind == "location":
        places = _locations(condition)
        return places is not None and not any(_place_overlaps(p, place) for p in places)
    if kind == "binary":
        left = excludes_location(condition.get("left"), place)
        right = excludes_location(condition.get("right"), place)
        operator_ = condition.get("operator")
        return (left or right) if operator_ == "AND" else (left and right)
    return False


_WILDCARDS = frozenset("*?[{")


def _place_overlaps(listed: str, place: str) -> bool:
    """Whether a listed location and ``place`` may share a file (either holds the other)."""
    key = place_key(listed)
    if key is None:
        return True  # a location that cannot be read may be anything
    place = place.rstrip("/")
    return key == place or place.startswith(key + "/") or key.startswith(place + "/")


def place_key(listed: str) -> str | None:
    """The place a listed location stands for when compared with others: cleaned, a glob a
    producer left in as the directory it starts in, no ``/`` at the end. None: it cannot be
    read, and may be anything.

    >>> place_key("file:/in/day=1/*.json"), place_key("s3://b/in/")
    ('file:/in/day=1', 's3://b/in')
    """
    try:
        listed = clean_location(listed)
    except ValueError:
        return None
    if not _WILDCARDS.isdisjoint(listed):
        # A glob: it may match anything below the directory it starts in.
        listed = glob_root(listed) or listed.rpartition("/")[0]
    return listed.rstrip("/")


def listed_places(condition: Any) -> list[str] | None:
    """The places (:func:`place_key`) that decide where ``condition`` may have touched, when
    a list of them does: the access may touch ``place`` exactly when one of them holds it or
    lies below it, as :func:`excludes_location` decides. A location list gives its places; an
    OR, both sides' (each side must give some); an AND, the side that gives some when the other
    names no location. None for anything else (it may touch any place), and for a location
    that cannot be read.

    >>> listed_places({"type": "location", "locations": ["file:/in/a.json", "file:/in/b/"]})
    ['file:/in/a.json', 'file:/in/b']
    >>> listed_places({"type": "compare", "comparison": "EQUAL"}) is None
    True
    """
    if not isinstance(condition, dict):
        return None
    kind = condition.get("type")
    if kind == "location":
        places = _locations(condition)
        if places is None:
            return None
        keys = [place_key(place) for place in places]
        return None if None in keys else list(dict.fromkeys(keys))  # type: ignore[arg-type]
    if kind != "binary":
        return None
    left, right = listed_places(condition.get("left")), listed_places(condition.get("right"))
    if condition.get("operator") == "AND":
        # Touched only where both sides may touch: one side's places, if the other names none.
        sides = ((left, condition.get("right")), (right, condition.get("left")))
        found = [side for side, other in sides if side is not None and not _names_location(other)]
        return found[0] if found else None
    if left is None or right is None:
        return None
    return list(dict.fromkeys(left + right))


def _locations(condition: Mapping[str, Any]) -> list[str] | None:
    """A location condition's list of locations; None when it is not a list of texts."""
    places = condition.get("locations")
    if not isinstance(places, list) or not all(isinstance(p, str) for p in places):
        return None
    return places


def _names_location(condition: Any) -> bool:
    """Whether a location list is somewhere in ``condition``."""
    if not isinstance(condition, dict):
        return False
    if condition.get("type") == "location":
        return True
    return _names_location(condition.get("left")) or _names_location(condition.get("right"))


def places_around(place: str) -> tuple[list[str], str, str]:
    """Where the places that may share a file with ``place`` are: itself and the directories
    above it (exactly), and those below it (a range of text, low and high excluded).

    >>> places_around("file:/in/a")
    (['file:', 'file:/in', 'file:/in/a'], 'file:/in/a/', 'file:/in/a0')
    """
    place = place.rstrip("/")
    above = [place[:at] for at, char in enumerate(place) if char == "/"]
    return [*dict.fromkeys(above), place], place + "/", place + "0"


def only_partitions(condition: Any) -> list[Mapping[str, Any]] | None:
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


def sort_key(unit: Dimensions) -> tuple[tuple[str, bool, str], ...]:
    """A key that sorts partitions by their values in column order, the null value first."""
    return tuple((name, value is not None, value or "") for name, value in unit)


def identifier_columns(identifier: str) -> list[str] | None:
    """The columns a partition identifier names, in its order (``day=1/country=PL``: day,
    country); None when it names one twice."""
    named = [
        column if "%" not in column else unescape_path_name(column)
        for column, equals, _ in (segment.partition("=") for segment in identifier.split("/"))
        if equals
    ]
    return named if len(set(named)) == len(named) else None


def column_order(
    shapes: Collection[tuple[str, ...]],
    identifiers: Iterable[str],
    locations: Callable[[], Iterable[str]],
) -> tuple[tuple[str, ...], frozenset[str]]:
    """A dataset's partition columns in the order its events give them, the rule of every
    answer (``lineage``, the UI, ``show``): as the identifiers of its partitions name them
    (``day=2024-10-15/country=PL``: day, then country), else as the ``column=value``
    directories of the locations its conditions read; after those, the columns neither places,
    by name. Also the columns identifiers or locations placed.

    ``shapes``: the sorted column tuples of its known partitions; an identifier naming columns
    no partition has (not a Hive-style directory) is passed over. ``locations()``: the paths of
    its conditions' locations, asked only when the identifiers leave a column unplaced.

    >>> column_order({("country", "day")}, ["day=2024-10-15/country=PL"], list)[0]
    ('day', 'country')
    >>> column_order({("country", "day")}, [], lambda: ["/lake/sales/day=1/country=PL"])[0]
    ('day', 'country')
    >>> column_order({("country", "day")}, [], list)[0]
    ('country', 'day')
    """
    columns = {column for shape in shapes for column in shape}
    placed: list[str] = []
    for identifier in identifiers:
        named = identifier_columns(identifier)
        if named is None or tuple(sorted(named)) not in shapes:
            continue
        placed = _merged(placed, named)
    if not columns or not columns.issubset(placed):
        for place in locations():
            placed = _merged(placed, identifier_columns(place) or [])
    rest = sorted(columns.difference(placed))
    return (*placed, *rest), frozenset(placed)


def _merged(placed: list[str], named: list[str]) -> list[str]:
    """Two orders of columns as one: the longer one, then what only the shorter one has."""
    if set(named) <= set(placed):
        return placed
    longer, shorter = (named, placed) if len(named) > len(placed) else (placed, named)
    return [*longer, *(column for column in shorter if column not in longer)]


def in_column_order(condition: Any, order: Mapping[str, int]) -> Any:
    """The condition with the dimensions of the partitions it lists in ``order`` (itself
    when they are in that order already, as in most conditions: found without copying)."""
    if _in_order(condition, order):
        return condition
    if isinstance(condition, list):
        return [in_column_order(item, order) for item in condition]
    if not isinstance(condition, dict):
        return condition
    found = {key: in_column_order(value, order) for key, value in condition.items()}
    if condition.get("type") == "partition" and isinstance(condition.get("partitions"), list):
        for item in found["partitions"]:
            dimensions = item.get("dimensions") if isinstance(item, dict) else None
            if isinstance(dimensions, dict):
                item["dimensions"] = dict(
                    sorted(
                        dimensions.items(),
                        key=lambda pair: (order.get(pair[0], len(order)), pair[0]),
                    )
                )
    return found


def _in_order(condition: Any, order: Mapping[str, int]) -> bool:
    """Whether the dimensions of every partition the condition lists, anywhere in it, are in
    ``order``."""
    rest = len(order)
    checked: dict[tuple[str, ...], bool] = {}  # by columns: whether in order
    for dimensions in _listed_dimensions(condition):
        if len(dimensions) <= 1:
            continue
        columns = tuple(dimensions)
        fine = checked.get(columns)
        if fine is None:
            keys = [(order.get(column, rest), column) for column in columns]
            fine = checked[columns] = all(a <= b for a, b in itertools.pairwise(keys))
        if not fine:
            return False
    return True


def _listed_dimensions(condition: Any) -> Iterator[dict[str, Any]]:
    """The dimensions of every partition the condition lists, anywhere in it (in a value of
    another partition's too), as they are met."""
    stack = [condition]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(item for item in node if isinstance(item, (dict, list)))
            continue
        if not isinstance(node, dict):
            continue
        listed = node.get("type") == "partition" and isinstance(node.get("partitions"), list)
        for key, value in node.items():
            if isinstance(value, (dict, list)) and not (listed and key == "partitions"):
                stack.append(value)
        if not listed:
            continue
        for item in node["partitions"]:
            if not isinstance(item, dict):
                stack.append(item)
                continue
            for key, value in item.items():
                if isinstance(value, (dict, list)) and key != "dimensions":
                    stack.append(value)
            dimensions = item.get("dimensions")
            if isinstance(dimensions, dict):
                stack.extend(
                    value for value in dimensions.values() if isinstance(value, (dict, list))
                )
                yield dimensions


def named_columns(condition: Any, named: set[str]) -> None:
    """Add to ``named`` the columns a condition names: the fields it compares, the columns
    of the partitions it lists, those of ``column=value`` directories in its locations."""
    stack = [condition]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        kind = node.get("type")
        if kind == "field" and isinstance(node.get("field"), str):
            named.add(node["field"])
        elif kind == "location":
            for place in location_paths(node):
                named.update(identifier_columns(place) or ())
        dimensions = node.get("dimensions")
        if isinstance(dimensions, dict):
            named.update(str(column) for column in dimensions)
        stack.extend(value for value in node.values() if isinstance(value, (dict, list)))


def location_paths(condition: Any) -> list[str]:
    """The paths of the locations a condition names, anywhere in it."""
    found: list[str] = []
    stack = [condition]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if node.get("type") == "location" and isinstance(node.get("locations"), list):
                found += [place for place in node["locations"] if isinstance(place, str)]
            stack.extend(value for value in node.values() if isinstance(value, (dict, list)))
    return found
