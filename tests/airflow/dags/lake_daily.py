"""The test lake's daily DAG: ``aggregate`` (raw -> agg), then ``publish`` (agg -> report).

Each task runs tests/airflow/jobs/lake_step.py under ``ol-subset run`` (our capture), with the
task's own OpenLineage run passed to Spark as the parent run, and its DAG run as the root, in
the confs Airflow's OpenLineage provider documents (``spark.openlineage.parentJobNamespace``,
``parentJobName``, ``parentRunId``, ``rootParentJobNamespace``, ``rootParentJobName``,
``rootParentRunId``), filled by the provider's macros. The lake's folder is
``$OL_SUBSET_AIRFLOW_LAKE``.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pendulum
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG

LAKE = os.environ.get("OL_SUBSET_AIRFLOW_LAKE", "/tmp/ol-subset-airflow-lake")
STEP = Path(__file__).resolve().parent.parent / "jobs" / "lake_step.py"
_MACROS = "macros.OpenLineageProviderPlugin"
PARENT_CONFS = {
    "parentJobNamespace": f"{_MACROS}.lineage_job_namespace()",
    "parentJobName": f"{_MACROS}.lineage_job_name(task_instance)",
    "parentRunId": f"{_MACROS}.lineage_run_id(task_instance)",
    "rootParentJobNamespace": f"{_MACROS}.lineage_root_job_namespace(task_instance)",
    "rootParentJobName": f"{_MACROS}.lineage_root_job_name(task_instance)",
    "rootParentRunId": f"{_MACROS}.lineage_root_run_id(task_instance)",
}
SUBMIT_ARGS = " ".join(
    f"--conf spark.openlineage.{key}={{{{ {macro} }}}}" for key, macro in PARENT_CONFS.items()
)


def _step(task_id: str, source: str, target: str) -> BashOperator:
    command = [sys.executable, "-m", "openlineage_subset", "run", str(STEP), task_id]
    command += [f"{LAKE}/{source}", f"{LAKE}/{target}"]
    return BashOperator(
        task_id=task_id,
        bash_command=" ".join(shlex.quote(part) for part in command) + " {{ ds }}",
        env={"PYSPARK_SUBMIT_ARGS": f"{SUBMIT_ARGS} pyspark-shell"},
        append_env=True,
    )


with DAG(
    "lake_daily",
    schedule="@daily",
    start_date=pendulum.datetime(2025, 3, 1, tz="UTC"),
    catchup=False,
):
    _step("aggregate", "raw", "agg") >> _step("publish", "agg", "report")
