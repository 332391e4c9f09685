"""The cells of the report's partition grids and the rules that lay grids out: a cell's
state (how strong, for what a cut grid keeps), which rows or columns a long grid keeps, how
values sort and print, and which partition keys the cells drawn may be.

:mod:`._picture` builds the grids from an answer with these; :mod:`._grids` draws them.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
import re
from collections.abc import Mapping
from typing import Literal

from openlineage_subset.lineage import DatasetColumns
from openlineage_subset.producer import NULL_PARTITION

CellState = Literal["affected", "possible", "written", "earlier", "read", "known"]
"""Strongest first. ``possible``: possibly affected (impact), possibly read or written
(provenance). ``known``: a known partition the answer says nothing of. ``earlier``: (a
dataset's own grid) last written by an earlier run than the dataset's latest writer."""
RANK: dict[CellState, int] = {
    "known": 0,
    "read": 1,
    "earlier": 1,
    "written": 2,
    "possible": 3,
    "affected": 4,
}
"""How strong each state is: a cut grid keeps the strongest first. Every state has one (a
dataset's own grid draws ``earlier``: a dataset page of more columns than a grid draws
failed on it)."""
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_NEIGHBOURS = 2
"""Rows of context drawn above and below each row with a cell in the answer."""


@dataclasses.dataclass(frozen=True)
class GridCell:
    """A partition's colour and the facts behind it (one line each: which run, how sure)."""

    state: CellState
    notes: tuple[str, ...]
    choice: str | None = None
    """What a form sends for this cell when it can be selected (the service's dataset page:
    a checkbox named ``p``); None: a cell to look at only."""


def candidate_keys(
    columns: DatasetColumns,
    down: str,
    across: tuple[str, ...],
    drawn_rows: tuple[list[str], Mapping[str, set[str | None]]],
    drawn_columns: tuple[list[str], Mapping[str, set[tuple[str | None, ...]]]],
) -> dict[str, tuple[str, str]]:
    """The key of each partition a drawn cell may be, with its (row, column): each drawn row's
    values with each drawn column's that some known partition has (``columns.others``)."""
    shape = columns.shape
    rows, raw_rows = drawn_rows
    kept_columns, raw_columns = drawn_columns
    candidates: dict[str, tuple[str, str]] = {}
    if down == shape[0]:  # each column's values of the other columns, found once
        spots = [across.index(name) for name in shape[1:]]
        others = [
            (column, [tuple(combo[spot] for spot in spots) for combo in raw_columns[column]])
            for column in kept_columns
        ]
        for row in rows:
            for value in raw_rows[row]:
                if value is None:
                    continue
                for column, found in others:
                    for other in found:
                        if other in columns.others:
                            candidates[columns.key(value, other)] = (row, column)
        return candidates
    for row in rows:
        for value in raw_rows[row]:
            for column in kept_columns:
                for combo in raw_columns[column]:
                    values = {down: value, **dict(zip(across, combo, strict=True))}
                    first, other = values[shape[0]], tuple(values[c] for c in shape[1:])
                    if first is not None and other in columns.others:
                        candidates[columns.key(first, other)] = (row, column)
    return candidates


def is_day(value: str) -> bool:
    """Whether a partition value is a date as ``YYYY-MM-DD`` (a grid of them is a calendar).

    >>> is_day("2024-02-29"), is_day("2023-02-29"), is_day("20240101")
    (True, False, False)
    """
    if not _DAY.fullmatch(value):
        return False
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def shown_value(value: str | None) -> str:
    return NULL_PARTITION if value is None else value


def natural(value: str) -> tuple[int, float, str]:
    """Numbers in numeric order before other values in text order (dates sort as text)."""
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def kept(
    values: list[str],
    cells: Mapping[tuple[str, str], GridCell],
    axis: int,
    most: int,
    *,
    latest: bool = False,
    fill: bool = False,
) -> tuple[list[str], list[int]]:
    """At most ``most`` of ``values`` (rows or columns), in order: those with a cell the answer
    marks and their neighbours (none marked: the first ones; ``latest``: the last ones; with
    ``fill``, then the nearest others up to ``most``, so that a calendar is a stretch of days;
    the strongest marks first);
    and before each value kept, how many were left out just before it (the last number: after
    the last one kept)."""
    if len(values) <= most:
        return values, [0] * (len(values) + 1)
    if latest:
        cut = len(values) - most
        return values[cut:], [cut] + [0] * most
    marked: dict[str, int] = {}
    for key, cell in cells.items():
        if cell.state != "known":
            marked[key[axis]] = max(marked.get(key[axis], 0), RANK[cell.state])
    # The strongest first (what the answer is about before what its runs read besides), so a
    # cut grid keeps the answer's own partitions.
    wanted = sorted(
        (number for number, value in enumerate(values) if value in marked),
        key=lambda number: -marked[values[number]],
    )
    near = [
        around
        for number in wanted
        for around in range(number - _NEIGHBOURS, number + _NEIGHBOURS + 1)
        if 0 <= around < len(values)
    ]
    order = wanted + near if wanted else list(range(len(values)))
    if fill and wanted:
        in_order = sorted(wanted)
        order += sorted(range(len(values)), key=lambda number: _distance(in_order, number))
    chosen = sorted(list(dict.fromkeys(order))[:most])
    gaps = [later - earlier - 1 for earlier, later in zip([-1, *chosen[:-1]], chosen, strict=True)]
    return [values[number] for number in chosen], [*gaps, len(values) - 1 - chosen[-1]]


def _distance(marked: list[int], number: int) -> int:
    """How far ``number`` is from the nearest of ``marked`` (sorted)."""
    place = bisect.bisect_left(marked, number)
    return min(abs(marked[at] - number) for at in (place - 1, place) if 0 <= at < len(marked))
