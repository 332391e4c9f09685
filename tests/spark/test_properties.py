"""Soundness and precision of emitted conditions, on real Spark queries over real files.

Random predicate trees over every column type (partition and data columns, nulls included)
run as Spark queries. Soundness: every row a query returns satisfies the condition the adapter
emits for its input. Precision: for predicates of supported operators only, the condition
(all levels combined) accepts exactly the rows the query returns.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from openlineage_subset import dump, matches
from openlineage_subset.spark import SubsetConfig, input_datasets
from tests.spark.conftest import Lake, typed_rows

pytestmark = pytest.mark.spark

EXAMPLES = 500 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 80
SPARK_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
COLUMNS = ["id", "big", "ratio", "price", "name", "day", "moment", "flag", "part_s", "part_i"]
ORDERED = [c for c in COLUMNS if c != "flag"]
COMPARISONS: dict[str, Callable[[Column, Any], Column]] = {
    "=": lambda c, v: c == v,
    "<": lambda c, v: c < v,
    "<=": lambda c, v: c <= v,
    ">": lambda c, v: c > v,
    ">=": lambda c, v: c >= v,
    "!=": lambda c, v: c != v,
}


def _values(column: str) -> list[Any]:
    index = COLUMNS.index(column)
    return sorted({row[index] for row in typed_rows() if row[index] is not None}, key=repr)


def _literal(column: str) -> st.SearchStrategy[Any]:
    """A value of the column: one from the data, or one between or beyond them."""
    known = st.sampled_from(_values(column))
    if column in ("id", "part_i"):
        return known | st.integers(-5, 70)
    if column == "ratio":
        return known | st.sampled_from([-7.6, 0.1, 2.5, 100.0])
    if column == "price":
        return known | st.sampled_from([Decimal("-7.005"), Decimal("0"), Decimal("3.1")])
    if column == "day":
        return known | st.sampled_from([dt.date(2023, 12, 31), dt.date(2024, 4, 1)])
    if column == "moment":
        return known | st.sampled_from([dt.datetime(2024, 3, 5, 12, 30, tzinfo=dt.timezone.utc)])
    if column == "name":
        return known | st.sampled_from(["", "s4", "t"])
    return known


@st.composite
def _atom(draw: st.DrawFn, supported: bool) -> Column:
    column = draw(st.sampled_from(COLUMNS))
    col = F.col(column)
    if column == "flag":
        choice = draw(st.sampled_from(["bare", "equal", "not"]))
        if choice == "bare":
            return col
        if choice == "not":
            return ~col
        return col == draw(st.booleans())
    shapes = ["compare", "compare", "in", "between", "fields"]
    # a <=> v is exact alone but not under NOT (NOT a <=> v keeps nulls): soundness only.
    shape = draw(st.sampled_from(shapes if supported else [*shapes, "null_safe"]))
    if shape == "compare":
        operator = draw(st.sampled_from(list(COMPARISONS)))
        return COMPARISONS[operator](col, draw(_literal(column)))
    if shape == "in":
        return col.isin(draw(st.lists(_literal(column), min_size=1, max_size=14)))
    if shape == "between":
        low, high = sorted([draw(_literal(column)), draw(_literal(column))])
        return col.between(low, high)
    if shape == "null_safe":
        return col.eqNullSafe(draw(_literal(column)))
    other = {"id": "part_i", "part_i": "id", "big": "id"}.get(column)
    if other is None:
        return col == draw(_literal(column))
    operator = draw(st.sampled_from(list(COMPARISONS)))
    return COMPARISONS[operator](col, F.col(other))


_UNSUPPORTED: list[Callable[[], Column]] = [
    lambda: F.col("ratio").isNull(),
    lambda: F.col("name").isNotNull(),
    lambda: F.col("name").like("s1%"),
    lambda: F.length(F.col("name")) > 3,
    lambda: F.abs(F.col("ratio")) > 2,
    lambda: F.col("id").cast("string") == "12",
    lambda: F.col("name").startswith("s2"),
    lambda: F.col("name").rlike("x$"),
    lambda: F.year(F.col("day")) == 2024,
    lambda: ~F.col("part_s").eqNullSafe("a"),
]


def _predicates(supported: bool) -> st.SearchStrategy[Column]:
    atoms = _atom(supported)
    if not supported:
        atoms = atoms | st.sampled_from(_UNSUPPORTED).map(lambda make: make())

    def combine(children: st.SearchStrategy[Column]) -> st.SearchStrategy[Column]:
        return st.one_of(
            st.tuples(children, children).map(lambda p: p[0] & p[1]),
            st.tuples(children, children).map(lambda p: p[0] | p[1]),
            children.map(lambda c: ~c),
        )

    return st.recursive(atoms, combine, max_leaves=5)


@pytest.fixture(scope="module")
def typed(
    spark: SparkSession, lake: Lake
) -> tuple[DataFrame, dict[str, str], dict[int, dict[str, Any]]]:
    df = spark.read.parquet(str(lake.typed))
    schema = {field.name: field.dataType.simpleString() for field in df.schema.fields}
    rows = {row["id"]: _row(row.asDict()) for row in df.collect()}
    assert len(rows) == len(typed_rows())
    return df, schema, rows


def _row(values: dict[str, Any]) -> dict[str, Any]:
    moment = values["moment"]
    if isinstance(moment, dt.datetime) and moment.tzinfo is None:
        values["moment"] = moment.astimezone(dt.timezone.utc)  # PySpark gives local naive times
    return values


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
@given(predicate=_predicates(supported=False))
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
@given(predicate=_predicates(supported=True))
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
