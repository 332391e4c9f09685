"""input_datasets on real files and tables: partitions, locations, row filters, per source."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from openlineage_subset import matches, render, validate
from openlineage_subset.spark import SubsetConfig, input_datasets
from tests.spark.conftest import Lake, by_name, condition_of, dims, partition_dirs

pytestmark = pytest.mark.spark


def _partitions(condition: dict[str, Any] | None) -> set[str]:
    assert condition is not None and condition["type"] == "partition", condition
    for item in condition["partitions"]:
        assert item["dimensions"] == dims(item["identifier"]), item
    return {item["identifier"] for item in condition["partitions"]}


def _only(df: DataFrame, config: SubsetConfig | None = None) -> dict[str, Any]:
    (dataset,) = by_name(input_datasets(df, config)).values()
    return dataset


def _expected(root: Path, **wanted: Any) -> set[str]:
    """Partition dirs on disk whose dimensions pass the test's own predicates."""
    selected = set()
    for relative in partition_dirs(root):
        values = dims(relative)
        if all(check(values[key]) for key, check in wanted.items()):
            selected.add(relative)
    return selected


def test_pruned_partitions_of_a_parquet_dataset(spark: SparkSession, lake: Lake) -> None:
    df = spark.read.parquet(str(lake.sales)).where(
        (F.col("business_date") == "2024-10-15") & F.col("country").isin("PL", "DE")
    )
    dataset = _only(df)
    assert (dataset["namespace"], dataset["name"]) == ("file", str(lake.sales))
    expected = _expected(
        lake.sales, business_date=lambda v: v == "2024-10-15", country=lambda v: v in ("PL", "DE")
    )
    assert len(expected) == 2
    assert _partitions(condition_of(dataset)) == expected
    assert validate({"subset": dataset["inputFacets"]["subset"]}, strict=True) == []


def test_null_and_escaped_partition_values(spark: SparkSession, lake: Lake) -> None:
    nulls = _only(spark.read.parquet(str(lake.sales)).where(F.col("country").isNull()))
    assert _partitions(condition_of(nulls)) == _expected(lake.sales, country=lambda v: v is None)
    assert {p["dimensions"]["country"] for p in condition_of(nulls)["partitions"]} == {None}
    odd = _only(spark.read.parquet(str(lake.sales)).where(F.col("country") == "A/B:C"))
    assert {p["dimensions"]["country"] for p in condition_of(odd)["partitions"]} == {"A/B:C"}


def test_reading_everything_is_not_a_subset(spark: SparkSession, lake: Lake) -> None:
    assert condition_of(_only(spark.read.parquet(str(lake.sales)))) is None
    everything = spark.read.parquet(str(lake.sales)).where(
        F.col("country").isNotNull() | F.col("country").isNull()
    )
    assert condition_of(_only(everything)) is None


def test_a_data_filter_becomes_a_row_filter(spark: SparkSession, lake: Lake) -> None:
    dataset = _only(spark.read.parquet(str(lake.sales)).where(F.col("amount") > 20))
    assert render(condition_of(dataset)) == "amount > 20.0"
    plain = _only(
        spark.read.parquet(str(lake.plain)).where((F.col("qty") == 1) & (F.col("amount") <= 3.5))
    )
    assert render(condition_of(plain)) == "qty = 1 AND amount <= 3.5"


@pytest.mark.parametrize("name", ["csv", "json", "orc"])
def test_other_file_formats(spark: SparkSession, lake: Lake, name: str) -> None:
    reader = spark.read.format(name).option("header", "true")
    if name == "csv":
        reader = reader.schema(
            "id int, amount double, qty int, business_date string, country string"
        )
    df = reader.load(str(lake.fmt(name))).where(F.col("business_date") == "2024-10-16")
    dataset = _only(df)
    assert dataset["name"] == str(lake.fmt(name))
    assert _partitions(condition_of(dataset)) == _expected(
        lake.fmt(name), business_date=lambda v: v == "2024-10-16"
    )


def test_glob_resolved_to_what_was_listed(spark: SparkSession, lake: Lake) -> None:
    dataset = _only(spark.read.parquet(f"{lake.sales}/business_date=*/country=FR"))
    assert dataset["name"] == str(lake.sales)
    assert _partitions(condition_of(dataset)) == _expected(lake.sales, country=lambda v: v == "FR")


def test_sub_path_of_a_partitioned_layout(spark: SparkSession, lake: Lake) -> None:
    dataset = _only(spark.read.parquet(f"{lake.sales}/business_date=2024-10-15"))
    assert dataset["name"] == str(lake.sales)
    assert _partitions(condition_of(dataset)) == _expected(
        lake.sales, business_date=lambda v: v == "2024-10-15"
    )


