"""What the web UI shows that no lineage query answers: one run as the database holds it, and
a dataset's facets, as frozen dataclasses the service renders.

The database keeps, per run, its merged state and times, the events it was built from (type,
time, where each was first read), what it read and wrote (the subset conditions, rendered as
SQL-like text) and each event's other facets (``lineage/store/_facets.py``). A run's facets
are merged as OpenLineage merges them: of each facet, the one of the latest event that has it.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterable

from openlineage_subset.lineage.engine import PartitionCatalog
from openlineage_subset.lineage.model import (
    AccessConditions,
    DatasetRef,
    LineageQueryError,
    RunRef,
    Side,
    normal_time,
)
from openlineage_subset.lineage.queries import RunAccess
from openlineage_subset.lineage.store import (
    LATEST_ACCESSES,
    NOT_KEPT,
    Database,
    also_named,
    facets_of,
    names_of,
    opened,
)

__all__ = [
    "DatasetFacets",
    "Facet",
    "FacetGroup",
    "RunDetails",
    "RunEvent",
    "dataset_facets",
    "run_details",
]


@dataclasses.dataclass(frozen=True)
class RunEvent:
    event_type: str
    event_time: str
    source: str


@dataclasses.dataclass(frozen=True)
class Facet:
    """One facet as the latest event that has it gave it."""

    name: str
    value: object
    event: RunEvent


@dataclasses.dataclass(frozen=True)
class FacetGroup:
    """The facets of one thing (the run, the job, one dataset read or written)."""

    heading: str
    dataset: DatasetRef | None
    facets: tuple[Facet, ...]


@dataclasses.dataclass(frozen=True)
class RunDetails:
    run: RunRef
    events: tuple[RunEvent, ...]
    inputs: tuple[RunAccess, ...]
    outputs: tuple[RunAccess, ...]
    facets: tuple[FacetGroup, ...] = ()
    facets_not_kept: tuple[tuple[RunEvent, str], ...] = ()
    """Events whose facets the database does not hold, with why."""
    parent_id: str | None = None
    """The run its ``parent`` facet names (None: none)."""
    parent: RunRef | None = None
    """That run, where the database holds it."""
    children: tuple[RunRef, ...] = ()
    """The runs that name it as their parent, the newest first, at most :data:`MAX_CHILDREN`
    (those started before ``children_before``, when given)."""
    children_total: int = 0
    children_before: str | None = None
    """The page of its runs asked for: a :data:`CHILDREN_CURSOR` (None: the newest)."""
    children_older: str | None = None
    """Where the next page of its runs starts, when there are older ones."""


MAX_CHILDREN = 200
"""The runs a run's page lists of those it started (a streaming query's batches, thousands)."""
CHILDREN_CURSOR = "STARTED_AT|RUN_ID"
"""A page of a run's runs: those started before ``STARTED_AT`` (as stored), or at it with a
smaller id (``|RUN_ID`` may be left out)."""
DENSE_CHILDREN = 10_000
"""From this many runs on, a run's runs are listed by walking all runs by start time (a
streaming query's batches: most of the recent runs) rather than by sorting them all."""
_RUN_COLUMNS = "r.run_id, r.job_namespace, r.job_name, r.status, r.started_at, r.ended_at"


