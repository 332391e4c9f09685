"""Secrets never leave, on real Spark: redacted literals, the row-filter switch, scrubbed errors.

The values of redacted columns appear nowhere in the dumped datasets, and what is left is still
sound (every returned row satisfies it). A failed action's or application's event carries no
credential its error quoted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from openlineage_subset import dump, matches, render, validate
from openlineage_subset.producer import unescape_path_name
from openlineage_subset.spark import SubsetConfig, input_datasets
from tests.spark.conftest import Capture, Lake, by_name, condition_of
from tests.spark.predicates import COLUMNS, predicates, row_in_utc

pytestmark = pytest.mark.spark

SSN = "123-45-6789"
REGION = "secret-region"
DAYS = ["2024-10-14", "2024-10-15"]
PEOPLE_SCHEMA = "id int, ssn string, email string, day string, region string"


@pytest.fixture(scope="module")
def people(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("redaction") / "people"
    rows = [
        (i, [SSN, "987-65-4321", "555-12-3456"][i % 3], f"p{i}@example.com", day, region)
        for i, (day, region) in enumerate(
            (day, region) for day in DAYS for region in ("north", REGION, "south")
        )
    ]
    spark.createDataFrame(rows, PEOPLE_SCHEMA).write.partitionBy("day", "region").parquet(str(root))
    return root


def _dataset(df: DataFrame, root: Path, config: SubsetConfig | None = None) -> dict[str, Any]:
    return by_name(input_datasets(df, config))[str(root)]


def _returned_rows_satisfy(df: DataFrame, condition: dict[str, Any] | None) -> None:
    if condition is None:
        return
    schema = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    for row in df.collect():
        assert matches(condition, row.asDict(), schema), (condition, row)


def test_a_redacted_columns_literal_is_not_emitted(spark: SparkSession, people: Path) -> None:
    df = spark.read.parquet(str(people)).where((F.col("ssn") == SSN) & (F.col("email") > "p"))
    assert SSN in json.dumps(_dataset(df, people, SubsetConfig())), "emitted unless redacted"
    dataset = _dataset(df, people, SubsetConfig(redact_columns={"SSN"}))
    assert SSN not in json.dumps(dataset)
    assert render(condition_of(dataset)) == "email > 'p'"
    _returned_rows_satisfy(df, condition_of(dataset))


def test_partitions_stay_when_only_a_data_column_is_redacted(
    spark: SparkSession, people: Path
) -> None:
    df = spark.read.parquet(str(people)).where((F.col("ssn") == SSN) & (F.col("day") == DAYS[0]))
    for combine in (False, True):
        config = SubsetConfig(redact_columns={"ssn"}, combine_levels=combine)
        dataset = _dataset(df, people, config)
        assert SSN not in json.dumps(dataset)
        text = render(condition_of(dataset))
        assert "PARTITION (day = '2024-10-14', region = 'north')" in text, text
        assert "ssn" not in text, "the comparison went, the partitions stayed"
        _returned_rows_satisfy(df, condition_of(dataset))


def test_a_redacted_partition_column_falls_back_to_the_row_filter(
    spark: SparkSession, people: Path
) -> None:
    df = spark.read.parquet(str(people)).where(
        (F.col("region") == REGION) & (F.col("day") == DAYS[1])
    )
    assert REGION in json.dumps(_dataset(df, people)), "listed in the partitions unless redacted"
    dataset = _dataset(df, people, SubsetConfig(redact_columns={"region"}))
    assert REGION not in json.dumps(dataset)
    assert render(condition_of(dataset)) == f"day = '{DAYS[1]}'"
    _returned_rows_satisfy(df, condition_of(dataset))


def test_a_read_by_a_redacted_partitions_path_lists_no_location(
    spark: SparkSession, people: Path
) -> None:
    directory = people / f"day={DAYS[0]}" / f"region={REGION}"
    df = spark.read.option("basePath", str(people)).parquet(str(directory))
    assert REGION in json.dumps(_dataset(df, people)), "listed unless redacted"
    dataset = _dataset(df, people, SubsetConfig(redact_columns={"region"}))
    assert REGION not in json.dumps(dataset)
    assert condition_of(dataset) is None


def test_the_row_filter_level_can_be_turned_off(spark: SparkSession, people: Path) -> None:
    no_filters = SubsetConfig(row_filters=False)
    by_data = spark.read.parquet(str(people)).where(F.col("ssn") == SSN)
    assert condition_of(_dataset(by_data, people)) is not None
    assert condition_of(_dataset(by_data, people, no_filters)) is None
    by_partition = spark.read.parquet(str(people)).where(F.col("day") == DAYS[0])
    partitions = condition_of(_dataset(by_partition, people, no_filters))
    assert partitions is not None and partitions["type"] == "partition"
    combined = SubsetConfig(row_filters=False, combine_levels=True)
    assert condition_of(_dataset(by_partition, people, combined)) == partitions


def _redacted_values(condition: dict[str, Any], config: SubsetConfig) -> list[Any]:
    """The parts of a dumped condition that carry a redacted column's value."""
    kind = condition["type"]
    if kind == "binary":
        return _redacted_values(condition["left"], config) + _redacted_values(
            condition["right"], config
        )
    if kind == "compare":
        sides = (condition["left"], condition["right"])
        literal = any(side["type"] == "literal" for side in sides)
        redacted = any(config.redacts(side.get("field", "")) for side in sides)
        return [condition] if literal and redacted else []
    if kind == "partition":
        return [p for p in condition["partitions"] if any(map(config.redacts, p["dimensions"]))]
    return [
        loc
        for loc in condition["locations"]
        for directory in loc.split("/")
        if "=" in directory and config.redacts(unescape_path_name(directory.split("=")[0]))
    ]


