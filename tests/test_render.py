"""render(): conditions as readable SQL-like text."""

from __future__ import annotations

import pytest

from openlineage_subset import field, input_facet, location, parse_facet, partitions, render
from tests.helpers import INPUT_URL, PRODUCER


def test_issue_example() -> None:
    condition = (field("business_date") == "2024-10-15") & (
        (field("country") == "PL") | (field("country") == "DE")
    )
    assert (
        render(condition) == "business_date = '2024-10-15' AND (country = 'PL' OR country = 'DE')"
    )


def test_chains_of_one_operator_are_flat_and_mixed_ones_parenthesised() -> None:
    chain = ((field("a") == 1) | (field("b") == 2)) | ((field("c") == 3) | (field("d") == 4))
    assert render(chain) == "a = 1 OR b = 2 OR c = 3 OR d = 4"
    condition = ((field("a") == 1) & (field("b") == 2)) | (field("c") >= 3)
    assert render(condition) == "(a = 1 AND b = 2) OR c >= 3"


def test_nested_and_in_or_in_and() -> None:
    condition = (field("a") < 1) & (((field("b") > 2) & (field("c") <= 3)) | (field("d") == "x"))
    assert render(condition) == "a < 1 AND ((b > 2 AND c <= 3) OR d = 'x')"


def test_quoting_of_literals_and_names() -> None:
    assert render(field("first name") == "O'Brien") == "`first name` = 'O''Brien'"
    assert render(field("address.city") == "Kraków") == "address.city = 'Kraków'"
    assert render(field("n") == "007") == "n = '007'", "leading zeros are not a plain number"
    assert render(field("n") == -1.5) == "n = -1.5"


def test_a_trailing_newline_is_not_a_plain_name_or_number() -> None:
    # "1\n" is a string, not the number 1; "a\n" is not the column a.
    assert render(field("a\n") == "1\n") == "`a\n` = '1\n'"


def test_a_key_with_a_trailing_newline_is_not_a_plain_name_in_a_json_path() -> None:
    from openlineage_subset._issues import json_path

    assert json_path(("inputs", 0, "a\n")) == "$.inputs[0]['a\n']"


def test_unknown_operators_are_parenthesised() -> None:
    node = {
        "type": "binary",
        "operator": "XOR",
        "left": {"type": "location", "locations": ["a"]},
        "right": {
            "type": "binary",
            "operator": "AND",
            "left": {"type": "location", "locations": ["b"]},
            "right": {"type": "location", "locations": ["c"]},
        },
    }
    assert render(node) == "LOCATION IN ('a') XOR (LOCATION IN ('b') AND LOCATION IN ('c'))"


def test_locations_and_partitions() -> None:
    assert render(location(["s3://b/x", "s3://b/y"])) == "LOCATION IN ('s3://b/x', 's3://b/y')"
    many = partitions([{"d": "2024-10-15", "c": "PL"}, {"d": "2024-10-15", "c": None}])
    assert render(many) == (
        "PARTITION (d = '2024-10-15', c = 'PL') OR PARTITION (d = '2024-10-15', c IS NULL)"
    )
    assert render((field("x") == 1) & many) == (
        "x = 1 AND (PARTITION (d = '2024-10-15', c = 'PL') OR "
        "PARTITION (d = '2024-10-15', c IS NULL))"
    )
    assert render(partitions([])) == "NO PARTITION"


def test_facets_and_json_render_their_condition() -> None:
    facet = input_facet(field("a") == 1, producer=PRODUCER)
    assert render(facet) == "a = 1"
    assert (
        render({"inputCondition": {"type": "location", "locations": ["a"]}}) == "LOCATION IN ('a')"
    )
    parsed = parse_facet(
        {
            "inputCondition": {
                "type": "compare",
                "comparison": "LIKE",
                "left": {"type": "field", "field": "a"},
                "right": {"type": "literal", "value": "x%"},
            },
            "_producer": PRODUCER,
            "_schemaURL": INPUT_URL,
        }
    )
    assert render(parsed) == "a LIKE 'x%'"


def test_unknown_condition_types_render_generically() -> None:
    assert render({"type": "description", "description": "rows of 2024"}) == (
        'description(description="rows of 2024")'
    )


def test_render_refuses_non_conditions() -> None:
    with pytest.raises(TypeError):
        render(42)
