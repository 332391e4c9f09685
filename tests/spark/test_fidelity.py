"""Capture fidelity on real scripts: relative paths, adaptive execution, degraded datasets."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from openlineage_subset import render, validate
from openlineage_subset.spark import _reads, input_datasets
from tests.spark.conftest import (
    SALES_SCHEMA,
    Capture,
    Lake,
    by_name,
    condition_of,
    dims,
    ol_subset,
    partition_dirs,
    sales_rows,
)

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]


def _relative_to_jvm(spark: SparkSession, path: Path) -> str:
    """``path`` written relative to the JVM's working directory, as a script would write it."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    working_directory = str(jvm.java.lang.System.getProperty("user.dir"))
    relative = os.path.relpath(path, working_directory)
    assert not relative.startswith("/")
    return relative


def _completed(capture: Capture) -> list[dict[str, Any]]:
    """The COMPLETE events of the actions captured since the last call, each checked valid."""
    found = []
    for events in capture.runs().values():
        for event in events:
            assert validate(event, strict=True) == [], event
        found.extend(event for event in events if event["eventType"] == "COMPLETE")
    return found


def _names(datasets: list[dict[str, Any]]) -> set[str]:
    return {dataset["name"] for dataset in datasets}


def test_a_relative_read_is_named_and_keeps_its_partitions(
    spark: SparkSession, lake: Lake, capture: Capture
) -> None:
    relative = _relative_to_jvm(spark, lake.sales)
    df = spark.read.parquet(relative).where(F.col("country") == "PL")
    dataset = by_name(input_datasets(df))[str(lake.sales)]
    expected = {p for p in partition_dirs(lake.sales) if dims(p)["country"] == "PL"}
    assert {p["identifier"] for p in condition_of(dataset)["partitions"]} == expected

    assert df.count() == 9
    (run,) = _completed(capture)
    (read,) = run["inputs"]
    assert (read["namespace"], read["name"]) == ("file", str(lake.sales))
    assert {p["identifier"] for p in condition_of(read)["partitions"]} == expected


def test_a_relative_glob_read_is_named_after_the_dataset(spark: SparkSession, lake: Lake) -> None:
    root = _relative_to_jvm(spark, lake.sales)
    df = spark.read.option("basePath", root).parquet(root + "/business_date=2024-10-1[56]")
    (dataset,) = by_name(input_datasets(df)).values()
    assert dataset["name"] == str(lake.sales)
    shown = render(dataset["inputFacets"]["subset"])
    assert "2024-10-15" in shown and "2024-10-16" in shown and "2024-10-14" not in shown


def test_a_relative_write_is_named_with_its_partitions(
    spark: SparkSession, capture: Capture, tmp_path: Path
) -> None:
    target = tmp_path / "relative_out"
    rows = spark.createDataFrame(sales_rows(), SALES_SCHEMA).where(F.col("country") == "DE")
    rows.write.partitionBy("business_date").parquet(_relative_to_jvm(spark, target))
    (run,) = _completed(capture)
    (written,) = run["outputs"]
    assert written["name"] == str(target)
    identifiers = {
        p["identifier"] for p in written["outputFacets"]["subset"]["outputCondition"]["partitions"]
    }
    assert identifiers == partition_dirs(target)


