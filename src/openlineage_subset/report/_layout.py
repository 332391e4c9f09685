"""Where the boxes and edges of a layered graph go: coordinates only, no drawing.

A Sugiyama-style layout, left to right. Each node keeps the layer it is given (its column). An
edge that spans several layers gets a placeholder (a "dummy") in each layer in between, ordered
and spaced like a box of zero height, so that the edge passes through a slot of its own in
every column it crosses instead of behind the boxes there. The order within each column is
found by barycentre sweeps (each item moved to the mean position of its neighbours in the
column before, then after), keeping the order with the fewest crossings; heights are then
placed as near the neighbours' mean as the spacing allows (least squares under minimum gaps).

An edge is a chain of points: its start on a box's side, one point on each side of every
column it crosses (at its slot's height), its end on the other box's side. Between two points
at the same height it is straight; otherwise it crosses the empty channel between two columns
as a cubic curve whose control points lie inside that channel, so a curve stays between its
end points' ``x`` and never reaches into a column. An edge drawn backwards (to an earlier layer)
is laid out as if reversed and leaves and enters on the boxes' other sides; one between two
boxes of the same column turns around in a slot of the next column.

Pure Python, deterministic (same input, same coordinates), used by :mod:`._drawing`.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Mapping, Sequence

Point = tuple[float, float]

BOX_GAP = 18.0
"""Vertical space between two boxes of a column."""
SLOT_GAP = 8.0
"""Vertical space between two edges passing through a column (or an edge and a box, twice)."""
CHANNEL = 110.0
"""Width of the empty channel between two columns, where edges curve."""
MARGIN = 16.0
_SWEEPS = 12
_PLACEMENTS = 10


@dataclasses.dataclass(frozen=True)
class Box:
    """A node's rectangle: top-left corner, width and height."""

    key: str
    x: float
    y: float
    width: float
    height: float

    @property
    def middle(self) -> float:
        return self.y + self.height / 2


@dataclasses.dataclass(frozen=True)
class Route:
    """An edge's points, from its source's side to its target's: consecutive points at the
    same height are joined straight, others by :func:`path_data`'s curve."""

    source: str
    target: str
    points: tuple[Point, ...]
    backward: bool
    """Drawn to an earlier column, or within a column: it leaves and enters on other sides."""


@dataclasses.dataclass(frozen=True)
class Layout:
    width: float
    height: float
    boxes: Mapping[str, Box]
    routes: tuple[Route, ...]


@dataclasses.dataclass
class _Item:
    """A box or a dummy in one column while the layout is computed."""

    name: str
    layer: int
    height: float
    dummy: bool
    up: list[_Item] = dataclasses.field(default_factory=list)
    """Neighbours in the column before."""
    down: list[_Item] = dataclasses.field(default_factory=list)
    """Neighbours in the column after."""
    position: float = 0.0
    """Rank in its column while ordering; the height of its middle once placed."""


