"""Written partitions, for every write form, against the directories whose files appeared."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from openlineage_subset import validate
from tests.spark.conftest import (
    SALES_SCHEMA,
    Capture,
    covered_by_output,
    created_partitions,
    data_files,
    left_by_whole,
    partition_dirs,
    sales_rows,
    written_identifiers,
)

pytestmark = pytest.mark.spark


def _sales(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame(sales_rows(), SALES_SCHEMA)


def _written(capture: Capture, root: Path) -> set[str] | None:
    """The partitions the one run that wrote ``root`` says it wrote (None: the whole dataset)."""
    return written_identifiers(_output(capture, root))


def _output(capture: Capture, root: Path) -> dict[str, Any]:
    """The output naming ``root`` of the one run captured since that wrote it."""
    found = []
    for events in capture.runs().values():
        for event in events:
            assert validate(event, strict=True) == [], event
            if event["eventType"] != "COMPLETE":
                continue
            for output in event["outputs"]:
                if output["name"] == str(root):
                    found.append(output)
    assert len(found) == 1, f"expected one run writing {root}, got {len(found)}"
    return found[0]


def _location(spark: SparkSession, table: str) -> Path:
    row = spark.sql(f"DESCRIBE TABLE EXTENDED {table}").where("col_name = 'Location'").first()
    assert row is not None
    return Path(str(row[1]).removeprefix("file:"))


def test_new_partitioned_write(spark: SparkSession, capture: Capture, tmp_path: Path) -> None:
    root = tmp_path / "out"
    _sales(spark).write.partitionBy("business_date", "country").parquet(str(root))
    written = _written(capture, root)
    assert written == created_partitions({}, root) and len(written) == 15


def test_write_after_a_shuffle(spark: SparkSession, capture: Capture, tmp_path: Path) -> None:
    # Adaptive execution wraps such a write in query stages.
    root = tmp_path / "totals"
    totals = _sales(spark).groupBy("business_date", "country").agg(F.sum("amount").alias("total"))
    totals.where(F.col("country") != "FR").write.partitionBy("business_date", "country").parquet(
        str(root)
    )
    written = _written(capture, root)
    assert written == created_partitions({}, root) and len(written) == 9  # FR and nulls out


def test_append_touching_few_of_many(spark: SparkSession, capture: Capture, tmp_path: Path) -> None:
    root = tmp_path / "out"
    _sales(spark).write.partitionBy("business_date", "country").parquet(str(root))
    capture.runs()
    before = data_files(root)
    few = _sales(spark).where((F.col("country") == "PL") & (F.col("business_date") != "2024-10-14"))
    few.write.mode("append").partitionBy("business_date", "country").parquet(str(root))
    assert (
        _written(capture, root)
        == created_partitions(before, root)
        == {
            "business_date=2024-10-15/country=PL",
            "business_date=2024-10-16/country=PL",
        }
    )


def test_static_overwrite_and_dynamic_overwrite(
    spark: SparkSession, capture: Capture, tmp_path: Path
) -> None:
    root = tmp_path / "out"
    _sales(spark).write.partitionBy("business_date", "country").parquet(str(root))
    capture.runs()
    before = data_files(root)
    one_day = _sales(spark).where(F.col("business_date") == "2024-10-16")
    one_day.write.mode("overwrite").partitionBy("business_date", "country").parquet(str(root))
    # Static mode deleted the other days too: the change is the whole dataset, not the five
    # partitions written.
    deleted = {str(Path(path).parent.relative_to(root)) for path in before} - set(
        created_partitions(before, root)
    )
    assert len(created_partitions(before, root)) == 5 and len(deleted) == 10
    assert not any(Path(path).exists() for path in before)
    output = _output(capture, root)
    assert written_identifiers(output) is None
    # ... and the partitions it left are listed beside it: all there are now.
    assert left_by_whole(output) == created_partitions(before, root) == partition_dirs(root)
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        _sales(spark).write.mode("overwrite").partitionBy("business_date", "country").parquet(
            str(root)
        )
        capture.runs()
        before = data_files(root)
        pl = _sales(spark).where(F.col("country").isin("PL", "A/B:C"))
        pl.write.mode("overwrite").partitionBy("business_date", "country").parquet(str(root))
        written = _written(capture, root)
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert written == created_partitions(before, root)
    assert len(written) == 6 and "business_date=2024-10-14/country=A%2FB%3AC" in written


def test_tables(spark: SparkSession, capture: Capture, fresh_tables: list[str]) -> None:
    fresh_tables += ["w_saved", "w_static", "w_ctas"]
    _sales(spark).write.partitionBy("business_date", "country").saveAsTable("w_saved")
    saved = _location(spark, "w_saved")
    # Spark writes a new table as an overwrite of its location: the whole (new) dataset, with
    # the partitions it left listed beside it.
    output = _output(capture, saved)
    assert written_identifiers(output) is None
    assert left_by_whole(output) == partition_dirs(saved)

    before = data_files(saved)
    _sales(spark).where("id % 10 = 1 AND country = 'DE'").select(
        "id", "amount", "qty", "business_date", "country"
    ).write.insertInto("w_saved")
    assert _written(capture, saved) == created_partitions(before, saved)

    spark.sql(
        "CREATE TABLE w_static (id INT, amount DOUBLE, business_date STRING, country STRING) "
        "USING parquet PARTITIONED BY (business_date, country)"
    )
    capture.runs()
    table = _location(spark, "w_static")
    statements = [
        "INSERT INTO w_static PARTITION (business_date = '2024-10-20', country = 'PL') "
        "SELECT id, amount FROM w_saved WHERE id < 5",
        "INSERT INTO w_static PARTITION (business_date, country) "
        "SELECT id, amount, business_date, country FROM w_saved WHERE country = 'FR'",
        "INSERT INTO w_static PARTITION (business_date = '2024-10-21', country) "
        "SELECT id, amount, country FROM w_saved WHERE country IN ('DE', 'PL')",
        "INSERT OVERWRITE w_static PARTITION (business_date = '2024-10-20', country = 'PL') "
        "SELECT id, amount FROM w_saved WHERE id < 3",
    ]
    for statement in statements:
        before = data_files(table)
        spark.sql(statement)
        assert _written(capture, table) == created_partitions(before, table), statement

    spark.sql(
        "CREATE TABLE w_ctas USING parquet PARTITIONED BY (country) "
        "AS SELECT id, amount, country FROM w_saved WHERE business_date = '2024-10-15'"
    )
    ctas = _location(spark, "w_ctas")
    assert _written(capture, ctas) is None


def test_hive_table_insert(spark: SparkSession, capture: Capture, fresh_tables: list[str]) -> None:
    fresh_tables.append("w_hive")
    spark.sql(
        "CREATE TABLE w_hive (id INT, amount DOUBLE) PARTITIONED BY (business_date STRING, "
        "country STRING) STORED AS TEXTFILE"
    )
    _sales(spark).createOrReplaceTempView("w_source")
    capture.runs()
    table = _location(spark, "w_hive")
    spark.sql(
        "INSERT INTO w_hive PARTITION (business_date, country) "
        "SELECT id, amount, business_date, country FROM w_source WHERE qty = 1 AND country <> 'FR'"
    )
    assert _written(capture, table) == created_partitions({}, table)
    before = data_files(table)
    spark.sql(
        "INSERT INTO w_hive PARTITION (business_date = '2024-10-30', country = 'IT') "
        "SELECT id, amount FROM w_source WHERE id < 3"
    )
    assert (
        _written(capture, table)
        == created_partitions(before, table)
        == {"business_date=2024-10-30/country=IT"}
    )


def test_unpartitioned_writes_have_no_subset(
    spark: SparkSession, capture: Capture, tmp_path: Path
) -> None:
    root = tmp_path / "flat"
    _sales(spark).write.parquet(str(root))
    assert _written(capture, root) is None


def test_overwrites_say_so_and_cover_what_they_replaced(
    spark: SparkSession, capture: Capture, fresh_tables: list[str]
) -> None:
    fresh_tables.append("w_mixed")
    _sales(spark).write.partitionBy("business_date", "country").saveAsTable("w_mixed")
    table = _location(spark, "w_mixed")
    before = partition_dirs(table)
    _sales(spark).createOrReplaceTempView("w_source")
    capture.runs()
    # Static partition overwrite mode: every country of that day goes, then PL is written.
    spark.sql(
        "INSERT OVERWRITE w_mixed PARTITION (business_date = '2024-10-15', country) "
        "SELECT id, amount, qty, country FROM w_source WHERE country = 'PL'"
    )
    (output,) = _outputs(capture, table)
    assert output["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    after = partition_dirs(table)
    changed = {p for p in before | after if "2024-10-15" in p}
    assert before - after and changed < before | after
    assert covered_by_output(output, before | after) == changed
    _sales(spark).where("country = 'DE'").write.insertInto("w_mixed")
    (appended,) = _outputs(capture, table)
    assert "facets" not in appended, "an append is no lifecycle change"


def _outputs(capture: Capture, root: Path) -> list[dict[str, Any]]:
    return [
        output
        for events in capture.runs().values()
        for event in events
        if event["eventType"] == "COMPLETE"
        for output in event["outputs"]
        if output["name"] == str(root)
    ]
