"""Which Spark jobs outside SQL are runs and what they say (pure logic: RddJobFacts built
here), and the texts the RDD walk reads back from the JVM."""

from __future__ import annotations

from typing import Any

from openlineage_subset import validate
from openlineage_subset.producer import JobRef
from openlineage_subset.spark._config import SubsetConfig
from openlineage_subset.spark._facts import RddJobFacts, RddWriteFacts, ScanFacts
from openlineage_subset.spark._jvm._rdds import input_paths, scanned_file
from openlineage_subset.spark._rdds import LOST, LOST_JOBS, rdd_job_events


def _job(**changes: Any) -> RddJobFacts:
    facts: dict[str, Any] = {"job_id": 7, "action": "saveAsTextFile", "started_ms": 1_000}
    facts["ended_ms"] = 2_000
    return RddJobFacts(**{**facts, **changes})


def _events(job: RddJobFacts) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    said: list[tuple[str, str]] = []
    events = rdd_job_events(
        job,
        parent=JobRef("lake", "daily", "0190a1b2-0000-7000-8000-000000000000"),
        run_id="0190a1b2-0000-7000-8000-000000000001",
        spark_version="4.0.0",
        config=SubsetConfig(),
        report=lambda dataset, what: said.append((dataset, what)),
    )
    return events, said


def test_a_lost_job_is_said_and_no_run() -> None:
    assert _events(_job(lost=True)) == ([], [(LOST_JOBS, LOST)])


def test_what_names_no_dataset_is_said_and_the_rest_kept() -> None:
    read = ScanFacts("HadoopRDD", None, ("file:/lake/logs",), directories=("file:/lake/logs",))
    job = _job(
        reads=(read,),
        unnamed=("org.apache.spark.rdd.ReliableCheckpointRDD",),
        writes=(RddWriteFacts(None, "org.example.DatabaseOutputFormat"),),
    )
    events, said = _events(job)
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    assert all(validate(event, strict=True) == [] for event in events)
    assert [d["name"] for d in events[1]["inputs"]] == ["/lake/logs"]
    assert events[1]["outputs"] == []
    assert events[1]["job"]["name"] == "daily.save_as_text_file.lake_logs"
    assert [dataset for dataset, _ in said] == [
        "(an input read by org.apache.spark.rdd.ReliableCheckpointRDD)",
        "(an output written by org.example.DatabaseOutputFormat)",
    ]


def test_dataframe_scans_read_only_are_no_run_unless_the_script_called_the_action() -> None:
    scan = ScanFacts("FileScanRDD", None, ("file:/lake/j",), directories=("file:/lake/j",))
    assert _events(_job(action="json", reads=(scan,)))[0] == []
    events, _ = _events(_job(action="count", reads=(scan,), called_by_script=True))
    assert events[1]["job"]["name"] == "daily.count.lake_j"


def test_pyspark_type_checks_before_a_save_are_no_run() -> None:
    read = ScanFacts("HadoopRDD", None, ("file:/lake/a",), directories=("file:/lake/a",))
    assert _events(_job(action="first", reads=(read,), type_check=True))[0] == []


def test_hadoop_input_paths_and_scanned_files_are_read_back() -> None:
    assert input_paths(r"file:/a\,b,/c\\d,,/e") == ["file:/a,b", "/c\\d", "/e"]
    assert scanned_file("path: s3a://b/k%3Dv/f%20g.orc, range: 0-1, partition values: [x]") == (
        "s3a://b/k=v/f g.orc"
    )
    assert scanned_file("something else") is None


def test_a_failed_job_is_a_fail_run_with_its_error() -> None:
    job = _job(
        writes=(RddWriteFacts("file:/lake/out/2024/10/15"),),
        failed=True,
        error_message="org.apache.spark.SparkException: Job aborted",
        stack_trace="at s3a://AKIAIOSFODNN7EXAMPLE:secret@bucket/x",
    )
    (start, end), said = _events(job)
    assert (start["eventType"], end["eventType"], said) == ("START", "FAIL", [])
    error = end["run"]["facets"]["errorMessage"]
    assert error["message"] == "org.apache.spark.SparkException: Job aborted"
    assert "secret" not in error["stackTrace"]
    (output,) = end["outputs"]
    assert output["name"] == "/lake/out"
    condition = output["outputFacets"]["subset"]["outputCondition"]
    assert condition == {"type": "location", "locations": ["file:/lake/out/2024/10/15"]}
    assert all(validate(event, strict=True) == [] for event in (start, end))
