"""What ``ol-subset lineage report`` draws: a run graph and partition grids, from an answer.

A :class:`Picture` is plain data, built from an impact or provenance answer and the database it
came from (the partitions each run of the answer read and wrote, as
:func:`~openlineage_subset.lineage.picture_source` finds them); :mod:`._html` turns it into a
page. The graph is unrolled in layers from left to right, so a dataset appears once per hop that
reaches it and a job that rewrites its own input draws no cycle. Each dataset of the answer gets
a grid: one partition column down (the one with the most values), the others across, each cell
coloured by the strongest thing the answer says of it, with the runs behind it as its notes.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Literal

from openlineage_subset.lineage import (
    AffectedRun,
    DatasetColumns,
    DatasetRef,
    Dimensions,
    ImpactReport,
    JobUse,
    Label,
    LineageQueryError,
    LineageStore,
    PartitionRef,
    PartitionSet,
    PictureSource,
    ProvenanceReport,
    ProvenanceStep,
    RunRef,
    Unit,
    impact,
    part_heading,
    picture_source,
    provenance,
    shown_time,
    unseen_note,
)
from openlineage_subset.report._cells import (
    RANK,
    CellState,
    GridCell,
    candidate_keys,
    is_day,
    kept,
    natural,
    shown_value,
)

NodeState = Literal["start", "target", "dataset", "job", "definite", "possible", "failed"]
MAX_ROWS = 150
"""Rows of a grid drawn at most: those with cells in the answer, and their neighbours, first."""
MAX_COLUMNS = 120
MAX_DAYS = 1100
"""Rows of a grid of days (drawn as a calendar) at most: three years, a contiguous stretch
around the days in the answer, as long as the grid stays within :data:`MAX_CELLS`."""
UNCOUNTED = -1
"""A gap of :attr:`Grid.row_gaps` whose rows were not counted."""
MAX_CELLS = 6_000
MAX_NODES = 400
_SURELY: dict[Label, str] = {"definite": "definitely", "possible": "possibly"}


@dataclasses.dataclass(frozen=True)
class Grid:
    """A dataset's partitions: ``down`` values as rows, ``across`` values as columns."""

    dataset: DatasetRef
    down: str | None
    """The partition column of the rows; None for a dataset without partition columns."""
    across: tuple[str, ...]
    """The partition columns of the columns; a column's label joins their values by ``/``."""
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: Mapping[tuple[str, str], GridCell]
    """By (row, column); a pair missing here is not a known partition."""
    whole: GridCell | None
    """What the answer says of the dataset as a whole (a whole-dataset read or write)."""
    row_gaps: tuple[int, ...]
    """Rows left out (too many to draw) before each row, and after the last; :data:`UNCOUNTED`:
    some, too many to count (a page of a dataset's rows among a million)."""
    hidden_columns: int
    down_last: bool = False
    """Whether the row's column comes after the columns' in the dataset's column order (the
    column with the most values goes down, whatever its place): a cell names them in order."""


@dataclasses.dataclass(frozen=True)
class GraphNode:
    """A run or a dataset in one layer of the graph."""

    key: str
    kind: Literal["run", "job", "dataset"]
    layer: int
    title: str
    subtitle: str
    state: NodeState
    notes: tuple[str, ...]
    run_id: str | None = None
    """The run a run box draws (a job box: its last run), for a page that links it."""
    dataset: DatasetRef | None = None
    """The dataset a dataset box draws."""


@dataclasses.dataclass(frozen=True)
class GraphEdge:
    source: str
    target: str
    label: Label


@dataclasses.dataclass(frozen=True)
class Picture:
    """Everything the page shows, in the order it shows it."""

    query: Literal["impact", "provenance", "overview"]
    title: str
    summary: tuple[str, ...]
    runs: int
    """The runs in the answer, as the summary counts them: the affected runs, the runs behind
    the target, or (an overview, whose graph draws jobs) every run of the database."""
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    hidden_nodes: int
    grids: tuple[Grid, ...]
    answer: ImpactReport | ProvenanceReport | None = None
    """The answer drawn (None for an overview): a page that shows the picture and the answer's
    text or JSON takes it from here rather than asking the database twice."""


