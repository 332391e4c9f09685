"""Sound condensation: the most precise condition that fits in a byte budget.

A condition is *condensed* when it is replaced by one that holds for every row the original holds
for (a superset, never a subset) and whose JSON takes at most ``max_bytes``. What a person would
write by hand for the same selection is what comes out:

- a list of partitions becomes, per partition column, a value list or a range
  (``business_date >= '2024-01-01' AND business_date <= '2024-03-31' AND country IN (...)``), or
  a short ``OR`` of such boxes when the selection is several separate blocks;
- a list of locations becomes their parent directories, the deepest that fit;
- a long ``OR`` of equalities on one field (a SQL ``IN``) becomes ranges of its values;
- inside ``AND`` a conjunct that does not fit is dropped, an ``OR`` shares the budget between its
  branches; what cannot be made to fit is ``None``: the whole dataset.

How ranges state their type is told in :mod:`openlineage_subset.producer._ranges`.

Among the conditions that fit, the one with the best estimated precision wins: the partitions
selected over the value combinations the condition admits. A date or integer range counts every
value in it; a range of text, or a column left unconstrained, counts twice the values seen in it
(it may hold values never seen), so a short list wins over a range of the same values.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii as _quoted
from typing import Any

from openlineage_subset.producer._ranges import (
    Constraint,
    Json,
    Scale,
    balanced,
    constraint_json,
    constraint_of,
    limited,
    runs_of,
)

_GROUP_LIMITS = (64, 16, 4, 1)
_SPAN_LIMITS = (16, 4, 1)


def json_size(value: Any) -> int:
    """Bytes of ``value`` as JSON with ASCII escapes and the default separators.

    That is the longest form a transport writes: compact separators or UTF-8 are never longer.

    >>> json_size({"a": "é"})
    15
    """
    return len(json.dumps(value))


@dataclass(frozen=True)
class Condensed:
    """A condensed condition (JSON, or None for the whole dataset) and what it cost."""

    condition: Json | None
    size: int
    """Bytes of ``condition`` as JSON (0 for None)."""
    exact: bool
    """Whether it holds for exactly what the original held for (nothing added)."""


# -- partitions ------------------------------------------------------------------------------------


_Extent = tuple[bool, int, int, frozenset[str]]


@dataclass
class _Group:
    """Partitions sharing one column's values: those values, and the rest of each partition.

    ``extent`` sums up each column (that one first, then the rest): whether it holds a null,
    its lowest and highest ordinal, and (for columns that are not dense) its values; enough to
    tell how much a join of groups admits without going over their partitions again.
    """

    values: set[str | None]
    rest: set[tuple[str | None, ...]]
    extent: list[_Extent] = field(default_factory=list)


@dataclass(frozen=True)
class _Box:
    """Partitions one column and, below it, a tree over the other columns (or a product)."""

    column: int
    constraint: Constraint | None
    children: tuple[_Box, ...] | None
    """An OR of boxes over the remaining columns; None when this is the last column."""


def condense_partitions(
    partitions: Iterable[Mapping[str, str | None]],
    max_bytes: int,
    *,
    max_listed: int | None = None,
) -> Condensed:
    """The most precise condition of at most ``max_bytes`` that holds for every partition.

    ``partitions`` are their dimensions (column to value as in the directory name, None for the
    null partition). They are listed exactly when that fits (and there are at most
    ``max_listed``), unless boxes of value lists and ranges say exactly the same in fewer
    bytes; else the boxes with the best estimated precision that fit; else None, the whole
    dataset.

    >>> from openlineage_subset import render
    >>> days = [f"2024-01-{d:02}" for d in range(1, 32)]
    >>> read = [{"day": d, "country": c} for d in days for c in ("DE", "PL")]
    >>> render(condense_partitions(read, 2_000).condition)
    "day >= '2024-01-01' AND day <= '2024-01-31' AND (country = 'DE' OR country = 'PL')"
    """
    rows = [dict(row) for row in partitions]
    columns = list(dict.fromkeys(key for row in rows for key in row))
    if not rows or not columns:
        return Condensed(None, 0, False)
    listed = None
    if max_listed is None or len(rows) <= max_listed:
        listed = _listed(rows, max_bytes)
        if listed is not None:
            max_bytes = json_size(listed) - 1  # only exact boxes smaller than the list compete
    tuples = {tuple(row.get(column) for column in columns) for row in rows}
    scales = [Scale(t[index] for t in tuples) for index in range(len(columns))]
    candidates = _candidates(tuples, list(range(len(columns))), scales, max_bytes)
    # Ranked by: exact (known by construction, never estimated), estimated precision, size.
    best: tuple[bool, float, int, Json] | None = None
    for boxes, exact in candidates:
        precision = len(tuples) / sum(_volume(box, scales) for box in boxes)
        if best is not None and (exact, precision) < best[:2]:
            continue
        if _min_size(boxes) > max_bytes:
            continue
        condition = _boxes_json(boxes, columns)
        if condition is None:
            continue
        size = json_size(condition)
        if size <= max_bytes and (best is None or (exact, precision, -size) > best[:3]):
            best = (exact, precision, -size, condition)
    if listed is not None and (best is None or not best[0]):
        return Condensed(listed, max_bytes + 1, True)
    if best is None:
        return Condensed(None, 0, False)
    return Condensed(best[3], -best[2], best[0])


def _listed(rows: list[dict[str, str | None]], max_bytes: int) -> Json | None:
    """The exact partition list, when it fits; sized exactly (as :func:`json_size` would) row by
    row before it is built, so a long list stops costing once it is too long."""
    size = _LIST_HEADER - 2
    for row in rows:
        size += 2 + _ROW_HEADER + sum(len(_quoted(key)) + 2 for key in row)
        size += sum(4 if value is None else len(_quoted(value)) for value in row.values())
        size += 2 * max(len(row) - 1, 0)
        if size > max_bytes:
            return None
    return {"type": "partition", "partitions": [{"dimensions": row} for row in rows]}


_LIST_HEADER = json_size({"type": "partition", "partitions": []})
_ROW_HEADER = json_size({"dimensions": {}})


def _candidates(
    tuples: set[tuple[str | None, ...]], columns: list[int], scales: list[Scale], max_bytes: int
) -> Iterable[tuple[tuple[_Box, ...], bool]]:
    """Boxes, and whether they are known to be exact: from the exact decomposition down to one
    box with columns left out."""
    position, groups = _grouped(tuples, columns)
    if 180 * len(groups) <= max_bytes:  # else the exact boxes cannot fit: not worth building
        # Exact unless a null partition left a column unconstrained.
        yield _exact(tuples, columns, scales), not any(None in t for t in tuples)
    column = columns[position]
    rest_columns = columns[:position] + columns[position + 1 :]
    scale = scales[column]

    def first(group: _Group) -> Any:
        present = [value for value in group.values if value is not None]
        return (0, scale.key(min(present, key=scale.key))) if present else (1,)

    ordered_scales = [scale, *(scales[rest] for rest in rest_columns)]
    for group in groups:
        group.extent = [
            _extent(group.values, scale),
            *(
                _extent({r[i] for r in group.rest}, scales[rest])
                for i, rest in enumerate(rest_columns)
            ),
        ]

    def volume(group: _Group) -> int:
        return _extent_volume(group, ordered_scales)

    groups.sort(key=first)
    for limit in _GROUP_LIMITS:
        groups = _merge_groups(groups, limit, volume)
        # Each group's runs per column are worked out once for every span limit.
        runs = [
            [
                (column, scale, runs_of(group.values, scale)),
                *(
                    (rest, scales[rest], runs_of({r[i] for r in group.rest}, scales[rest]))
                    for i, rest in enumerate(rest_columns)
                ),
            ]
            for group in groups
        ]
        for spans in _SPAN_LIMITS:
            boxes = tuple(
                _chain([(at, limited(found, on, spans)) for at, on, found in group_runs])
                for group_runs in runs
            )
            yield boxes, False
    # The last resort: the one box, its widest constraints left out one by one.
    constrained = _flatten_box(
        _chain(
            [
                (index, constraint_of({t[index] for t in tuples}, scales[index], 1))
                for index in columns
            ]
        )
    )
    while len(constrained) > 1:
        widest = max(constrained, key=lambda item: len(item[1].values) + 2 * len(item[1].spans))
        constrained = [item for item in constrained if item is not widest]
        yield (_chain(constrained),), False


def _exact(
    tuples: set[tuple[str | None, ...]], columns: list[int], scales: list[Scale]
) -> tuple[_Box, ...]:
    """The boxes that hold exactly ``tuples``: grouped by the most varied column's values."""
    position, groups = _grouped(tuples, columns)
    column = columns[position]
    if len(columns) == 1:
        values = {t[0] for t in tuples}
        return (_Box(column, constraint_of(values, scales[column], None), None),)
    rest_columns = columns[:position] + columns[position + 1 :]
    return tuple(
        _Box(
            column,
            constraint_of(group.values, scales[column], None),
            _exact(group.rest, rest_columns, scales),
        )
        for group in groups
    )