def test_date_shaped_directories_become_locations(spark: SparkSession, lake: Lake) -> None:
    days = [f"{lake.logs}/2024/10/15", f"{lake.logs}/2024/10/16"]
    dataset = _only(spark.read.json(days))
    assert dataset["name"] == str(lake.logs)
    assert condition_of(dataset) == {"type": "location", "locations": [f"file:{d}" for d in days]}


def test_several_datasets_in_one_read_stay_apart(spark: SparkSession, lake: Lake) -> None:
    df = spark.read.parquet(str(lake.plain)).unionByName(
        spark.read.parquet(str(lake.sales)).drop("business_date", "country"),
        allowMissingColumns=True,
    )
    datasets = by_name(input_datasets(df))
    assert set(datasets) == {str(lake.plain), str(lake.sales)}


def test_same_dataset_read_twice_gets_one_covering_condition(
    spark: SparkSession, lake: Lake
) -> None:
    sales = str(lake.sales)
    pl = spark.read.parquet(sales).where(F.col("country") == "PL").select("id", "amount")
    de = spark.read.parquet(sales).where(F.col("country") == "DE").select("id", "amount")
    dataset = _only(pl.join(de, "id"))
    assert _partitions(condition_of(dataset)) == _expected(
        lake.sales, country=lambda v: v in ("PL", "DE")
    )
    whole = _only(pl.union(spark.read.parquet(sales).select("id", "amount")))
    assert condition_of(whole) is None, "one read took everything: the union is everything"
    filtered = _only(
        spark.read.parquet(str(lake.plain))
        .where(F.col("qty") == 0)
        .union(spark.read.parquet(str(lake.plain)).where(F.col("amount") > 100))
    )
    assert render(condition_of(filtered)) == "qty = 0 OR amount > 100.0"


def test_self_join_lists_the_dataset_once(spark: SparkSession, lake: Lake) -> None:
    df = spark.read.parquet(str(lake.plain))
    joined = df.alias("a").join(df.alias("b"), F.col("a.id") == F.col("b.qty"))
    assert list(by_name(input_datasets(joined))) == [str(lake.plain)]


def test_more_partitions_than_listed_are_condensed_exactly(spark: SparkSession, lake: Lake) -> None:
    df = spark.read.parquet(str(lake.sales)).where(
        F.col("country").isin("PL", "DE") & (F.col("qty") > 0)
    )
    condition = condition_of(_only(df, SubsetConfig(max_partitions=2)))
    assert condition["type"] != "partition"  # not listed: condensed to value lists and ranges
    # Exact against the dataset's real partitions: every one read, and none other.
    types = {"business_date": "date", "country": "string"}
    universe = [dims(relative) for relative in partition_dirs(lake.sales)]
    assert len({d["country"] for d in universe}) > 2
    for dimensions in universe:
        assert matches(condition, dimensions, types) == (dimensions["country"] in ("PL", "DE"))
    combined = _only(df, SubsetConfig(combine_levels=True))
    assert condition_of(combined)["type"] == "binary"
    assert condition_of(combined)["left"]["type"] == "partition"


def test_unsupported_filters_are_dropped_not_guessed(spark: SparkSession, lake: Lake) -> None:
    df = spark.read.parquet(str(lake.plain))
    assert condition_of(_only(df.where(F.col("amount").isNull()))) is None
    assert condition_of(_only(df.where(F.length(F.col("country")) == 2))) is None
    mixed = _only(df.where((F.col("qty") == 1) & F.col("country").like("P%")))
    assert render(condition_of(mixed)) == "qty = 1"
    either = _only(df.where((F.col("qty") == 1) | F.col("country").like("P%")))
    assert condition_of(either) is None, "an OR with an inexpressible branch is dropped whole"


def test_catalog_tables(spark: SparkSession, lake: Lake, fresh_tables: list[str]) -> None:
    fresh_tables += ["sales_saved", "sales_created"]
    spark.read.parquet(str(lake.sales)).write.partitionBy("business_date", "country").saveAsTable(
        "sales_saved"
    )
    spark.sql(
        "CREATE TABLE sales_created (id INT, amount DOUBLE, business_date STRING, country STRING) "
        "USING parquet PARTITIONED BY (business_date, country)"
    )
    spark.sql(
        "INSERT INTO sales_created SELECT id, amount, business_date, country FROM sales_saved"
    )
    for table in fresh_tables:
        location = Path(
            spark.sql(f"DESCRIBE TABLE EXTENDED {table}")
            .where("col_name = 'Location'")
            .first()[1]
            .removeprefix("file:")
        )
        dataset = _only(
            spark.table(table).where((F.col("country") == "DE") & (F.col("amount") > 1))
        )
        assert dataset["name"] == str(location)
        assert _partitions(condition_of(dataset)) == _expected(
            location, country=lambda v: v == "DE"
        )


