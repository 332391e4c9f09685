"""Filter translation rules on hand-built Spark expression trees (no JVM needed)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openlineage_subset import dump, field, location, matches, render, spec
from openlineage_subset.spark import SubsetConfig
from openlineage_subset.spark._translate import (
    condition_from_filters,
    internal_value_text,
    redact_condition,
)
from openlineage_subset.spark._trees import ExactValues, Node, decode


def attr(name: str, kind: str = "integer") -> Node:
    return Node("AttributeReference", {"name": name, "dataType": kind})


def lit(value: Any, kind: str = "integer", micros: int | None = None) -> Node:
    return Node("Literal", {"value": value, "dataType": kind}, exact=ExactValues(micros))


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
    inset.exact.set_values = ["19737", "19738"]
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


# --- redaction -----------------------------------------------------------------------------------

SSN = attr("ssn", "string")
PERSON = lit("123-45-6789", "string")


def redacted(node: Node, columns: Any) -> str | None:
    condition = condition_from_filters([node])
    assert condition is not None
    result = redact_condition(condition, SubsetConfig(redact_columns=columns).redacts)
    if result is not None:
        assert "123-45-6789" not in json.dumps(dump(result))
    return None if result is None else render(result)


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (op("And", op("EqualTo", A, lit("1")), op("EqualTo", SSN, PERSON)), "a = 1"),
        (op("And", op("EqualTo", SSN, PERSON), op("EqualTo", A, lit("1"))), "a = 1"),
        (op("Or", op("EqualTo", A, lit("1")), op("EqualTo", SSN, PERSON)), None),
        (
            op(
                "Or",
                op("And", op("EqualTo", A, lit("1")), op("GreaterThan", SSN, PERSON)),
                op("EqualTo", B, lit("2")),
            ),
            "a = 1 OR b = 2",
        ),
        (unary("Not", op("EqualTo", SSN, PERSON)), None),
        (inn(SSN, PERSON, lit("987-65-4321", "string")), None),
        (op("And", op("EqualTo", A, lit("1")), unary("Not", inn(SSN, PERSON))), "a = 1"),
        (op("EqualTo", SSN, attr("other_ssn", "string")), "ssn = other_ssn"),
        (op("EqualTo", attr("SSN", "string"), PERSON), None),
    ],
)
def test_a_redacted_columns_comparisons_go_as_inexpressible_ones_do(
    node: Node, expected: str | None
) -> None:
    assert redacted(node, {"ssn"}) == expected


def test_redaction_keeps_the_shape_of_the_rest() -> None:
    kept = (field("a") == 1) | (field("b") > 2)
    condition = (kept & (field("ssn") == "123-45-6789")) & (field("c") < 3)
    result = redact_condition(condition, SubsetConfig(redact_columns={"ssn"}).redacts)
    assert dump(result) == dump(kept & (field("c") < 3))
    untouched = (field("a") == 1) & (field("b") == 2)
    assert redact_condition(untouched, SubsetConfig(redact_columns={"ssn"}).redacts) is untouched


def test_redacting_all_columns_leaves_only_comparisons_of_columns() -> None:
    condition = (field("a") == 1) & (field("a") < field("b"))
    result = redact_condition(condition, SubsetConfig(redact_columns="all").redacts)
    assert render(result) == "a < b"


def test_a_struct_column_redacts_its_fields() -> None:
    struct = {"type": "struct", "fields": [{"name": "ssn", "type": "string"}]}
    person = Node("AttributeReference", {"name": "person", "dataType": struct})
    ssn = Node("GetStructField", {"child": 0, "ordinal": 0, "name": "ssn"}, (person,))
    assert redacted(op("EqualTo", ssn, PERSON), {"Person"}) is None
    assert redacted(op("EqualTo", ssn, PERSON), {"person.ssn"}) is None
    condition = condition_from_filters([op("EqualTo", ssn, PERSON)])
    not_a_prefix = SubsetConfig(redact_columns={"pers"}).redacts
    assert redact_condition(condition, not_a_prefix) is condition


def _partitions(*dimensions: dict[str, str | None]) -> Any:
    models = spec().models
    return models.PartitionSubsetCondition(
        partitions=[models.Partition(dimensions=dict(d)) for d in dimensions]
    )


@pytest.mark.parametrize(
    ("condition", "columns", "kept"),
    [
        (_partitions({"day": "d1", "ssn": "123-45-6789"}), {"ssn"}, False),
        (_partitions({"day": "d1"}, {"day": "d2"}), {"ssn"}, True),
        (_partitions({"day": "d1"}), "all", False),
        (location(["file:/t/day=d1/ssn=123-45-6789"]), {"SSN"}, False),
        (location(["file:/t/day=d1", "file:/t/day=d2/x.parquet"]), {"ssn"}, True),
        (location(["file:/t/a%3Ab=1"]), {"a:b"}, False),  # Spark escapes ":" in directory names
        (location(["file:/logs/2024/10/15"]), "all", True),  # no column=value directory
    ],
)
def test_partitions_and_locations_holding_a_redacted_value_go_whole(
    condition: Any, columns: Any, kept: bool
) -> None:
    result = redact_condition(condition, SubsetConfig(redact_columns=columns).redacts)
    assert (result is condition) if kept else (result is None)


def test_what_redaction_does_not_know_goes_whole() -> None:
    models = spec().models
    odd = models.BinarySubsetCondition(left=field("a") == 1, right=field("b") == 2, operator="XOR")
    assert redact_condition(odd, SubsetConfig().redacts) is None
    assert redact_condition({"type": "compare"}, SubsetConfig().redacts) is None


_COLUMNS = ["a", "b", "ssn"]
_COMPARE = [
    lambda x, y: x == y,
    lambda x, y: x < y,
    lambda x, y: x <= y,
    lambda x, y: x > y,
    lambda x, y: x >= y,
]


@st.composite
def _comparisons(draw: st.DrawFn) -> Any:
    compare = draw(st.sampled_from(_COMPARE))
    left = field(draw(st.sampled_from(_COLUMNS)))
    if draw(st.booleans()):
        return compare(left, field(draw(st.sampled_from(_COLUMNS))))
    return compare(left, draw(st.integers(0, 3)))


_CONDITIONS = st.recursive(
    _comparisons(),
    lambda children: st.tuples(children, children, st.booleans()).map(
        lambda t: t[0] & t[1] if t[2] else t[0] | t[1]
    ),
    max_leaves=8,
)


@given(
    condition=_CONDITIONS,
    columns=st.sets(st.sampled_from(_COLUMNS)) | st.just("all"),
    row=st.fixed_dictionaries({column: st.integers(0, 3) for column in _COLUMNS}),
)
def test_redaction_is_sound_and_leaves_no_redacted_literal(
    condition: Any, columns: Any, row: dict[str, int]
) -> None:
    config = SubsetConfig(redact_columns=columns)
    result = redact_condition(condition, config.redacts)
    if matches(condition, row):
        assert result is None or matches(result, row), render(result)

    def compares(node: dict[str, Any]) -> list[dict[str, Any]]:
        if node["type"] == "binary":
            return compares(node["left"]) + compares(node["right"])
        return [node]

    for compare in compares(dump(result)) if result is not None else []:
        sides = (compare["left"], compare["right"])
        if any(side["type"] == "literal" for side in sides):
            assert not any(config.redacts(side.get("field", "")) for side in sides), compare


# --- SubsetConfig's redaction and level options ---------------------------------------------------


def test_redacted_columns_are_a_set_or_all() -> None:
    config = SubsetConfig(redact_columns=["ssn", "email"])  # type: ignore[arg-type]
    assert config.redact_columns == frozenset({"ssn", "email"})
    assert config == SubsetConfig(redact_columns={"email", "ssn"})
    assert hash(config) == hash(SubsetConfig(redact_columns=frozenset({"email", "ssn"})))
    assert SubsetConfig(redact_columns="all").redacts("anything.at_all")
    assert not SubsetConfig().redacts("ssn")
    assert SubsetConfig(redact_columns={"ssn"}).redacts("SSN")
    assert not SubsetConfig(redact_columns={"ssn"}).redacts("ssn_hash")


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"redact_columns": "ssn"}, TypeError, r"not a single column name; write redact_columns="),
        ({"redact_columns": 3}, TypeError, "a set of column names or 'all', got int"),
        ({"redact_columns": {3}}, TypeError, r"holds 3 \(int\); each item must be a column name"),
        ({"redact_columns": {""}}, ValueError, "holds an empty column name"),
        ({"row_filters": "no"}, TypeError, "row_filters must be True or False, got 'no'"),
    ],
)
def test_redaction_options_are_checked(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        SubsetConfig(**options)
