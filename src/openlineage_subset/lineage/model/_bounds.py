"""Date ranges a read's condition keeps its partition columns in: an index for ``impact``.

A read such as "the last 7 days" (``business_date >= '2024-10-09' AND business_date <=
'2024-10-15'``) lists no partition, so ``access_partitions`` cannot find it; without more, every
later read of the dataset is evaluated to find the few that overlap a partition. For a condition
made of comparisons joined by AND and OR, :func:`date_bounds` gives, per column, a range of ISO
dates the condition keeps that column in. A partition whose value of the column is an ISO date
outside the range is one the condition does not select (:func:`partition_overlap` says False),
so the query leaves such reads out without reading their conditions.

The ranges are sound, not tight: ``>`` is taken as ``>=``, an OR spans both sides' ranges, and
a comparison with a literal that is no ISO date, or of a column with a column, bounds nothing.
A condition holding anything but AND, OR and well-formed comparisons has no range at all: the
query cannot evaluate some of those (an undocumented comparison, say) and then counts the read
as possibly overlapping, whatever the rest of the condition says.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from openlineage_subset import guessed_type

Bound = tuple[str | None, str | None]
"""The least and the greatest ISO date a column may hold (None: no bound on that side)."""

_LOWER = frozenset({"GREATER_THAN", "GREATER_EQUAL_THAN"})
_COMPARISONS = frozenset({"EQUAL", *_LOWER, "LESS_THAN", "LESS_EQUAL_THAN"})
_UPPER = frozenset({"LESS_THAN", "LESS_EQUAL_THAN"})


def date_bounds(condition: Any) -> dict[str, Bound]:
    """The columns ``condition`` keeps within ISO dates, with their ranges.

    >>> day = {"type": "field", "field": "day"}
    >>> def since(value): return {"type": "compare", "comparison": "GREATER_EQUAL_THAN",
    ...     "left": day, "right": {"type": "literal", "value": value}}
    >>> def until(value): return {"type": "compare", "comparison": "LESS_EQUAL_THAN",
    ...     "left": day, "right": {"type": "literal", "value": value}}
    >>> date_bounds({"type": "binary", "operator": "AND",
    ...     "left": since("2024-10-09"), "right": until("2024-10-15")})
    {'day': ('2024-10-09', '2024-10-15')}
    >>> date_bounds({"type": "binary", "operator": "OR",
    ...     "left": since("2024-10-09"), "right": until("2024-10-01")})
    {}
    """
    return _bounds(condition) if _comparisons_only(condition) else {}


def read_bounds(condition: Any) -> dict[str, Bound]:
    """:func:`date_bounds`, partition lists counted too: a list keeps a column within the
    least and the greatest ISO date it lists for it, when every partition it lists has the
    column, with an ISO date or null (a null partition is never left out by a range). What
    ingest stores in ``access_bounds`` for a read that is not only partition lists (those
    ``access_partitions`` finds): a day's partitions ``AND amount > 0``.

    Sound where the queries use the stored ranges, for a dataset whose partition columns
    each compare as their text (``PartitionCatalog.plain_shape``): there every value listed
    for a column of dates is a date or null, and another day's partition is not selected. (For a
    partition of mixed kinds :func:`partition_overlap` may call it unknown: a listed country
    'DE' is not compared with a country '2024-10-15'.)

    >>> listed = {"type": "partition", "partitions": [
    ...     {"dimensions": {"day": "2024-10-15", "country": "PL"}},
    ...     {"dimensions": {"day": "2024-10-16", "country": None}}]}
    >>> read_bounds({"type": "binary", "operator": "AND", "left": listed, "right": {
    ...     "type": "compare", "comparison": "GREATER_THAN",
    ...     "left": {"type": "field", "field": "amount"},
    ...     "right": {"type": "literal", "value": "0"}}})
    {'day': ('2024-10-15', '2024-10-16')}
    """
    return _bounds(condition) if _comparisons_only(condition, lists=True) else {}


def _comparisons_only(condition: Any, lists: bool = False) -> bool:
    """Whether a condition is comparisons of fields and string literals joined by AND and OR
    (and, with ``lists``, well-formed partition lists), all of which the query evaluates
    without error."""
    stack = [condition]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            return False
        kind = node.get("type")
        if kind == "binary" and node.get("operator") in ("AND", "OR"):
            stack.extend((node.get("left"), node.get("right")))
        elif kind == "partition" and lists:
            if not _well_formed(node.get("partitions")):
                return False
        elif kind == "compare" and node.get("comparison") in _COMPARISONS:
            for side in (node.get("left"), node.get("right")):
                if not isinstance(side, dict):
                    return False
                if side.get("type") == "field":
                    name = side.get("field")
                    if not isinstance(name, str) or not name:
                        return False
                elif side.get("type") != "literal" or not isinstance(side.get("value"), str):
                    return False
        else:
            return False
    return True


def _well_formed(items: Any) -> bool:
    """Whether a partition list's items each have dimensions of text or null values."""
    if not isinstance(items, list):
        return False
    for item in items:
        dimensions = item.get("dimensions") if isinstance(item, dict) else None
        if not isinstance(dimensions, dict) or not dimensions:
            return False
        for value in dimensions.values():
            if value is not None and not isinstance(value, str):
                return False
    return True