def _family(
    connection: sqlite3.Connection, run_id: str, before: str | None
) -> tuple[str | None, RunRef | None, tuple[RunRef, ...], int, str | None]:
    """The run's parent (its id, and the run where stored), and the runs it started (the
    newest :data:`MAX_CHILDREN` started before ``before``, how many in all, and the cursor of
    the next page)."""
    named = connection.execute(
        "SELECT parent_run_id FROM run_parents WHERE run_id = ?", (run_id,)
    ).fetchone()
    parent_id = named[0] if named else None
    found = None
    if parent_id is not None:
        found = connection.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs r WHERE r.run_id = ?", (parent_id,)
        ).fetchone()
    (total,) = connection.execute(
        "SELECT count(*) FROM run_parents WHERE parent_run_id = ?", (run_id,)
    ).fetchone()
    # Few runs: found by their parent, then sorted; many (a stream's batches): the runs walked
    # newest first, each checked for its parent, until a page is found (a few milliseconds,
    # where sorting half a million batches took seconds).
    tables = (
        "runs r CROSS JOIN run_parents p ON p.run_id = r.run_id"
        if total >= DENSE_CHILDREN
        else "run_parents p JOIN runs r ON r.run_id = p.run_id"
    )
    started, _, last_id = (before or "").partition("|")
    if before:
        # As stored: the page's own cursor is; a time typed in is read as any time the
        # queries take (a date is its midnight UTC).
        found_time = normal_time(started)
        if found_time is None:
            raise LineageQueryError(
                f"before: {started!r} is not an ISO-8601 time; write it like "
                "2024-10-15T10:00:00Z or 2024-10-15"
            )
        started = found_time
    page = "AND (r.started_at < ? OR (r.started_at = ? AND r.run_id < ?)) " if before else ""
    cursor = (started, started, last_id) if before else ()
    children = connection.execute(
        f"SELECT {_RUN_COLUMNS} FROM {tables} WHERE p.parent_run_id = ? {page}"
        "ORDER BY r.started_at DESC, r.run_id DESC LIMIT ?",
        (run_id, *cursor, MAX_CHILDREN + 1),
    ).fetchall()
    older = None
    if len(children) > MAX_CHILDREN:
        children = children[:MAX_CHILDREN]
        older = f"{children[-1][4]}|{children[-1][0]}"
    parent = None if found is None else RunRef(*found)
    return parent_id, parent, tuple(RunRef(*child) for child in children), total, older


