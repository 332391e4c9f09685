"""Structured Streaming on real local files: every micro-batch one run, naming exactly the
files it read and the partitions it wrote.

The inbox's files are written here with increasing modification times, so that the file
source takes them in a known order (oldest first, ``maxFilesPerTrigger`` at a time); what each
batch read and wrote is worked out from those files and their rows, never from the adapter.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from tests.spark.conftest import Capture, ol_subset

DAYS = ["2024-11-01", "2024-11-02", "2024-11-02"]
LATE_DAY = "2024-11-03"


def _drop(inbox: Path, index: int, day: str) -> Path:
    """One file of two rows for ``day``, older than any dropped after it."""
    path = inbox / f"part{index}.json"
    path.write_text("".join(json.dumps({"day": day, "v": index * 10 + k}) + "\n" for k in (0, 1)))
    moment = 1_700_000_000 + index * 60
    os.utime(path, (moment, moment))
    return path


def _ended(runs: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The last event of each run, in the order they ended."""
    ends = [events[-1] for events in runs.values()]
    return sorted(ends, key=lambda event: event["eventTime"])


def _job_type(event: dict[str, Any]) -> dict[str, Any]:
    return event["job"].get("facets", {}).get("jobType", {})


def _batches(ends: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        (e for e in ends if _job_type(e).get("jobType") == "MICRO_BATCH"),
        key=lambda e: e["run"]["facets"]["olsubset_streamingBatch"]["batchId"],
    )


def _locations(dataset: dict[str, Any]) -> list[str]:
    condition = dataset["inputFacets"]["subset"]["inputCondition"]
    assert condition["type"] == "location", condition
    return sorted(condition["locations"])


def _days_written(dataset: dict[str, Any]) -> list[str]:
    condition = dataset["outputFacets"]["subset"]["outputCondition"]
    assert condition["type"] == "partition", condition
    return sorted(p["dimensions"]["day"] for p in condition["partitions"])


def _uri(path: Path) -> str:
    return f"file:{path}"


def _source(spark: SparkSession, inbox: Path, per_trigger: int) -> DataFrame:
    return (
        spark.readStream.schema("day string, v long")
        .option("maxFilesPerTrigger", per_trigger)
        .json(str(inbox))
    )


def test_a_file_sink_batch_names_its_files_and_partitions_and_a_restart_only_its_own(
    spark: SparkSession, tmp_path: Path, capture: Capture
) -> None:
    inbox, out, checkpoint = tmp_path / "inbox", tmp_path / "out", tmp_path / "checkpoint"
    inbox.mkdir()
    files = [_drop(inbox, index, day) for index, day in enumerate(DAYS)]

    def start() -> Any:
        return (
            _source(spark, inbox, 1)
            .writeStream.format("parquet")
            .partitionBy("day")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start(str(out))
        )

    first = start()
    first.awaitTermination()
    ends = _ended(capture.runs())
    batches = _batches(ends)
    assert len(batches) == len(files)
    queries = [e for e in ends if _job_type(e).get("jobType") == "STREAMING_QUERY"]
    assert [(q["eventType"], q["run"]["runId"]) for q in queries] == [
        ("COMPLETE", str(first.runId))
    ]
    query_job = queries[0]["job"]["name"]
    assert query_job.endswith(f".stream.{str(first.id).replace('-', '_')}")
    for batch_id, (batch, file, day) in enumerate(zip(batches, files, DAYS, strict=True)):
        assert batch["eventType"] == "COMPLETE"
        assert batch["job"]["name"] == f"{query_job}.batch"
        assert _job_type(batch)["processingType"] == "STREAMING"
        facets = batch["run"]["facets"]
        assert facets["parent"]["run"]["runId"] == str(first.runId)
        assert facets["olsubset_streamingBatch"]["batchId"] == batch_id
        assert facets["olsubset_streamingBatch"]["queryId"] == str(first.id)
        (read,) = batch["inputs"]
        assert read["name"] == str(inbox)
        assert _locations(read) == [_uri(file)], "exactly the one file this batch took"
        (written,) = batch["outputs"]
        assert written["name"] == str(out)
        assert _days_written(written) == [day]
    # Spark's own record of the batches agrees on the files (the order test's premise).
    recorded = [
        json.loads(line)["path"]
        for n in range(len(files))
        for line in (checkpoint / "sources" / "0" / str(n)).read_text().splitlines()[1:]
    ]
    assert [p.removeprefix("file://") for p in recorded] == [str(f) for f in files]

    late = _drop(inbox, len(files), LATE_DAY)
    second = start()
    second.awaitTermination()
    ends = _ended(capture.runs())
    (batch,) = _batches(ends)
    assert batch["run"]["facets"]["olsubset_streamingBatch"]["batchId"] == len(files)
    assert batch["run"]["facets"]["parent"]["run"]["runId"] == str(second.runId) != str(first.runId)
    assert _locations(batch["inputs"][0]) == [_uri(late)], "a restart names only what it read"
    assert _days_written(batch["outputs"][0]) == [LATE_DAY]
    assert capture.handle.counts["errors"] == 0


