"""Builders: conditions that read like SQL, literals written per the rendering rules."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest

import openlineage_subset as ols
from openlineage_subset import (
    all_of,
    any_of,
    dump,
    field,
    input_facet,
    literal,
    location,
    output_facet,
    partition,
    partitions,
    validate,
)
from openlineage_subset._builders import format_literal
from tests.helpers import INPUT_URL, OUTPUT_URL, PRODUCER


def _compare(name: str, comparison: str, value: str) -> dict[str, Any]:
    return {
        "type": "compare",
        "left": {"type": "field", "field": name},
        "right": {"type": "literal", "value": value},
        "comparison": comparison,
    }


@pytest.mark.parametrize(
    ("built", "comparison"),
    [
        (field("a") == "x", "EQUAL"),
        (field("a") < "x", "LESS_THAN"),
        (field("a") <= "x", "LESS_EQUAL_THAN"),
        (field("a") > "x", "GREATER_THAN"),
        (field("a") >= "x", "GREATER_EQUAL_THAN"),
    ],
)
def test_comparisons(built: Any, comparison: str) -> None:
    assert dump(built) == _compare("a", comparison, "x")


def test_literal_on_the_left_is_mirrored() -> None:
    assert dump(3 < field("b")) == _compare("b", "GREATER_THAN", "3")  # noqa: SIM300


def test_field_to_field_comparison() -> None:
    assert dump(field("a") >= field("b"))["right"] == {"type": "field", "field": "b"}


def test_not_equal_is_rewritten_soundly() -> None:
    assert dump(field("a") != 1) == {
        "type": "binary",
        "operator": "OR",
        "left": _compare("a", "LESS_THAN", "1"),
        "right": _compare("a", "GREATER_THAN", "1"),
    }


def test_and_or_build_binary_conditions() -> None:
    built = (field("a") == 1) & ((field("b") == 2) | location(["s3://x"]))
    data = dump(built)
    assert data["operator"] == "AND" and data["right"]["operator"] == "OR"
    assert data["right"]["right"] == {"type": "location", "locations": ["s3://x"]}


def _depth(node: dict[str, Any]) -> int:
    if node["type"] != "binary":
        return 0
    return 1 + max(_depth(node["left"]), _depth(node["right"]))


def _leaves(node: dict[str, Any]) -> list[str]:
    if node["type"] != "binary":
        return [node["right"]["value"]]
    return _leaves(node["left"]) + _leaves(node["right"])


def test_isin_is_a_balanced_or_tree() -> None:
    values = [f"v{i}" for i in range(100)]
    data = dump(field("c").isin([*values, "v0"]))
    assert _leaves(data) == values, "every value once, in order"
    assert _depth(data) == 7, "ceil(log2(100)), not 99"


def test_isin_refuses_nothing_and_single_strings() -> None:
    with pytest.raises(ValueError, match="at least one value"):
        field("c").isin([])
    with pytest.raises(TypeError, match="not a single string"):
        field("c").isin("PL")
    assert dump(field("c").isin([5])) == _compare("c", "EQUAL", "5")


def test_between_is_inclusive() -> None:
    data = dump(field("d").between(dt.date(2024, 1, 1), dt.date(2024, 1, 31)))
    assert data["left"] == _compare("d", "GREATER_EQUAL_THAN", "2024-01-01")
    assert data["right"] == _compare("d", "LESS_EQUAL_THAN", "2024-01-31")


def test_all_of_and_any_of() -> None:
    parts = [field(str(i)) == i for i in range(5)]
    assert dump(all_of(parts))["operator"] == "AND"
    assert _depth(dump(any_of(parts))) == 3
    assert all_of(parts[:1]) is parts[0]
    with pytest.raises(ValueError):
        any_of([])


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (-12, "-12"),
        (2**70, "1180591620717411303424"),
        (Decimal("12.50"), "12.50"),
        (Decimal("1E+3"), "1000"),
        (0.1, "0.1"),
        (1e-7, "0.0000001"),
        (1e20, "100000000000000000000"),
        (-0.0, "0"),
        (True, "true"),
        (False, "false"),
        (dt.date(2024, 2, 29), "2024-02-29"),
        (
            dt.datetime(2024, 10, 15, 0, 30, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            "2024-10-14T22:30:00Z",
        ),
        (
            dt.datetime(2024, 10, 15, 1, 2, 3, 4500, tzinfo=dt.timezone.utc),
            "2024-10-15T01:02:03.004500Z",
        ),
        ("it's verbatim", "it's verbatim"),
    ],
)
def test_literal_rendering_rules(value: object, text: str) -> None:
    assert format_literal(value) == text
    assert dump(literal(value)) == {"type": "literal", "value": text}


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (float("nan"), ValueError),
        (Decimal("Infinity"), ValueError),
        (dt.datetime(2024, 1, 1), ValueError),
        (b"bytes", TypeError),
        (None, TypeError),
    ],
)
def test_literals_without_a_faithful_form_are_refused(value: object, error: type) -> None:
    with pytest.raises(error):
        format_literal(value)


def test_python_and_or_chained_comparisons_are_refused() -> None:
    with pytest.raises(TypeError, match="no truth value"):
        (field("a") == 1) or (field("b") == 2)
    with pytest.raises(TypeError, match="no truth value"):
        1 < field("a") < 3  # noqa: B015
    with pytest.raises(TypeError, match="combines two subset conditions"):
        (field("a") == 1) & True  # type: ignore[operator]


def test_partitions_and_null_partition() -> None:
    built = partitions(
        [
            {"business_date": dt.date(2024, 10, 15), "country": None},
            partition({"business_date": "2024-10-16"}, identifier="business_date=2024-10-16"),
        ]
    )
    assert dump(built) == {
        "type": "partition",
        "partitions": [
            {"dimensions": {"business_date": "2024-10-15", "country": None}},
            {
                "dimensions": {"business_date": "2024-10-16"},
                "identifier": "business_date=2024-10-16",
            },
        ],
    }
    with pytest.raises(ValueError):
        partition({})


def test_location_refuses_a_bare_string() -> None:
    with pytest.raises(TypeError, match="not a single string"):
        location("s3://bucket/key")
    with pytest.raises(ValueError):
        location([""])


def test_facets_carry_their_schema_url_and_validate_strictly() -> None:
    inbound = input_facet(field("a") == 1, producer=PRODUCER)
    outbound = output_facet(partitions([{"d": "1"}]), producer=PRODUCER, rows=10)
    assert dump(inbound)["_schemaURL"] == INPUT_URL
    assert dump(outbound)["_schemaURL"] == OUTPUT_URL
    assert dump(outbound)["rows"] == 10
    assert isinstance(inbound, ols.InputSubsetInputDatasetFacet)
    for facet in (inbound, outbound):
        assert validate({"subset": dump(facet)}, strict=True) == []


def test_facet_builders_check_their_arguments() -> None:
    with pytest.raises(TypeError, match="subset condition"):
        input_facet({"type": "location"}, producer=PRODUCER)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="producer"):
        output_facet(location(["a"]), producer="")
    with pytest.raises(ValueError, match="non-empty string"):
        field("")
