"""The query's fast paths decide overlap exactly as :func:`partition_overlap` does.

``_quick_overlap`` (comparisons with ISO dates, decided on their text) and ``_Listing`` (partition
lists, decided by lookup) answer most questions of a large history without evaluating the
condition; wherever they answer, the answer must be the evaluator's (an error there counts as
unknown, as the queries count it)."""

from __future__ import annotations

from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from openlineage_subset import partition_overlap
from openlineage_subset.lineage._query import _UNDECIDED, _key, _Listing, _quick_overlap

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


conditions = st.recursive(comparisons | listings, _binary, max_leaves=4)


def _reference(condition: dict[str, Any], values: dict[str, str | None]) -> bool | None:
    try:
        return partition_overlap(condition, values)
    except (ValueError, TypeError):
        return None


@given(conditions, partitions)
@settings(max_examples=1500)
def test_the_quick_comparison_agrees_with_partition_overlap(
    condition: dict[str, Any], values: dict[str, str | None]
) -> None:
    quick = _quick_overlap(condition, values)
    event("decided" if quick is not _UNDECIDED else "left to partition_overlap")
    if quick is not _UNDECIDED:
        assert quick == _reference(condition, values), (condition, values)


@given(listings, partitions)
@settings(max_examples=400)
def test_the_listing_lookup_agrees_with_partition_overlap(
    condition: dict[str, Any], values: dict[str, str | None]
) -> None:
    listing = _Listing.of(condition)
    assert listing is not None
    found = listing.overlap(_key(values))
    event("decided" if found is not _UNDECIDED else "left to partition_overlap")
    if found is not _UNDECIDED:
        assert found == _reference(condition, values), (condition, values)
