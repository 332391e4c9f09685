"""Where a run stands among runs, as events say and the store keeps it (table ``run_parents``):
its parent and root run, and for an orchestrator's task run (Airflow) its DAG, task and logical
date, read from the run's facets at ingest and merged over its events."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from openlineage_subset.lineage.model import normal_time


@dataclass(frozen=True, slots=True)
class RunParents:
    """Where a run stands among runs: its ``parent`` run facet (parent and root), and, for an
    orchestrator's own task run (Airflow's ``airflow`` run facet), the DAG, task and logical
    date (see :mod:`~openlineage_subset.lineage.queries._task_runs`)."""

    parent_run_id: str | None = None
    parent_namespace: str | None = None
    parent_name: str | None = None
    root_run_id: str | None = None
    root_namespace: str | None = None
    root_name: str | None = None
    orchestrator: str | None = None
    dag_id: str | None = None
    task_id: str | None = None
    dag_run_id: str | None = None
    logical_date: str | None = None
    """In stored form (:func:`~openlineage_subset.lineage.model._time.normal_time`)."""
    nominal_time: str | None = None
    """The ``nominalTime`` facet's start, in stored form."""


PARENT_COLUMNS = (
    "parent_run_id",
    "parent_namespace",
    "parent_name",
    "root_run_id",
    "root_namespace",
    "root_name",
    "orchestrator",
    "dag_id",
    "task_id",
    "dag_run_id",
    "logical_date",
    "nominal_time",
)


UPSERT_PARENTS = (
    f"INSERT INTO run_parents (run_id, {', '.join(PARENT_COLUMNS)}) "
    f"VALUES ({', '.join('?' * (len(PARENT_COLUMNS) + 1))}) ON CONFLICT (run_id) DO UPDATE SET "
    + ", ".join(
        f"{name} = COALESCE(run_parents.{name}, excluded.{name})" for name in PARENT_COLUMNS
    )
)
"""Store a run's :class:`RunParents` (a row of :func:`parents_row`): what an earlier event
of the run gave stays, what it left unknown is filled."""


def run_parents(facets: Any) -> RunParents | None:
    """The parent, root and orchestrator task a run's facets (``run.facets``) name; None when
    they name none of them.

    >>> found = run_parents({"parent": {"run": {"runId": "t-1"},
    ...     "job": {"namespace": "af", "name": "daily.load"},
    ...     "root": {"run": {"runId": "d-1"}, "job": {"namespace": "af", "name": "daily"}}}})
    >>> found.parent_name, found.root_name, found.dag_id
    ('daily.load', 'daily', None)
    >>> run_parents({"airflow": {"dag": {"dag_id": "daily"}, "task": {"task_id": "load"},
    ...     "dagRun": {"logical_date": "2025-03-02T00:00:00+00:00"}}}).logical_date
    '2025-03-02T00:00:00.000000000Z'
    >>> print(run_parents({"processing_engine": {"name": "spark"}}))
    None
    """
    if not isinstance(facets, dict) or not (
        "parent" in facets or AIRFLOW in facets or "nominalTime" in facets
    ):
        return None
    parent = facets.get("parent")
    parent = parent if isinstance(parent, dict) else {}
    root = parent.get("root")
    root = root if isinstance(root, dict) else {}
    airflow = facets.get(AIRFLOW)
    airflow = airflow if isinstance(airflow, dict) else {}
    dag_id = _part(airflow, "dag", "dag_id") or _part(airflow, "dagRun", "dag_id")
    task_id = _part(airflow, "task", "task_id")
    is_task = dag_id is not None and task_id is not None
    # Airflow 3 names it logical_date (None for a run triggered without one), 2 execution_date.
    logical = _part(airflow, "dagRun", "logical_date") or _part(airflow, "dagRun", "execution_date")
    found = RunParents(
        parent_run_id=_part(parent, "run", "runId"),
        parent_namespace=_part(parent, "job", "namespace"),
        parent_name=_part(parent, "job", "name"),
        root_run_id=_part(root, "run", "runId"),
        root_namespace=_part(root, "job", "namespace"),
        root_name=_part(root, "job", "name"),
        orchestrator=AIRFLOW if is_task else None,
        dag_id=dag_id if is_task else None,
        task_id=task_id if is_task else None,
        dag_run_id=_part(airflow, "dagRun", "run_id") if is_task else None,
        logical_date=normal_time(logical) if is_task else None,
        nominal_time=normal_time(_part(facets, "nominalTime", "nominalStartTime")),
    )
    return found if found != _NOTHING else None


_NOTHING = RunParents()


def merged_parents(first: RunParents | None, then: RunParents) -> RunParents:
    """What two events of one run name, as :data:`UPSERT_PARENTS` merges them: the first
    event's values, and the second's where the first named none."""
    if first is None or first == then:
        return then if first is None else first
    return RunParents(
        *(getattr(first, f.name) or getattr(then, f.name) for f in dataclasses.fields(then))
    )


def parents_row(run_id: str, parents: RunParents) -> tuple[str | None, ...]:
    """The parameters of :data:`UPSERT_PARENTS` for ``parents`` of ``run_id``."""
    return (run_id, *(getattr(parents, name) for name in PARENT_COLUMNS))


AIRFLOW = "airflow"


def _part(facet: Mapping[str, Any], *keys: str) -> str | None:
    found: Any = facet
    for key in keys:
        found = found.get(key) if isinstance(found, dict) else None
    return _text(found)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
