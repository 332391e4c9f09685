"""Random predicate trees over the typed test table's columns (hypothesis strategies) and its
rows as PySpark gives them back, for the tests of emitted conditions and of redaction.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st
from pyspark.sql import Column
from pyspark.sql import functions as F

from tests.spark.conftest import typed_rows

COLUMNS = ["id", "big", "ratio", "price", "name", "day", "moment", "flag", "part_s", "part_i"]
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


def _flag_atom(draw: st.DrawFn, col: Column) -> Column:
    """The boolean column bare, negated, or compared with a boolean."""
    choice = draw(st.sampled_from(["bare", "equal", "not"]))
    if choice == "bare":
        return col
    if choice == "not":
        return ~col
    return col == draw(st.booleans())


@st.composite
def _atom(draw: st.DrawFn, supported: bool) -> Column:
    column = draw(st.sampled_from(COLUMNS))
    col = F.col(column)
    if column == "flag":
        return _flag_atom(draw, col)
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


def predicates(supported: bool) -> st.SearchStrategy[Column]:
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


def row_in_utc(values: dict[str, Any]) -> dict[str, Any]:
    moment = values["moment"]
    if isinstance(moment, dt.datetime) and moment.tzinfo is None:
        values["moment"] = moment.astimezone(dt.timezone.utc)  # PySpark gives local naive times
    return values
