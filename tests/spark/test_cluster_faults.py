"""Capture under the faults of a real cluster: a lost worker, speculation, retried and failed tasks.

These run on the standalone cluster of ``nox -s cluster`` (``OL_SUBSET_SPARK_CLUSTER=1``): a
master and two workers on 127.0.0.1, the test application holding one single-core executor on
each, with speculation on and four attempts per task. Tasks are slowed or failed by a Python
UDF that looks at its own task context; each task attempt leaves a marker file, so a test knows
the fault really happened (a test whose fault did not happen fails, it does not pass vacuously).

The truth is what is on disk after the action: the partitions holding data files, and the rows.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from openlineage_subset import matches, parse_facet, validate
from tests.spark.conftest import (
    Capture,
    created_partitions,
    data_files,
    dims,
    partition_dirs,
    written_identifiers,
)
from tests.spark.standalone import WORKER_HOSTS, StandaloneCluster

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

DAYS = ("2024-10-14", "2024-10-15", "2024-10-16", "2024-10-17")
COUNTRIES = ("DE", "FR", "PL", "SE", "A/B:C")
ROWS_PER_TASK = 50


@pytest.fixture
def on_cluster(
    spark: SparkSession, cluster: StandaloneCluster | None
) -> Iterator[StandaloneCluster]:
    """The test cluster, the application holding one executor on each worker at the start (a
    test may kill a worker: it is started again after the test)."""
    if cluster is None:
        pytest.skip(
            "runs on the standalone test cluster: nox -s cluster (or OL_SUBSET_SPARK_CLUSTER=1)"
        )
    _one_executor_per_worker(spark, cluster)
    yield cluster
    for index in range(cluster.workers):
        cluster.start_worker(index)


def _executor_hosts(spark: SparkSession) -> list[str]:
    """The hosts of the application's executors (the driver left out), as Spark names them."""
    summaries = spark.sparkContext._jsc.sc().statusStore().executorList(True)  # type: ignore[union-attr]
    hosts = []
    for index in range(summaries.size()):
        summary = summaries.apply(index)
        if summary.id() != "driver":
            hosts.append(str(summary.hostPort()).rpartition(":")[0])
    return sorted(hosts)


def _one_executor_per_worker(spark: SparkSession, cluster: StandaloneCluster) -> None:
    """After a lost worker, Spark replaced the lost executor on the other worker; a worker
    started again gets none while the application has its cores. Kill the surplus executor
    there: the master then starts its replacement on the worker with the most free cores."""
    wanted = sorted(WORKER_HOSTS[: cluster.workers])
    app_id = spark.sparkContext.applicationId
    for _ in range(3):
        _settles(lambda: len(_executor_hosts(spark)) == cluster.workers, seconds=60)
        hosts = _executor_hosts(spark)
        if hosts == wanted:
            return
        crowded = max(range(cluster.workers), key=lambda index: hosts.count(WORKER_HOSTS[index]))
        for pid in cluster.executor_pids(crowded, app_id)[:1]:
            os.kill(pid, signal.SIGKILL)
        # The killed executor stays listed for a moment: wait for the outcome, not the count.
        if _settles(lambda: _executor_hosts(spark) == wanted, seconds=60):
            return
    raise AssertionError(f"the application's executors stay on {_executor_hosts(spark)}")


