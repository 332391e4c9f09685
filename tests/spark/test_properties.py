"""Soundness and precision of emitted conditions, on real Spark queries over real files.

Random predicate trees over every column type (partition and data columns, nulls included)
run as Spark queries. Soundness: every row a query returns satisfies the condition the adapter
emits for its input. Precision: for predicates of supported operators only, the condition
(all levels combined) accepts exactly the rows the query returns.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from pyspark.sql import Column, DataFrame, SparkSession

from openlineage_subset import dump, matches
from openlineage_subset.spark import SubsetConfig, input_datasets
from tests.spark.conftest import Lake, typed_rows
from tests.spark.predicates import predicates, row_in_utc

pytestmark = pytest.mark.spark

EXAMPLES = 500 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 80
SPARK_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def typed(
    spark: SparkSession, lake: Lake
) -> tuple[DataFrame, dict[str, str], dict[int, dict[str, Any]]]:
    df = spark.read.parquet(str(lake.typed))
    schema = {field.name: field.dataType.simpleString() for field in df.schema.fields}
    rows = {row["id"]: row_in_utc(row.asDict()) for row in df.collect()}
    assert len(rows) == len(typed_rows())
    return df, schema, rows


def _condition(df: DataFrame, root: str, config: SubsetConfig | None = None) -> Any:
    datasets = [dump(d) for d in input_datasets(df, config)]
    found = [d for d in datasets if d["name"] == root]
    if not found:
        return "not read"
    facet = (found[0].get("inputFacets") or {}).get("subset")
    return None if facet is None else facet["inputCondition"]


def _count(condition: Any) -> None:
    """Say how often a condition is there to check (``--hypothesis-show-statistics``)."""
    kind = "no condition" if condition is None else "not read" if condition == "not read" else ""
    event(kind or "a condition")


@SPARK_SETTINGS
@given(predicate=predicates(supported=False))
def test_every_returned_row_satisfies_the_emitted_condition(
    typed: Any, lake: Lake, predicate: Column
) -> None:
    df, schema, rows = typed
    query = df.where(predicate)
    returned = [row["id"] for row in query.select("id").collect()]
    condition = _condition(query, str(lake.typed))
    _count(condition)
    if condition in (None, "not read"):
        return
    for ident in returned:
        assert matches(condition, rows[ident], schema), (condition, rows[ident])


@SPARK_SETTINGS
@given(predicate=predicates(supported=True))
def test_supported_predicates_are_translated_exactly(
    typed: Any, lake: Lake, predicate: Column
) -> None:
    df, schema, rows = typed
    query = df.where(predicate)
    returned = {row["id"] for row in query.select("id").collect()}
    condition = _condition(query, str(lake.typed), SubsetConfig(combine_levels=True))
    _count(condition)
    if condition == "not read":
        assert returned == set()
        return
    accepted = {
        ident for ident, row in rows.items() if condition is None or matches(condition, row, schema)
    }
    assert returned <= accepted, condition
    # IS NOT NULL has no form in the spec, so Spark's top-level isnotnull filters are dropped:
    # exact on rows without nulls, a superset on rows with them.
    complete = {ident for ident, row in rows.items() if None not in row.values()}
    assert accepted & complete == returned & complete, condition
