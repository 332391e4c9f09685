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
from openlineage_subset.lineage.model import AccessConditions, DatasetRef, RunRef, Side
from openlineage_subset.lineage.queries import RunAccess
from openlineage_subset.lineage.store import (
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
    """The runs that name it as their parent, the first started first, at most
    :data:`MAX_CHILDREN`."""
    children_total: int = 0


MAX_CHILDREN = 200
"""The runs a run's page lists of those it started (a streaming query's batches, thousands)."""
_RUN_COLUMNS = "r.run_id, r.job_namespace, r.job_name, r.status, r.started_at, r.ended_at"


def _family(
    connection: sqlite3.Connection, run_id: str
) -> tuple[str | None, RunRef | None, tuple[RunRef, ...], int]:
    """The run's parent (its id, and the run where stored), and the runs it started (the
    first :data:`MAX_CHILDREN`, and how many)."""
    named = connection.execute(
        "SELECT parent_run_id FROM run_parents WHERE run_id = ?", (run_id,)
    ).fetchone()
    parent_id = named[0] if named else None
    found = None
    if parent_id is not None:
        found = connection.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs r WHERE r.run_id = ?", (parent_id,)
        ).fetchone()
    children = connection.execute(
        f"SELECT {_RUN_COLUMNS} FROM run_parents p JOIN runs r ON r.run_id = p.run_id "
        "WHERE p.parent_run_id = ? ORDER BY r.started_at, r.run_id LIMIT ?",
        (run_id, MAX_CHILDREN),
    ).fetchall()
    total = len(children)
    if total == MAX_CHILDREN:
        (total,) = connection.execute(
            "SELECT count(*) FROM run_parents WHERE parent_run_id = ?", (run_id,)
        ).fetchone()
    parent = None if found is None else RunRef(*found)
    return parent_id, parent, tuple(RunRef(*child) for child in children), total


def run_details(db: Database, run_id: str) -> RunDetails | None:
    """The run ``run_id`` of the database ``db``; None when it holds no such run."""
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
        parent_id, parent, children, total = _family(connection, run_id)
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
    of its runs, among the last few, whose events gave it any; None when none did. Another
    name of a dataset (a location stored as its table's) finds the dataset."""
    with opened(db) as store:
        connection = store.connection
        stored = connection.execute(
            "SELECT 1 FROM datasets WHERE namespace = ? AND name = ?",
            (dataset.namespace, dataset.name),
        ).fetchone()
        joined = [] if stored else also_named(connection, dataset.name, dataset.namespace)
        if len(joined) == 1:
            dataset = DatasetRef(*joined[0][1:])
        others = names_of(connection, dataset)  # facets given under any of its names are its
        names = {dataset, *(other for other, _ in others)}
        runs = connection.execute(
            "SELECT r.run_id FROM accesses a JOIN datasets d ON d.dataset_id = a.dataset_id "
            "JOIN runs r ON r.run_id = a.run_id WHERE d.namespace = ? AND d.name = ? "
            "GROUP BY r.run_id ORDER BY MAX(COALESCE(r.ended_at, r.started_at)) DESC LIMIT ?",
            (dataset.namespace, dataset.name, _RUNS_LOOKED_AT),
        ).fetchall()
        for (run_id,) in runs:
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
