"""Three-valued overlap of a condition with a partition: False only when no row of the partition
can match, True only when every row does (as far as its partition values decide)."""

from __future__ import annotations

from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from openlineage_subset import (
    all_of,
    any_of,
    dump,
    field,
    location,
    matches,
    partition_overlap,
    partitions,
)
from tests.helpers import INPUT_URL

SCHEMA = {"day": "date", "hour": "int", "amount": "bigint"}
DAYS = ["2024-10-14", "2024-10-15", "2024-10-16"]
HOURS = ["3", "9", "10", "24"]  # text order is not number order: '9' > '10'
COMPARE = ["__eq__", "__lt__", "__le__", "__gt__", "__ge__"]


def _comparisons(name: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``name <op> value`` for every comparison the builders have."""
    return st.builds(
        lambda op, value: getattr(field(name), op)(value), st.sampled_from(COMPARE), values
    )


leaves = st.one_of(
    _comparisons("day", st.sampled_from(DAYS)),
    _comparisons("hour", st.sampled_from(HOURS).map(int)),
    _comparisons("amount", st.integers(0, 4)),
    st.builds(
        lambda chosen: partitions([{"day": d, "hour": h} for d, h in chosen]),
        st.lists(st.tuples(st.sampled_from(DAYS), st.sampled_from(HOURS)), min_size=1, max_size=3),
    ),
)
conditions = st.recursive(
    leaves,
    lambda inner: (
        st.builds(lambda a, b: all_of([a, b]), inner, inner)
        | st.builds(lambda a, b: any_of([a, b]), inner, inner)
    ),
    max_leaves=6,
)


@given(conditions, st.sampled_from(DAYS), st.sampled_from([*HOURS, None]))
def test_overlap_never_contradicts_the_rows(condition: Any, day: str, hour: str | None) -> None:
    dimensions = {"day": day, "hour": hour}
    answer = partition_overlap(condition, dimensions, {"day": "date", "hour": "int"})
    event(f"answer: {answer}")
    rows = [{**dimensions, "amount": amount} for amount in (None, 0, 1, 2, 3, 4, 5)]
    results = {matches(condition, row, SCHEMA) for row in rows}
    if answer is False:
        assert results == {False}, "said no row can match, but one does"
    if answer is True:
        assert results == {True}, "said every row matches, but one does not"


@given(conditions, st.sampled_from(DAYS), st.sampled_from(HOURS))
def test_values_are_typed_without_a_schema(condition: Any, day: str, hour: str) -> None:
    # Guessed from the values: an ISO date compares as a date, digits as a number.
    typed = partition_overlap(condition, {"day": day, "hour": hour}, {"day": "date", "hour": "int"})
    assert partition_overlap(condition, {"day": day, "hour": hour}) == typed


def test_examples_a_person_would_check() -> None:
    day = {"business_date": "2024-10-15", "country": "DE"}
    assert partition_overlap(field("business_date").between("2024-10-01", "2024-10-31"), day)
    assert partition_overlap(field("country") == "PL", day) is False
    assert partition_overlap((field("country") == "DE") & (field("qty") > 0), day) is None
    assert partition_overlap((field("country") == "PL") | (field("qty") > 0), day) is None
    assert partition_overlap(field("hour") > 9, {"hour": "10"}) is True  # 10 > 9, not '10' < '9'
    assert partition_overlap(field("country") == "DE", {"country": None}) is False  # NULL
    coarse = partitions([{"business_date": "2024-10-15"}])
    assert partition_overlap(coarse, day) is True
    fine = partitions([{"business_date": "2024-10-15", "country": "DE", "shop": "1"}])
    assert partition_overlap(fine, day) is None  # one shop of it: which rows, unknown


def test_locations_need_the_partition_path() -> None:
    read = location(["s3://b/sales/business_date=2024-10-15"])
    day = {"business_date": "2024-10-15"}
    assert partition_overlap(read, day) is None
    assert partition_overlap(read, day, path="s3://b/sales/business_date=2024-10-15") is True
    assert partition_overlap(read, day, path="s3://b/sales/business_date=2024-10-16") is False
    one_file = location(["s3://b/sales/business_date=2024-10-15/part-0.parquet"])
    assert partition_overlap(one_file, day, path="s3://b/sales/business_date=2024-10-15") is True


def test_a_facet_is_evaluated_by_its_condition() -> None:
    facet = {
        "_producer": "https://example.com/p",
        "_schemaURL": INPUT_URL,
        "inputCondition": dump(field("day") == "2024-10-15"),
    }
    assert partition_overlap(facet, {"day": "2024-10-15"}) is True
