"""The values of one partition column: how they order, and the constraints drawn over them.

Used by :mod:`openlineage_subset.producer._condense`, which chooses among the constraints the
most precise condition that fits a byte budget.

**How ranges state their type.** Conditions carry values as strings, with no type. A range is
only drawn over values whose text order is their typed order, so a consumer that compares them as
the column's type and one that compares them as text select the same listed values: ISO dates
(``YYYY-MM-DD``), unsigned integers *of one number of digits* (``hour >= 1 AND hour <= 9`` and
``hour >= 10 AND hour <= 24`` for the hours 1 to 24), and text that looks neither like a number
nor like a time. Dates and integers are dense: a range over consecutive values is exact
(``2024-01-01`` to ``2024-03-31`` holds nothing else). Other numbers (signed, decimal) and
timestamps or times (``2024-01-01 10:00:00``, ``2024-01-01T10:00:00.5+02:00``, ``9:30``: their
text order is not their time order once fractions, offsets or separators differ) are only ever
listed.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

Json = dict[str, Any]

_DIGITS = re.compile(r"[0-9]+")
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_NUMBER_LIKE = re.compile(r"\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\s*")
_TIME_LIKE = re.compile(r"\s*([0-9]{4}-[0-9]{1,2}-[0-9]{1,2}|[0-9]{1,2}:[0-9]{2})")
"""A value a typed column may read as a date, timestamp or time (matched at the start)."""
UNCONSTRAINED = None
"""A column left unconstrained in a box."""


class Scale:
    """How the values of one column order: which ranges are sound, and how dense they are.

    ``kind`` is ``digits`` (unsigned integers), ``date`` (ISO dates), ``text``, or ``opaque``
    (other numbers, timestamps and times, or a mix of dates and text: listed only). Every value
    asked about is one seen in the column, so sort keys and ordinals are worked out once, up
    front.
    """

    def __init__(self, values: Iterable[str | None]) -> None:
        seen = {value for value in values if value is not None}
        if seen and all(_DIGITS.fullmatch(value) for value in seen):
            self.kind = "digits"
            keys: dict[str, Any] = {value: (len(value), int(value)) for value in seen}
            self._ordinals = {value: int(value) for value in seen}
        elif seen and all(_is_date(value) for value in seen):
            self.kind = "date"
            self._ordinals = {value: _dt.date.fromisoformat(value).toordinal() for value in seen}
            keys = self._ordinals
        else:
            typed = any(_NUMBER_LIKE.fullmatch(v) or _TIME_LIKE.match(v) for v in seen)
            self.kind = "opaque" if typed else "text"
            keys = {value: value for value in seen}
        self.key: Callable[[str], Any] = keys.__getitem__
        self.universe = tuple(sorted(seen, key=self.key))
        """Every non-null value seen in the column, in order: what a range of text counts."""
        if not self.dense:
            self._ordinals = {value: index for index, value in enumerate(self.universe)}
        self.dense_ends: dict[int, tuple[int, int]] = {}
        for value in self.universe:
            bucket, ordinal = self.bucket(value), self._ordinals[value]
            low, high = self.dense_ends.get(bucket, (ordinal, ordinal))
            self.dense_ends[bucket] = (min(low, ordinal), max(high, ordinal))

    def bucket(self, value: str) -> int:
        """Values a range may join: one number of digits, or the whole column."""
        return len(value) if self.kind == "digits" else 0

    def ordinal(self, value: str) -> int:
        """Position on the column's dense line (dates, integers) or among the values seen."""
        return self._ordinals[value]

    @property
    def dense(self) -> bool:
        return self.kind in ("digits", "date")

    @property
    def ranged(self) -> bool:
        return self.kind != "opaque"

    def span_volume(self, low: str, high: str) -> int:
        """How many values a range from ``low`` to ``high`` admits: dense, all of them; text,
        twice the values seen in it (it may hold values never seen)."""
        width = self.ordinal(high) - self.ordinal(low) + 1
        return width if self.dense else 2 * width

    @cached_property
    def whole(self) -> int:
        """How many values an unconstrained column admits: twice the span (dense) or the
        number of values seen, as it may hold values never seen."""
        if not self.dense:
            return 2 * max(len(self.universe), 1)
        return 2 * max(sum(high - low + 1 for low, high in self.dense_ends.values()), 1)


def _is_date(value: str) -> bool:
    if not _ISO_DATE.fullmatch(value):
        return False
    try:
        _dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Constraint:
    """What one column may be in a box: listed values and ranges (both inclusive)."""

    values: tuple[str, ...]
    spans: tuple[tuple[str, str], ...]
    volume: int