@pytest.fixture(scope="module")
def typed(spark: SparkSession, lake: Lake) -> tuple[DataFrame, dict[str, str], dict[int, Any]]:
    df = spark.read.parquet(str(lake.typed))
    schema = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    return df, schema, {row["id"]: row_in_utc(row.asDict()) for row in df.collect()}


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    predicate=predicates(supported=False),
    columns=st.sets(st.sampled_from(COLUMNS), min_size=1) | st.just("all"),
    combine=st.booleans(),
)
def test_redacted_conditions_are_sound_and_carry_no_redacted_value(
    typed: Any, lake: Lake, predicate: Column, columns: Any, combine: bool
) -> None:
    df, schema, rows = typed
    query = df.where(predicate)
    config = SubsetConfig(redact_columns=columns, combine_levels=combine)
    datasets = [dump(d) for d in input_datasets(query, config)]
    found = [d for d in datasets if d["name"] == str(lake.typed)]
    condition = condition_of(found[0]) if found else None
    if condition is None:
        return
    assert _redacted_values(condition, config) == [], condition
    for row in query.select("id").collect():
        assert matches(condition, rows[row["id"]], schema), (condition, rows[row["id"]])


KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET = "wJalr/XUtnFEMI?K7MDENG"
SIGNATURE = "fe5f80f77d5fa3beca038a248ff027d0445342fe"


def test_a_failed_actions_event_carries_no_credential(
    spark: SparkSession, lake: Lake, capture: Capture
) -> None:
    location = f"s3a://{KEY}:{SECRET}@bucket/sales?X-Amz-Signature={SIGNATURE}"
    with pytest.raises(Exception, match="bucket/sales"):
        spark.read.parquet(str(lake.plain)).select(
            F.raise_error(F.lit(f"cannot read {location}"))
        ).collect()
    (events,) = capture.runs().values()
    assert [event["eventType"] for event in events] == ["START", "FAIL"]
    text = json.dumps(events)
    for secret in (KEY, SECRET, "wJalr", "K7MDENG", SIGNATURE):
        assert secret not in text, secret
    facet = events[-1]["run"]["facets"]["errorMessage"]
    scrubbed = "s3a://***@bucket/sales?X-Amz-Signature=***"
    assert scrubbed in facet["message"]
    assert scrubbed in facet["stackTrace"]
    assert validate(events[-1], strict=True) == []


def test_a_failed_applications_event_carries_no_credential(capture: Capture) -> None:
    try:
        raise OSError(f"upload to https://etl:{SECRET}@example.com/in?token={SIGNATURE} failed")
    except OSError as error:
        capture.handle.close(error=error)
    (fail,) = [e for e in capture.transport.events if e["eventType"] == "FAIL"]
    text = json.dumps(fail)
    for secret in (SECRET, "wJalr", "K7MDENG", SIGNATURE):
        assert secret not in text, secret
    facet = fail["run"]["facets"]["errorMessage"]
    assert "https://***@example.com/in?token=*** failed" in facet["message"]
    assert "https://***@example.com/in?token=*** failed" in facet["stackTrace"]
