"""What the web UI reads that no lineage query answers: one run as the database holds it.

The database keeps, per run, its merged state and times, the events it was built from (type,
time, where each was first read) and what it read and wrote (the subset conditions, rendered
as SQL-like text); it does not keep the events' other facets.
"""

from __future__ import annotations

import dataclasses
import json
import os

from openlineage_subset.lineage._arguments import open_store
from openlineage_subset.lineage._catalog import RunAccess
from openlineage_subset.lineage._model import DatasetRef, RunRef
from openlineage_subset.lineage._rendering import rendered as _rendered


@dataclasses.dataclass(frozen=True)
class RunEvent:
    event_type: str
    event_time: str
    source: str


@dataclasses.dataclass(frozen=True)
class RunDetails:
    run: RunRef
    events: tuple[RunEvent, ...]
    inputs: tuple[RunAccess, ...]
    outputs: tuple[RunAccess, ...]


def run_details(db: str | os.PathLike[str], run_id: str) -> RunDetails | None:
    """The run ``run_id`` of the database ``db``; None when it holds no such run."""
    store, close = open_store(db)
    try:
        connection = store.connection
        row = connection.execute(
            "SELECT run_id, job_namespace, job_name, status, started_at, ended_at FROM runs "
            "WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            return None
        events = tuple(
            RunEvent(*found)
            for found in connection.execute(
                "SELECT event_type, event_time, source FROM events WHERE run_id = ? "
                "ORDER BY event_time, digest",
                (run_id,),
            )
        )
        accesses: dict[str, list[RunAccess]] = {"input": [], "output": []}
        for direction, namespace, name, condition in connection.execute(
            "SELECT a.direction, d.namespace, d.name, a.condition FROM accesses a "
            "JOIN datasets d ON d.dataset_id = a.dataset_id WHERE a.run_id = ? "
            "ORDER BY d.namespace, d.name",
            (run_id,),
        ):
            parsed = None if condition is None else json.loads(condition)
            accesses[direction].append(RunAccess(DatasetRef(namespace, name), _rendered(parsed)))
    finally:
        if close:
            store.close()
    return RunDetails(RunRef(*row), events, tuple(accesses["input"]), tuple(accesses["output"]))