def run_details(db: Database, run_id: str, *, before: str | None = None) -> RunDetails | None:
    """The run ``run_id`` of the database ``db``; None when it holds no such run. ``before``:
    which page of the runs it started (a :data:`CHILDREN_CURSOR`; None: the newest)."""
    with opened(db) as store:
        connection = store.connection
        row = connection.execute(
            "SELECT run_id, job_namespace, job_name, status, started_at, ended_at FROM runs "
            "WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            return None
        rows = connection.execute(
            "SELECT event_type, event_time, source, facets FROM events WHERE run_id = ? "
            "ORDER BY event_time, digest",
            (run_id,),
        ).fetchall()
        pairs = [(RunEvent(*found[:3]), found[3]) for found in rows]
        events = tuple(event for event, _ in pairs)
        groups, not_kept = _merged_facets(pairs)
        accesses: dict[Side, list[RunAccess]] = {side: [] for side in Side}
        catalog = PartitionCatalog(connection)
        texts = AccessConditions(lambda dataset_id: catalog.of(dataset_id).column_order())
        for direction, namespace, name, dataset_id, condition in connection.execute(
            "SELECT a.direction, d.namespace, d.name, a.dataset_id, a.condition FROM accesses a "
            "JOIN datasets d ON d.dataset_id = a.dataset_id WHERE a.run_id = ? "
            "ORDER BY d.namespace, d.name",
            (run_id,),
        ):
            access = RunAccess(DatasetRef(namespace, name), texts.text(dataset_id, condition))
            accesses[Side(direction)].append(access)
        parent_id, parent, children, total, older = _family(connection, run_id, before)
    return RunDetails(
        RunRef(*row),
        events,
        tuple(accesses[Side.INPUT]),
        tuple(accesses[Side.OUTPUT]),
        groups,
        not_kept,
        parent_id,
        parent,
        children,
        total,
        before,
        older,
    )


_PLACES = (("inputs", "inputFacets", "read"), ("outputs", "outputFacets", "written"))


def _merged_facets(
    events: Iterable[tuple[RunEvent, bytes | None]],
) -> tuple[tuple[FacetGroup, ...], tuple[tuple[RunEvent, str], ...]]:
    """The run's facets by group, each facet from the latest event that has it (events come
    in time order), and the events whose facets are not held."""
    groups: dict[tuple[str, DatasetRef | None], dict[str, Facet]] = {}
    not_kept = []
    for event, body in events:
        document = facets_of(body)
        if document is None:
            not_kept.append((event, "stored before this version kept facets"))
            continue
        if NOT_KEPT in document:
            size = document[NOT_KEPT].get("compressedBytes")
            limit = document[NOT_KEPT].get("limit")
            not_kept.append((event, f"{size} bytes compressed, over the {limit} kept"))
            continue
        for part in ("run", "job"):
            _add(groups, (f"{part} facets", None), document.get(part), event)
        for list_key, facets_key, verb in _PLACES:
            for item in document.get(list_key, ()):
                key = (f"facets of the dataset {verb}", DatasetRef(item["namespace"], item["name"]))
                _add(groups, key, item.get("facets"), event)
                _add(groups, key, item.get(facets_key), event)
    order = [f"{part} facets" for part in ("run", "job")]
    order += [f"facets of the dataset {verb}" for _, _, verb in _PLACES]
    found = tuple(
        FacetGroup(heading, dataset, tuple(sorted(facets.values(), key=lambda f: f.name)))
        for (heading, dataset), facets in sorted(
            groups.items(),
            key=lambda item: (order.index(item[0][0]), str(item[0][1] or "")),
        )
    )
    return found, tuple(not_kept)


def _add(
    groups: dict[tuple[str, DatasetRef | None], dict[str, Facet]],
    key: tuple[str, DatasetRef | None],
    facets: object,
    event: RunEvent,
) -> None:
    if isinstance(facets, dict) and facets:
        group = groups.setdefault(key, {})
        for name, value in facets.items():
            group[name] = Facet(name, value, event)


@dataclasses.dataclass(frozen=True)
class DatasetFacets:
    """A dataset's facets as the latest run that gave any gave them."""

    run_id: str
    facets: tuple[Facet, ...]
    other_names: tuple[tuple[DatasetRef, str], ...] = ()
    """The dataset's other names (its table's, its location), each with why."""


_RUNS_LOOKED_AT = 20


def dataset_facets(db: Database, dataset: DatasetRef) -> DatasetFacets | None:
    """The facets of ``dataset`` (its ``facets`` and those of the read or write) in the latest
    started of its runs, among the last few, whose events gave it any; None when none did. Another
    name of a dataset (a location stored as its table's) finds the dataset."""
    with opened(db) as store:
        connection = store.connection
        row = connection.execute(
            "SELECT dataset_id FROM datasets WHERE namespace = ? AND name = ?",
            (dataset.namespace, dataset.name),
        ).fetchone()
        joined = [] if row else also_named(connection, dataset.name, dataset.namespace)
        if len(joined) == 1:
            row = joined[0][:1]
            dataset = DatasetRef(*joined[0][1:])
        others = names_of(connection, dataset)  # facets given under any of its names are its
        names = {dataset, *(other for other, _ in others)}
        # The latest started (a run reads and writes it at most once each): by the index of
        # accesses by their run's start, the others unread.
        most = 2 * _RUNS_LOOKED_AT
        runs = (
            connection.execute(
                f"SELECT run_id FROM ({LATEST_ACCESSES})", (row[0], most, row[0], most, most)
            ).fetchall()
            if row is not None
            else []
        )
        for run_id in list(dict.fromkeys(run_id for (run_id,) in runs))[:_RUNS_LOOKED_AT]:
            rows = connection.execute(
                "SELECT event_type, event_time, source, facets FROM events WHERE run_id = ? "
                "ORDER BY event_time, digest",
                (run_id,),
            ).fetchall()
            groups, _ = _merged_facets((RunEvent(*row[:3]), row[3]) for row in rows)
            found: dict[str, Facet] = {}
            for group in groups:
                if group.dataset in names:
                    found.update((facet.name, facet) for facet in group.facets)
            if found:
                facets = tuple(sorted(found.values(), key=lambda f: f.name))
                return DatasetFacets(run_id, facets, others)
    return None
