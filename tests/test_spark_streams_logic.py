"""The pure parts of streaming capture, without a JVM: Spark's description of a batch, the runs
of queries and batches, a file sink's record of a batch, and a batch's reads and writes."""

from __future__ import annotations

import uuid

import pytest
from openlineage_subset_generated.custom.streaming_batch import v1_0_0 as batch_schema

from openlineage_subset import custom_facet_issues, dump, matches
from openlineage_subset.producer import JobRef
from openlineage_subset.spark._actions import ActionFacts
from openlineage_subset.spark._config import SubsetConfig
from openlineage_subset.spark._facts import ScanFacts, SinkFacts, StreamBatch, StreamScanFacts
from openlineage_subset.spark._jvm._streams import batch_files, record_files
from openlineage_subset.spark._reads import (
    batch_file_scan,
    input_datasets_from_scans,
    stream_source_datasets,
)
from openlineage_subset.spark._streams import StreamRuns, batch_of, batch_run_id
from openlineage_subset.spark._writes import sink_output_datasets

RUN = str(uuid.UUID(int=7))
APP = JobRef("lake", "app", str(uuid.UUID(int=1)))


def test_a_batch_description_is_read_from_its_last_three_lines() -> None:
    # A name may hold newlines: only the last three lines are Spark's.
    batch = batch_of(f"two\nlines\nid = q-1\nrunId = {RUN}\nbatch = 12")
    assert batch == StreamBatch("q-1", RUN, 12, "two\nlines")
    assert batch_of(f"\nid = q-1\nrunId = {RUN}\nbatch = 3") == StreamBatch("q-1", RUN, 3)
    for other in (
        f"\nid = q-1\nrunId = {RUN}\nbatch = init",  # before the first batch
        "count at <stdin>:1",
        f"id = q-1\nrunId = {RUN}\nbatch = 3",  # too short to be Spark's
        f"x\nid = q-1\nbatch = 3\nrunId = {RUN}",
    ):
        assert batch_of(other) is None, other


def test_a_batch_run_id_is_the_same_for_the_batch_and_apart_for_any_other() -> None:
    ids = {
        batch_run_id(StreamBatch("q", run, n))
        for run in (RUN, str(uuid.UUID(int=8)))
        for n in range(3)
    }
    assert len(ids) == 6
    assert batch_run_id(StreamBatch("q", RUN, 2)) == batch_run_id(StreamBatch("q", RUN, 2, "n"))
    assert all(uuid.UUID(run_id) for run_id in ids)


def _runs() -> StreamRuns:
    return StreamRuns(APP, "4.0.0", "https://example.com/p")


def test_a_query_run_starts_once_and_ends_as_spark_says() -> None:
    runs = _runs()
    batch = StreamBatch("q-1", RUN, 0, "clicks")
    (start,) = runs.started(batch, 0)
    assert runs.started(batch, 1) == []
    assert start["job"]["name"] == "app.stream.clicks"
    assert start["run"]["runId"] == RUN
    assert start["job"]["facets"]["jobType"]["processingType"] == "STREAMING"
    assert start["run"]["facets"]["parent"]["run"]["runId"] == APP.run_id
    (end,) = runs.terminated(batch, 2, ("boom", "boom\n at x"))
    assert end["eventType"] == "FAIL"
    assert end["run"]["facets"]["errorMessage"]["message"] == "boom"
    assert runs.close(3) == [], "an ended query is not ended again"


def test_a_query_heard_of_only_at_its_end_still_starts_and_open_ones_abort_at_close() -> None:
    runs = _runs()
    ended = runs.terminated(StreamBatch("q-2", RUN, -1), 5, None)
    assert [e["eventType"] for e in ended] == ["START", "COMPLETE"]
    other = StreamBatch("q-3", str(uuid.UUID(int=9)), 4)
    runs.started(other, 6)
    (abort,) = runs.close(7)
    assert abort["eventType"] == "ABORT"
    assert abort["job"]["name"] == "app.stream.q_3"