def test_one_dataset_that_fails_degrades_alone(
    spark: SparkSession,
    lake: Lake,
    capture: Capture,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    original = _reads.reads_of_scan

    def failing_for_plain(facts: Any, config: Any) -> Any:
        if any("plain" in path for path in facts.root_paths):
            raise RuntimeError("injected fault")
        return original(facts, config)

    monkeypatch.setattr(_reads, "reads_of_scan", failing_for_plain)
    sales = spark.read.parquet(str(lake.sales)).where(F.col("country") == "PL")
    plain = spark.read.parquet(str(lake.plain)).where(F.col("qty") == 1).select("id", "qty")
    with caplog.at_level(logging.WARNING, logger="openlineage_subset.spark"):
        for _ in range(2):
            assert sales.join(plain, "id").count() == 3
    runs = _completed(capture)
    assert len(runs) == 2
    for run in runs:
        inputs = {dataset["name"]: dataset for dataset in run["inputs"]}
        assert set(inputs) == {str(lake.sales), str(lake.plain)}
        assert "inputFacets" not in inputs[str(lake.plain)], "degraded: the whole dataset"
        assert condition_of(inputs[str(lake.sales)])["type"] == "partition"
    said = [r.getMessage() for r in caplog.records if "injected fault" in r.getMessage()]
    assert len(said) == 1 and str(lake.plain) in said[0]


@pytest.fixture
def empty_lake(spark: SparkSession, tmp_path: Path) -> dict[str, Path]:
    """An empty dataset and a partitioned one, both real files written by Spark."""
    sales = spark.createDataFrame(sales_rows(), SALES_SCHEMA)
    paths = {"empty": tmp_path / "empty", "sales": tmp_path / "sales"}
    sales.limit(0).write.parquet(str(paths["empty"]))
    sales.write.partitionBy("business_date").parquet(str(paths["sales"]))
    return paths


def _the_write(runs: list[dict[str, Any]], target: Path) -> dict[str, Any]:
    (run,) = [r for r in runs if str(target) in _names(r["outputs"])]
    return run


@pytest.mark.parametrize("adaptive", ["true", "false"])
def test_reads_survive_stages_emptied_at_run_time(
    spark: SparkSession,
    capture: Capture,
    empty_lake: dict[str, Path],
    fresh_tables: list[str],
    *,
    adaptive: str,
) -> None:
    spark.conf.set("spark.sql.adaptive.enabled", adaptive)
    try:
        sales = spark.read.parquet(str(empty_lake["sales"]))
        empty = spark.read.parquet(str(empty_lake["empty"]))
        out = empty_lake["sales"].parent / "out"
        # A filter that leaves no row before a group-by.
        day = sales.where((F.col("business_date") == "2024-10-15") & (F.col("amount") > 1e9))
        day.groupBy("country").count().write.parquet(str(out / "grouped"))
        # A join with an empty side.
        sales.join(empty.select("id"), "id").select("id").write.parquet(str(out / "joined"))
        # CREATE TABLE AS SELECT over an empty source.
        fresh_tables.append("ctas_over_empty")
        empty.createOrReplaceTempView("empty_source")
        spark.sql(
            "CREATE TABLE ctas_over_empty USING parquet AS "
            "SELECT country, count(*) AS n FROM empty_source GROUP BY country"
        )
        runs = _completed(capture)
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")

    grouped = _the_write(runs, out / "grouped")
    (read,) = grouped["inputs"]
    assert read["name"] == str(empty_lake["sales"])
    # What the scan would have read: the partition its filter selects, from the disk.
    expected = {p for p in partition_dirs(empty_lake["sales"]) if "2024-10-15" in p}
    assert {p["identifier"] for p in condition_of(read)["partitions"]} == expected

    joined = _the_write(runs, out / "joined")
    assert _names(joined["inputs"]) == {str(empty_lake["sales"]), str(empty_lake["empty"])}

    (ctas,) = [r for r in runs if any("ctas_over_empty" in o["name"] for o in r["outputs"])]
    assert _names(ctas["inputs"]) == {str(empty_lake["empty"])}


SCRIPT_RUNS = {
    # (inputs, outputs) of each action of examples/spark_job.py, by the relative paths it uses.
    (frozenset(), frozenset({"orders"})),
    (frozenset({"orders"}), frozenset({"totals"})),
    (frozenset({"totals"}), frozenset()),
}


def test_the_example_script_with_a_relative_directory(tmp_path: Path) -> None:
    events_file = tmp_path / "events.jsonl"
    done = ol_subset(
        "run",
        "--output",
        str(events_file),
        str(ROOT / "examples" / "spark_job.py"),
        "relative/job",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "lineage capture failed" not in done.stderr
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    base = str(tmp_path / "relative" / "job") + "/"
    runs = set()
    for event in events:
        assert validate(event, strict=True) == []
        if event["eventType"] == "COMPLETE" and "parent" in event["run"]["facets"]:
            runs.add(
                (
                    frozenset(d["name"].removeprefix(base) for d in event["inputs"]),
                    frozenset(d["name"].removeprefix(base) for d in event["outputs"]),
                )
            )
    assert runs == SCRIPT_RUNS
