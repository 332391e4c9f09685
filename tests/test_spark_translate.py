"""Filter translation rules on hand-built Spark expression trees (no JVM needed)."""

from __future__ import annotations

from typing import Any

import pytest

from openlineage_subset import render
from openlineage_subset.spark._translate import condition_from_filters, internal_value_text
from openlineage_subset.spark._trees import Node, decode


def attr(name: str, kind: str = "integer") -> Node:
    return Node("AttributeReference", {"name": name, "dataType": kind})


def lit(value: Any, kind: str = "integer", **extra: Any) -> Node:
    node = Node("Literal", {"value": value, "dataType": kind})
    node.extra.update(extra)
    return node


def op(kind: str, left: Node, right: Node) -> Node:
    return Node(kind, {"left": 0, "right": 1}, (left, right))


def unary(kind: str, child: Node, **fields: Any) -> Node:
    return Node(kind, {"child": 0, **fields}, (child,))


def inn(subject: Node, *items: Node) -> Node:
    return Node("In", {"value": 0, "list": list(range(1, len(items) + 1))}, (subject, *items))


def text(*filters: Node) -> str | None:
    condition = condition_from_filters(filters)
    return None if condition is None else render(condition)


A, B = attr("a"), attr("b")


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (op("EqualTo", A, lit("1")), "a = 1"),
        (op("LessThan", A, lit("1")), "a < 1"),
        (op("LessThanOrEqual", A, lit("1")), "a <= 1"),
        (op("GreaterThan", A, lit("1")), "a > 1"),
        (op("GreaterThanOrEqual", A, lit("1")), "a >= 1"),
        (op("LessThan", lit("1"), A), "a > 1"),
        (op("GreaterThanOrEqual", lit("1"), A), "a <= 1"),
        (op("EqualTo", A, B), "a = b"),
        (op("EqualNullSafe", A, lit("7")), "a = 7"),
        (unary("Not", op("EqualTo", A, lit("1"))), "a < 1 OR a > 1"),
        (unary("Not", op("LessThan", A, lit("1"))), "a >= 1"),
        (unary("Not", unary("Not", op("EqualTo", A, lit("1")))), "a = 1"),
        (
            unary("Not", op("Or", op("EqualTo", A, lit("1")), op("EqualTo", B, lit("2")))),
            "(a < 1 OR a > 1) AND (b < 2 OR b > 2)",
        ),
        (inn(A, lit("1"), lit("2"), lit("3")), "a = 1 OR a = 2 OR a = 3"),
        (inn(A, lit("1"), lit(None)), "a = 1"),
        (unary("Not", inn(A, lit("1"), lit("2"))), "(a < 1 OR a > 1) AND (a < 2 OR a > 2)"),
        (attr("flag", "boolean"), "flag = 'true'"),
        (unary("Not", attr("flag", "boolean")), "flag = 'false'"),
    ],
)
def test_supported_shapes(node: Node, expected: str) -> None:
    assert text(node) == expected


@pytest.mark.parametrize(
    "node",
    [
        unary("IsNull", A),
        op("EqualNullSafe", A, lit(None)),
        op("EqualNullSafe", A, B),
        unary("Not", op("EqualNullSafe", A, lit("1"))),
        unary("Not", inn(A, lit("1"), lit(None))),
        op("EqualTo", unary("Upper", attr("s", "string")), lit("X", "string")),
        op("StartsWith", attr("s", "string"), lit("x", "string")),
        op("EqualTo", A, lit(None)),
        lit("true", "boolean"),
        op("EqualTo", unary("Cast", A, dataType="string"), lit("3", "string")),
        op("EqualTo", A, lit("NaN", "double")),
        op("EqualTo", attr("b", "binary"), lit("AQI=", "binary")),
        unary("DynamicPruningExpression", A),
    ],
)
def test_inexpressible_filters_are_dropped(node: Node) -> None:
    assert text(node) is None


def test_and_keeps_what_it_can_or_drops_whole() -> None:
    like = op("Like", attr("s", "string"), lit("x%", "string"))
    keep = op("EqualTo", A, lit("1"))
    assert text(op("And", keep, like)) == "a = 1"
    assert text(op("Or", keep, like)) is None
    assert text(unary("Not", op("And", keep, like))) is None, "NOT(x AND ?) is (NOT x) OR ?"


