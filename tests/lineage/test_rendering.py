"""``ConditionText`` writes partition lists directly: the text must be what ``render`` gives for
the condition with its partitions' columns put in the dataset's order (``in_column_order``),
whatever the columns, values, order and nesting; any other condition goes through both."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from openlineage_subset import MAX_DEPTH
from openlineage_subset.lineage.model._answers import indented_json
from openlineage_subset.lineage.model._condition_text import ConditionText, rendered
from openlineage_subset.lineage.model._conditions import in_column_order
from tests.helpers import examples

COLUMNS = st.sampled_from(["day", "country", "zone", "odd name", "a`b", "ünï"])
VALUES = st.none() | st.sampled_from(["2024-10-15", "PL", "it's", "", "a\nb", "1", "-2.5"])
ODD_VALUES = st.integers() | st.lists(st.integers(), max_size=2) | st.booleans()
dimensions = st.dictionaries(COLUMNS, st.one_of(VALUES, VALUES, VALUES, ODD_VALUES), max_size=3)
listed = st.fixed_dictionaries(
    {"dimensions": dimensions}, optional={"identifier": st.text(max_size=3)}
)
items = st.one_of(listed, listed, listed, st.sampled_from([{}, "x"]))  # an odd item now and then
listings = st.lists(items, max_size=4).map(lambda found: {"type": "partition", "partitions": found})
others = st.sampled_from(
    [
        {
            "type": "compare",
            "comparison": "EQUAL",
            "left": {"type": "field", "field": "day"},
            "right": {"type": "literal", "value": "2024-10-15"},
        },
        {"type": "location", "locations": ["s3://lake/x/day=1"]},
        {"type": "partition", "partitions": "none"},
        {"type": "what"},
        {"type": "partition", "partitions": [], "inputCondition": {"type": "what"}},
    ]
)


def _binary(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda operator, left, right: {
            "type": "binary",
            "operator": operator,
            "left": left,
            "right": right,
        },
        st.sampled_from(["OR", "OR", "AND"]),
        children,
        children,
    )


conditions = st.recursive(st.one_of(listings, listings, others), _binary, max_leaves=5)
ORDERS = st.lists(COLUMNS, unique=True, max_size=4).map(tuple)


def _expected(condition: Any, order: tuple[str, ...]) -> str:
    rank = {column: number for number, column in enumerate(order)}
    return rendered(in_column_order(condition, rank)) or ""


@given(conditions, ORDERS, ORDERS)
@settings(max_examples=examples(4))
def test_the_text_is_render_s_in_column_order(
    condition: dict[str, Any], order: tuple[str, ...], other: tuple[str, ...]
) -> None:
    texts = ConditionText()
    fast = texts._listed(condition, order)
    event("written directly" if fast is not None else "rendered")
    assert texts.text("key", condition, order) == _expected(condition, order)
    # One object for a query: the pairs and orders it keeps serve another order alike.
    assert texts.text("key", condition, other) == _expected(condition, other)


plain_listings = st.lists(
    st.fixed_dictionaries({"dimensions": st.dictionaries(COLUMNS, VALUES, max_size=3)}), max_size=4
).map(lambda found: {"type": "partition", "partitions": found})
or_chains = st.recursive(
    plain_listings,
    lambda children: st.builds(
        lambda left, right: {"type": "binary", "operator": "OR", "left": left, "right": right},
        children,
        children,
    ),
    max_leaves=4,
)


@given(or_chains, ORDERS)
@settings(max_examples=examples(1))
def test_partition_lists_joined_by_or_are_written_directly(
    condition: dict[str, Any], order: tuple[str, ...]
) -> None:
    texts = ConditionText()
    assert texts._listed(condition, order) is not None
    assert texts.text("key", condition, order) == _expected(condition, order)


def test_a_partition_list_of_a_day_is_written_directly() -> None:
    listed = {
        "type": "partition",
        "partitions": [
            {"dimensions": {"country": c, "day": "2024-10-15"}, "identifier": f"x/{c}"}
            for c in ("DE", "PL", "it's")
        ],
    }
    texts = ConditionText()
    assert texts._listed(listed, ("day", "country")) is not None
    assert texts.text("k", listed, ("day", "country")) == (
        "PARTITION (day = '2024-10-15', country = 'DE') OR "
        "PARTITION (day = '2024-10-15', country = 'PL') OR "
        "PARTITION (day = '2024-10-15', country = 'it''s')"
    )


def test_a_chain_too_deep_for_render_is_rendered_as_render_does() -> None:
    leaf = {"type": "partition", "partitions": [{"dimensions": {"day": "1"}}]}
    chain: dict[str, Any] = leaf
    for _ in range(MAX_DEPTH):
        chain = {"type": "binary", "operator": "OR", "left": leaf, "right": chain}
    texts = ConditionText()
    assert texts._listed(chain, ("day",)) is None
    assert texts.text("k", chain, ("day",)) == _expected(chain, ("day",))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text() | st.floats(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values, st.booleans())
@settings(max_examples=examples(2))
def test_an_answer_s_indented_json_is_json_dumps_s(value: Any, ascii_only: bool) -> None:
    """``indented_json``, which the CLI prints and the UI shows, writes what
    ``json.dumps(..., indent=2)`` writes (floats and other types are left to it)."""
    expected = json.dumps(value, indent=2, ensure_ascii=ascii_only)
    assert indented_json(value, ensure_ascii=ascii_only) == expected


def test_odd_values_are_left_to_json_dumps() -> None:
    class Text(str):
        pass

    for value in ({1: "a"}, [float("nan")], {"a": Text("x")}, (1, 2), [True, {}, []]):
        assert indented_json(value) == json.dumps(value, indent=2)
