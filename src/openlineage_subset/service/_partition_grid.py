"""A dataset's own partitions on the UI's dataset page, drawn as the answers' grids are.

The grid is :mod:`openlineage_subset.report`'s (a calendar for dates: a column per day,
a band per month, a row per value of the other columns in each band), each cell a checkbox
named ``p`` in the page's form, so that a click asks about a partition and several ticked
boxes are asked about together, with or without a script. A cell is coloured by its last
write (by the dataset's latest writer, by an earlier one, possibly, none known) and whether it
is affected: a run that wrote it after its last completed write failed (or was aborted), so
what it holds may be half written. Its hover text names the partition, the last writer and
the failed run. A long grid draws its newest rows (within the report's cells) and says how
many it left out; the page links the rows before them and after (``before``: the rows before
that value), and a partition a link selects is drawn with its rows.

The page works out the state of the partitions it draws only (:func:`drawn_partitions`): for
a dataset whose partitions all have the same columns, the first of them by name holding
values of plain text (days, most often), SQLite finds that column's values one search of the
key each, then the partitions of the newest values the grid has room for; the grid is then
arranged as :func:`~openlineage_subset.report.arranged` arranges all of them when that column
has the most values and the columns drawn are the first ones (the first 120 values of the
other columns among those partitions). A dataset of two columns whose rows are the second
(``country`` then ``day``) is drawn from the values of each (the second's kept at ingest),
its cells the pairs of drawn rows and columns that are known partitions. A first column of
more values than SQLite is asked for one by one (:data:`MOST_SEARCHED`: a million days) is
drawn from a stretch of them around the rows drawn, found the same way; the rows left out
before or after the stretch are said, not counted. Any other dataset is drawn from all its
partitions.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Mapping, Sequence

from markupsafe import Markup

from openlineage_subset import printable_json, read_json
from openlineage_subset.lineage import (
    DatasetRef,
    Dimensions,
    Lineage,
    LineageQueryError,
    PagePartitions,
    PartitionAxis,
    PartitionRef,
    PartitionsQuery,
    PartitionsReport,
    PartitionState,
    RunRef,
    shown_time,
)
from openlineage_subset.producer import NULL_PARTITION
from openlineage_subset.report import (
    MAX_CELLS,
    MAX_COLUMNS,
    MAX_DAYS,
    MAX_ROWS,
    UNCOUNTED,
    CellState,
    Grid,
    GridCell,
    arranged,
    grid_html,
    is_day,
    most_rows,
)

MOST_SEARCHED = 2_000
"""Values of a dataset's first partition column found one search each at most; beyond, its
page draws a stretch of them (the rows left out before and after it not counted)."""


def partition_value(partition: PartitionRef) -> str:
    """A partition as the UI's forms send it (``p``): its columns and values as JSON (what
    does not print as its JSON escape: shown in the page as it is sent back)."""
    dimensions = dict(partition.dimensions)
    return printable_json(json.dumps(dimensions, separators=(",", ":"), ensure_ascii=False))


def _unit(partition: PartitionRef) -> Dimensions:
    return tuple(sorted(partition.dimensions))


def _colour(state: PartitionState, latest: str | None, failed: RunRef | None) -> CellState:
    if failed is not None:
        return "affected"
    if state.writer is None or state.label is None:
        return "known"
    if state.label == "possible":
        return "possible"
    return "written" if state.writer.run_id == latest else "earlier"


def _cell(state: PartitionState, latest: str | None, failed: RunRef | None) -> GridCell:
    """The cell of a partition drawn: its colour, hover text and checkbox value."""
    notes: list[str] = []  # the grid puts the partition's columns and values first
    if state.writer is None or state.label is None:
        notes.append("no completed write known")
    else:
        ended = shown_time(state.writer.ended_at or state.writer.started_at)
        notes.append(
            f"last written ({state.label}) by {state.writer.job} run {state.writer.run_id}, "
            f"ended {ended}"
        )
    if failed is not None:
        notes.append(
            f"affected: {failed.job} run {failed.run_id} may have written it since, and "
            f"{failed.status} (started {shown_time(failed.started_at)})"
        )
    notes.append(f"read by {state.reads_since} run(s) since its last write")
    colour = _colour(state, latest, failed)
    return GridCell(colour, tuple(notes), partition_value(state.partition))


def _shown(value: str | None) -> str:
    return NULL_PARTITION if value is None else value


def dataset_grid(
    report: PartitionsReport,
    failed: Mapping[Dimensions, RunRef],
    selected: Collection[str] = (),
    ready: Grid | None = None,
) -> Markup | None:
    """The partitions of ``report`` as the page's grid of checkboxes, with what it left out
    (``ready``: the grid arranged already, see :func:`drawn_partitions`), drawn by the report;
    None when the dataset has no partition."""
    if ready is not None:
        return Markup(grid_html(ready, _ticked(ready, selected), heading=False))
    states = report.partitions
    if not states:
        return None
    ended = [state.writer for state in states if state.writer is not None]
    latest = max(ended, key=lambda run: (run.ended_at or "", run.run_id)).run_id if ended else None
    units = {
        _unit(state.partition): GridCell(
            _colour(state, latest, failed.get(_unit(state.partition))), ()
        )
        for state in states
    }
    order = [name for name, _ in states[-1].partition.dimensions]
    grid = arranged(report.dataset, units, order, latest=True)
    if grid.down is not None:  # the hover text and the checkbox of the cells drawn only
        down, across = grid.down, grid.across
        drawn: dict[tuple[str, str], GridCell] = {}
        for state in states:
            values = dict(state.partition.dimensions)
            key = (
                _shown(values.get(down, "")),
                "/".join(_shown(values.get(name, "")) for name in across),
            )
            if key in grid.cells:
                drawn[key] = _cell(state, latest, failed.get(_unit(state.partition)))
        grid = dataclasses.replace(grid, cells=drawn)
    return Markup(grid_html(grid, _ticked(grid, selected), heading=False))


def _ticked(grid: Grid, selected: Collection[str]) -> set[str]:
    """The checkbox values of the cells ``selected`` names: the same partition whatever the
    spacing or order of its JSON (a link typed by hand, another tool's)."""
    wanted = set()
    for value in selected:
        try:
            wanted.add(_same(value))
        except ValueError:
            continue  # no partition: the answer it asks for says why
    if not wanted:
        return set()
    return {
        cell.choice
        for cell in grid.cells.values()
        if cell.choice is not None and _same(cell.choice) in wanted
    }


def _same(value: str) -> str:
    """A partition's JSON in one spelling (keys sorted, no spaces); ValueError if not JSON, or
    a key is repeated (no partition: the answer page says why)."""
    return json.dumps(read_json(value), sort_keys=True, separators=(",", ":"))


@dataclasses.dataclass(frozen=True)
class Limits:
    """How much of a dataset's grid is drawn: the report's limits (small ones in tests)."""

    rows: int = MAX_ROWS
    days: int = MAX_DAYS
    cells: int = MAX_CELLS
    columns: int = MAX_COLUMNS


@dataclasses.dataclass(frozen=True)
class RowPage:
    """Where the rows a grid draws lie among all the values of their column: the page's links
    to the rows before and after them."""

    column: str
    older: str | None
    """The ``before`` that draws the rows just before the first drawn; None: none is."""
    newer: str | None
    """The ``before`` that draws the rows just after the last drawn (``""``: the newest,
    no ``before``); None: the last drawn is the newest."""


@dataclasses.dataclass(frozen=True)
class DrawnPartitions:
    """A dataset's partitions as its page draws them."""

    report: PartitionsReport
    """The state of each partition drawn (of every known one, without ``grid``)."""
    failed: Mapping[Dimensions, RunRef]
    """Of those, the ones a failed run may have written since (see :func:`dataset_grid`)."""
    grid: Grid | None
    """The grid drawn, its cells made; None: arrange ``report``'s partitions, all of them."""
    page: RowPage | None = None
    """Where its rows lie, with ``grid``: for links to the others."""


class NoRowsBefore(LineageQueryError):
    """The ``before`` a dataset page was asked with is not a value of its grid's rows that
    has one before it (or the page draws no rows but its newest)."""


def drawn_partitions(
    lineage: Lineage,
    dataset: DatasetRef,
    limits: Limits | None = None,
    before: str | None = None,
    showing: Sequence[Mapping[str, str | None]] = (),
) -> DrawnPartitions:
    """What the page of ``dataset`` draws of its partitions, worked out for those drawn only
    where it can (the module's docstring): the rows of the newest values of its first
    column, or of those just before the value ``before`` (the page's links to older rows);
    raises ``LineageQueryError`` for an unknown dataset, :class:`NoRowsBefore` for a
    ``before`` that is not a value of its rows with one before it, or where the page draws
    from all its partitions (their newest rows: it cannot draw others). Without
    ``before``, the rows drawn are those up to the first of ``showing`` (partitions selected
    by a link) when the newest are not its."""
    limits = limits or Limits()
    query = PartitionsQuery(dataset.name, dataset.namespace)
    source = PagePartitions(lineage.store, query)
    first = _first_axis(source, limits, before, showing)
    second = None if first is None else source.second_axis(first)
    if second is not None:  # in the grid's order: numbers by their value first
        second = dataclasses.replace(second, values=tuple(sorted(second.values, key=_natural)))
    axis = first if second is None else second  # the column of the grid's rows

    def pick(before: str | None) -> _Picked | None:
        if first is None:
            return None
        if second is None:
            return _newest(source, first, limits, before)
        return _by_second(first, second, limits, before)

    if before is not None:
        picked = None
        if axis is not None and before in axis.values[1:]:
            picked = pick(before)
        if picked is None:
            raise NoRowsBefore(_not_before(dataset, axis, before, pick(None) is not None))
    else:
        picked = pick(None)
        if axis is not None and picked is not None and showing:
            value = showing[0].get(axis.first)
            if value in axis.values and value not in picked[0]:  # older: the rows up to it
                before = axis.values[axis.values.index(value) + 1]
                picked = pick(before)
    if axis is None or picked is None:
        report = lineage.partitions(query)
        return DrawnPartitions(report, lineage.failed_writes(dataset, report.partitions), None)
    rows, columns, hidden, units, room = picked
    latest = source.latest_writer()
    report = source.states(units)
    failed = lineage.failed_writes(dataset, report.partitions)
    across = _across(axis)
    cells = {
        _place(state.partition.dimensions, axis.first, across): _cell(
            state, latest, failed.get(_unit(state.partition))
        )
        for state in report.partitions
    }
    start = axis.values.index(rows[0])
    end = start + len(rows)  # the first value after the rows drawn
    earlier = UNCOUNTED if axis.uncounted[0] else start
    later = UNCOUNTED if axis.uncounted[1] else len(axis.values) - end
    gaps = (earlier, *([0] * (len(rows) - 1)), later)
    # A cell names its columns in the dataset's order (its partitions have them so).
    order = [name for name, _ in report.partitions[0].partition.dimensions] if cells else []
    down_last = bool(across) and {axis.first, across[0]} <= set(order)
    down_last = down_last and order.index(axis.first) > order.index(across[0])
    grid = Grid(
        report.dataset, axis.first, across, rows, columns, cells, None, gaps, hidden, down_last
    )
    newer = None
    if end < len(axis.values):
        after = end + room  # as many rows after the last drawn as fit (their columns may differ)
        newer = axis.values[after] if after < len(axis.values) else ""
    page = RowPage(axis.first, rows[0] if earlier else None, newer)
    return DrawnPartitions(report, failed, grid, page)


def _first_axis(
    source: PagePartitions,
    limits: Limits,
    before: str | None,
    showing: Sequence[Mapping[str, str | None]],
) -> PartitionAxis | None:
    """The values of the dataset's first column (:meth:`PagePartitions.axis`); of a column of
    more values than are searched, a stretch of them around the rows drawn: more on each side
    than a page has rows (the rows before ``before`` and the page after; with ``showing``,
    around its value: the newest rows when it is among them, else the rows up to it)."""
    stretch = max(limits.days, limits.rows) + 2
    first = source.axis(MOST_SEARCHED, (before, stretch))
    if before is None and showing and first is not None and first.uncounted[0]:
        value = showing[0].get(first.first)
        if isinstance(value, str):
            around = source.axis(MOST_SEARCHED, (value, stretch))
            if around is not None and value in around.values:
                return around  # drawn_partitions picks the rows with it
    return first


def _not_before(dataset: DatasetRef, axis: PartitionAxis | None, before: str, pages: bool) -> str:
    """Why the page of ``dataset`` draws no rows before ``before`` (``pages``: whether it
    draws a page of rows at all)."""
    if axis is None or not pages:
        return (
            f"the page of {dataset} draws its newest rows only (its grid is laid out from all "
            "its partitions), not those before a value"
        )
    if before not in axis.values:
        return f"{dataset} has no partition of {axis.first}={before!r}"
    return f"no partition of {dataset} has {axis.first} before {before!r}"


def _across(axis: PartitionAxis) -> tuple[str, ...]:
    return tuple(name for name in axis.order if name != axis.first)


def _place(unit: Dimensions, down: str, across: Sequence[str]) -> tuple[str, str]:
    """A partition's (row, column) in the grid."""
    values = dict(unit)
    return _shown(values.get(down, "")), "/".join(_shown(values.get(name, "")) for name in across)


_Picked = tuple[tuple[str, ...], tuple[str, ...], int, list[Dimensions], int]
"""The rows drawn, the columns drawn, how many columns are not, the partitions drawn (some
may not be known: the grid's cells) and how many rows fit."""


def _by_second(
    first: PartitionAxis, second: PartitionAxis, limits: Limits, before: str | None
) -> _Picked:
    """The grid of a dataset of two columns whose rows are the second one's values (days
    after a region, ``country`` and ``dt``): the newest rows (before ``before``) by the
    first values of the first column, every pair of them a cell (no partition read; those
    that are no known partition are left out by ``states``)."""
    values = second.values if before is None else second.values[: second.values.index(before)]
    named = sorted(first.values, key=_natural)
    columns = tuple(named[: limits.columns])
    days = all(map(is_day, values))
    room = most_rows(
        len(columns), days, rows=limits.rows, most_days=limits.days, cells=limits.cells
    )
    rows = tuple(values[max(0, len(values) - room) :])
    units: list[Dimensions] = [((first.first, c), (second.first, r)) for r in rows for c in columns]
    return rows, columns, len(named) - len(columns), units, room


def _newest(
    source: PagePartitions, axis: PartitionAxis, limits: Limits, before: str | None = None
) -> _Picked | None:
    """The rows drawn (the newest values of the first column, or the newest before the
    value ``before``), the columns drawn, how many columns are not, the partitions drawn and
    how many rows fit; None when the first column is not the one the grid puts down (another
    has more values) or its values do not sort as their text. The partitions of the newest
    value come first, to tell how many columns there are, so how many rows fit; then those
    of the rows that fit (the number of columns they have may let fewer fit: those are
    drawn)."""
    values = axis.values
    if before is not None:
        values = values[: values.index(before)]
    if not values or any(_natural(value)[0] == 0 for value in values):
        return None  # numbers sort by their value in a grid, not as their text
    days = all(map(is_day, values))
    across = _across(axis)
    places: dict[Dimensions, tuple[str, str]] = {}
    seen: dict[str, set[str | None]] = {name: set() for name in across}
    fetched, wanted = 0, 1 if days else limits.rows
    while True:
        wanted = min(wanted, len(values))
        if wanted > fetched:
            until = values[len(values) - fetched] if fetched else before
            batch = source.newest(axis, values[len(values) - wanted], until)
            if not _add_places(batch, axis, places, seen):
                return None
            fetched = wanted
        if any(_more(axis, name, found) for name, found in seen.items()):
            return None
        named = sorted({column for _, column in places.values()}, key=_natural)
        columns = tuple(named[: limits.columns])
        room = most_rows(
            len(columns), days, rows=limits.rows, most_days=limits.days, cells=limits.cells
        )
        most = min(room, len(values))
        if most <= fetched:
            break
        wanted = most
    rows = tuple(values[len(values) - most :])
    kept_rows = set(rows)
    if fetched > most:  # the columns of the rows drawn
        named = sorted({c for r, c in places.values() if r in kept_rows}, key=_natural)
        columns = tuple(named[: limits.columns])
    kept_columns = set(columns)
    drawn = [
        unit
        for unit, (row, column) in places.items()
        if row in kept_rows and column in kept_columns
    ]
    return rows, columns, len(named) - len(columns), drawn, room


def _add_places(
    units: Sequence[Dimensions],
    axis: PartitionAxis,
    places: dict[Dimensions, tuple[str, str]],
    seen: Mapping[str, set[str | None]],
) -> bool:
    """Add each partition's (row, column) to ``places`` and its values of the other columns
    to ``seen``; False when they have other columns than the dataset's order names."""
    shape = tuple(sorted(axis.order))
    spots = [(name, shape.index(name)) for name in _across(axis)]
    if units and tuple(name for name, _ in units[0]) != shape:
        return False  # the units of a range all have the dataset's one set of columns
    for unit in units:
        for name, spot in spots:
            seen[name].add(unit[spot][1])
        places[unit] = (
            _shown(unit[0][1]),
            "/".join([_shown(unit[spot][1]) for _, spot in spots]),
        )
    return True


def _more(axis: PartitionAxis, name: str, found: Collection[str | None]) -> bool:
    """Whether the column ``name`` would be the grid's rows rather than the first column:
    more values, or as many and before it in the dataset's order."""
    if any(axis.uncounted) and len(found) >= axis.least:
        return True  # not known: drawn from all the partitions, as before
    if len(found) != axis.least:
        return len(found) > axis.least
    return axis.order.index(name) < axis.order.index(axis.first)


def _natural(value: str) -> tuple[int, float, str]:
    """The grid's order of values: numbers by their value before other values as text."""
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)
