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
:func:`legend_html`, and :data:`GRID_STYLE`, the CSS they need.
"""

from __future__ import annotations

import calendar
import functools
from collections.abc import Collection, Iterable

from openlineage_subset.report._cells import CellState, is_day
from openlineage_subset.report._markup import attribute, lines, text
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


def legend_html(query: str) -> str:
    """The colours of ``query``'s grids (``impact``, ``provenance``, ``overview``)."""
    states: dict[str, str] = dict(LEGEND[query].items())
    states.update(_EXTRA_LEGEND)
    items = (
        f'<span><span class="swatch {state}"></span>{text(label)}</span>'
        for state, label in states.items()
    )
    return f'<p class="legend">{"".join(items)}</p>'


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
    name = text(grid.dataset)
    if link is not None:
        name = f'<a href="{attribute(link)}">{name}</a>'
    title = f"<h3>{name}</h3>" if heading else ""
    whole = ""
    if grid.whole is not None:
        whole = (
            f'<p title="{lines(grid.whole.notes, attribute)}">'
            f'<span class="swatch {grid.whole.state}"></span>the whole dataset: '
            f"{text(grid.whole.state)} ({text('; '.join(grid.whole.notes[:3]))})</p>"
        )
    if grid.down is None:
        if not whole:
            whole = '<p class="note">No partition columns, and nothing of it in the answer.</p>'
        return title + whole
    days = grid.rows and all(map(is_day, grid.rows))
    body = _calendar(grid, selected) if days else _table(grid, selected)
    more = (
        f'<p class="note">{grid.hidden_columns} column(s) not drawn.</p>'
        if grid.hidden_columns
        else ""
    )
    return (
        f'{title}{whole}<div class="scroll"><table class="grid" '
        f'data-dataset="{attribute(grid.dataset)}">{body}</table></div>{more}'
    )


def _label(value: str, *, scope: str, extra: str = "") -> str:
    """A header cell: the label cut in its middle, the whole of it on hover."""
    kind = f' class="{extra}"' if extra else ""
    return (
        f'<th scope="{scope}"{kind} title="{attribute(value)}">'
        f"{text(value, limit=_HEADER_COLUMNS)}</th>"
    )


def _table(grid: Grid, selected: Collection[str]) -> str:
    """One partition column down, the others across."""
    across = "/".join(grid.across)
    long = any(len(column) > 3 for column in grid.columns)
    header = "".join(
        _label(column, scope="col", extra="long" if long else "") for column in grid.columns
    )
    corner = f"{grid.down} \u2193" + (f" / {across} \u2192" if across else "")
    rows = []
    for number, row in enumerate(grid.rows):
        if grid.row_gaps[number]:
            rows.append(_gap(grid.row_gaps[number], len(grid.columns) + 1))
        cells = "".join(_cell(grid, row, column, selected) for column in grid.columns)
        rows.append(f"<tr>{_label(row, scope='row')}{cells}</tr>")
    if grid.row_gaps[-1]:
        rows.append(_gap(grid.row_gaps[-1], len(grid.columns) + 1))
    return (
        f'<thead><tr><th scope="col" class="corner">{text(corner)}</th>{header}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody>"
    )


def _calendar(grid: Grid, selected: Collection[str]) -> str:
    """Days across (1 to 31), a band per month down, a row per value of the other columns in
    each band; months without a drawn day are left out and counted."""
    kept = set(grid.rows)
    left_out = _Between(grid.rows, grid.row_gaps)
    months = sorted({row[:7] for row in grid.rows})
    across = "/".join(grid.across)
    corner = f"{grid.down} \u2192" + (f" / {across} \u2193" if across else "")
    header = "".join(f'<th scope="col">{day}</th>' for day in range(1, 32))
    extra = 2 if grid.across else 1
    body: list[str] = []
    previous: tuple[int, int] | None = None
    for month in months:
        year, number = int(month[:4]), int(month[5:7])
        if previous is not None:
            skipped = (year - previous[0]) * 12 + number - previous[1] - 1
            if skipped:
                body.append(_gap(skipped, 31 + extra, "month(s) without a drawn day"))
        previous = (year, number)
        days = calendar.monthrange(year, number)[1]
        for place, column in enumerate(grid.columns):
            cells = []
            for day in range(1, 32):
                date = f"{month}-{day:02d}"
                if day > days:
                    cells.append('<td class="void"></td>')
                elif date in kept:
                    cells.append(_cell(grid, date, column, selected))
                elif left_out(date):
                    where = _where(grid, date, column)
                    cells.append(f'<td class="hidden" title="{where}: not drawn"></td>')
                else:
                    cells.append(_cell(grid, date, column, selected))
            heads = ""
            if place == 0:
                span = f' rowspan="{len(grid.columns)}"' if len(grid.columns) > 1 else ""
                heads = f'<th scope="rowgroup" class="month"{span}>{text(month)}</th>'
            if grid.across:
                heads += _label(column, scope="row")
            kind = ' class="month"' if place == 0 else ""
            body.append(f"<tr{kind}>{heads}{''.join(cells)}</tr>")
    if grid.row_gaps[-1]:
        body.append(_gap(grid.row_gaps[-1], 31 + extra))
    if grid.row_gaps[0]:
        body.insert(0, _gap(grid.row_gaps[0], 31 + extra))
    return (
        f'<thead><tr><th scope="col" class="corner" colspan="{extra}">{text(corner)}</th>'
        f"{header}</tr></thead><tbody>{''.join(body)}</tbody>"
    )


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


def _gap(count: int, columns: int, what: str = "row(s) not drawn") -> str:
    return f'<tr class="gap"><td colspan="{columns}">\u2026 {count} {what}</td></tr>'


_escaped = functools.lru_cache(maxsize=16_384)(attribute)
""":func:`attribute` of the texts every cell repeats (a row's value, a column's, a note of the
runs behind many cells), worked out once: a grid has thousands of cells."""


def _where(grid: Grid, row: str, column: str) -> str:
    """The partition of a cell, escaped for an attribute."""
    where = _escaped(f"{grid.down}=") + _escaped(row)
    if column:
        where += _escaped(f", {'/'.join(grid.across)}=") + _escaped(column)
    return where


def _cell(grid: Grid, row: str, column: str, selected: Collection[str] = ()) -> str:
    cell = grid.cells.get((row, column))
    where = _where(grid, row, column)
    if cell is None:
        return f'<td class="none" title="{where}: no such partition"></td>'
    box = ""
    if cell.choice is not None:
        checked = " checked" if cell.choice in selected else ""
        box = (
            f'<label class="pick"><input type="checkbox" name="p" '
            f'value="{attribute(cell.choice)}" aria-label="{where}"{checked}></label>'
        )
    title = "\n".join([where, *map(_escaped, cell.notes)])  # as lines(): each line alone
    return f'<td class="{cell.state}" title="{title}">{box}</td>'