class _Builder:
    """Collects nodes, edges and cell states while an answer is walked, on an open database."""

    def __init__(self, source: PictureSource, *, overview: bool = False) -> None:
        self.source = source
        self.overview = overview
        """Every partition is marked: a long grid draws its last rows (the newest dates)."""
        self.unmarked = (
            "no completed run is known to have written it"
            if overview
            else "known partition; this answer says nothing of it"
        )
        self.nodes: list[GraphNode] = []
        self.edges: list[GraphEdge] = []
        self.dataset_keys: dict[tuple[DatasetRef, int], str] = {}
        self.cells: dict[DatasetRef, dict[Unit, tuple[CellState, list[str]]]] = {}

    def dataset_node(self, dataset: DatasetRef, layer: int, state: NodeState = "dataset") -> str:
        key = self.dataset_keys.get((dataset, layer))
        if key is None:
            key = self.dataset_keys[(dataset, layer)] = f"d{len(self.dataset_keys)}"
            title = dataset.name.rstrip("/").rsplit("/", 1)[-1] or dataset.name
            notes = (f"dataset {dataset}",)
            self.nodes.append(
                GraphNode(key, "dataset", layer, title, dataset.name, state, notes, dataset=dataset)
            )
        return key

    def run_node(self, run: RunRef, layer: int, label: Label, notes: Iterable[str]) -> str:
        key = f"r{len(self.nodes)}"
        ended = f", ended {shown_time(run.ended_at)}" if run.ended_at else ", not ended"
        self.nodes.append(
            GraphNode(
                key,
                "run",
                layer,
                run.job_name,
                _run_line(run),
                label if run.status == "COMPLETE" else "failed",
                (
                    f"{run.job} run {run.run_id}",
                    f"{run.status}, started {shown_time(run.started_at)}{ended}",
                    *notes,
                ),
                run_id=run.run_id,
            )
        )
        return key

    def job_node(self, last: RunRef, runs: int, layer: int) -> str:
        key = f"j{len(self.nodes)}"
        notes = (
            f"job {last.job}: {runs} run(s)",
            f"last run {last.run_id} {last.status}, started {shown_time(last.started_at)}",
        )
        state: NodeState = "job" if last.status == "COMPLETE" else "failed"
        subtitle = f"{runs} run(s), last {last.status}"
        self.nodes.append(
            GraphNode(key, "job", layer, last.job_name, subtitle, state, notes, last.run_id)
        )
        return key

    def mark(self, dataset: DatasetRef, unit: Unit, state: CellState, note: str) -> None:
        cells = self.cells.setdefault(dataset, {})
        old, notes = cells.get(unit, ("known", []))
        if note not in notes:
            notes.append(note)
        cells[unit] = (state if RANK[state] > RANK[old] else old, notes)

    def mark_part(self, part: PartitionSet, definite: CellState, note: str) -> None:
        """Every partition of ``part``: ``definite`` or, for its possible ones, possible."""
        self.cells.setdefault(part.dataset, {})
        if part.whole is not None:
            state = definite if part.whole == "definite" else "possible"
            self.mark(part.dataset, None, state, note)
        for item in part.definite:
            self.mark(part.dataset, _unit(item), definite, note)
        for item in part.possible:
            self.mark(part.dataset, _unit(item), "possible", f"{note} (possibly)")

    def picture(
        self,
        query: Literal["impact", "provenance", "overview"],
        title: str,
        summary: list[str],
        runs: int,
        answer: ImpactReport | ProvenanceReport | None = None,
    ) -> Picture:
        nodes = self.nodes
        if query == "provenance":  # walked from the target back: flow goes left to right
            last = max(node.layer for node in nodes)
            nodes = [dataclasses.replace(node, layer=last - node.layer) for node in nodes]
        shown = sorted(nodes, key=lambda node: node.layer)[:MAX_NODES]
        kept = {node.key for node in shown}
        edges = tuple(e for e in self.edges if e.source in kept and e.target in kept)
        grids = tuple(
            self.grid(dataset, cells)
            for dataset, cells in sorted(
                self.cells.items(), key=lambda item: (item[0].namespace, item[0].name)
            )
        )
        hidden = len(nodes) - len(shown)
        return Picture(
            query, title, tuple(summary), runs, tuple(shown), edges, hidden, grids, answer
        )

    def grid(self, dataset: DatasetRef, marked: Mapping[Unit, tuple[CellState, list[str]]]) -> Grid:
        if not self.overview:
            # The rows around the marked ones: of a column of a million values, stretches.
            near = [unit[0][1] for unit in marked if unit and isinstance(unit[0][1], str)]
            columns = self.source.columns(dataset, near, max(MAX_DAYS, MAX_ROWS) + 1)
            drawn = None if columns is None else self.drawn(dataset, marked, columns)
            if drawn is not None:
                return drawn
        partitions = self.source.partitions(dataset)
        units: dict[Dimensions, GridCell] = {
            unit: GridCell("known", (self.unmarked,)) for unit in partitions.known
        }
        for unit, (state, notes) in marked.items():
            if unit is not None:
                units[unit] = GridCell(state, tuple(notes))
        whole = marked.get(None)
        return arranged(
            dataset,
            units,
            partitions.order,
            GridCell(whole[0], tuple(whole[1])) if whole else None,
            latest=self.overview,
        )

    def drawn(
        self,
        dataset: DatasetRef,
        marked: Mapping[Unit, tuple[CellState, list[str]]],
        columns: DatasetColumns,
    ) -> Grid | None:
        """The grid :meth:`grid` draws by :func:`arranged` from every known partition, laid
        out from the distinct values of each column alone (``columns``), with only the known
        partitions of the rows it keeps fetched (a range of the key each). None when a marked
        partition has other columns, or the rows are neither the dataset's first column (by
        name) nor the second of two: then the grid is laid out from every known partition."""
        shape = columns.shape
        units = {unit: GridCell(s, tuple(n)) for unit, (s, n) in marked.items() if unit is not None}
        if any(tuple(name for name, _ in unit) != shape for unit in units):
            return None
        stretches = bool(columns.uncounted) or columns.more_after
        if stretches and any(natural(value)[0] == 0 for value in columns.first):
            return None  # numbers: the stretches, in text order, are not the grid's
        whole_mark = marked.get(None)
        whole = GridCell(whole_mark[0], tuple(whole_mark[1])) if whole_mark else None
        columns_of = [*(c for c in columns.order if c in shape)]
        columns_of += sorted(set(shape).difference(columns_of))
        marked_values = [tuple(value for _, value in unit) for unit in units]
        distinct = {shape[0]: {*columns.first, *(values[0] for values in marked_values)}}
        for place, name in enumerate(shape[1:], 1):
            distinct[name] = {other[place - 1] for other in columns.others}
            distinct[name].update(values[place] for values in marked_values)
        down = _down(columns_of, distinct)
        if down != shape[0] and len(shape) != 2:
            return None  # the columns across: values of the first column with others
        across = tuple(name for name in columns_of if name != down)
        if down == shape[0]:
            places = [shape.index(name) - 1 for name in across]
            combinations = {tuple(other[place] for place in places) for other in columns.others}
        else:  # two columns, the rows the second: the first one across
            combinations = {(value,) for value in columns.first}
        combinations |= {tuple(dict(unit)[name] for name in across) for unit in units}
        raw_columns: dict[str, set[tuple[str | None, ...]]] = {}
        for combo in combinations:
            raw_columns.setdefault("/".join(shown_value(value) for value in combo), set()).add(
                combo
            )
        raw_rows: dict[str, set[str | None]] = {}
        for value in distinct[down]:
            raw_rows.setdefault(shown_value(value), set()).add(value)
        cells: dict[tuple[str, str], GridCell] = {}
        for unit, cell in units.items():
            values = dict(unit)
            cells[(shown_value(values[down]), "/".join(shown_value(values[c]) for c in across))] = (
                cell
            )
        kept_columns, column_gaps = kept(sorted(raw_columns, key=natural), cells, 1, MAX_COLUMNS)
        down_values = sorted(raw_rows, key=natural)
        days = all(map(is_day, down_values))
        most = most_rows(len(kept_columns), days)
        rows, row_gaps = kept(down_values, cells, 0, most, fill=days)
        if stretches:
            if down != shape[0]:
                return None  # the rows are not the values the stretches are of
            row_gaps = _uncounted(down_values, rows, row_gaps, columns)
        # The partitions a drawn cell may be: each drawn row's value with each drawn column's
        # values that some known partition has (a grid's rows are the first column's values).
        candidates = candidate_keys(
            columns, down, across, (rows, raw_rows), (kept_columns, raw_columns)
        )
        drawn = {
            candidates[key]: GridCell("known", (self.unmarked,))
            for key in self.source.known_among(dataset, candidates)
        }
        shown = set(rows), set(kept_columns)
        drawn.update(
            (key, cell) for key, cell in cells.items() if key[0] in shown[0] and key[1] in shown[1]
        )
        return Grid(
            dataset,
            down,
            across,
            tuple(rows),
            tuple(kept_columns),
            drawn,
            whole,
            tuple(row_gaps),
            sum(column_gaps),
            _down_last(columns_of, down, across),
        )