def test_a_batch_run_is_its_query_runs_child_with_a_valid_batch_facet() -> None:
    runs = _runs()
    batch = StreamBatch("q-1", RUN, 4, "clicks")
    facts = ActionFacts(
        action="a stream's micro-batch", inputs=(), outputs=(), started_ns=0, ended_ns=1
    )
    start, end = runs.batch_events(batch, facts)
    assert start["eventType"] == "START"
    assert end["eventType"] == "COMPLETE"
    assert end["job"]["name"] == "app.stream.clicks.batch"
    assert end["run"]["runId"] == batch_run_id(batch)
    assert end["run"]["facets"]["parent"]["run"]["runId"] == RUN
    assert end["run"]["facets"]["parent"]["root"]["run"]["runId"] == APP.run_id
    facet = end["run"]["facets"][batch_schema.FACET_KEY]
    assert facet["batchId"] == 4 and facet["queryName"] == "clicks"
    assert (
        batch_schema.validators.VALIDATORS[batch_schema.FACET_ROOT]({batch_schema.FACET_KEY: facet})
        == []
    )
    assert custom_facet_issues(end, strict=True) == []  # as `ol-subset validate` checks it
    broken = {**facet, "batchId": "4"}
    assert batch_schema.validators.VALIDATORS[batch_schema.FACET_ROOT](
        {batch_schema.FACET_KEY: broken}
    )


def _log(*records: tuple[str, list[str]]) -> dict[str, str]:
    return {
        f"/o/_spark_metadata/{name}": "v1\n"
        + "".join(f'{{"path":"file:///o/{f}","action":"add"}}\n' for f in files)
        for name, files in records
    }


def test_a_sink_batch_is_its_record_or_its_compaction_less_the_records_before() -> None:
    records = _log(
        ("8", ["day=1/a"]),
        ("9.compact", ["day=0/z", "day=1/a", "day=2/b", "day=3/c"]),
        ("7.compact", ["day=0/z"]),
    )
    assert batch_files(records.get, "/o", 8) == (("file:///o/day=1/a",), None)
    files, problem = batch_files(records.get, "/o", 9)
    assert problem is None
    assert files == ("file:///o/day=2/b", "file:///o/day=3/c")
    gone = {k: v for k, v in records.items() if not k.endswith("/8")}
    assert batch_files(gone.get, "/o", 9)[0] is None, "a record gone: unknown, never a guess"
    assert batch_files(records.get, "/o", 10) == (
        None,
        "no record of batch 10 in /o/_spark_metadata",
    )


def test_a_sink_record_skips_deletions_and_directories() -> None:
    text = 'v1\n{"path":"file:///o/a","action":"add"}\n{"path":"file:///o/b","action":"delete"}\n'
    text += '{"path":"file:///o/d","isDir":true,"action":"add"}\n\n'
    assert record_files(text) == ["file:///o/a"]


def test_a_file_sink_batch_writes_its_partitions_or_its_files() -> None:
    config = SubsetConfig()
    files = ("file:/o/day=1/a.parquet", "file:/o/day=2/b.parquet", "file:/o/day=1/c.parquet")
    (written,) = [
        dump(d) for d in sink_output_datasets(SinkFacts("FileStreamSink", "file:/o", files), config)
    ]
    partitions = written["outputFacets"]["subset"]["outputCondition"]["partitions"]
    assert [p["identifier"] for p in partitions] == ["day=1", "day=2"]
    flat = ("file:/o/x.parquet",)
    (written,) = [
        dump(d) for d in sink_output_datasets(SinkFacts("FileStreamSink", "file:/o", flat), config)
    ]
    assert written["outputFacets"]["subset"]["outputCondition"] == {
        "type": "location",
        "locations": ["file:/o/x.parquet"],
    }
    for unknown in (
        SinkFacts("FileStreamSink", "file:/o", None, "gone"),
        SinkFacts("FileStreamSink", "file:/o", ("file:/elsewhere/a",)),
    ):
        (whole,) = [dump(d) for d in sink_output_datasets(unknown, config)]
        assert "outputFacets" not in whole or not whole["outputFacets"], unknown
    (failed,) = [
        dump(d)
        for d in sink_output_datasets(
            SinkFacts("FileStreamSink", "file:/o", files), config, failed=True
        )
    ]
    assert not failed.get("outputFacets")
    assert sink_output_datasets(SinkFacts("MemorySink"), config) == []