def test_hive_format_table(spark: SparkSession, lake: Lake, fresh_tables: list[str]) -> None:
    fresh_tables.append("sales_hive")
    spark.sql(
        "CREATE TABLE sales_hive (id INT, amount DOUBLE) PARTITIONED BY (business_date STRING, "
        "country STRING) STORED AS TEXTFILE"
    )
    spark.read.parquet(str(lake.sales)).createOrReplaceTempView("sales_source")
    spark.sql(
        "INSERT INTO sales_hive PARTITION (business_date, country) "
        "SELECT id, amount, business_date, country FROM sales_source"
    )
    df = spark.table("sales_hive").where("business_date = '2024-10-14' AND amount > 0")
    assert "Scan hive" in df._jdf.queryExecution().executedPlan().toString()
    location = Path(
        spark.sql("DESCRIBE TABLE EXTENDED sales_hive")
        .where("col_name = 'Location'")
        .first()[1]
        .removeprefix("file:")
    )
    dataset = _only(df)
    assert dataset["name"] == str(location)
    assert _partitions(condition_of(dataset)) == _expected(
        location, business_date=lambda v: v == "2024-10-14"
    )


@pytest.mark.usefixtures("v2_sources")
def test_datasource_v2_file_scan(spark: SparkSession, lake: Lake) -> None:
    df = spark.read.parquet(str(lake.sales)).where(
        (F.col("country") == "FR") & (F.col("amount") > 1)
    )
    assert "BatchScan" in df._jdf.queryExecution().executedPlan().toString()
    dataset = _only(df)
    assert _partitions(condition_of(dataset)) == _expected(lake.sales, country=lambda v: v == "FR")
    rows = _only(spark.read.parquet(str(lake.sales)).where(F.col("amount") > 100))
    assert render(condition_of(rows)) == "amount > 100.0"


def test_dynamic_partition_pruning_is_used_after_the_action(
    spark: SparkSession, lake: Lake, tmp_path: Path
) -> None:
    settings = {
        "spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly": "false",
        "spark.sql.autoBroadcastJoinThreshold": "-1",
    }
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        days = spark.createDataFrame(
            [("2024-10-15", "x"), ("2024-10-16", "y")], "day string, label string"
        )
        days.write.parquet(str(tmp_path / "days"))
        fact = spark.read.parquet(str(lake.sales))
        dim = spark.read.parquet(str(tmp_path / "days")).where(F.col("label") == "x")
        df = fact.join(dim, fact.business_date == dim.day).select("id")
        assert "dynamicpruning" in df._jdf.queryExecution().executedPlan().toString()
        before = by_name(input_datasets(df))[str(lake.sales)]
        assert condition_of(before) is None, "before running, nothing was pruned"
        df.collect()
        after = by_name(input_datasets(df._jdf.queryExecution()))[str(lake.sales)]
        assert _partitions(condition_of(after)) == _expected(
            lake.sales, business_date=lambda v: v == "2024-10-15"
        )
    finally:
        for key in settings:
            spark.conf.unset(key)


def test_bad_arguments(spark: SparkSession) -> None:
    with pytest.raises(TypeError, match="DataFrame or a JVM QueryExecution"):
        input_datasets("not a frame")


def _round_trips(spark: SparkSession, df: DataFrame) -> int:
    """py4j round trips of one extraction, counted at the gateway client (nothing replaced)."""
    client = spark.sparkContext._gateway._gateway_client  # type: ignore[union-attr]
    original = client.send_command
    calls = 0

    caller = threading.get_ident()

    def counting(command: str, *args: Any, **kwargs: Any) -> Any:
        # py4j's finalizer thread sends "m" (memory) commands when proxies are collected:
        # garbage collection, not round trips of the extraction.
        nonlocal calls
        if threading.get_ident() == caller and not command.startswith("m\n"):
            calls += 1
        return original(command, *args, **kwargs)

    client.send_command = counting
    try:
        input_datasets(df)
    finally:
        client.send_command = original
    return calls


def test_round_trips_do_not_grow_with_partitions(spark: SparkSession, tmp_path: Path) -> None:
    counts = {}
    for partitions in (6, 120):
        path = str(tmp_path / f"p{partitions}")
        spark.range(partitions).selectExpr("id", "id % 3 AS a", "id AS b").write.partitionBy(
            "a", "b"
        ).parquet(path)
        df = spark.read.parquet(path).where(F.col("b") >= 1)
        df._jdf.queryExecution().executedPlan()
        selected = condition_of(_only(df))
        assert selected is not None and len(selected["partitions"]) == partitions - 1
        counts[partitions] = _round_trips(spark, df)
    assert counts[6] == counts[120], counts