def _uncounted(
    values: list[str], rows: list[str], gaps: list[int], columns: DatasetColumns
) -> list[int]:
    """``gaps`` (of ``rows`` kept among ``values``, stretches of a column's values), each that
    spans values left out of the stretches said :data:`UNCOUNTED`."""
    found = list(gaps)
    starts = {shown_value(value) for value in columns.uncounted}
    spot = {value: number for number, value in enumerate(values)}
    previous = -1
    for number, row in enumerate(rows):
        if any(value in starts for value in values[previous + 1 : spot[row] + 1]):
            found[number] = UNCOUNTED
        previous = spot[row]
    if columns.more_after:
        found[-1] = UNCOUNTED
    return found


def most_rows(
    columns: int,
    days: bool,
    *,
    rows: int | None = None,
    most_days: int | None = None,
    cells: int | None = None,
) -> int:
    """Rows a grid of ``columns`` columns draws at most: ``most_days`` of dates (``days``) or
    ``rows`` of other values, and no more than keep it within ``cells`` cells (one at least);
    by default :data:`MAX_DAYS`, :data:`MAX_ROWS` and :data:`MAX_CELLS`.

    >>> most_rows(120, True), most_rows(3, True), most_rows(3, False), most_rows(10_000, True)
    (50, 1100, 150, 1)
    """
    longest = MAX_ROWS if rows is None else rows
    if days:
        longest = MAX_DAYS if most_days is None else most_days
    budget = MAX_CELLS if cells is None else cells
    return min(longest, max(1, budget // max(1, columns)))


def arranged(
    dataset: DatasetRef,
    units: Mapping[Dimensions, GridCell],
    order: Iterable[str],
    whole: GridCell | None = None,
    *,
    latest: bool = False,
) -> Grid:
    """The partitions ``units`` of ``dataset`` as a grid: a column of dates down, else the
    column with the most values (:func:`_down`; ``order``: the dataset's partition columns,
    for the others across), at most
    :data:`MAX_ROWS` rows (:data:`MAX_DAYS` of dates, drawn as a calendar) and
    :data:`MAX_COLUMNS` columns, within :data:`MAX_CELLS` cells (:func:`most_rows`): those
    around the cells not ``known`` first, or with ``latest`` the last rows (the newest
    dates)."""
    order = tuple(order)
    named = {name for unit in units for name, _ in unit}
    columns_of = [*(c for c in order if c in named), *sorted(named.difference(order))]
    if not columns_of:
        return Grid(dataset, None, (), (), (), {}, whole, (0,), 0)
    distinct = {name: {dict(unit).get(name, "") for unit in units} for name in columns_of}
    down = _down(columns_of, distinct)
    across = tuple(name for name in columns_of if name != down)
    cells: dict[tuple[str, str], GridCell] = {}
    for unit, cell in units.items():
        values = dict(unit)
        row = shown_value(values.get(down, ""))
        column = "/".join(shown_value(values.get(name, "")) for name in across)
        cells[(row, column)] = cell
    columns, column_gaps = kept(sorted({c for _, c in cells}, key=natural), cells, 1, MAX_COLUMNS)
    down_values = sorted({r for r, _ in cells}, key=natural)
    days = all(map(is_day, down_values))
    most = most_rows(len(columns), days)
    rows, row_gaps = kept(down_values, cells, 0, most, latest=latest, fill=days)
    shown = set(rows), set(columns)
    return Grid(
        dataset,
        down,
        across,
        tuple(rows),
        tuple(columns),
        {key: cell for key, cell in cells.items() if key[0] in shown[0] and key[1] in shown[1]},
        whole,
        tuple(row_gaps),
        sum(column_gaps),
        _down_last(columns_of, down, across),
    )


def _down(columns: Sequence[str], distinct: Mapping[str, Collection[str | None]]) -> str:
    """The partition column a grid draws down: the first whose values are dates (a calendar,
    the same form on every page of the dataset, whatever part of it an answer draws), else the
    one with the most values (the first of those)."""
    for name in columns:
        values = [value for value in distinct[name] if value]
        if values and all(is_day(value) for value in values):
            return name
    return max(columns, key=lambda name: (len(distinct[name]), -columns.index(name)))


def _down_last(columns: Sequence[str], down: str, across: Sequence[str]) -> bool:
    """Whether the column drawn down comes after those across in the dataset's order."""
    return bool(across) and columns.index(down) > columns.index(across[0])


def _run_line(run: RunRef) -> str:
    """What tells a run apart from the other runs of its job, in a box: when it started and
    the end of its id (UUIDv7 ids begin with their time, so their ends differ), and its state
    unless it completed."""
    started = shown_time(run.started_at)[:19].replace("T", " ")
    state = "" if run.status == "COMPLETE" else f" {run.status}"
    return f"{started} \u2026{run.run_id[-6:]}{state}"


def impact_picture(
    db: str | os.PathLike[str] | LineageStore,
    dataset: str,
    *,
    partition: Mapping[str, str | None] | None = None,
    since: str | None = None,
    depth: int | None = None,
    namespace: str | None = None,
) -> Picture:
    """The impact answer (:func:`~openlineage_subset.lineage.impact`) as a picture.

    The graph: the starting dataset, each affected run one layer further per hop, the datasets
    each completed one wrote. The grids: the starting region and what affected runs wrote
    (affected, or possibly affected), and the rest of what they read (read).
    """
    with picture_source(db) as source:
        report = impact(
            source.store,
            dataset,
            partition=partition,
            since=since,
            depth=depth,
            namespace=namespace,
        )
        return _impact_drawn(source, report)


def answer_picture(
    db: str | os.PathLike[str] | LineageStore, answer: ImpactReport | ProvenanceReport
) -> Picture:
    """An impact or provenance ``answer`` found already (from the database ``db``) as the
    picture :func:`impact_picture` or :func:`provenance_picture` draws of it: for a page that
    looks at the answer before it draws it (and draws a huge one not at all)."""
    with picture_source(db) as source:
        if isinstance(answer, ImpactReport):
            return _impact_drawn(source, answer)
        return _provenance_drawn(source, answer)


def _impact_drawn(source: PictureSource, report: ImpactReport) -> Picture:
    """The picture of the impact answer ``report``, the facts it draws read from ``source``."""
    build = _Builder(source)
    build.dataset_node(report.start.dataset, 0, "start")
    build.mark_part(report.start, "affected", "the starting region")
    for item in report.runs:
        _impact_run(build, item)
    definite = sum(run.label == "definite" for run in report.runs)
    summary = [
        f"{len(report.runs)} run(s) affected: {definite} definite, "
        f"{len(report.runs) - definite} possible; failed runs are shown but write nothing",
        "Recompute: "
        + (
            "; ".join(_counted(part) for part in report.backfill)
            if report.backfill
            else "nothing (no affected run completed a write)"
        ),
    ]
    if report.since:
        summary.insert(0, f"Affected data: what was there from {shown_time(report.since)} on")
    if not report.seen:
        summary.insert(0, unseen_note(report.start))
    title = f"Impact of {part_heading(report.start)}"
    return build.picture("impact", title, summary, len(report.runs), report)


def _impact_run(build: _Builder, item: AffectedRun) -> None:
    source = build.source
    upstream = "the starting region" if item.upstream_run_id is None else item.upstream_run_id
    notes = (
        f"{item.label}: read {item.dataset} where {item.condition or 'whole dataset'}",
        f"hop {item.hops}, from {upstream}",
    )
    key = build.run_node(item.run, 2 * item.hops - 1, item.label, notes)
    build.edges.append(
        GraphEdge(build.dataset_node(item.dataset, 2 * item.hops - 2), key, item.label)
    )
    read_note = f"read by {item.run.job} run {item.run.run_id}"
    for read in source.reads(item.run):
        for unit, _ in read.units:
            build.mark(read.dataset, unit, "read", read_note)
    affected_read = (None,) if item.partitions is None else [_unit(p) for p in item.partitions]
    for unit in affected_read:
        state: CellState = "affected" if item.label == "definite" else "possible"
        build.mark(item.dataset, unit, state, f"{_SURELY[item.label]} affected, {read_note}")
    if item.run.status != "COMPLETE" or item.run.ended_at is None:
        return
    write_note = f"written by {item.run.job} run {item.run.run_id}"
    for write in source.writes(item.run, item.label):
        where = write.dataset
        build.edges.append(GraphEdge(key, build.dataset_node(where, 2 * item.hops), item.label))
        for unit, label in write.units:
            state = "affected" if label == "definite" else "possible"
            build.mark(where, unit, state, f"{_SURELY[label]} affected, {write_note}")


def provenance_picture(
    db: str | os.PathLike[str] | LineageStore,
    dataset: str,
    *,
    partition: Mapping[str, str | None] | None = None,
    depth: int | None = None,
    namespace: str | None = None,
) -> Picture:
    """The provenance answer (:func:`~openlineage_subset.lineage.provenance`) as a picture.

    The graph: the inputs of the inputs on the left, the asked-about dataset on the right. The
    grids: what each writer wrote of what was asked (written) and what it read (read), possibly
    so where a condition depends on other columns than the partition columns.
    """
    with picture_source(db) as source:
        report = provenance(
            source.store, dataset, partition=partition, depth=depth, namespace=namespace
        )
        return _provenance_drawn(source, report)


def _provenance_drawn(source: PictureSource, report: ProvenanceReport) -> Picture:
    """The picture of the provenance answer ``report``, its facts read from ``source``."""
    build = _Builder(source)
    build.dataset_node(report.target.dataset, 0, "target")
    build.mark_part(report.target, "known", "asked about")
    _provenance_steps(build, report.writers, _units(report.target), 1)
    runs = _count_runs(report.writers)
    summary = [
        f"{runs} run(s) behind it; the latest writers first",
        "Unknown (possible) where a condition depends on other columns than partitions",
    ]
    if not report.seen:
        summary.insert(0, unseen_note(report.target))
    title = f"Provenance of {part_heading(report.target)}"
    return build.picture("provenance", title, summary, runs, report)


def _units(part: PartitionSet) -> list[Unit]:
    units: list[Unit] = [_unit(item) for item in part.definite + part.possible]
    return units if units or part.whole is None else [None]


def _provenance_steps(
    build: _Builder, steps: Iterable[ProvenanceStep], units: list[Unit], level: int
) -> None:
    for step in steps:
        notes = [f"{step.label}: wrote {step.dataset} where {step.condition or 'whole dataset'}"]
        notes += ["shown already: inputs not repeated"] if step.repeated else []
        notes += ["depth limit: inputs not followed"] if step.truncated else []
        key = build.run_node(step.run, 2 * level - 1, step.label, notes)
        build.edges.append(
            GraphEdge(key, build.dataset_node(step.dataset, 2 * level - 2), step.label)
        )
        write_note = f"written by {step.run.job} run {step.run.run_id}"
        for unit, found in build.source.overlaps(step.run, step.dataset, units):
            # Deeper down, what a writer wrote is what a run behind the target read: the
            # cell stays "read", the writer is in its notes.
            state: CellState = "written" if level == 1 else "read"
            if not found or step.label != "definite":
                state = "possible"
            build.mark(step.dataset, unit, state, write_note)
        read_note = f"read by {step.run.job} run {step.run.run_id}"
        for item in step.inputs:
            source = build.dataset_node(item.dataset, 2 * level)
            build.edges.append(GraphEdge(source, key, step.label))
            build.mark_part(item.partitions, "read", read_note)
            _provenance_steps(build, item.writers, _units(item.partitions), level + 1)


def _unit(partition: PartitionRef) -> Unit:
    """A partition of an answer (its columns in the dataset's order) as the graph keys it."""
    return tuple(sorted(partition.dimensions))


def _count_runs(steps: Iterable[ProvenanceStep]) -> int:
    seen: set[str] = set()
    todo = list(steps)
    while todo:
        step = todo.pop()
        seen.add(step.run.run_id)
        todo.extend(writer for item in step.inputs for writer in item.writers)
    return len(seen)


def _counted(part: PartitionSet) -> str:
    if part.whole is not None:
        return f"{part.dataset} (whole dataset, {part.whole})"
    counted = [f"{len(part.definite)} definite"] if part.definite else []
    counted += [f"{len(part.possible)} possible"] if part.possible else []
    return f"{part.dataset}: {', '.join(counted)} partition(s)"


def report_picture(
    db: str | os.PathLike[str] | LineageStore,
    dataset: str | None = None,
    *,
    provenance: bool = False,
    partition: Mapping[str, str | None] | None = None,
    since: str | None = None,
    depth: int | None = None,
    namespace: str | None = None,
) -> Picture:
    """:func:`impact_picture`, or with ``provenance`` :func:`provenance_picture`; without a
    dataset, :func:`overview_picture`."""
    if dataset is None:
        given = [
            name
            for name, value in (
                ("provenance", provenance),
                ("partition", partition),
                ("since", since),
                ("depth", depth),
                ("namespace", namespace),
            )
            if value
        ]
        if given:
            raise LineageQueryError(
                f"{', '.join(given)}: name a dataset to ask about; without one the report is "
                "an overview of the whole database"
            )
        return overview_picture(db)
    if not provenance:
        return impact_picture(
            db, dataset, partition=partition, since=since, depth=depth, namespace=namespace
        )
    if since is not None:
        raise LineageQueryError(
            "since is for impact; provenance follows the latest writers back from now"
        )
    return provenance_picture(db, dataset, partition=partition, depth=depth, namespace=namespace)


def overview_picture(db: str | os.PathLike[str] | LineageStore) -> Picture:
    """Everything the database holds, by job: which jobs read and write which datasets (how
    many runs, the last one's state), and per dataset its partitions coloured by their last
    completed writer (the newest rows of a long grid)."""
    with picture_source(db) as source:
        build = _Builder(source, overview=True)
        uses = source.job_uses()
        last: dict[tuple[str, str], tuple[RunRef, int]] = {}
        for run in source.runs():
            seen = last.get((run.job_namespace, run.job_name))
            last[(run.job_namespace, run.job_name)] = (run, 1 + (seen[1] if seen else 0))
        jobs = {_job_key(use): use for use in uses}
        edges = [
            (_job_key(use), f"d:{use.dataset_id}")
            if use.direction == "output"
            else (f"d:{use.dataset_id}", _job_key(use))
            for use in uses
        ]
        layers = _layers(edges)
        keys: dict[str, str] = {}
        for name, layer in sorted(layers.items(), key=lambda item: (item[1], item[0])):
            if name.startswith("d:"):
                dataset = source.dataset(int(name[2:]))
                keys[name] = build.dataset_node(dataset, layer)
                _mark_last_writers(build, int(name[2:]))
            else:
                use = jobs[name]
                run, count = last[(use.job_namespace, use.job_name)]
                keys[name] = build.job_node(run, count, layer)
        build.edges.extend(GraphEdge(keys[a], keys[b], "definite") for a, b in dict.fromkeys(edges))
        runs = sum(count for _, count in last.values())
        summary = [
            f"{len(last)} job(s), {runs} run(s), "
            f"{sum(name.startswith('d:') for name in layers)} dataset(s)",
            "Give a dataset (and --partition) for what depends on it, or where it came from",
        ]
        return build.picture("overview", f"Lineage database {_source(db)}", summary, runs)


def _job_key(use: JobUse) -> str:
    return f"j:{use.job_namespace}\0{use.job_name}"


def _source(db: str | os.PathLike[str] | LineageStore) -> str:
    return db.path if isinstance(db, LineageStore) else os.fspath(db)


def _layers(edges: list[tuple[str, str]]) -> dict[str, int]:
    """A layer per node, so that edges go to later layers: the longest path from a node with
    no inputs; a cycle (a job that rewrites its input) is broken at its lightest node."""
    inputs: dict[str, set[str]] = {}
    outputs: dict[str, set[str]] = {}
    for source, target in edges:
        inputs.setdefault(source, set())
        outputs.setdefault(target, set())
        if source != target:
            inputs.setdefault(target, set()).add(source)
            outputs.setdefault(source, set()).add(target)
    waiting = {node: len(found) for node, found in inputs.items()}
    layers: dict[str, int] = {}
    while waiting:
        ready = [node for node, count in waiting.items() if count == 0]
        if not ready:  # a cycle: start it where the fewest inputs are still waiting
            ready = [min(waiting, key=lambda node: (waiting[node], node))]
        for node in sorted(ready):
            del waiting[node]
            done = [layers[source] + 1 for source in inputs[node] if source in layers]
            layers[node] = max(done, default=0)
            for target in outputs.get(node, ()):
                if target in waiting:
                    waiting[target] -= 1
    return layers


def _mark_last_writers(build: _Builder, dataset_id: int) -> None:
    """Each known partition of the dataset (or the dataset as a whole): its latest completed
    writer, as :func:`~openlineage_subset.lineage.dataset_partitions` finds it, walking the
    writes from the latest and stopping once every partition has one."""
    source = build.source
    dataset = source.dataset(dataset_id)
    build.cells.setdefault(dataset, {})
    pending: set[Unit] = set(source.partitions_of(dataset_id).known) or {None}
    writes = source.latest_writes(dataset_id)  # completed, the latest first
    while pending:
        write = next(writes, None)
        if write is None:
            break
        note = f"last written by {write.run.job} run {write.run.run_id}, ended "
        note += shown_time(write.run.ended_at or "")
        for unit, label in write.units:
            for found in list(pending) if unit is None else [unit] if unit in pending else []:
                state: CellState = "written" if label == "definite" else "possible"
                build.mark(dataset, found, state, note)
                pending.discard(found)