def _listed_bounds(items: list[dict[str, Any]]) -> dict[str, Bound]:
    """The columns every listed partition has with an ISO date or null, and their range."""
    if not items:
        return {}
    spans: dict[str, list[str | None]] = {column: [None, None] for column in items[0]["dimensions"]}
    for item in items:
        dimensions = item["dimensions"]
        for column in list(spans):
            if column not in dimensions:
                del spans[column]
                continue
            value = dimensions[column]
            if value is None:
                continue
            if guessed_type(value) != "date":
                del spans[column]
                continue
            span = spans[column]
            if span[0] is None or value < span[0]:
                span[0] = value
            if span[1] is None or value > span[1]:
                span[1] = value
    return {column: (low, high) for column, (low, high) in spans.items() if low is not None}


def _bounds(condition: dict[str, Any]) -> dict[str, Bound]:
    kind = condition.get("type")
    if kind == "partition":
        return _listed_bounds(condition["partitions"])
    if kind == "binary":
        operator_name = condition.get("operator")
        left, right = _bounds(condition["left"]), _bounds(condition["right"])
        if operator_name == "AND":
            # Each side's ranges hold: a column bounded on both sides is within both ranges.
            merged = {**left, **right}
            for column in left.keys() & right.keys():
                merged[column] = _intersection(left[column], right[column])
            return merged
        # Either side may hold: a column is bounded only where both sides bound it.
        spans = {
            column: _span(left[column], right[column]) for column in left.keys() & right.keys()
        }
        return {column: span for column, span in spans.items() if span != (None, None)}
    if kind == "compare":
        return _compare_bound(condition)
    return {}


def _compare_bound(node: dict[str, Any]) -> dict[str, Bound]:
    field, literal = node.get("left"), node.get("right")
    if not (
        isinstance(field, dict)
        and isinstance(literal, dict)
        and field.get("type") == "field"
        and literal.get("type") == "literal"
    ):
        return {}
    name, value = field.get("field"), literal.get("value")
    if not isinstance(name, str) or not name or "." in name or not isinstance(value, str):
        return {}
    if guessed_type(value) != "date":
        return {}
    comparison = node.get("comparison")
    if comparison == "EQUAL":
        return {name: (value, value)}
    if comparison in _LOWER:
        return {name: (value, None)}
    if comparison in _UPPER:
        return {name: (None, value)}
    return {}


