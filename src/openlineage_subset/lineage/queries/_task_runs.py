"""The tasks to re-run: which orchestrator task run each affected run belongs to.

A backfill plan lists partitions; an on-call engineer re-runs orchestrator tasks. Runs say
where they stand in their ``parent`` run facet (``run.runId`` and ``job`` of the parent, and
``root``: the run at the top, an Airflow DAG run), which Airflow's OpenLineage provider passes
to Spark (``spark.openlineage.parent*`` and ``rootParent*``) and our capture writes: an
action's parent is its Spark application's run, whose parent is the Airflow task run. The
provider posts the task runs themselves too: job ``dag_id.task_id``, with the ``airflow`` run
facet (``dag.dag_id``, ``task.task_id``, ``dagRun.logical_date`` and ``run_id``) and
``nominalTime``.

At ingest, :func:`run_parents` reads those facets of each event (only when it has one of
them: a dictionary look-up for the others), and the writer keeps them in ``run_parents``.
:func:`orchestrator_tasks` walks from a run up its parents to the first orchestrator task run:
one whose ``airflow`` facet names its DAG and task; or, when the walk reaches a parent never
posted, that parent if its job is named ``<root job>.<task>`` (the provider's ``dag_id.task_id``
under the DAG run it names as root): then the DAG and task are known, the logical date is not,
and no command is given rather than a guessed one. :func:`task_reruns` groups the affected runs
of an impact answer by that task run (a run without one by itself, under its own job), in the
order of the runs, with what each wrote that the plan recomputes and Airflow's command that
clears it.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from openlineage_subset.lineage.engine import DatasetCatalog
from openlineage_subset.lineage.model import (
    AffectedRun,
    Label,
    OrchestratorTask,
    PartitionSet,
    TaskRerun,
    Unit,
    job_text,
    shown_time,
    stronger,
)
from openlineage_subset.lineage.store import AIRFLOW, PARENT_COLUMNS

_MAX_LEVELS = 8  # an action, its application, its task, the DAG run, a triggering DAG's...


def orchestrator_tasks(
    db: sqlite3.Connection, run_ids: Iterable[str]
) -> dict[str, OrchestratorTask | None]:
    """The orchestrator task run of each run (None: none known), walking up its parents."""
    runs = list(dict.fromkeys(run_ids))
    rows: dict[str, tuple[Any, ...]] = {}
    wanted = set(runs)
    asked = set(wanted)
    for _ in range(_MAX_LEVELS):
        if not wanted:
            break
        found = db.execute(
            "SELECT p.run_id, r.job_namespace, "
            f"{', '.join('p.' + name for name in PARENT_COLUMNS)} "
            "FROM json_each(?) j JOIN run_parents p ON p.run_id = j.value "
            "JOIN runs r ON r.run_id = p.run_id",
            (_json_list(wanted),),
        ).fetchall()
        wanted = set()
        for row in found:
            rows[row[0]] = row
            parent = row[2]
            if row[10] is None and parent is not None and parent not in asked:
                wanted.add(parent)  # not a task itself: its parent may be
        asked |= wanted
    return {run_id: _walk(rows, run_id) for run_id in runs}


def _json_list(values: Iterable[str]) -> str:
    return json.dumps(sorted(values))


def _walk(rows: Mapping[str, tuple[Any, ...]], run_id: str) -> OrchestratorTask | None:
    current: str | None = run_id
    seen: set[str] = set()
    while current is not None and current not in seen and len(seen) < _MAX_LEVELS:
        seen.add(current)
        row = rows.get(current)
        if row is None:
            return None
        (_, namespace, parent, parent_ns, parent_name, root, _, root_name, orchestrator) = row[:9]
        dag_id, task_id, dag_run_id, logical = row[9:13]
        if orchestrator is not None and dag_id is not None and task_id is not None:
            return OrchestratorTask(
                orchestrator, namespace, dag_id, task_id, logical, current, dag_run_id
            )
        if parent is None:
            return None
        if parent not in rows:
            return _named_task(parent, parent_ns, parent_name, root, root_name)
        current = parent
    return None


def _named_task(
    parent: str,
    namespace: str | None,
    name: str | None,
    root: str | None,
    root_name: str | None,
) -> OrchestratorTask | None:
    """A parent never posted, as its name tells: Airflow's task runs are ``dag_id.task_id``
    under the DAG run (the root); the logical date is not known from names."""
    if namespace is None or name is None or root is None or root_name is None or root == parent:
        return None
    prefix = root_name + "."
    if not name.startswith(prefix) or len(name) == len(prefix):
        return None
    return OrchestratorTask(AIRFLOW, namespace, root_name, name[len(prefix) :], None, parent, None)


def clear_command(task: OrchestratorTask, overlapping: Sequence[str] = ()) -> str | None:
    """Airflow's command that clears ``task`` (its runs start again), or None when it cannot
    be told to clear that task run alone: its logical date is not known (it would clear other
    DAG runs' tasks too), or ``overlapping`` names other tasks of its DAG whose ids contain its
    id (Airflow 3's ``-t`` keeps the tasks whose id contains the text given, whatever its help
    says of a regex; Airflow 2 searched it as a regex: the id alone keeps it, in both).

    >>> print(clear_command(OrchestratorTask("airflow", "default", "lake", "daily.agg",
    ...     "2025-03-02T00:00:00.000000000Z", "r", None)))  # doctest: +NORMALIZE_WHITESPACE
    airflow tasks clear lake -t daily.agg -s 2025-03-02T00:00:00+00:00
        -e 2025-03-02T00:00:00+00:00 -y

    Airflow's ids may start with ``-``, which its parser would read as an option: such a task
    id is given as ``-t=ID``, such a DAG id after ``--``, where it can only be the DAG.

    >>> print(clear_command(OrchestratorTask("airflow", "default", "-lake", "-agg",
    ...     "2025-03-02T00:00:00.000000000Z", "r", None)))  # doctest: +NORMALIZE_WHITESPACE
    airflow tasks clear -t=-agg -s 2025-03-02T00:00:00+00:00 -e 2025-03-02T00:00:00+00:00 -y
        -- -lake
    """
    if task.orchestrator != AIRFLOW or task.logical_date is None or overlapping:
        return None
    when = airflow_time(task.logical_date)
    if task.task_id.startswith("-"):
        select = shlex.quote(f"-t={task.task_id}")
    else:
        select = f"-t {shlex.quote(task.task_id)}"
    dates = f"-s {when} -e {when} -y"
    if task.dag_id.startswith("-"):
        return f"airflow tasks clear {select} {dates} -- {shlex.quote(task.dag_id)}"
    return f"airflow tasks clear {shlex.quote(task.dag_id)} {select} {dates}"


AIRFLOW_VERSION_NOTE = (
    "the commands are for Airflow 3; Airflow 2 reads -t as a regular expression, where a '.' "
    "in an id matches any character"
)
"""Said wherever the commands are: which Airflow they were made and tested for."""


def overlapping_tasks(db: sqlite3.Connection, task: OrchestratorTask) -> tuple[str, ...]:
    """The other tasks of ``task``'s DAG whose posted runs are known and whose ids contain
    its id: what ``airflow tasks clear -t`` would clear with it."""
    found = db.execute(
        "SELECT DISTINCT task_id FROM run_parents WHERE orchestrator = ? AND dag_id = ? "
        "AND task_id != ? AND instr(task_id, ?) > 0 ORDER BY task_id",
        (task.orchestrator, task.dag_id, task.task_id, task.task_id),
    ).fetchall()
    return tuple(row[0] for row in found)


def airflow_time(stored: str) -> str:
    """A stored time as Airflow's CLI reads a logical date: ISO 8601, microseconds, +00:00.

    >>> airflow_time("2025-03-02T00:00:00.000000000Z"), airflow_time("2025-03-02T06:30:00.5Z")
    ('2025-03-02T00:00:00+00:00', '2025-03-02T06:30:00.500000+00:00')
    """
    head, _, fraction = stored.rstrip("Z").partition(".")
    micro = fraction[:6].ljust(6, "0")
    return f"{head}.{micro}+00:00" if micro.strip("0") else f"{head}+00:00"


def task_reruns(
    db: sqlite3.Connection,
    runs: Sequence[AffectedRun],
    written: Mapping[str, Mapping[int, Mapping[Unit, Label]]],
    partitions: Callable[[int], DatasetCatalog],
) -> tuple[TaskRerun, ...]:
    """The affected ``runs`` grouped by what re-runs them, in their order: each orchestrator
    task run (one per DAG, task and logical date), and each run without one by itself.
    ``written`` holds what each run wrote that the plan recomputes (dataset id -> units)."""
    tasks = orchestrator_tasks(db, (item.run.run_id for item in runs))
    groups: dict[tuple[str | None, ...], list[Any]] = {}
    for item in runs:
        run = item.run
        task = tasks.get(run.run_id)
        if task is None:
            key: tuple[str | None, ...] = ("run", run.run_id)
            job = (run.job_namespace, run.job_name)
        else:
            when = task.logical_date or task.run_id  # an unknown date: each task run alone
            key = (task.orchestrator, task.namespace, task.dag_id, task.task_id, when)
            job = (task.namespace, f"{task.dag_id}.{task.task_id}")
        group = groups.get(key)
        if group is None:
            group = groups[key] = [task, job, item.label, [], {}]
        group[2] = stronger(group[2], item.label)
        if run.run_id not in group[3]:
            group[3].append(run.run_id)
        parts: dict[int, dict[Unit, Label]] = group[4]
        for dataset_id, units in written.get(run.run_id, {}).items():
            merged = parts.setdefault(dataset_id, {})
            for unit, label in units.items():
                merged[unit] = stronger(merged.get(unit), label) or label
    found = []
    for task, (namespace, name), label, run_ids, parts in groups.values():
        backfill = sorted(
            (partitions(dataset_id).partition_set(units) for dataset_id, units in parts.items()),
            key=lambda item: (item.dataset.namespace, item.dataset.name),
        )
        overlapping = () if task is None else overlapping_tasks(db, task)
        command = None if task is None else clear_command(task, overlapping)
        found.append(
            TaskRerun(
                task, namespace, name, label, tuple(run_ids), tuple(backfill), command, overlapping
            )
        )
    return tuple(found)


def task_heading(rerun: TaskRerun) -> str:
    """What to re-run, on one line: the DAG, task and logical date, or the job and its run."""
    task = rerun.task
    if task is None:
        return f"job {job_text(rerun.job_namespace, rerun.job_name)} run {rerun.run_ids[0]}"
    when = (
        f"logical date {shown_time(task.logical_date)}"
        if task.logical_date is not None
        else f"logical date unknown (its task run {task.run_id} was never posted)"
    )
    dag_run = f", DAG run {task.dag_run_id}" if task.dag_run_id else ""
    return f"{task.orchestrator} DAG {task.dag_id}, task {task.task_id}, {when}{dag_run}"


def tasks_lines(tasks: Sequence[TaskRerun], partitions: Callable[[PartitionSet], str]) -> list[str]:
    """The plan by task, as lines of text (``partitions`` shows a dataset's part)."""
    lines = ["", "Re-run, in dependency order:"]
    if not tasks:
        lines.append("  nothing: no run read the affected data")
    for rerun in tasks:
        lines.append(f"  {rerun.label.upper():9} {task_heading(rerun)}")
        if rerun.command is not None:
            lines.append(f"            {rerun.command}")
        elif rerun.overlapping:
            lines.append(
                "            clear it by hand in its DAG run: 'airflow tasks clear -t' would "
                f"also clear {', '.join(rerun.overlapping)} (-t keeps ids containing it)"
            )
        elif rerun.task is not None:
            lines.append(
                "            find its DAG run in Airflow and clear the task there "
                "(no logical date recorded to clear it by)"
            )
        for part in rerun.backfill:
            lines.append(f"            recomputes {partitions(part)}")
        if not rerun.backfill:
            lines.append("            recomputes nothing recorded (it wrote no affected data)")
        runs = ", ".join(rerun.run_ids)
        lines.append(f"            affected run(s): {runs}")
    if any(rerun.command is not None for rerun in tasks):
        lines.append(f"  ({AIRFLOW_VERSION_NOTE})")
    return lines