def _settles(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def _attempting_udf(markers: Path, behaviour: Callable[[int, int], None]) -> Any:
    """A UDF that returns its input; on the first row of each task it leaves the marker
    ``<partition>-<attempt>`` and calls ``behaviour(partition, attempt)`` (sleep or raise)."""
    folder = str(markers)

    def mark(value):  # no type hints: PySpark would read them as a pandas UDF's
        if value % ROWS_PER_TASK == 0:
            from pyspark import TaskContext

            context = TaskContext.get()
            partition, attempt = context.partitionId(), context.attemptNumber()
            with open(f"{folder}/{partition}-{attempt}", "w") as marker:
                marker.write("started")
            behaviour(partition, attempt)
        return value

    return F.udf(mark, "long")


def _rows(spark: SparkSession, tasks: int, udf: Any, days: tuple[str, ...] = DAYS) -> DataFrame:
    """``tasks`` tasks of 50 rows each (ids run on from one task to the next), every task
    writing into every (day, country) partition of ``days``."""
    ids: Column = udf(F.col("id"))
    return spark.range(0, tasks * ROWS_PER_TASK, 1, tasks).select(
        ids.alias("id"),
        F.element_at(F.array(*map(F.lit, days)), (F.col("id") % len(days) + 1).cast("int")).alias(
            "day"
        ),
        F.element_at(
            F.array(*map(F.lit, COUNTRIES)),
            (F.floor(F.col("id") / len(days)) % len(COUNTRIES) + 1).cast("int"),
        ).alias("country"),
    )


def _partitions_of(days: tuple[str, ...]) -> set[str]:
    from urllib.parse import quote

    # Spark escapes '/' and ':' in directory names (as the disk shows: A%2FB%3AC).
    return {f"day={day}/country={quote(country, safe='')}" for day in days for country in COUNTRIES}


def _attempts(markers: Path) -> dict[int, set[int]]:
    found: dict[int, set[int]] = {}
    for marker in markers.iterdir():
        partition, attempt = marker.name.split("-")
        found.setdefault(int(partition), set()).add(int(attempt))
    return found


def _one_run(capture: Capture) -> tuple[dict[str, Any], dict[str, Any]]:
    """The START and the end event of the one run the action made, both valid (strict)."""
    runs = capture.runs()
    assert len(runs) == 1, f"expected one run for one action, got {len(runs)}"
    (events,) = runs.values()
    assert events[0]["eventType"] == "START"
    assert len(events) == 2, [event["eventType"] for event in events]
    for event in events:
        assert validate(event, strict=True) == [], event
    return events[0], events[1]


def _written(end: dict[str, Any], root: Path) -> set[str] | None:
    (output,) = [output for output in end["outputs"] if output["name"] == str(root)]
    return written_identifiers(output)


def _in_background(action: Callable[[], object]) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = action()
        except Exception as error:
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    if not _settles(condition, seconds=120):
        raise AssertionError(f"gave up waiting for {what}")


def _both_executors_busy_after_some_tasks(spark: SparkSession) -> bool:
    tracker = spark.sparkContext.statusTracker()
    for stage in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage)
        if info is not None and info.numCompletedTasks >= 2 and info.numActiveTasks >= 2:
            return True
    return False


