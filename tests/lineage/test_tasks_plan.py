"""The backfill plan by orchestrator task: which Airflow task runs to clear, and how.

The events are shaped as Airflow's OpenLineage provider and our Spark capture send them: the
provider posts each task run (job ``dag_id.task_id``, the ``airflow`` run facet with the DAG,
task and logical date, a ``parent`` facet naming the DAG run); the Spark application's run
names the task run as its parent and the DAG run as root; each action's run names the
application as its parent. The real thing is tests/airflow/.
"""

from __future__ import annotations

import shlex
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from openlineage_subset.lineage import (
    SCHEMA_VERSION,
    LineageStore,
    OrchestratorTask,
    clear_command,
    impact,
    impact_text,
)
from tests.helpers import PRODUCER
from tests.lineage.conftest import Build
from tests.lineage.events import Json, at, event, parts, run_id

DAG = "lake_daily"
DATES = ("2025-03-01", "2025-03-02")
_PARENT_URL = "https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet"
_AIRFLOW_URL = "https://airflow.apache.org/schemas/openlineage/AirflowRunFacet.json"


def _facet(url: str, **fields: Any) -> Json:
    return {"_producer": PRODUCER, "_schemaURL": url, **fields}


def _ref(namespace: str, name: str, number: int) -> Json:
    return {"run": {"runId": run_id(number)}, "job": {"namespace": namespace, "name": name}}


def _parent(namespace: str, name: str, number: int, root: int) -> Json:
    return _facet(_PARENT_URL, **_ref(namespace, name, number), root=_ref("airflow", DAG, root))


def _events(
    number: int,
    namespace: str,
    job: str,
    minutes: tuple[float, float],
    facets: Json,
    reads: list[tuple[str, Json | None]] | None = None,
    writes: list[tuple[str, Json | None]] | None = None,
) -> list[Json]:
    made = []
    for kind, minute in zip(("START", "COMPLETE"), minutes, strict=True):
        item = event(number, kind, minute, job=job, reads=reads or [], writes=writes or [])
        item["job"]["namespace"] = namespace
        item["run"]["facets"] = facets
        made.append(item)
    return made


def _task(number: int, day: int, task: str, minutes: tuple[float, float]) -> list[Json]:
    """The provider's own task run of ``task`` on the DAG run of DATES[day]."""
    logical = f"{DATES[day]}T00:00:00+00:00"
    airflow = _facet(
        _AIRFLOW_URL,
        dag={"dag_id": DAG},
        task={"task_id": task},
        dagRun={"dag_id": DAG, "logical_date": logical, "run_id": f"scheduled__{logical}"},
        taskInstance={"try_number": 1},
        taskUuid=run_id(number),
    )
    facets = {"parent": _parent("airflow", DAG, 900 + day, 900 + day), "airflow": airflow}
    return _events(number, "airflow", f"{DAG}.{task}", minutes, facets)


def _spark(
    number: int, day: int, task: int, app: str, step: tuple[str, str], minutes: tuple[float, float]
) -> list[Json]:
    """A Spark application run under task run ``task``, and its write action (``number + 1``)
    reading ``step[0]`` and writing ``step[1]``, day DATES[day]."""
    application = _events(
        number,
        "spark",
        app,
        minutes,
        {"parent": _parent("airflow", f"{DAG}.{app}", task, 900 + day)},
    )
    partition = parts({"day": DATES[day]})
    action = _events(
        number + 1,
        "spark",
        f"{app}.write.{step[1]}",
        (minutes[0] + 0.1, minutes[1] - 0.1),
        {"parent": _parent("spark", app, number, 900 + day)},
        reads=[(step[0], partition)],
        writes=[(step[1], partition)],
    )
    return application + action