@pytest.mark.parametrize(
    ("source", "target", "kept"),
    [
        ("integer", "long", True),
        ("integer", "double", True),
        ("long", "double", False),
        ("short", "float", True),
        ("integer", "float", False),
        ("integer", "decimal(10,0)", True),
        ("long", "decimal(10,0)", False),
        ("decimal(10,2)", "decimal(12,2)", True),
        ("decimal(10,2)", "decimal(10,1)", False),
        ("float", "double", True),
        ("date", "timestamp", False),
        ("integer", "string", False),
    ],
)
def test_casts_are_seen_through_only_when_lossless(source: str, target: str, kept: bool) -> None:
    cast = unary("Cast", attr("x", source), dataType=target)
    literal_type = target if not target.startswith("decimal") else "decimal(20,2)"
    value = "1.00" if literal_type.startswith("decimal") else "1"
    node = op("GreaterThan", cast, lit(value, literal_type))
    assert (text(node) is not None) is kept


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        ("1.0E-7", "double", "0.0000001"),
        ("1.5E10", "double", "15000000000.0"),
        ("-0.0", "double", "0"),
        ("12.50", "decimal(10,2)", "12.50"),
        ("2024-10-15", "date", "2024-10-15"),
        ("it's", "string", "it's"),
        ("true", "boolean", "true"),
    ],
)
def test_literals_are_written_per_the_spec(value: str, kind: str, expected: str) -> None:
    node = op("EqualTo", attr("x", kind), lit(value, kind))
    condition = condition_from_filters([node])
    assert condition is not None and condition.right.value == expected


def test_timestamps_need_their_exact_value() -> None:
    field = attr("t", "timestamp")
    shown_in_session_zone = lit("2024-01-01 04:00:00", "timestamp")
    assert text(op("LessThan", field, shown_in_session_zone)) is None
    exact = lit("2024-01-01 04:00:00", "timestamp", micros=1_704_078_000_000_123)
    assert text(op("LessThan", field, exact)) == "t < '2024-01-01T03:00:00.000123Z'"


def test_inset_values_come_from_the_jvm() -> None:
    inset = unary("InSet", attr("d", "date"))
    assert text(inset) is None, "without the values read through py4j the IN is dropped"
    inset.extra["values"] = ["19737", "19738"]
    assert text(inset) == "d = '2024-01-15' OR d = '2024-01-16'"
    assert internal_value_text("1704078000000000", "timestamp_ntz") == "2024-01-01T03:00:00Z"
    assert internal_value_text("abc", "date") is None


def test_nested_fields_are_dotted_paths() -> None:
    struct = {"type": "struct", "fields": [{"name": "city", "type": "string"}]}
    address = Node("AttributeReference", {"name": "address", "dataType": struct})
    city = Node("GetStructField", {"child": 0, "ordinal": 0, "name": "city"}, (address,))
    assert text(op("EqualTo", city, lit("Kraków", "string"))) == "address.city = 'Kraków'"


def test_not_null_is_dropped_on_top_and_written_inside_an_or() -> None:
    not_null = unary("IsNotNull", A)
    assert text(not_null, op("GreaterThan", A, lit("1"))) == "a > 1"
    assert text(not_null) is None, "Spark infers these beside every comparison and join key"

    def either(node: Node) -> str | None:
        return text(op("Or", op("EqualTo", B, lit("2")), node))

    assert either(not_null) == "b = 2 OR a <= 0 OR a > 0"
    assert either(unary("Not", unary("IsNull", attr("s", "string")))) == "b = 2 OR s >= ''"
    assert either(unary("IsNotNull", attr("f", "boolean"))) == "b = 2 OR f = 'true' OR f = 'false'"
    assert either(unary("IsNotNull", inn(A, lit("1"), lit("2")))) == "b = 2 OR a <= 0 OR a > 0"
    assert either(unary("IsNotNull", attr("m", "map"))) is None


def test_decoding_checks_the_tree() -> None:
    with pytest.raises(ValueError, match="empty"):
        decode([])
    with pytest.raises(ValueError, match="after its tree"):
        decode(
            [{"class": "x.Literal", "num-children": 0}, {"class": "x.Literal", "num-children": 0}]
        )