def test_a_worker_lost_in_the_middle_of_a_partitioned_write(
    spark: SparkSession, capture: Capture, on_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    root, markers = tmp_path / "out", tmp_path / "attempts"
    markers.mkdir()
    tasks = 8
    frame = _rows(spark, tasks, _attempting_udf(markers, lambda _p, _a: time.sleep(2.0)))
    thread, outcome = _in_background(
        lambda: frame.write.partitionBy("day", "country").parquet(str(root))
    )
    _wait_for(lambda: _both_executors_busy_after_some_tasks(spark), "two tasks done, two running")
    on_cluster.kill_worker(0)
    thread.join(timeout=600)
    assert not thread.is_alive() and "error" not in outcome, outcome.get("error")

    retried = {partition for partition, attempts in _attempts(markers).items() if 1 in attempts}
    assert retried, "no task was running on the lost worker: the fault did not happen"
    _, end = _one_run(capture)
    assert end["eventType"] == "COMPLETE"
    on_disk = partition_dirs(root)
    assert on_disk == _partitions_of(DAYS)
    assert _written(end, root) == on_disk
    # Every row once: no file of a discarded attempt was kept, none of a committed one lost.
    ids = spark.read.parquet(str(root)).select("id")
    assert ids.count() == ids.distinct().count() == tasks * ROWS_PER_TASK


def test_a_speculative_copy_of_a_slow_task_in_a_dynamic_overwrite(
    spark: SparkSession, capture: Capture, on_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    root, markers = tmp_path / "out", tmp_path / "attempts"
    markers.mkdir()
    _rows(spark, 2, F.udf(lambda value: value, "long")).write.partitionBy("day", "country").parquet(
        str(root)
    )
    capture.runs()
    before = data_files(root)

    def first_attempt_of_task_0_is_slow(partition: int, attempt: int) -> None:
        if partition == 0 and attempt == 0:
            time.sleep(60.0)  # the speculative copy finishes long before

    new_days = DAYS[2:]
    udf = _attempting_udf(markers, first_attempt_of_task_0_is_slow)
    (
        _rows(spark, 4, udf, new_days)
        .write.mode("overwrite")
        .option("partitionOverwriteMode", "dynamic")
        .partitionBy("day", "country")
        .parquet(str(root))
    )

    assert _attempts(markers)[0] >= {0, 1}, "task 0 ran once: no speculative copy was made"
    _, end = _one_run(capture)
    assert end["eventType"] == "COMPLETE"
    replaced = created_partitions(before, root)
    assert replaced == _partitions_of(new_days)
    assert _written(end, root) == replaced
    assert partition_dirs(root) == _partitions_of(DAYS)  # the older days are untouched
    rows = spark.read.parquet(str(root))
    assert rows.where(F.col("day").isin(*new_days)).count() == 4 * ROWS_PER_TASK
    assert rows.select("id", "day").distinct().count() == rows.count()


def test_a_task_that_fails_twice_then_succeeds_in_an_append(
    spark: SparkSession, capture: Capture, on_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    root, markers = tmp_path / "out", tmp_path / "attempts"
    markers.mkdir()
    _rows(spark, 2, F.udf(lambda value: value, "long"), DAYS[:2]).write.partitionBy(
        "day", "country"
    ).parquet(str(root))
    capture.runs()
    before = data_files(root)

    def task_1_fails_twice(partition: int, attempt: int) -> None:
        if partition == 1 and attempt < 2:
            raise RuntimeError(f"deliberate failure of attempt {attempt}")

    udf = _attempting_udf(markers, task_1_fails_twice)
    _rows(spark, 4, udf, DAYS[1:3]).write.mode("append").partitionBy("day", "country").parquet(
        str(root)
    )

    assert _attempts(markers)[1] == {0, 1, 2}
    _, end = _one_run(capture)
    assert end["eventType"] == "COMPLETE"
    appended = created_partitions(before, root)
    assert appended == _partitions_of(DAYS[1:3])
    assert _written(end, root) == appended
    assert spark.read.parquet(str(root)).count() == (2 + 4) * ROWS_PER_TASK


def _changed_partitions(before: dict[str, float], root: Path) -> set[str]:
    """Partition directories with a data file created, rewritten or deleted since ``before``."""
    after = data_files(root)
    changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
    return {Path(path).parent.relative_to(root).as_posix() for path in changed}


def test_a_static_overwrite_that_fails_for_good(
    spark: SparkSession,
    capture: Capture,
    on_cluster: StandaloneCluster,
    tmp_path: Path,
    fresh_tables: list[str],
) -> None:
    table, markers = "faults_static_overwrite", tmp_path / "attempts"
    fresh_tables.append(table)
    markers.mkdir()
    root = tmp_path / table
    spark.sql(
        f"CREATE TABLE {table} (id BIGINT, day STRING, country STRING) USING parquet "
        f"PARTITIONED BY (day, country) LOCATION '{root}'"
    )
    _rows(spark, 2, F.udf(lambda value: value, "long"), DAYS[:2]).write.insertInto(table)
    capture.runs()
    before = data_files(root)

    def task_1_always_fails(partition: int, attempt: int) -> None:
        if partition == 1:
            raise RuntimeError(f"deliberate failure of attempt {attempt}")

    _rows(spark, 4, _attempting_udf(markers, task_1_always_fails), DAYS[:1]).select(
        "id", "country"
    ).createOrReplaceTempView("faults_failing_rows")
    with pytest.raises(Exception, match="deliberate failure"):
        spark.sql(
            f"INSERT OVERWRITE TABLE {table} PARTITION (day = '{DAYS[0]}', country) "
            "SELECT id, country FROM faults_failing_rows"
        )

    assert _attempts(markers)[1] == {0, 1, 2, 3}, "four attempts, then the job failed"
    _, end = _one_run(capture)
    assert end["eventType"] == "FAIL"
    (output,) = end["outputs"]
    assert "facets" not in output, "a failed overwrite is not said to have overwritten"
    condition = parse_facet(output["outputFacets"]["subset"]).output_condition
    changed = _changed_partitions(before, root)
    assert changed, "the failed overwrite changed nothing: Spark deletes the static region first"
    # Sound: everything that changed is within what the FAIL event says may have changed.
    assert all(matches(condition, dims(path)) for path in changed), changed
    # Precise: the other day's partitions are outside it, and they are untouched.
    untouched = _partitions_of(DAYS[1:2])
    assert not any(matches(condition, dims(path)) for path in untouched)
    assert untouched <= partition_dirs(root)
