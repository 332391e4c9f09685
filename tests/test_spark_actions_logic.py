"""What an action's run says, built from its facts (pure logic: ActionFacts built here, no
JVM): the events' datasets, job name, parent and failure."""

from __future__ import annotations

from typing import Any

from openlineage_subset import validate
from openlineage_subset.producer import JobRef
from openlineage_subset.spark._actions import ActionFacts, action_events

PARENT = JobRef("lake", "daily_sales", "0190a1b2-0000-7000-8000-000000000000")
RUN_ID = "0190a1b2-0000-7000-8000-000000000001"
SALES = {"namespace": "file", "name": "/lake/sales"}
SUBSET_URL = (
    "https://openlineage.io/spec/facets/1-0-0/BaseSubsetDatasetFacet.json"
    "#/$defs/OutputSubsetOutputDatasetFacet"
)
DAY = {"dimensions": {"day": "2024-10-15"}, "identifier": "day=2024-10-15"}
REPORT = {
    "namespace": "file",
    "name": "/lake/report",
    "outputFacets": {
        "subset": {
            "_producer": "https://example.com/producer",
            "_schemaURL": SUBSET_URL,
            "outputCondition": {"type": "partition", "partitions": [DAY]},
        }
    },
}


def _events(**changes: Any) -> list[dict[str, Any]]:
    facts: dict[str, Any] = {
        "action": "save",
        "inputs": (SALES,),
        "outputs": (REPORT,),
        "started_ns": 1_700_000_000_000_000_000,
        "ended_ns": 1_700_000_002_500_000_000,
    }
    return action_events(
        ActionFacts(**{**facts, **changes}),
        parent=PARENT,
        run_id=RUN_ID,
        spark_version="4.0.0",
        producer="https://example.com/producer",
    )


def test_a_run_starts_and_completes_with_its_datasets_under_its_parent() -> None:
    start, end = _events()
    assert all(validate(event, strict=True) == [] for event in (start, end))
    assert (start["eventType"], end["eventType"]) == ("START", "COMPLETE")
    assert start["eventTime"].startswith("2023-11-14T22:13:20")
    assert end["eventTime"].startswith("2023-11-14T22:13:22.5")
    assert start["run"]["runId"] == end["run"]["runId"] == RUN_ID
    # Named after the first output (else the first input), under the parent's job and namespace.
    assert end["job"] == {"namespace": "lake", "name": "daily_sales.save.lake_report"}
    parent = end["run"]["facets"]["parent"]
    assert parent["run"]["runId"] == PARENT.run_id and parent["job"]["name"] == "daily_sales"
    assert end["inputs"] == start["inputs"] == [SALES]
    # Nothing was written when the run started: its outputs' facets come with the end only.
    assert start["outputs"] == [{"namespace": "file", "name": "/lake/report"}]
    assert end["outputs"] == [REPORT]
    assert "errorMessage" not in end["run"]["facets"]


def test_a_run_without_outputs_is_named_after_its_first_input() -> None:
    _, end = _events(action="collectToPython", outputs=())
    assert end["job"]["name"] == "daily_sales.collect.lake_sales"


def test_a_failed_action_fails_with_its_error_scrubbed() -> None:
    error = ("Path does not exist: s3a://AKIAIOSFODNN7EXAMPLE:secret@bucket/k", "at Spark\n")
    start, end = _events(outputs=(), error=error)
    assert all(validate(event, strict=True) == [] for event in (start, end))
    assert end["eventType"] == "FAIL" and "errorMessage" not in start["run"]["facets"]
    said = end["run"]["facets"]["errorMessage"]
    assert said["message"] == "Path does not exist: s3a://***@bucket/k"
    assert (said["stackTrace"], said["programmingLanguage"]) == ("at Spark\n", "JAVA")


def test_a_query_that_never_ran_reads_nothing_and_is_named_by_what_it_named() -> None:
    # Its analysis failed: no reader of what it named (an impact must not list it), and its
    # job still says what it was about.
    error = ("[UNRESOLVED_COLUMN.WITH_SUGGESTION] no_such_col", None)
    start, end = _events(action="analyze", inputs=(), outputs=(), named=(SALES,), error=error)
    assert all(validate(event, strict=True) == [] for event in (start, end))
    assert end["eventType"] == "FAIL"
    assert start["inputs"] == end["inputs"] == [] and end["outputs"] == []
    assert end["job"]["name"] == "daily_sales.analyze.lake_sales"
    # A run that read something is named by it, not by what a query named.
    _, read = _events(action="count", outputs=(), named=({"name": "/other", "namespace": "f"},))
    assert read["job"]["name"] == "daily_sales.count.lake_sales"