def _grouped(tuples: set[tuple[str | None, ...]], columns: list[int]) -> tuple[int, list[_Group]]:
    """The most varied column's position, and its values grouped by the rest they come with."""
    distinct = [len({t[index] for t in tuples}) for index in range(len(columns))]
    position = max(range(len(columns)), key=lambda index: (distinct[index], -index))
    rests: dict[str | None, set[tuple[str | None, ...]]] = {}
    for t in tuples:
        rests.setdefault(t[position], set()).add(t[:position] + t[position + 1 :])
    by_rest: dict[frozenset[tuple[str | None, ...]], set[str | None]] = {}
    for value, rest in rests.items():
        by_rest.setdefault(frozenset(rest), set()).add(value)
    return position, [_Group(values, set(rest)) for rest, values in by_rest.items()]


def _merge_groups(
    groups: list[_Group], limit: int, volume: Callable[[_Group], int]
) -> list[_Group]:
    """Neighbouring groups joined, the join that adds least first, until at most ``limit``."""
    if len(groups) > 4 * limit:  # many groups: join runs of neighbours first
        size = -(-len(groups) // (4 * limit))
        groups = [_union(groups[i : i + size]) for i in range(0, len(groups), size)]
    volumes = [volume(group) for group in groups]

    def join(index: int) -> tuple[int, _Group]:
        joined = _union(groups[index : index + 2])
        return volume(joined) - volumes[index] - volumes[index + 1], joined

    joins = [join(index) for index in range(len(groups) - 1)]
    while len(groups) > limit:
        index = min(range(len(joins)), key=lambda i: joins[i][0])
        joined = joins[index][1]
        groups[index : index + 2] = [joined]
        volumes[index : index + 2] = [volume(joined)]
        del joins[index]
        if index > 0:
            joins[index - 1] = join(index - 1)
        if index < len(groups) - 1:
            joins[index] = join(index)
    return groups


def _union(groups: Sequence[_Group]) -> _Group:
    values: set[str | None] = set()
    rest: set[tuple[str | None, ...]] = set()
    for group in groups:
        values |= group.values
        rest |= group.rest
    extent = [
        (
            any(part[0] for part in parts),
            min(part[1] for part in parts),
            max(part[2] for part in parts),
            frozenset().union(*(part[3] for part in parts)),
        )
        for parts in zip(*(group.extent for group in groups), strict=True)
    ]
    return _Group(values, rest, extent)


def _extent(values: set[str | None], scale: Scale) -> _Extent:
    present = {value for value in values if value is not None}
    ordinals = [scale.ordinal(value) for value in present] if scale.dense else [0]
    listed = frozenset() if scale.dense else frozenset(present)
    return (None in values, min(ordinals, default=0), max(ordinals, default=0), listed)


def _extent_volume(group: _Group, scales: list[Scale]) -> int:
    """How many value combinations the product of a group's column extents admits."""
    volume = 1
    for (null, low, high, values), scale in zip(group.extent, scales, strict=True):
        if null:
            volume *= scale.whole
        elif scale.dense:
            volume *= high - low + 1
        else:
            volume *= max(len(values), 1)
    return volume


def _chain(constraints: Sequence[tuple[int, Constraint | None]]) -> _Box:
    """One box: the product of per-column constraints, as a chain of single-child boxes."""
    column, constraint = constraints[0]
    children = (_chain(constraints[1:]),) if len(constraints) > 1 else None
    return _Box(column, constraint, children)


def _min_size(boxes: Sequence[_Box]) -> int:
    """A lower bound of the boxes' JSON size: every comparison takes at least 90 bytes."""
    comparisons = 0
    stack = list(boxes)
    while stack:
        box = stack.pop()
        if box.constraint is not None:
            comparisons += len(box.constraint.values) + 2 * len(box.constraint.spans)
        stack.extend(box.children or ())
    return 90 * comparisons


def _flatten_box(box: _Box) -> list[tuple[int, Constraint]]:
    found = [] if box.constraint is None else [(box.column, box.constraint)]
    if box.children:
        assert len(box.children) == 1
        found += _flatten_box(box.children[0])
    return found


def _volume(box: _Box, scales: list[Scale], seen: frozenset[int] = frozenset()) -> int:
    """How many value combinations a box admits (columns it leaves out count whole)."""
    own = scales[box.column].whole if box.constraint is None else box.constraint.volume
    covered = seen | {box.column}
    if not box.children:
        left_out = 1
        for index, scale in enumerate(scales):
            if index not in covered:
                left_out *= scale.whole
        return own * left_out
    return own * sum(_volume(child, scales, covered) for child in box.children)


def _boxes_json(boxes: Sequence[_Box], columns: list[str]) -> Json | None:
    """An OR of the boxes; None when one of them admits everything."""
    branches = []
    for box in boxes:
        branch = _box_json(box, columns)
        if branch is None:
            return None
        branches.append(branch)
    return balanced(branches, "OR")


def _box_json(box: _Box, columns: list[str]) -> Json | None:
    parts = []
    if box.constraint is not None:
        parts.append(constraint_json(columns[box.column], box.constraint))
    if box.children:
        below = _boxes_json(box.children, columns)
        if below is not None:
            parts.append(below)
    return balanced(parts, "AND") if parts else None


# -- locations ------------------------------------------------------------------------------------


def condense_locations(
    locations: Iterable[str], max_bytes: int, *, max_listed: int | None = None
) -> Condensed:
    """The locations, else their parent directories, the deepest level whose list fits.

    A location holds everything below it, so a parent covers its children. Parents are never
    taken above the locations' common directory; None when even that one does not fit.

    >>> files = [f"s3://b/sales/day={d}/part-{n}.parquet" for d in (1, 2) for n in range(400)]
    >>> condense_locations(files, 200).condition["locations"]
    ['s3://b/sales/day=1', 's3://b/sales/day=2']
    """
    paths = sorted(set(locations))
    if not paths:
        return Condensed(None, 0, False)
    if max_listed is None or len(paths) <= max_listed:
        exact = _location_json(paths)
        if json_size(exact) <= max_bytes:
            return Condensed(exact, json_size(exact), True)
    split = [path.rstrip("/").split("/") for path in paths]
    common = 0
    while all(len(parts) > common for parts in split) and len({p[common] for p in split}) == 1:
        common += 1
    # A parent must stay a directory of some location: never cut into a scheme's "//".
    floor = max(common, _shallowest(paths[0]))
    for depth in range(max(len(parts) for parts in split) - 1, floor - 1, -1):
        parents = sorted({"/".join(parts[:depth]) for parts in split})
        if len(parents) > (max_listed or len(parents)):
            continue
        condition = _location_json(parents)
        size = json_size(condition)
        if size <= max_bytes:
            return Condensed(condition, size, False)
    return Condensed(None, 0, False)


def _shallowest(path: str) -> int:
    """Segments a parent keeps at least: ``s3://bucket`` (three), ``file:///top`` (four: no
    authority, so the first directory) or ``/top`` (two). ``file://`` alone names no directory.
    """
    _, separator, rest = path.partition("://")
    if not separator:
        return 2
    return 4 if rest.startswith("/") else 3


def _location_json(paths: Sequence[str]) -> Json:
    return {"type": "location", "locations": list(paths)}


# -- any condition --------------------------------------------------------------------------------


def condense(condition: Mapping[str, Any] | None, max_bytes: int) -> Condensed:
    """``condition`` (JSON) if it fits in ``max_bytes``, else the most precise sound one that does.

    >>> from openlineage_subset import dump, field, render
    >>> wide = dump(field("customer_id").isin(range(1000, 3000)) & (field("country") == "PL"))
    >>> render(condense(wide, 600).condition)
    "customer_id >= 1000 AND customer_id <= 2999 AND country = 'PL'"
    """
    if condition is None:
        return Condensed(None, 0, False)
    size = json_size(condition)
    if size <= max_bytes:
        return Condensed(dict(condition), size, True)
    result = _shrink(condition, max_bytes)
    if result is None:
        return Condensed(None, 0, False)
    return Condensed(result, json_size(result), False)


def _shrink(condition: Mapping[str, Any], budget: int) -> Json | None:
    """A condition of at most ``budget`` bytes implied by ``condition``, or None (everything)."""
    size = json_size(condition)
    if size <= budget:
        return dict(condition)
    kind = condition.get("type")
    if kind == "partition":
        rows = [p.get("dimensions") or {} for p in condition.get("partitions") or ()]
        return condense_partitions(rows, budget).condition
    if kind == "location":
        return condense_locations(condition.get("locations") or (), budget).condition
    if kind != "binary":
        return None  # one comparison too long to keep: nothing smaller says the same
    operator = condition.get("operator")
    if operator == "AND":
        return _shrink_all(_flat(condition, "AND"), budget)
    if operator == "OR":
        return _shrink_any(_flat(condition, "OR"), budget)
    return None


def _flat(condition: Mapping[str, Any], operator: str) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    stack = [condition]
    while stack:
        node = stack.pop()
        if node.get("type") == "binary" and node.get("operator") == operator:
            stack += [node["right"], node["left"]]
        else:
            found.append(node)
    return found


def _shrink_all(conjuncts: list[Mapping[str, Any]], budget: int) -> Json | None:
    """Conjuncts kept smallest first while they fit; one that does not is shrunk or dropped."""
    overhead = 60
    kept: list[tuple[int, Json]] = []
    room = budget
    ordered = sorted(enumerate(conjuncts), key=lambda item: json_size(item[1]))
    for index, conjunct in ordered:
        cost = overhead if kept else 0
        smaller = _shrink(conjunct, room - cost) if room - cost > 0 else None
        if smaller is not None:
            kept.append((index, smaller))
            room -= json_size(smaller) + cost
    if not kept:
        return None
    return balanced([conjunct for _, conjunct in sorted(kept, key=lambda item: item[0])], "AND")


def _shrink_any(disjuncts: list[Mapping[str, Any]], budget: int) -> Json | None:
    """Equalities of one field become its ranges; every branch then gets its share."""
    by_field: dict[str, list[str]] = {}
    others: list[Mapping[str, Any]] = []
    for disjunct in disjuncts:
        column_value = _equality(disjunct)
        if column_value is None:
            others.append(disjunct)
        else:
            by_field.setdefault(column_value[0], []).append(column_value[1])
    sized: list[tuple[str, Any]] = [("values", item) for item in by_field.items()]
    sized += [("condition", other) for other in others]
    overhead = 60 * (len(sized) - 1)
    shares = fair_shares([_branch_size(kind, item) for kind, item in sized], budget - overhead)
    branches = []
    for (kind, item), share in zip(sized, shares, strict=True):
        if kind == "values":
            column, values = item
            rows = [{column: value} for value in values]
            branch = condense_partitions(rows, share, max_listed=0).condition
        else:
            branch = _shrink(item, share)
        if branch is None:
            return None  # a branch that admits everything makes the OR admit everything
        branches.append(branch)
    return balanced(branches, "OR")


def _branch_size(kind: str, item: Any) -> int:
    if kind == "values":
        column, values = item
        return sum(100 + len(column) + len(value) for value in values)
    return json_size(item)


def _equality(condition: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, value) of ``field = 'value'`` (either way round), else None."""
    if condition.get("type") != "compare" or condition.get("comparison") != "EQUAL":
        return None
    sides = {}
    for side in (condition.get("left"), condition.get("right")):
        if isinstance(side, Mapping):
            sides[side.get("type")] = side.get("field") or side.get("value")
    column, value = sides.get("field"), sides.get("literal")
    if isinstance(column, str) and isinstance(value, str) and len(sides) == 2:
        return column, value
    return None


def fair_shares(sizes: Sequence[int], budget: int) -> list[int]:
    """Split ``budget`` so that what fits keeps its size and the rest share equally (max-min).

    >>> fair_shares([100, 5_000, 9_000], 6_100)
    [100, 3000, 3000]
    """
    shares = [0] * len(sizes)
    waiting = sorted(range(len(sizes)), key=lambda index: sizes[index])
    room = max(budget, 0)
    while waiting:
        even = room // len(waiting)
        index = waiting[0]
        if sizes[index] <= even:
            shares[index] = sizes[index]
            room -= sizes[index]
            waiting.pop(0)
            continue
        for index in waiting:
            shares[index] = even
        break
    return shares
