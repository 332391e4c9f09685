"""The partition grids of a :class:`~._picture.Picture` as HTML tables, and their legend.

A grid whose rows are dates (``YYYY-MM-DD``, the usual partition column) is drawn as a
calendar: a column per day of the month, a band of rows per month, and in each band one row per
value of the other partition columns (a country, a region: tens of them still read as rows), so
a year of days by tens of countries is a page to scroll, not a line too long to see. Days the
grid left out (too many rows) are hatched apart from days that are no partition at all. Other
grids keep one partition column down and the others across. Every cell is coloured by the
strongest thing the answer says of it, its hover text names the partition and the runs behind
the colour; labels are short and horizontal where they can be, so the cells are not dwarfed by
their axes.

Entry points: :func:`grid_html` (one dataset's heading, whole-dataset line and table),
:func:`legend_html`, and :data:`GRID_STYLE`, the CSS they need. Here the table is laid out as
rows of cells; ``templates/grid.html`` and ``legend.html`` draw them.
"""

from __future__ import annotations

import calendar
import dataclasses
import functools
from collections.abc import Collection, Iterable
from typing import ClassVar

from openlineage_subset.report._cells import CellState, is_day
from openlineage_subset.report._markup import attribute
from openlineage_subset.report._picture import Grid
from openlineage_subset.report._templates import render

CELL = 18
"""A cell's side in pixels, its white border included."""
_HEADER_COLUMNS = 14
"""Columns of a label drawn across the top or down the side; the whole label on hover."""
LEGEND: dict[str, dict[CellState, str]] = {
    "impact": {
        "affected": "affected",
        "possible": "possibly affected",
        "read": "read by an affected run",
        "known": "known, not affected",
    },
    "provenance": {
        "written": "asked about: written by its latest writers",
        "read": "read by a run behind it",
        "possible": "possibly written or read",
        "known": "known, not in this answer",
    },
    "overview": {
        "written": "last written by a completed run",
        "possible": "possibly: its last write's condition depends on other columns",
        "known": "no completed write known (read only, or failed writes)",
    },
    "partitions": {
        "affected": "affected: a run that wrote it since its last completed write failed",
        "written": "last written by the dataset's latest writer",
        "earlier": "last written by an earlier run",
        "possible": "possibly: its last write's condition depends on other columns",
        "known": "no completed write known (read only, or failed writes)",
    },
}
_EXTRA_LEGEND = {"hidden": "not drawn (too many rows)", "none": "no such partition"}


GRID_STYLE = render("grids.css", cell=CELL)
"""The CSS of the legend and the grids."""

_Cell = tuple[str, str | None, str | None, str, bool]
"""A cell as ``grid.html`` draws it, texts escaped (the template draws them as they are): its
state (its class), its hover text (None: none), its checkbox's value (None: no checkbox), the
partition it names (the checkbox's label), whether it is ticked. A plain tuple: a grid has
thousands of cells, and the template's loop unpacks each rather than looking up its fields."""


@dataclasses.dataclass(frozen=True)
class _Row:
    """A row of cells: a table's value down, or in a calendar's month band the days of one
    value of the other columns."""

    cells: list[_Cell]
    label: str | None = None
    """A table's row value, or a calendar row's value of the other columns."""
    month: str | None = None
    """The first row of a calendar's month band: the month (``YYYY-MM``)."""
    span: int = 1
    """Rows of the month's band."""
    gap: ClassVar[bool] = False


@dataclasses.dataclass(frozen=True)
class _Gap:
    """A row standing for those left out: how many, of what."""

    count: int
    what: str = "row(s) not drawn"
    gap: ClassVar[bool] = True


@dataclasses.dataclass(frozen=True)
class _Table:
    """A grid's table as ``grid.html`` draws it: a corner label, the labels across (a
    table's ``columns`` or a calendar's ``days``), and its rows."""

    corner: str
    corner_span: int | None
    columns: tuple[str, ...]
    column_kind: str
    days: range
    width: int
    """Columns of a row, its labels included: the span of a gap's cell."""
    rows: list[_Row | _Gap]


@dataclasses.dataclass(frozen=True)
class DrawnGrid:
    """A grid as ``grid.html`` draws it: its table laid out (None: no partition columns), the
    heading if any, where the heading links."""

    grid: Grid
    table: _Table | None
    heading: bool
    link: str | None
    label_columns: int = _HEADER_COLUMNS


_VOID: _Cell = ("void", None, None, "", False)
"""A calendar's day past the end of its month."""


def legend_html(query: str) -> str:
    """The colours of ``query``'s grids (``impact``, ``provenance``, ``overview``)."""
    return render("legend.html", states=legend(query))


def legend(query: str) -> list[tuple[str, str]]:
    """What ``legend.html`` draws for ``query``: each state and what it means."""
    return [*LEGEND[query].items(), *_EXTRA_LEGEND.items()]


def grid_html(
    grid: Grid, selected: Collection[str] = (), *, heading: bool = True, link: str | None = None
) -> str:
    """``grid`` as HTML: a heading naming the dataset (unless not ``heading``), a line for a
    whole-dataset read or write, and a ``<table class="grid">`` (``data-dataset`` names it)
    whose cells have the state as class and the facts behind it as ``title``. A cell with a
    :attr:`~._picture.GridCell.choice` holds a checkbox named ``p`` with it as its value
    (checked when in ``selected``), for a form around the table. ``link``: where the heading
    links (the dataset's page, on a page that has one).

    Example::

        html = "".join(grid_html(grid) for grid in impact_picture(db, "lake/sales").grids)
    """
    return render("grid.html", drawn=drawn_grid(grid, selected, heading=heading, link=link))