def _pipeline(*, posted: bool = True) -> list[Json]:
    """Two DAG runs (DATES), each: aggregate (raw -> agg), then publish (agg -> report);
    without ``posted``, the provider's runs of publish were never posted."""
    made: list[Json] = []
    for day in (0, 1):
        base = 100 * day
        made += _task(10 + day, day, "aggregate", (base + 1, base + 9))
        made += _spark(
            20 + 2 * day, day, 10 + day, "aggregate", ("raw", "agg"), (base + 2, base + 8)
        )
        if posted:
            made += _task(30 + day, day, "publish", (base + 11, base + 19))
        made += _spark(
            40 + 2 * day, day, 30 + day, "publish", ("agg", "report"), (base + 12, base + 18)
        )
    # A notebook's run, no orchestrator: it read the bad partition too.
    made += _events(
        70, "notebooks", "explore", (150, 151), {}, reads=[("raw", parts({"day": DATES[1]}))]
    )
    return made


def _commands(day: str, *tasks: str) -> list[str]:
    when = f"{day}T00:00:00+00:00"
    return [f"airflow tasks clear {DAG} -t {task} -s {when} -e {when} -y" for task in tasks]


def test_the_plan_names_the_airflow_task_runs_to_clear_in_dependency_order(
    lineage_db: Build,
) -> None:
    db = lineage_db(_pipeline())
    report = impact(db, "raw", partition={"day": DATES[1]})
    tasks = report.tasks
    assert [(t.job_namespace, t.job_name) for t in tasks] == [
        ("airflow", f"{DAG}.aggregate"),
        ("airflow", f"{DAG}.publish"),
        ("notebooks", "explore"),
    ]
    aggregate, publish, notebook = tasks
    assert [t.command for t in (aggregate, publish)] == _commands(DATES[1], "aggregate", "publish")
    assert aggregate.task is not None and aggregate.task.logical_date is not None
    assert aggregate.task.logical_date.startswith(DATES[1])
    assert aggregate.task.dag_run_id == f"scheduled__{DATES[1]}T00:00:00+00:00"
    assert aggregate.task.run_id == run_id(11)  # the provider's run of the task, day 2
    # What each task's runs wrote of the plan: the day's partition of its output, only.
    assert [(str(p.dataset), [str(r) for r in p.definite]) for p in aggregate.backfill] == [
        ("file:/data/lake/agg", [f"day={DATES[1]}"])
    ]
    assert [str(p.dataset) for p in publish.backfill] == ["file:/data/lake/report"]
    assert aggregate.run_ids == (run_id(23),)  # the write action of day 2, which read raw
    assert notebook.task is None and notebook.command is None and notebook.backfill == ()
    assert notebook.run_ids == (run_id(70),)
    # The JSON answer carries the same, with the logical date as the answers show times.
    shown = report.as_json()["tasks"]
    assert shown[0]["task"]["dagId"] == DAG and shown[0]["task"]["taskId"] == "aggregate"
    assert shown[0]["task"]["logicalDate"] == f"{DATES[1]}T00:00:00Z"
    assert shown[1]["command"] == _commands(DATES[1], "publish")[0]
    assert shown[2]["task"] is None and shown[2]["job"] == {
        "namespace": "notebooks",
        "name": "explore",
    }


def test_the_text_answer_lists_the_commands_and_not_the_other_day(lineage_db: Build) -> None:
    db = lineage_db(_pipeline())
    text = "\n".join(impact_text(impact(db, "raw", partition={"day": DATES[1]})))
    tasks_part = text[text.index("Re-run, in dependency order:") :]
    for command in _commands(DATES[1], "aggregate", "publish"):
        assert command in tasks_part
    assert "the commands are for Airflow 3; Airflow 2 reads -t as a regular expression" in (
        tasks_part
    )
    assert DATES[0] not in tasks_part
    assert tasks_part.index("task aggregate") < tasks_part.index("task publish")
    # The job spelled as the runs above spell it.
    assert "job notebooks.explore run " + run_id(70) in tasks_part
    assert f" notebooks.explore run {run_id(70)} " in text[: text.index("Re-run, in dependency")]