def test_foreach_batch_writes_are_children_of_their_batch_reading_its_files(
    spark: SparkSession, tmp_path: Path, capture: Capture
) -> None:
    inbox, agg = tmp_path / "inbox", tmp_path / "agg"
    inbox.mkdir()
    files = [_drop(inbox, index, day) for index, day in enumerate(DAYS)]

    def aggregate(frame: DataFrame, batch_id: int) -> None:
        frame.groupBy("day").count().write.mode("append").partitionBy("day").parquet(str(agg))

    query = (
        _source(spark, inbox, 2)
        .writeStream.foreachBatch(aggregate)
        .queryName("daily totals")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    ends = _ended(capture.runs())
    batches = _batches(ends)
    taken = [files[:2], files[2:]]
    assert len(batches) == len(taken)
    writes = [e for e in ends if not _job_type(e)]
    assert len(writes) == len(batches)
    for batch, batch_files in zip(batches, taken, strict=True):
        assert batch["job"]["name"].endswith(".stream.daily_totals.batch")
        assert _locations(batch["inputs"][0]) == sorted(_uri(f) for f in batch_files)
        assert batch["outputs"] == [], "foreachBatch's own actions say what they wrote"
        (write,) = [
            w
            for w in writes
            if w["run"]["facets"]["parent"]["run"]["runId"] == batch["run"]["runId"]
        ]
        assert write["job"]["name"].split(".")[1] == "write", write["job"]["name"]
        (read,) = write["inputs"]
        assert read["name"] == str(inbox)
        assert _locations(read) == sorted(_uri(f) for f in batch_files), "the batch, not the inbox"
        days = sorted({DAYS[files.index(f)] for f in batch_files})
        assert _days_written(write["outputs"][0]) == days
    assert capture.handle.counts["errors"] == 0


def test_a_failing_batch_fails_its_run_and_its_query(
    spark: SparkSession, tmp_path: Path, capture: Capture
) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    _drop(inbox, 0, DAYS[0])
    marker = f"bad file {uuid.uuid4()}"

    def refuse(frame: DataFrame, batch_id: int) -> None:
        raise ValueError(marker)

    query = (
        _source(spark, inbox, 1)
        .writeStream.foreachBatch(refuse)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(Exception, match=marker):
        query.awaitTermination()
    ends = _ended(capture.runs())
    (batch,) = _batches(ends)
    assert batch["eventType"] == "FAIL"
    assert marker in batch["run"]["facets"]["errorMessage"]["message"] + batch["run"]["facets"][
        "errorMessage"
    ].get("stackTrace", "")
    (ended_query,) = [e for e in ends if _job_type(e).get("jobType") == "STREAMING_QUERY"]
    assert ended_query["eventType"] == "FAIL"
    assert marker in ended_query["run"]["facets"]["errorMessage"]["stackTrace"]


def test_a_stopped_query_of_a_rate_source_into_memory_is_batches_without_datasets(
    spark: SparkSession, tmp_path: Path, capture: Capture, caplog: pytest.LogCaptureFixture
) -> None:
    name = f"mem_{uuid.uuid4().hex[:8]}"
    with caplog.at_level("WARNING"):
        query = (
            spark.readStream.format("rate")
            .option("rowsPerSecond", 10)
            .load()
            .writeStream.format("memory")
            .queryName(name)
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .start()
        )
        try:
            query.processAllAvailable()
        finally:
            query.stop()
        ends = _ended(capture.runs())
    completed = [b for b in _batches(ends) if b["eventType"] == "COMPLETE"]
    assert completed, "the memory sink's batches are runs"
    for batch in completed:
        assert batch["inputs"] == [] and batch["outputs"] == [], "a rate source, a memory sink"
    (ended_query,) = [e for e in ends if _job_type(e).get("jobType") == "STREAMING_QUERY"]
    assert ended_query["eventType"] == "COMPLETE", "stopped by its user: it ended as asked"
    said = [
        r.getMessage() for r in caplog.records if "RateStreamMicroBatchStream" in r.getMessage()
    ]
    assert len(said) == 1, "said once (the only rate source of this test process), not per batch"
    assert capture.handle.counts["errors"] == 0


RUNNING_AT_EXIT = """
import sys, time
from pyspark.sql import SparkSession

spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
query = (
    spark.readStream.format("rate").option("rowsPerSecond", 5).load()
    .writeStream.format("noop").option("checkpointLocation", sys.argv[1])
    .trigger(processingTime="100 milliseconds").start()
)
while query.lastProgress is None or query.lastProgress["batchId"] < 2:
    time.sleep(0.1)
print("batches ran")
"""


def test_a_program_that_ends_with_a_stream_running_aborts_the_query_run(tmp_path: Path) -> None:
    """``ol-subset run`` of a script that leaves its stream running: the batches that ended
    are runs, the query's run ends ABORT (Spark never said how it ended), the application's
    COMPLETE, and the program's output is its own."""
    script = tmp_path / "leaves_running.py"
    script.write_text(RUNNING_AT_EXIT, encoding="utf-8")
    events = tmp_path / "events.jsonl"
    done = ol_subset(
        "run", "--output", str(events), str(script), str(tmp_path / "checkpoint"), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "batches ran"
    by_run: dict[str, list[dict[str, Any]]] = {}
    for line in events.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        by_run.setdefault(event["run"]["runId"], []).append(event)
    ends = [events_[-1] for events_ in by_run.values()]
    (query,) = [e for e in ends if _job_type(e).get("jobType") == "STREAMING_QUERY"]
    assert query["eventType"] == "ABORT"
    batches = [e for e in ends if _job_type(e).get("jobType") == "MICRO_BATCH"]
    assert len([b for b in batches if b["eventType"] == "COMPLETE"]) >= 3
    for batch in batches:
        assert batch["run"]["facets"]["parent"]["run"]["runId"] == query["run"]["runId"]
    (application,) = [e for e in ends if "parent" not in e["run"]["facets"]]
    assert application["eventType"] == "COMPLETE"