def _intersection(one: Bound, other: Bound) -> Bound:
    lows = [low for low in (one[0], other[0]) if low is not None]
    highs = [high for high in (one[1], other[1]) if high is not None]
    return (max(lows) if lows else None, min(highs) if highs else None)


def _span(one: Bound, other: Bound) -> Bound:
    low = None if one[0] is None or other[0] is None else min(one[0], other[0])
    high = None if one[1] is None or other[1] is None else max(one[1], other[1])
    return (low, high)


def outside(bound: Bound, value: str | None) -> bool:
    """Whether a partition's value of the column is an ISO date outside ``bound``: a read so
    bounded does not select that partition.

    >>> outside(("2024-10-09", "2024-10-15"), "2024-10-16"), outside((None, None), "2024-10-16")
    (True, False)
    """
    if value is None or guessed_type(value) != "date":
        return False
    low, high = bound
    return (low is not None and value < low) or (high is not None and value > high)


NO_LEAST = -1
"""The width class (``access_ranges.span``) of a range with no least date: keyed by its
greatest."""
NO_GREATEST = -2
"""The width class of a range with no greatest date: keyed by its least."""
_WIDEST = 23  # 2**22 days: more than the 3,652,058 between 0001-01-01 and 9999-12-31


def range_key(bounds: dict[str, Bound]) -> tuple[str, int, str]:
    """Where a read that keeps its columns within ``bounds`` (:func:`read_bounds`) is in
    ``access_ranges``: under the first column it bounds (by name), the class of the width of
    that range (``k``: its greatest date is fewer than ``2**k`` days after its least;
    :data:`NO_LEAST`, :data:`NO_GREATEST`: it is open on that side) and its least date (its
    greatest when it has none); under no column (``('', 0, '')``) when it bounds none. A read
    found in one column's ranges is checked against all its ranges after (``access_bounds``).

    >>> range_key({"day": ("2024-10-09", "2024-10-15")}), range_key({"day": (None, "2024-10-15")})
    (('day', 3, '2024-10-09'), ('day', -1, '2024-10-15'))
    >>> range_key({})
    ('', 0, '')
    """
    for column in sorted(bounds):
        low, high = bounds[column]
        if not column or (low is None and high is None):
            continue  # '' keys the reads bounded in no column
        if low is None:
            return column, NO_LEAST, str(high)
        if high is None:
            return column, NO_GREATEST, low
        width = (dt.date.fromisoformat(high) - dt.date.fromisoformat(low)).days
        return column, max(width, 0).bit_length(), low
    return "", 0, ""


def range_probes(spans: dict[str, list[str]]) -> list[tuple[str, int, str, str]]:
    """The keys of ``access_ranges`` to read for the reads whose range of a column may meet
    ``spans`` (a least and a greatest ISO date, per column), as (column, width class, least
    key, greatest key): a range of width class ``k`` that meets ``[x, y]`` starts after
    ``x - 2**k`` days and at ``y`` or before, one open below ends at ``x`` or after, one open
    above starts at ``y`` or before. Every read whose range meets the spans is in them (and
    few others: those of each class that start in the ``2**k`` days before ``x``).

    >>> for probe in range_probes({"day": ["2024-10-15", "2024-10-15"]})[:4]: print(probe)
    ('day', -1, '2024-10-15', '~')
    ('day', -2, '', '2024-10-15')
    ('day', 0, '2024-10-15', '2024-10-15')
    ('day', 1, '2024-10-14', '2024-10-15')
    """
    probes: list[tuple[str, int, str, str]] = []
    for column, (least, greatest) in sorted(spans.items()):
        first = dt.date.fromisoformat(least)
        probes += [(column, NO_LEAST, least, "~"), (column, NO_GREATEST, "", greatest)]
        for width in range(_WIDEST + 1):
            days = (1 << width) - 1
            start = first - dt.timedelta(days=days) if days < first.toordinal() else None
            probes.append((column, width, "" if start is None else start.isoformat(), greatest))
    return probes
