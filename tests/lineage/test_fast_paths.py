"""The query's fast paths decide overlap exactly as :func:`partition_overlap` does.

``quick_overlap`` (comparisons with ISO dates, decided on their text) and ``Listing`` (partition
lists, decided by lookup) answer most questions of a large history without evaluating the
condition; wherever they answer, the answer must be the evaluator's (an error there counts as
unknown, as the queries count it). The date ranges of ``_bounds`` leave reads out unread: a
partition outside one must be one the condition does not select."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from openlineage_subset import partition_overlap
from openlineage_subset.lineage.model import normal_time
from openlineage_subset.lineage.model._bounds import date_bounds, outside, read_bounds
from openlineage_subset.lineage.model._conditions import (
    UNDECIDED,
    Listing,
    dimensions_of,
    quick_overlap,
)
from tests.helpers import examples

DATES = ["2024-01-01", "2024-01-02", "2024-01-10", "2024-02-29", "2023-12-31"]
TEXTS = ["DE", "PL", "de", "", "a b"]
NUMBERS = ["1", "01", "10", "2.5", "-3"]
VALUES = st.sampled_from(DATES) | st.sampled_from(DATES + TEXTS + NUMBERS)  # dates half the time
COLUMNS = st.sampled_from(["day", "country", "amount"])
COMPARISONS = st.sampled_from(
    ["EQUAL", "GREATER_THAN", "GREATER_EQUAL_THAN", "LESS_THAN", "LESS_EQUAL_THAN"]
)


def _compare(column: str, comparison: str, value: str) -> dict[str, Any]:
    return {
        "type": "compare",
        "comparison": comparison,
        "left": {"type": "field", "field": column},
        "right": {"type": "literal", "value": value},
    }


comparisons = st.builds(_compare, COLUMNS, COMPARISONS, VALUES)
partitions = st.dictionaries(
    st.sampled_from(["day", "country"]), st.none() | VALUES, min_size=1, max_size=2
)
listings = st.lists(partitions, min_size=1, max_size=4).map(
    lambda listed: {"type": "partition", "partitions": [{"dimensions": d} for d in listed]}
)


def _binary(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda operator, left, right: {
            "type": "binary",
            "operator": operator,
            "left": left,
            "right": right,
        },
        st.sampled_from(["AND", "OR"]),
        children,
        children,
    )


others = st.sampled_from(
    [
        {"type": "location", "locations": ["s3://lake/x/day=2024-01-02"]},
        _compare("day", "LIKE", "2024-01-02"),
        {
            "type": "compare",
            "comparison": "EQUAL",
            "left": {"type": "literal", "value": "2024-01-02"},
            "right": {"type": "field", "field": "day"},
        },
    ]
)
conditions = st.recursive(comparisons | listings | others, _binary, max_leaves=4)


def _reference(condition: dict[str, Any], values: dict[str, str | None]) -> bool | None:
    try:
        return partition_overlap(condition, values)
    except (ValueError, TypeError):
        return None


@given(conditions, partitions)
@settings(max_examples=examples(4))
def test_the_quick_comparison_agrees_with_partition_overlap(
    condition: dict[str, Any], values: dict[str, str | None]
) -> None:
    quick = quick_overlap(condition, values)
    event("decided" if quick is not UNDECIDED else "left to partition_overlap")
    if quick is not UNDECIDED:
        assert quick == _reference(condition, values), (condition, values)


@given(listings, partitions)
@settings(max_examples=examples(1))
def test_the_listing_lookup_agrees_with_partition_overlap(
    condition: dict[str, Any], values: dict[str, str | None]
) -> None:
    listing = Listing.of(condition)
    assert listing is not None
    found = listing.overlap(dimensions_of(values))
    event("decided" if found is not UNDECIDED else "left to partition_overlap")
    if found is not UNDECIDED:
        assert found == _reference(condition, values), (condition, values)


# Comparisons of the day with dates most of the time: ranges of days, as rolling windows read.
day_ranges = st.recursive(
    st.builds(_compare, st.just("day"), COMPARISONS, st.sampled_from(DATES)) | comparisons,
    _binary,
    max_leaves=5,
)


# Partitions with a date for the day, most of the time: those a range can leave out.
dated_partitions = st.fixed_dictionaries(
    {"day": st.sampled_from(DATES)},
    optional={"country": st.sampled_from(TEXTS + DATES[:2])},
)


@given(conditions | day_ranges, dated_partitions | partitions)
@settings(max_examples=examples(6))
def test_a_partition_outside_a_date_range_is_not_selected(
    condition: dict[str, Any], values: dict[str, str | None]
) -> None:
    bounds = date_bounds(condition)
    left_out = any(outside(bound, values.get(column)) for column, bound in bounds.items())
    event("left out by a date range" if left_out else "kept")
    if left_out:
        assert _reference(condition, values) is False, (condition, values, bounds)


PLAIN = [*DATES, "DE", "PL", "de", "a b"]


@given(
    st.sampled_from(PLAIN),
    st.none() | st.sampled_from(PLAIN),
    st.none() | st.sampled_from(PLAIN),
)
@settings(max_examples=examples(2))
def test_a_coarser_partition_holds_those_with_its_values_as_text(
    value: str, day: str | None, country: str | None
) -> None:
    """``DatasetCatalog.coarser`` finds the partitions of (day, country) inside one of the
    day by the day's text: with text and ISO dates, exactly those ``partition_overlap`` says
    are inside."""
    coarser = {"type": "partition", "partitions": [{"dimensions": {"day": value}}]}
    inside = _reference(coarser, {"day": day, "country": country}) is True
    assert inside == (day == value), (value, day, country)


@given(listings, partitions, st.sampled_from(PLAIN), st.none() | st.sampled_from(PLAIN))
@settings(max_examples=examples(2))
def test_a_coarser_partition_the_lists_miss_holds_no_listed_row(
    condition: dict[str, Any], listed: dict[str, str | None], value: str, other: str | None
) -> None:
    """``Listing.misses``: where it says no listed partition holds rows of a partition of
    fewer columns, none of the partitions inside it (any value of the other column) is
    selected. ``partition_overlap`` never says one is; with both columns compared as text it
    says none is (typed by their values, it may call one unknown when the other column's
    listed value is not of its type: 'DE' is not a date, yet the day decides)."""
    del listed
    listing = Listing.of(condition)
    assert listing is not None
    for column, rest in (("day", "country"), ("country", "day")):
        if not listing.misses(dimensions_of({column: value})):
            event("not missed")
            continue
        event("missed")
        inside = {column: value, rest: other}
        assert _reference(condition, inside) is not True, (condition, inside)
        as_text = partition_overlap(condition, inside, {"day": "string", "country": "string"})
        assert as_text is False, (condition, inside)


# Partitions of a dataset whose columns each compare as their text (the queries' plain_shape):
# every partition has both columns, the day a date or null, the country text or null.
plain_partitions = st.fixed_dictionaries(
    {"day": st.none() | st.sampled_from(DATES), "country": st.none() | st.sampled_from(TEXTS)}
)
plain_listings = st.lists(plain_partitions, max_size=4).map(
    lambda listed: {"type": "partition", "partitions": [{"dimensions": d} for d in listed]}
)
plain_comparisons = (
    st.builds(_compare, st.just("day"), COMPARISONS, st.sampled_from(DATES))
    | st.builds(_compare, st.just("country"), COMPARISONS, st.sampled_from(TEXTS))
    | st.builds(_compare, st.just("amount"), COMPARISONS, st.sampled_from(NUMBERS))
)
read_conditions = st.recursive(plain_listings | plain_comparisons, _binary, max_leaves=4)


@given(read_conditions, plain_partitions)
@settings(max_examples=examples(4))
def test_a_plain_partition_outside_a_read_s_listed_dates_is_not_selected(
    condition: dict[str, Any], values: dict[str, str | None]
) -> None:
    """``read_bounds`` (partition lists counted, as ingest stores them for a read that is not
    only lists): a partition of a dataset of plain columns whose date is outside a range is
    one the read does not select."""
    bounds = read_bounds(condition)
    left_out = any(outside(bound, values.get(column)) for column, bound in bounds.items())
    event("left out by a date range" if left_out else "kept")
    if left_out:
        assert _reference(condition, values) is False, (condition, values, bounds)
    if '"partition"' not in json.dumps(condition):
        assert bounds == date_bounds(condition), "without a list: the ranges of date_bounds"


@given(
    st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)),
    st.sampled_from(["Z", "z", "", "+02:00", "-0130", "+00:00"]),
    st.integers(0, 999_999_999),
    st.sampled_from(["T", " ", "t"]),
)
def test_a_time_is_stored_as_its_utc_instant(
    moment: dt.datetime, zone: str, nanoseconds: int, separator: str
) -> None:
    """``normal_time`` writes the fields of a UTC time as they are (no conversion): the instant
    it stores is the one Python's datetime reads, whichever path gave it."""
    text = f"{moment.year:04d}-{moment:%m-%d}{separator}{moment:%H:%M:%S}.{nanoseconds:09d}{zone}"
    offset = dt.timezone.utc
    if zone[:1] in "+-" and zone:
        sign = 1 if zone[0] == "+" else -1
        hours, minutes = int(zone[1:3]), int(zone[-2:])
        offset = dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))
    instant = moment.replace(tzinfo=offset).astimezone(dt.timezone.utc)
    expected = f"{instant.year:04d}-{instant:%m-%dT%H:%M:%S}.{nanoseconds:09d}Z"
    assert normal_time(text) == expected