def test_a_task_run_never_posted_is_named_from_its_parent_without_a_date(
    lineage_db: Build,
) -> None:
    db = lineage_db(_pipeline(posted=False))
    tasks = impact(db, "raw", partition={"day": DATES[1]}).tasks
    publish = tasks[1]
    assert publish.task is not None
    assert (publish.task.dag_id, publish.task.task_id) == (DAG, "publish")
    assert publish.task.logical_date is None and publish.command is None
    assert publish.task.run_id == run_id(31)  # the parent run id the application named
    text = "\n".join(impact_text(impact(db, "raw", partition={"day": DATES[1]})))
    assert (
        f"task publish, logical date unknown (its task run {run_id(31)} was never posted)" in text
    )
    assert tasks[0].command == _commands(DATES[1], "aggregate")[0]


def test_a_layout_5_database_gets_the_parents_from_the_facets_it_kept(
    lineage_db: Build, tmp_path: Path
) -> None:
    db = lineage_db(_pipeline())
    expected = impact(db, "raw", partition={"day": DATES[1]}).tasks
    connection = sqlite3.connect(db, isolation_level=None)
    connection.execute("DROP TABLE run_parents")
    connection.execute("PRAGMA user_version = 5")
    connection.close()
    with LineageStore.open(db) as store:
        assert store.connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert impact(db, "raw", partition={"day": DATES[1]}).tasks == expected
    assert expected[0].command is not None


def test_runs_without_a_parent_keep_the_plan_by_their_own_job(lineage_db: Build) -> None:
    partition = parts({"day": DATES[0]})
    made = _events(
        1, "tests", "load", (1, 2), {}, reads=[("raw", partition)], writes=[("agg", partition)]
    )
    made += _events(
        2, "tests", "load", (3, 4), {}, reads=[("raw", partition)], writes=[("agg", partition)]
    )
    tasks = impact(lineage_db(made), "raw", partition={"day": DATES[0]}).tasks
    assert [(t.job_name, t.run_ids, t.task, t.command) for t in tasks] == [
        ("load", (run_id(1),), None, None),
        ("load", (run_id(2),), None, None),
    ]
    assert at(1) < at(3)


def test_no_command_where_it_would_clear_another_task_too(lineage_db: Build) -> None:
    """Airflow 3's ``tasks clear -t`` keeps every task whose id contains the text given."""
    made = _pipeline() + _task(80, 1, "aggregate_check", (9.5, 9.8))
    db = lineage_db(made)
    tasks = impact(db, "raw", partition={"day": DATES[1]}).tasks
    aggregate, publish = tasks[0], tasks[1]
    assert aggregate.command is None and aggregate.overlapping == ("aggregate_check",)
    assert publish.command == _commands(DATES[1], "publish")[0]
    text = "\n".join(impact_text(impact(db, "raw", partition={"day": DATES[1]})))
    assert "would also clear aggregate_check" in text


@pytest.mark.parametrize(
    ("dag", "task", "expected"),
    [
        ("lake", "agg", ["lake", "-t", "agg", "DATES"]),
        ("-lake", "agg", ["-t", "agg", "DATES", "--", "-lake"]),
        ("lake", "-agg", ["lake", "-t=-agg", "DATES"]),
        ("-lake", "-x y", ["-t=-x y", "DATES", "--", "-lake"]),
    ],
)
def test_ids_starting_with_a_dash_are_given_as_values(
    dag: str, task: str, expected: list[str]
) -> None:
    """Airflow allows ids that start with ``-``; written bare, its parser reads them as
    options (``-t -agg``): the command gives them where only a value can be. That Airflow 3's
    own parser reads them back is checked with a real Airflow (tests/airflow)."""
    when = "2025-03-02T00:00:00+00:00"
    dates = ["-s", when, "-e", when, "-y"]
    task_run = OrchestratorTask("airflow", "af", dag, task, "2025-03-02T00:00:00Z", "r", None)
    command = clear_command(task_run)
    assert command is not None
    words = shlex.split(command)
    assert words[:3] == ["airflow", "tasks", "clear"]
    index = expected.index("DATES")
    assert words[3:] == [*expected[:index], *dates, *expected[index + 1 :]]
