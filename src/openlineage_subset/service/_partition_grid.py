"""A dataset's own partitions on the UI's dataset page, drawn as the answers' grids are.

The grid is :mod:`openlineage_subset.report`'s (a calendar for dates: a column per day,
a band per month, a row per value of the other columns in each band), each cell a checkbox
named ``p`` in the page's form, so that a click asks about a partition and several ticked
boxes are asked about together, with or without a script. A cell is coloured by its last
write (by the dataset's latest writer, by an earlier one, possibly, none known) and whether it
is affected: a run that wrote it after its last completed write failed (or was aborted), so
what it holds may be half written. Its hover text names the partition, the last writer and
the failed run. A long grid draws its newest rows and says how many it left out.
"""

from __future__ import annotations

import dataclasses
import html
import json
from collections.abc import Collection, Mapping

from openlineage_subset import printable_json
from openlineage_subset.lineage import (
    Dimensions,
    PartitionRef,
    PartitionsReport,
    PartitionState,
    RunRef,
    no_partitions_note,
    shown_time,
)
from openlineage_subset.report import (
    NULL_VALUE,
    CellState,
    GridCell,
    arranged,
    grid_html,
    legend_html,
)


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
    return NULL_VALUE if value is None else value


def dataset_grid(
    report: PartitionsReport,
    failed: Mapping[Dimensions, RunRef],
    selected: Collection[str] = (),
) -> str:
    """The partitions of ``report`` as the page's grid of checkboxes, with its legend and what
    it left out; a note when the dataset has no partition."""
    states = report.partitions
    if not states:
        note = html.escape(no_partitions_note(report))
        return f'<p class="note">{note} Ask about the whole dataset below.</p>'
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
    return legend_html("partitions") + grid_html(grid, selected, heading=False)