def test_a_foreach_batch_read_is_the_batch_files_named_by_their_directory() -> None:
    scan = ScanFacts(
        "FileScanRDD",
        None,
        ("file:/in/day=1", "file:/in/day=2"),
        directories=("file:/in/day=1", "file:/in/day=2"),
        files=("file:/in/day=1/a.json", "file:/in/day=2/b.json"),
    )
    (read,) = [dump(d) for d in input_datasets_from_scans([batch_file_scan(scan)], SubsetConfig())]
    assert read["name"] == "/in"
    condition = read["inputFacets"]["subset"]["inputCondition"]
    assert condition == {
        "type": "location",
        "locations": ["file:/in/day=1/a.json", "file:/in/day=2/b.json"],
    }
    other = ScanFacts("FileSourceScanExec", "parquet", ("file:/in",))
    assert batch_file_scan(other) is other


def _kafka(
    start: str | None, end: str | None, servers: str | None = "b1:9092,b2:9092"
) -> StreamScanFacts:
    return StreamScanFacts(
        "KafkaMicroBatchStream", "KafkaV2[Subscribe[clicks]]", start, end, servers
    )


def test_a_kafka_batch_reads_its_offsets_per_partition_and_nothing_else() -> None:
    said: list[tuple[str, str]] = []
    stream = _kafka('{"clicks":{"0":5,"1":0,"2":7}}', '{"clicks":{"0":9,"1":3,"2":7}}')
    (read,) = [
        dump(d) for d in stream_source_datasets([stream], SubsetConfig(), lambda *a: said.append(a))
    ]
    assert (read["namespace"], read["name"]) == ("kafka://b1:9092", "clicks")
    condition = read["inputFacets"]["subset"]["inputCondition"]
    schema = {"partition": "int", "offset": "bigint"}
    read_rows = {
        (p, o)
        for p in range(3)
        for o in range(12)
        if matches(condition, {"partition": p, "offset": o}, schema)
    }
    assert read_rows == {(0, 5), (0, 6), (0, 7), (0, 8), (1, 0), (1, 1), (1, 2)}
    assert said == []


def test_a_kafka_batch_whose_broker_is_unknown_is_left_out_and_said() -> None:
    said: list[tuple[str, str]] = []
    unknown = _kafka('{"t":{"0":1}}', '{"t":{"0":2}}', servers=None)
    assert stream_source_datasets([unknown], SubsetConfig(), lambda *a: said.append(a)) == []
    assert len(said) == 1 and "brokers" in said[0][1]
    nothing = _kafka('{"t":{"0":2}}', '{"t":{"0":2}}')
    assert stream_source_datasets([nothing], SubsetConfig(), lambda *a: said.append(a)) == []


def test_a_source_that_is_no_dataset_gives_no_input_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    kind = f"RateStream{uuid.uuid4().hex}"  # a kind never said before in this process
    rate = StreamScanFacts(kind, "RateStream(rowsPerSecond=1)", '{"x":1}', '{"x":2}')
    with caplog.at_level("WARNING"):
        for _ in range(3):
            assert stream_source_datasets([rate, rate], SubsetConfig(), lambda *a: None) == []
    said = [record.getMessage() for record in caplog.records if kind in record.getMessage()]
    assert len(said) == 1, said
    assert "no dataset capture can name" in said[0]


def test_an_action_heard_after_its_query_ended_does_not_open_it_again() -> None:
    runs = _runs()
    batch = StreamBatch("q-1", RUN, 3)
    runs.started(batch, 0)
    runs.terminated(batch, 1, None)
    assert runs.started(batch, 2) == []
    assert runs.close(3) == [], "no second START, no ABORT after its COMPLETE"
    assert runs.open_runs == 0
