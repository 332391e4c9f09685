"""A real Airflow's DAG, its PySpark tasks under ``ol-subset run``: which task runs to clear.

Airflow (3.x, SQLite metadata in a temporary AIRFLOW_HOME) runs tests/airflow/dags/lake_daily.py
for two logical dates with ``airflow dags test``: ``aggregate`` (raw -> agg), then ``publish``
(agg -> report), each a PySpark script under our capture, given the task's run as its parent
through the OpenLineage provider's macros. The provider (its HTTP transport) and the scripts
post to one ``ol-subset lineage serve``. The impact of one bad raw partition must then name
exactly the task runs to clear, those of the DAG run whose logical date wrote the partitions it
affects, in the CLI, the JSON API and the UI; and its command, run, must clear those and no
other. Run by ``nox -s airflow``; skipped where Airflow and its provider are not installed.
"""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import ROOT

pytest.importorskip(
    "airflow.providers.openlineage",
    reason="Airflow with its OpenLineage provider is not installed: `nox -s airflow` installs them",
)
pytest.importorskip("pyspark", reason="PySpark runs the DAG's tasks: `nox -s airflow` installs it")

from openlineage_subset.lineage import OrchestratorTask, clear_command
from tests.service.conftest import Server, environment, start
from tests.service.helpers import fetch, page_path

DAG = "lake_daily"
TASKS = ("aggregate", "publish")
DATES = ("2025-03-01", "2025-03-02")
BAD = DATES[1]
_RAW = {"2025-03-01": "US,3\nFR,4\n", "2025-03-02": "US,5\nDE,1\n"}
_AIRFLOW = str(Path(sys.executable).with_name("airflow"))


@dataclass(frozen=True)
class Ran:
    """The lake, the lineage service the DAG posted to, and Airflow's record of its runs."""

    server: Server
    lake: Path
    env: Mapping[str, str]
    metadata: Path

    def dag_runs(self) -> dict[str, str]:
        """Each DAG run's id by its logical date (YYYY-MM-DD), from Airflow's own database."""
        with sqlite3.connect(self.metadata) as connection:
            rows = connection.execute(
                "SELECT run_id, logical_date FROM dag_run WHERE dag_id = ?", (DAG,)
            ).fetchall()
        return {str(logical)[:10]: run_id for run_id, logical in rows}

    def states(self) -> dict[tuple[str, str], str | None]:
        """Each task instance's state by (logical date, task)."""
        with sqlite3.connect(self.metadata) as connection:
            rows = connection.execute(
                "SELECT d.logical_date, t.task_id, t.state FROM task_instance t "
                "JOIN dag_run d ON d.dag_id = t.dag_id AND d.run_id = t.run_id "
                "WHERE t.dag_id = ?",
                (DAG,),
            ).fetchall()
        return {(str(logical)[:10], task): state for logical, task, state in rows}


def _airflow(env: Mapping[str, str], *args: str, log: Path) -> None:
    with log.open("a") as output:
        done = subprocess.run(
            [_AIRFLOW, *args],
            check=False,
            env=dict(env),
            stdout=output,
            stderr=subprocess.STDOUT,
            timeout=900,
        )
    if done.returncode != 0:
        tail = log.read_text(errors="replace")[-4000:]
        raise AssertionError(f"airflow {' '.join(args)} ended {done.returncode}:\n{tail}")


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    folder = tmp_path_factory.mktemp("airflow")
    lake = folder / "lake"
    for day, rows in _RAW.items():
        part = lake / "raw" / f"day={day}"
        part.mkdir(parents=True)
        (part / "part-0.csv").write_text("country,amount\n" + rows)
    server = start(str(folder / "lineage.db"))
    metadata = folder / "home" / "airflow.db"
    env = environment(
        AIRFLOW_HOME=str(folder / "home"),
        AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"sqlite:///{metadata}",
        AIRFLOW__CORE__DAGS_FOLDER=str(ROOT / "tests" / "airflow" / "dags"),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__OPENLINEAGE__NAMESPACE="lake_airflow",
        AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps({"type": "http", "url": server.url}),
        OPENLINEAGE_URL=server.url,  # what the Spark scripts' capture posts to
        OL_SUBSET_AIRFLOW_LAKE=str(lake),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    )
    try:
        log = folder / "airflow.log"
        _airflow(env, "db", "migrate", log=log)
        for day in DATES:
            _airflow(env, "dags", "test", DAG, day, log=log)
        yield Ran(server, lake, env, metadata)
    finally:
        server.stop()