def layout(
    nodes: Sequence[tuple[str, int]],
    edges: Iterable[tuple[str, str]],
    *,
    box_width: float,
    box_height: float,
) -> Layout:
    """Boxes of ``box_width`` by ``box_height`` for ``nodes`` (key, layer), and a route for
    each edge (source key, target key) between two of them; other edges are left out.

    >>> shape = layout([("a", 0), ("b", 1), ("c", 2)], [("a", "b"), ("b", "c"), ("a", "c")],
    ...                box_width=100, box_height=40)
    >>> [len(route.points) for route in shape.routes]  # a -> c passes column 1 in a slot
    [2, 2, 4]
    >>> shape.boxes["b"].x - shape.boxes["a"].x
    210.0
    """
    if not nodes:
        return Layout(2 * MARGIN, 2 * MARGIN, {}, ())
    layers = sorted({layer for _, layer in nodes})
    column = {layer: number for number, layer in enumerate(layers)}
    boxes: dict[str, _Item] = {}
    for key, layer in nodes:
        boxes.setdefault(key, _Item(key, column[layer], box_height, dummy=False))
    slots: list[_Item] = []
    chains: list[tuple[str, str, list[_Item], bool]] = []
    for source, target in dict.fromkeys(edges):
        if source not in boxes or target not in boxes:
            continue
        start, end = boxes[source], boxes[target]
        if start.layer == end.layer:  # around a slot in the next column and back
            turn = _Item(f"{source}>{target}", start.layer + 1, 0.0, dummy=True)
            slots.append(turn)
            _link(start, turn)
            _link(end, turn)
            chains.append((source, target, [start, turn, end], True))
            continue
        backward = start.layer > end.layer
        first, last = (end, start) if backward else (start, end)
        chain = [first]
        for layer in range(first.layer + 1, last.layer):
            slots.append(_Item(f"{source}>{target}@{layer}", layer, 0.0, dummy=True))
            chain.append(slots[-1])
        chain.append(last)
        for before, after in itertools.pairwise(chain):
            _link(before, after)
        chains.append((source, target, chain[::-1] if backward else chain, backward))
    everything = [*boxes.values(), *slots]
    columns: list[list[_Item]] = [[] for _ in range(max(i.layer for i in everything) + 1)]
    for item in everything:
        columns[item.layer].append(item)
    _order(columns)
    _place(columns)
    return _result(columns, chains, box_width)


def _link(before: _Item, after: _Item) -> None:
    before.down.append(after)
    after.up.append(before)


def _ranked(columns: list[list[_Item]]) -> None:
    for members in columns:
        for rank, item in enumerate(members):
            item.position = float(rank)


def _order(columns: list[list[_Item]]) -> None:
    """Columns reordered to reduce crossings: barycentre sweeps down and up, keeping the best
    order seen (the first one on a tie, so that the result does not depend on luck)."""
    _ranked(columns)
    best = [list(members) for members in columns]
    fewest = _crossings(columns)
    for sweep in range(_SWEEPS):
        downward = sweep % 2 == 0
        numbers = range(1, len(columns)) if downward else range(len(columns) - 2, -1, -1)
        for number in numbers:
            members = columns[number]
            means = {
                id(item): _mean(
                    [other.position for other in (item.up if downward else item.down)],
                    item.position,
                )
                for item in members
            }
            members.sort(key=lambda item: means[id(item)])
            for rank, item in enumerate(members):
                item.position = float(rank)
        found = _crossings(columns)
        if found < fewest:
            fewest, best = found, [list(members) for members in columns]
        if fewest == 0:
            break
    columns[:] = best
    _ranked(columns)


def _mean(values: list[float], otherwise: float) -> float:
    return sum(values) / len(values) if values else otherwise


def _crossings(columns: list[list[_Item]]) -> int:
    """Edge crossings between each pair of neighbouring columns (inversions, with a Fenwick
    tree), at the items' current ranks."""
    total = 0
    for members in columns[:-1]:
        pairs = sorted(
            (int(item.position), int(after.position)) for item in members for after in item.down
        )
        size = max((after for _, after in pairs), default=0) + 1
        tree = [0] * (size + 1)
        for seen, (_, after) in enumerate(pairs):
            index, below = after + 1, 0
            while index > 0:
                below += tree[index]
                index -= index & -index
            total += seen - below
            index = after + 1
            while index <= size:
                tree[index] += 1
                index += index & -index
    return total


def _gap(above: _Item, below: _Item) -> float:
    """Distance between two neighbours' middles in a column."""
    gap = SLOT_GAP if above.dummy or below.dummy else BOX_GAP
    return (above.height + below.height) / 2 + gap