def drawn_grid(
    grid: Grid, selected: Collection[str] = (), *, heading: bool = True, link: str | None = None
) -> DrawnGrid:
    """What ``grid.html`` draws of ``grid``; arguments as for :func:`grid_html`."""
    table = None
    if grid.down is not None:
        days = grid.rows and all(map(is_day, grid.rows))
        table = _calendar(grid, selected) if days else _table(grid, selected)
    return DrawnGrid(grid, table, heading, link)


def _table(grid: Grid, selected: Collection[str]) -> _Table:
    """One partition column down, the others across."""
    across = "/".join(grid.across)
    corner = f"{grid.down} \u2193" + (f" / {across} \u2192" if across else "")
    cell = _Cells(grid, selected)
    columns = [(column, cell.column(column)) for column in grid.columns]
    rows: list[_Row | _Gap] = []
    for number, row in enumerate(grid.rows):
        if grid.row_gaps[number]:
            rows.append(_Gap(grid.row_gaps[number]))
        where = cell.row(row)
        rows.append(
            _Row([cell(row, column, cell.at(where, part)) for column, part in columns], row)
        )
    if grid.row_gaps[-1]:
        rows.append(_Gap(grid.row_gaps[-1]))
    long = any(len(column) > 3 for column in grid.columns)
    return _Table(
        corner, None, grid.columns, "long" if long else "", range(0), len(grid.columns) + 1, rows
    )


def _calendar(grid: Grid, selected: Collection[str]) -> _Table:
    """Days across (1 to 31), a band per month down, a row per value of the other columns in
    each band; months without a drawn day are left out and counted."""
    kept = set(grid.rows)
    left_out = _Between(grid.rows, grid.row_gaps)
    cell = _Cells(grid, selected)
    months = sorted({row[:7] for row in grid.rows})
    across = "/".join(grid.across)
    corner = f"{grid.down} \u2192" + (f" / {across} \u2193" if across else "")
    rows: list[_Row | _Gap] = [_Gap(grid.row_gaps[0])] if grid.row_gaps[0] else []
    previous: tuple[int, int] | None = None
    for month in months:
        year, number = int(month[:4]), int(month[5:7])
        if previous is not None:
            skipped = (year - previous[0]) * 12 + number - previous[1] - 1
            if skipped:
                rows.append(_Gap(skipped, "month(s) without a drawn day"))
        previous = (year, number)
        dates = [f"{month}-{day:02d}" for day in range(1, calendar.monthrange(year, number)[1] + 1)]
        drawn = [(date, cell.row(date), date in kept or not left_out(date)) for date in dates]
        void = [_VOID] * (31 - len(dates))
        for place, column in enumerate(grid.columns):
            part = cell.column(column)
            cells = [
                cell(date, column, cell.at(where, part))
                if shown
                else cell.hidden(cell.at(where, part))
                for date, where, shown in drawn
            ]
            cells += void
            label = column if grid.across else None
            first = place == 0
            rows.append(_Row(cells, label, month if first else None, len(grid.columns)))
    if grid.row_gaps[-1]:
        rows.append(_Gap(grid.row_gaps[-1]))
    extra = 2 if grid.across else 1
    return _Table(corner, extra, (), "", range(1, 32), 31 + extra, rows)


class _Between:
    """Whether a day lies where the grid left rows out: between two drawn rows with a gap
    between them, before the first after a gap, or after the last before one."""

    def __init__(self, rows: Iterable[str], gaps: tuple[int, ...]) -> None:
        rows = list(rows)
        self.spans = [
            (rows[number - 1] if number else "", rows[number])
            for number in range(len(rows))
            if gaps[number]
        ]
        if gaps[-1] and rows:
            self.spans.append((rows[-1], "\uffff"))

    def __call__(self, day: str) -> bool:
        return any(low < day < high for low, high in self.spans)


_escaped = functools.lru_cache(maxsize=16_384)(attribute)
""":func:`attribute` of the texts every cell repeats (a row's value, a column's, a note of the
runs behind many cells), worked out once: a grid has thousands of cells."""


class _Cells:
    """The cells of one grid. Each one's hover text names its partition, the row's part and
    the column's, each escaped once: a grid has thousands of cells."""

    def __init__(self, grid: Grid, selected: Collection[str]) -> None:
        self.cells = grid.cells
        self.selected = selected
        self.down_last = grid.down_last
        across = "/".join(grid.across)
        # Named in the dataset's column order, whichever of them goes down.
        self.down = _escaped(f", {grid.down}=" if grid.down_last else f"{grid.down}=")
        self.across = _escaped(f"{across}=" if grid.down_last else f", {across}=")

    def at(self, row: str, column: str) -> str:
        """Where a cell is: its row's part and its column's, in the dataset's column order."""
        return column + row if self.down_last else row + column

    def row(self, value: str) -> str:
        """The row's part of where its cells are, escaped for an attribute."""
        return self.down + _escaped(value)

    def column(self, value: str) -> str:
        """The column's part of where its cells are (none for a grid of one column)."""
        return self.across + _escaped(value) if value else ""

    def __call__(self, row: str, column: str, where: str) -> _Cell:
        cell = self.cells.get((row, column))
        if cell is None:
            return ("none", f"{where}: no such partition", None, where, False)
        # Each line escaped alone: a line break in a name shows as its escape, not as a new line.
        title = "\n".join([where, *map(_escaped, cell.notes)])
        if cell.choice is None:
            return (cell.state, title, None, where, False)
        return (cell.state, title, attribute(cell.choice), where, cell.choice in self.selected)

    @staticmethod
    def hidden(where: str) -> _Cell:
        """A cell of a row the grid left out (too many rows)."""
        return ("hidden", f"{where}: not drawn", None, where, False)