def _expected_commands() -> list[str]:
    when = f"{BAD}T00:00:00+00:00"
    return [f"airflow tasks clear {DAG} -t {task} -s {when} -e {when} -y" for task in TASKS]


def _impact_args(ran: Ran) -> list[str]:
    return [f"{ran.lake}/raw", "--partition", f"day={BAD}", "--db", ran.server.db]


def test_the_cli_names_the_task_runs_of_the_bad_day_to_clear(ran: Ran) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "openlineage_subset", "lineage", "impact", *_impact_args(ran)],
        check=False,
        env=dict(ran.env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    plan = done.stdout[done.stdout.index("Re-run, in dependency order:") :]
    commands = [line.strip() for line in plan.splitlines() if line.strip().startswith("airflow ")]
    assert commands == _expected_commands()
    dag_run = ran.dag_runs()[BAD]
    for task in TASKS:
        heading = f"airflow DAG {DAG}, task {task}, logical date {BAD}T00:00:00Z, DAG run {dag_run}"
        assert heading in plan
    assert DATES[0] not in plan
    assert f"recomputes file:{ran.lake}/agg: day={BAD}" in plan
    assert f"recomputes file:{ran.lake}/report: day={BAD}" in plan


def test_the_json_answer_names_the_dag_run_and_tasks(ran: Ran) -> None:
    status, answer = ran.server.get(
        page_path("/api/v1/impact", dataset=f"{ran.lake}/raw", partition=f"day={BAD}")
    )
    assert status == 200, answer
    tasks = answer["tasks"]
    dag_run = ran.dag_runs()[BAD]
    assert [
        (t["task"]["dagId"], t["task"]["taskId"], t["task"]["logicalDate"], t["task"]["dagRunId"])
        for t in tasks
    ] == [(DAG, task, f"{BAD}T00:00:00Z", dag_run) for task in TASKS]
    assert [t["command"] for t in tasks] == _expected_commands()
    assert [t["job"] for t in tasks] == [
        {"namespace": "lake_airflow", "name": f"{DAG}.{task}"} for task in TASKS
    ]
    written = [[part["dataset"]["name"] for part in t["backfill"]] for t in tasks]
    assert written == [[f"{ran.lake}/agg"], [f"{ran.lake}/report"]]


def test_the_ui_answer_gives_the_commands_to_copy(ran: Ran) -> None:
    path = page_path(
        "/answer", namespace="file", name=f"{ran.lake}/raw", p=json.dumps({"day": BAD})
    )
    status, _, text = fetch(ran.server, path)
    assert status == 200
    blocks = [html.unescape(block) for block in re.findall(r"<pre[^>]*>(.*?)</pre>", text, re.S)]
    block = next(item for item in blocks if item.startswith("# re-run, in dependency order"))
    commands = [line for line in block.splitlines() if not line.startswith("#") and line]
    assert commands == _expected_commands()


def test_the_command_clears_those_task_runs_and_no_other(ran: Ran) -> None:
    before = ran.states()
    assert set(before.values()) == {"success"}, before
    command = _expected_commands()[0]  # aggregate's, as the answers give it
    _airflow(ran.env, *shlex.split(command)[1:], log=ran.lake.parent / "clear.log")
    after = ran.states()
    cleared = {key for key, state in after.items() if state != "success"}
    assert cleared == {(BAD, "aggregate")}


_READ_BACK = (
    "import json, sys\n"
    "from airflow.cli.cli_parser import get_parser\n"
    "read = get_parser().parse_args(sys.argv[1:])\n"
    "print(json.dumps([read.dag_id, read.task_regex, read.start_date.isoformat(), read.yes]))\n"
)


def test_airflow_reads_ids_that_start_with_a_dash_back_as_values(ran: Ran) -> None:
    """Airflow allows DAG and task ids that start with ``-``; the command the answers give
    has Airflow 3's own parser read them as the DAG and the task, not as options."""
    task = OrchestratorTask("airflow", "af", "-dag.x", "-task y", f"{BAD}T00:00:00Z", "r", None)
    command = clear_command(task)
    assert command is not None
    done = subprocess.run(
        [sys.executable, "-c", _READ_BACK, *shlex.split(command)[1:]],
        env=dict(ran.env),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    read = json.loads(done.stdout.strip().splitlines()[-1])
    assert read == ["-dag.x", "-task y", f"{BAD}T00:00:00+00:00", True]