@dataclass(frozen=True)
class Runs:
    """A column's values in order, with their runs of consecutive (dense) values."""

    ordered: list[str]
    places: list[tuple[int, int]]
    """(bucket, ordinal) of each value."""
    runs: list[list[int]]
    """Positions in ``ordered``, one list per run."""


def runs_of(values: set[str | None], scale: Scale) -> Runs | None:
    """The values' runs; None when one of them is null (the column cannot be constrained)."""
    present = [value for value in values if value is not None]
    if len(present) < len(values):
        return None
    ordered = sorted(present, key=scale.key)
    places = [(scale.bucket(value), scale.ordinal(value)) for value in ordered]
    runs: list[list[int]] = []
    for position, (bucket, ordinal) in enumerate(places):
        if runs and scale.dense and places[runs[-1][-1]] == (bucket, ordinal - 1):
            runs[-1].append(position)
        else:
            runs.append([position])
    return Runs(ordered, places, runs)


def constraint_of(values: set[str | None], scale: Scale, limit: int | None) -> Constraint | None:
    """The constraint on a column holding ``values``; None (unconstrained) when one is null."""
    return limited(runs_of(values, scale), scale, limit)


def limited(found: Runs | None, scale: Scale, limit: int | None) -> Constraint | None:
    """The constraint of a column's runs.

    ``limit`` None: exact (dense runs of three or more become ranges, the rest is listed).
    Otherwise at most ``limit`` ranges and listed values, joined over the smallest gaps first;
    a column that cannot be ranged and has more values than that is unconstrained.
    """
    if found is None:
        return UNCONSTRAINED
    ordered, runs = found.ordered, found.runs
    if limit is not None and len(runs) > limit:
        if not scale.ranged:
            return UNCONSTRAINED
        runs = _join_runs(runs, found.places, limit)
    listed: list[str] = []
    spans: list[tuple[str, str]] = []
    volume = 0
    for run in runs:
        low, high = ordered[run[0]], ordered[run[-1]]
        if len(run) == 1 or (len(run) == 2 and scale.dense):
            listed.extend(ordered[position] for position in run)
            volume += len(run)
        else:
            spans.append((low, high))
            volume += scale.span_volume(low, high)
    return Constraint(tuple(listed), tuple(spans), volume)


def _join_runs(runs: list[list[int]], places: list[tuple[int, int]], limit: int) -> list[list[int]]:
    """Neighbouring runs of one bucket joined over the smallest gaps, to at most ``limit`` runs
    (or one per bucket, when there are more buckets: a range cannot cross them)."""
    gaps = []
    forced = 0
    for index in range(len(runs) - 1):
        (left_bucket, left), (right_bucket, right) = (
            places[runs[index][-1]],
            places[runs[index + 1][0]],
        )
        if left_bucket != right_bucket:
            forced += 1
        else:
            gaps.append((right - left, index))
    kept = max(limit - 1 - forced, 0)
    cuts = {index for _, index in sorted(gaps, reverse=True)[:kept]}
    joined = [list(runs[0])]
    for index in range(len(runs) - 1):
        left_bucket, right_bucket = places[runs[index][-1]][0], places[runs[index + 1][0]][0]
        if index in cuts or left_bucket != right_bucket:
            joined.append(list(runs[index + 1]))
        else:
            joined[-1].extend(runs[index + 1])
    return joined


# -- JSON of conditions --------------------------------------------------------------------------


def compare_json(column: str, comparison: str, value: str) -> Json:
    return {
        "type": "compare",
        "left": {"type": "field", "field": column},
        "right": {"type": "literal", "value": value},
        "comparison": comparison,
    }


def balanced(conditions: Sequence[Json], operator: str) -> Json:
    if len(conditions) == 1:
        return conditions[0]
    middle = len(conditions) // 2
    return {
        "type": "binary",
        "left": balanced(conditions[:middle], operator),
        "right": balanced(conditions[middle:], operator),
        "operator": operator,
    }


def constraint_json(column: str, constraint: Constraint) -> Json:
    pieces = [compare_json(column, "EQUAL", value) for value in constraint.values]
    pieces += [
        balanced(
            [
                compare_json(column, "GREATER_EQUAL_THAN", low),
                compare_json(column, "LESS_EQUAL_THAN", high),
            ],
            "AND",
        )
        for low, high in constraint.spans
    ]
    return balanced(pieces, "OR")