def _place(columns: list[list[_Item]]) -> None:
    """Heights: first stacked, then each column moved towards its neighbours' mean heights as
    far as the gaps allow, sweeping down and up; a slot weighs more than a box, so that long
    edges run straight."""
    for members in columns:
        middle = 0.0
        for number, item in enumerate(members):
            middle += _gap(members[number - 1], item) if number else item.height / 2
            item.position = middle
    for sweep in range(_PLACEMENTS):
        downward = sweep % 2 == 0
        numbers = range(1, len(columns)) if downward else range(len(columns) - 2, -1, -1)
        for number in numbers:
            members = columns[number]
            wanted = [
                _mean(
                    [other.position for other in (item.up if downward else item.down)],
                    _mean([other.position for other in item.up + item.down], item.position),
                )
                for item in members
            ]
            _settle(members, wanted)


def _settle(members: list[_Item], wanted: list[float]) -> None:
    """Middles as near ``wanted`` as possible (weighted least squares) with each pair of
    neighbours at least their gap apart: with the gaps taken off, a non-decreasing fit, found
    by pooling adjacent violators."""
    offsets = [0.0]
    for above, below in itertools.pairwise(members):
        offsets.append(offsets[-1] + _gap(above, below))
    blocks: list[list[float]] = []  # [mean, weight, count]
    for item, want, offset in zip(members, wanted, offsets, strict=True):
        weight = 2.0 if item.dummy else 1.0
        blocks.append([want - offset, weight, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, weight, count = blocks.pop()
            last = blocks[-1]
            total = last[1] + weight
            last[0] = (last[0] * last[1] + mean * weight) / total
            last[1], last[2] = total, last[2] + count
    number = 0
    for mean, _, count in blocks:
        for _ in range(int(count)):
            members[number].position = mean + offsets[number]
            number += 1


def _result(
    columns: list[list[_Item]], chains: list[tuple[str, str, list[_Item], bool]], width: float
) -> Layout:
    top = min(item.position - item.height / 2 for members in columns for item in members)
    shift = MARGIN - top
    for members in columns:
        for item in members:
            item.position += shift

    def left(layer: int) -> float:
        return MARGIN + layer * (width + CHANNEL)

    boxes = {
        item.name: Box(
            item.name, left(item.layer), item.position - item.height / 2, width, item.height
        )
        for members in columns
        for item in members
        if not item.dummy
    }
    routes = []
    for source, target, chain, backward in chains:
        # Stored from source to target; a backward chain runs right to left.
        turn = chain[0].layer == chain[-1].layer
        points: list[Point] = []
        for number, item in enumerate(chain):
            x = left(item.layer)
            if turn:  # both ends on the right of their boxes, the turn on the left of its slot
                points.append((x if item.dummy else x + width, item.position))
            elif not item.dummy:
                right = (number == 0) != backward
                points.append((x + width if right else x, item.position))
            else:
                ends = [(x, item.position), (x + width, item.position)]
                points.extend(ends[::-1] if backward else ends)
        routes.append(Route(source, target, tuple(points), backward or turn))
    bottom = max(item.position + item.height / 2 for members in columns for item in members)
    return Layout(
        left(len(columns) - 1) + width + MARGIN,
        bottom + MARGIN,
        boxes,
        tuple(routes),
    )


def path_data(points: Sequence[Point]) -> str:
    """An SVG path through ``points``: each step a cubic curve whose two control points share
    the step's middle ``x`` (straight when both ends are at one height), so it stays within
    the ``x`` range of its ends.

    >>> path_data([(0, 0), (10, 0), (30, 20)])
    'M 0 0 C 5 0, 5 0, 10 0 C 20 0, 20 20, 30 20'
    """
    (x, y), *rest = points
    steps = [f"M {_number(x)} {_number(y)}"]
    for next_x, next_y in rest:
        middle = _number((x + next_x) / 2)
        steps.append(
            f"C {middle} {_number(y)}, {middle} {_number(next_y)}, "
            f"{_number(next_x)} {_number(next_y)}"
        )
        x, y = next_x, next_y
    return " ".join(steps)


def _number(value: float) -> str:
    rounded = round(value, 1)
    return str(int(rounded)) if rounded == int(rounded) else str(rounded)
