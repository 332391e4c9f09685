"""Statements that change a dataset without a query's rows: DDL, LOAD DATA, INSERT DIRECTORY.

Each must be one run with the dataset as output, its ``lifecycleStateChange`` facet, and an
output ``subset`` facet when the change is scoped to partitions. Expected locations come from
the catalog (``DESCRIBE``) and the disk, never from the adapter.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.utils import AnalysisException

from openlineage_subset import validate
from tests.spark.conftest import (
    ON_CLUSTER,
    SALES_SCHEMA,
    Capture,
    covered_by_output,
    left_by_whole,
    partition_dirs,
    sales_rows,
)

pytestmark = pytest.mark.spark


def _location(spark: SparkSession, table: str) -> Path:
    row = spark.sql(f"DESCRIBE TABLE EXTENDED {table}").where("col_name = 'Location'").first()
    assert row is not None
    return Path(str(row[1]).removeprefix("file:"))


def _one_run(capture: Capture) -> dict[str, Any]:
    """The COMPLETE event of the one run captured since the last call (checked valid)."""
    runs = capture.runs()
    assert len(runs) == 1, [[e["job"]["name"] for e in events] for events in runs.values()]
    (events,) = runs.values()
    assert [event["eventType"] for event in events] == ["START", "COMPLETE"]
    for event in events:
        assert validate(event, strict=True) == [], event
    return events[1]


def _output(event: dict[str, Any], path: Path) -> dict[str, Any]:
    (output,) = event["outputs"]
    assert (output["namespace"], output["name"]) == ("file", str(path))
    return output


def _lifecycle(dataset: dict[str, Any]) -> str:
    return str(dataset["facets"]["lifecycleStateChange"]["lifecycleStateChange"])


@pytest.fixture
def tables(fresh_tables: list[str]) -> list[str]:
    """Table names a test creates; dropped afterwards (conftest's ``fresh_tables``)."""
    return fresh_tables


def _partitioned_table(spark: SparkSession, name: str, tables: list[str]) -> Path:
    tables.append(name)
    rows = spark.createDataFrame(sales_rows(), SALES_SCHEMA)
    rows.write.partitionBy("business_date", "country").saveAsTable(name)
    return _location(spark, name)


def test_create_table_is_a_create_and_if_not_exists_is_nothing(
    spark: SparkSession, capture: Capture, tables: list[str]
) -> None:
    tables.append("st_created")
    statement = "CREATE TABLE {} st_created (id INT, day STRING) USING parquet PARTITIONED BY (day)"
    spark.sql(statement.format(""))
    output = _output(_one_run(capture), _location(spark, "st_created"))
    assert _lifecycle(output) == "CREATE" and "outputFacets" not in output
    spark.sql(statement.format("IF NOT EXISTS"))
    assert capture.runs() == {}, "the table existed: nothing happened"


@pytest.mark.parametrize("external", [False, True])
def test_drop_table_names_the_table_it_dropped(
    spark: SparkSession, capture: Capture, tmp_path: Path, *, external: bool
) -> None:
    where = f"LOCATION '{tmp_path / 'elsewhere'}'" if external else ""
    spark.sql(f"CREATE TABLE st_dropped (id INT) USING parquet {where}")
    spark.sql("INSERT INTO st_dropped VALUES (1)")
    location = _location(spark, "st_dropped")
    capture.runs()
    spark.sql("DROP TABLE st_dropped")
    output = _output(_one_run(capture), location)
    assert _lifecycle(output) == "DROP"
    spark.sql("DROP TABLE IF EXISTS st_dropped")
    assert capture.runs() == {}, "nothing was dropped"


def test_truncate_table_and_truncate_a_partition(
    spark: SparkSession, capture: Capture, tables: list[str]
) -> None:
    location = _partitioned_table(spark, "st_truncated", tables)
    before = partition_dirs(location)
    capture.runs()
    spark.sql("TRUNCATE TABLE st_truncated PARTITION (business_date = '2024-10-15')")
    output = _output(_one_run(capture), location)
    assert _lifecycle(output) == "TRUNCATE"
    emptied = before - partition_dirs(location)
    assert emptied and all("2024-10-15" in path for path in emptied)
    assert covered_by_output(output, before) == emptied, "exactly the emptied partitions"
    spark.sql("TRUNCATE TABLE st_truncated")
    output = _output(_one_run(capture), location)
    assert _lifecycle(output) == "TRUNCATE" and "outputFacets" not in output


def test_add_and_drop_partitions_and_columns(
    spark: SparkSession, capture: Capture, tables: list[str]
) -> None:
    location = _partitioned_table(spark, "st_altered", tables)
    capture.runs()
    spark.sql(
        "ALTER TABLE st_altered ADD PARTITION (business_date = '2024-12-01', country = 'NO') "
        "PARTITION (business_date = '2024-12-02', country = 'NO')"
    )
    output = _output(_one_run(capture), location)
    assert _lifecycle(output) == "ALTER"
    condition = output["outputFacets"]["subset"]["outputCondition"]
    assert {p["identifier"] for p in condition["partitions"]} == {
        "business_date=2024-12-01/country=NO",
        "business_date=2024-12-02/country=NO",
    }
    before = partition_dirs(location)
    spark.sql("ALTER TABLE st_altered DROP PARTITION (business_date = '2024-10-14')")
    output = _output(_one_run(capture), location)
    assert _lifecycle(output) == "ALTER", "a dropped partition is not a dropped table"
    dropped = before - partition_dirs(location)
    assert dropped and covered_by_output(output, before) == dropped
    spark.sql("ALTER TABLE st_altered ADD COLUMNS (note STRING)")
    output = _output(_one_run(capture), location)
    assert _lifecycle(output) == "ALTER" and "outputFacets" not in output


def test_rename_names_the_previous_dataset(
    spark: SparkSession, capture: Capture, tables: list[str]
) -> None:
    old = _partitioned_table(spark, "st_renamed_from", tables)
    capture.runs()
    spark.sql("ALTER TABLE st_renamed_from RENAME TO st_renamed_to")
    tables.append("st_renamed_to")
    new = _location(spark, "st_renamed_to")
    assert new != old
    output = _output(_one_run(capture), new)
    facet = output["facets"]["lifecycleStateChange"]
    assert facet["lifecycleStateChange"] == "RENAME"
    assert facet["previousIdentifier"] == {"namespace": "file", "name": str(old)}


@pytest.mark.parametrize("overwrite", [False, True])
def test_load_data_into_a_partition(
    spark: SparkSession, capture: Capture, tables: list[str], tmp_path: Path, *, overwrite: bool
) -> None:
    tables.append("st_loaded")
    spark.sql(
        "CREATE TABLE st_loaded (id INT, amount DOUBLE) "
        "PARTITIONED BY (business_date STRING, country STRING) "
        "ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE"
    )
    location = _location(spark, "st_loaded")
    source = tmp_path / "incoming" / "sales.csv"
    source.parent.mkdir()
    source.write_text("1,2.5\n2,3.5\n")
    capture.runs()
    spark.sql(
        f"LOAD DATA LOCAL INPATH '{source}' {'OVERWRITE' if overwrite else ''} INTO TABLE "
        "st_loaded PARTITION (business_date = '2024-10-15', country = 'PL')"
    )
    event = _one_run(capture)
    assert spark.table("st_loaded").count() == 2
    output = _output(event, location)
    assert (output.get("facets") is not None) is overwrite
    if overwrite:
        assert _lifecycle(output) == "OVERWRITE"
    written = output["outputFacets"]["subset"]["outputCondition"]["partitions"]
    (loaded,) = location.rglob("sales.csv")
    assert [p["identifier"] for p in written] == [str(loaded.parent.relative_to(location))]
    (read,) = event["inputs"]
    assert (read["namespace"], read["name"]) == ("file", str(source))


@pytest.mark.parametrize(
    ("form", "relative"),
    [("USING parquet", False), ("USING json", True), ("STORED AS TEXTFILE", False)],
)
def test_insert_overwrite_directory(
    spark: SparkSession,
    capture: Capture,
    tables: list[str],
    tmp_path: Path,
    *,
    form: str,
    relative: bool,
) -> None:
    _partitioned_table(spark, "st_source", tables)
    target = tmp_path / "exported"
    written = target
    if relative:
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        written = Path(os.path.relpath(target, str(jvm.java.lang.System.getProperty("user.dir"))))
    local = "LOCAL " if "STORED" in form else ""
    capture.runs()
    spark.sql(
        f"INSERT OVERWRITE {local}DIRECTORY '{written}' {form} "
        "SELECT id, amount FROM st_source WHERE country = 'PL'"
    )
    assert any(name.startswith("part-") for name in os.listdir(target))
    event = _one_run(capture)
    output = _output(event, target)
    assert _lifecycle(output) == "OVERWRITE"
    (read,) = event["inputs"]
    assert {
        p["dimensions"]["country"]
        for p in read["inputFacets"]["subset"]["inputCondition"]["partitions"]
    } == {"PL"}


def test_writer_v2_create_and_what_the_session_catalog_refuses(
    spark: SparkSession, capture: Capture, tables: list[str]
) -> None:
    tables.append("st_v2")
    rows = spark.createDataFrame(sales_rows(), SALES_SCHEMA)
    rows.writeTo("st_v2").using("parquet").partitionedBy("country").create()
    location = _location(spark, "st_v2")
    output = _output(_one_run(capture), location)
    # Spark writes a new table as an overwrite of its location: the whole (new) dataset, with
    # the partitions it left listed beside it.
    assert _lifecycle(output) == "OVERWRITE"
    assert left_by_whole(output) == partition_dirs(location) and partition_dirs(location)
    # The session catalog's file tables take no DataFrameWriterV2 appends: Spark refuses
    # before anything runs, so nothing changed and nothing is reported.
    with pytest.raises(AnalysisException):
        rows.writeTo("st_v2").append()
    assert capture.runs() == {}


def test_statements_that_change_no_dataset_emit_nothing(
    spark: SparkSession, capture: Capture, tables: list[str]
) -> None:
    _partitioned_table(spark, "st_quiet", tables)
    capture.runs()
    for statement in (
        "SET spark.sql.shuffle.partitions = 2",
        "SHOW TABLES",
        "USE default",
        "DESCRIBE TABLE st_quiet",
        "CACHE LAZY TABLE st_quiet",
        "UNCACHE TABLE st_quiet",
        "CREATE OR REPLACE TEMPORARY VIEW st_view AS SELECT * FROM st_quiet",
        "DROP VIEW st_view",
    ):
        spark.sql(statement).collect()
    assert capture.runs() == {}


def test_a_drop_the_catalog_watch_missed_is_guessed_and_said(
    spark: SparkSession, capture: Capture, caplog: pytest.LogCaptureFixture
) -> None:
    spark.sql("CREATE TABLE st_unwatched (id INT) USING parquet")
    location = _location(spark, "st_unwatched")
    capture.runs()
    # As when DROP TABLE is the statement that first starts the catalog: nobody watched it.
    with caplog.at_level(logging.WARNING, logger="openlineage_subset.spark"):
        capture.handle.catalog_watch.stop()
        spark.sql("DROP TABLE st_unwatched")
        output = _output(_one_run(capture), location)
        capture.handle.catalog_watch.stop()
        spark.sql("DROP TABLE IF EXISTS st_unwatched_too")
        assert capture.runs() == {}
    assert _lifecycle(output) == "DROP", "a managed table: its default location is its location"
    said = " ".join(record.getMessage() for record in caplog.records)
    assert "st_unwatched_too is not reported" in said
    assert "default.st_unwatched" in said and "default location" in said


@pytest.mark.skipif(
    ON_CLUSTER,
    reason="an in-memory Derby database lives in one JVM: a cluster's executors cannot reach it",
)
def test_writer_v2_into_a_v2_catalog(spark: SparkSession, capture: Capture, tmp_path: Path) -> None:
    # Spark's own JDBC catalog on an in-memory Derby database: a real DataSource V2 target.
    catalog = "spark.sql.catalog.st_jdbc"
    spark.conf.set(catalog, "org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog")
    spark.conf.set(f"{catalog}.url", f"jdbc:derby:memory:st_{tmp_path.name};create=true")
    spark.conf.set(f"{catalog}.driver", "org.apache.derby.jdbc.EmbeddedDriver")
    source = tmp_path / "source"
    spark.createDataFrame(sales_rows(), SALES_SCHEMA).write.partitionBy("country").parquet(
        str(source)
    )
    capture.runs()
    rows = spark.read.parquet(str(source)).where("country = 'PL'").select("id", "amount")
    expected = {
        "create": None,  # the table's data is written as an append to the new table
        "append": None,
        "createOrReplace": "OVERWRITE",
    }
    for method, lifecycle in expected.items():
        getattr(rows.writeTo("st_jdbc.APP.sales"), method)()
        writes = [
            event
            for events in capture.runs().values()
            for event in events
            if event["eventType"] == "COMPLETE" and event["outputs"]
        ]
        assert len(writes) == 1, method
        (output,) = writes[0]["outputs"]
        assert output["namespace"] == f"derby:memory:st_{tmp_path.name}", "no ;create=true"
        assert output["name"] == "APP.sales"
        assert (output.get("facets") or {}).get("lifecycleStateChange", {}).get(
            "lifecycleStateChange"
        ) == lifecycle, method
        (read,) = writes[0]["inputs"]
        assert read["name"] == str(source)
        partitions = read["inputFacets"]["subset"]["inputCondition"]["partitions"]
        assert {p["dimensions"]["country"] for p in partitions} == {"PL"}
    assert spark.table("st_jdbc.APP.sales").count() == rows.count(), "replaced, not appended"
