"""matches(): whether a row satisfies a subset condition, with typed comparisons and SQL NULLs.

Every expected value is worked out by hand here, never by calling the implementation.
"""

from __future__ import annotations

import datetime as dt
import math
import operator
from collections.abc import Callable
from decimal import Decimal
from itertools import product
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openlineage_subset import (
    dump,
    field,
    input_facet,
    literal,
    location,
    output_facet,
    partition,
    partitions,
)
from openlineage_subset._evaluate import matches
from tests.helpers import PRODUCER, docs_examples

COMPARISONS = ["EQUAL", "GREATER_THAN", "GREATER_EQUAL_THAN", "LESS_THAN", "LESS_EQUAL_THAN"]
UTC = dt.timezone.utc
PLUS_2 = dt.timezone(dt.timedelta(hours=2))
MINUS_5 = dt.timezone(dt.timedelta(hours=-5))
PLUS_3 = dt.timezone(dt.timedelta(hours=3))


def _field(name: str) -> dict[str, Any]:
    return {"type": "field", "field": name}


def _literal(value: str) -> dict[str, Any]:
    return {"type": "literal", "value": value}


def _compare(left: dict[str, Any], comparison: str, right: dict[str, Any]) -> dict[str, Any]:
    return {"type": "compare", "left": left, "right": right, "comparison": comparison}


def _binary(left: dict[str, Any], op: str, right: dict[str, Any]) -> dict[str, Any]:
    return {"type": "binary", "left": left, "right": right, "operator": op}


T, F = True, False

# (schema type, row value, literal, results of "value OP literal" for OP in COMPARISONS order:
#  EQUAL, GREATER_THAN, GREATER_EQUAL_THAN, LESS_THAN, LESS_EQUAL_THAN)
EQ = (T, F, T, F, T)
GT = (F, T, T, F, F)
LT = (F, F, F, T, T)
TYPED_CASES: list[tuple[str, object, str, tuple[bool, ...]]] = [
    # integers of every width and spelling; order is numeric, not textual
    ("int", 5, "5", EQ),
    ("int", 5, "6", LT),
    ("int", 5, "4", GT),
    ("integer", 9, "10", LT),
    ("INT", -3, "-4", GT),
    ("long", 2**40, "1099511627776", EQ),
    ("long", 9007199254740993, "9007199254740992", GT),  # beyond a double's precision
    ("bigint", -(2**63), "9223372036854775807", LT),
    ("short", 300, "299", GT),
    ("smallint", -32768, "-32768", EQ),
    ("byte", 127, "+127", EQ),
    ("tinyint", 0, "-0", EQ),
    ("int", "12", "9", GT),  # a row string read as the column's type
    ("int", 7.0, "7", EQ),  # an integral float in an int column
    ("bigint", Decimal("8"), "9", LT),
    # floating point
    ("double", 1.5, "1.25", GT),
    ("double", 0.1, "0.1", EQ),
    ("double", 2, "2.0", EQ),
    ("double", 1e-7, "0.0000001", EQ),
    ("double", -0.0, "0", EQ),
    ("double", math.nan, "1.0e300", GT),  # Spark: NaN sorts above every number
    ("double", math.inf, "1e308", GT),
    ("double", "2.5", "10", LT),
    ("float", Decimal("2.5"), "2.50", EQ),
    ("FLOAT", -1.0, "-0.5", LT),
    # decimals, exact
    ("decimal(10,2)", Decimal("12.50"), "12.5", EQ),
    ("decimal(10,2)", Decimal("12.49"), "12.5", LT),
    ("decimal(10, 2)", 0.1, "0.1", EQ),  # the float's shortest repr, not its binary expansion
    ("decimal(38,18)", 3, "2.99", GT),
    ("decimal", "100.00", "99.99", GT),
    ("Decimal(5)", Decimal("-1"), "-1.000", EQ),
    # strings: code point order
    ("string", "b", "a", GT),
    ("string", "B", "a", LT),
    ("string", "10", "9", LT),
    ("string", "é", "z", GT),  # U+00E9 after U+007A
    ("string", "abc", "abc", EQ),
    ("string", "ab", "abc", LT),
    ("STRING", "", "", EQ),
    # dates
    ("date", dt.date(2024, 10, 15), "2024-10-15", EQ),
    ("date", dt.date(2024, 10, 16), "2024-10-15", GT),
    ("date", dt.date(2024, 2, 29), "2024-03-01", LT),
    ("date", dt.date(999, 1, 1), "2024-01-01", LT),
    ("date", "2024-10-15", "2024-09-30", GT),
    # timestamps: instants, whatever the offsets
    ("timestamp", dt.datetime(2024, 10, 15, 10, tzinfo=UTC), "2024-10-15T10:00:00Z", EQ),
    ("timestamp", dt.datetime(2024, 10, 15, 12, tzinfo=PLUS_2), "2024-10-15T10:00:00Z", EQ),
    (
        "timestamp",
        dt.datetime(2024, 10, 15, 11, 59, 59, tzinfo=PLUS_2),
        "2024-10-15T10:00:00Z",
        LT,
    ),
    ("timestamp", dt.datetime(2024, 10, 15, 5, tzinfo=MINUS_5), "2024-10-15T09:59:59.999999Z", GT),
    ("timestamp", dt.datetime(2024, 10, 16, 1, tzinfo=PLUS_3), "2024-10-15T23:00:00Z", LT),
    ("timestamp", dt.datetime(2024, 10, 15, 10, tzinfo=UTC), "2024-10-15T12:00:00+02:00", EQ),
    ("timestamp", dt.datetime(2024, 10, 15, 10, tzinfo=UTC), "2024-10-15T04:59:59-05:00", GT),
    (
        "timestamp",
        dt.datetime(2024, 10, 15, 10, 0, 0, 123456, tzinfo=UTC),
        "2024-10-15T10:00:00.123456Z",
        EQ,
    ),
    (
        "timestamp",
        dt.datetime(2024, 10, 15, 10, 0, 0, 500000, tzinfo=UTC),
        "2024-10-15T10:00:00.5Z",
        EQ,
    ),
    (
        "timestamp",
        dt.datetime(2024, 10, 15, 10, 0, 0, 1),
        "2024-10-15T10:00:00Z",
        GT,
    ),  # naive = UTC
    ("timestamp", "2024-10-15T10:00:00Z", "2024-10-15T10:00:00.5Z", LT),
    ("timestamp", "2024-10-15T12:00:00+02:00", "2024-10-15T10:00:00Z", EQ),
    ("timestamp_ntz", dt.datetime(2024, 1, 1), "2024-01-01T00:00:00Z", EQ),
    ("TIMESTAMP_NTZ", dt.datetime(2024, 1, 1), "2024-01-01T00:00:00", EQ),
    # booleans: false < true
    ("boolean", True, "true", EQ),
    ("boolean", False, "true", LT),
    ("boolean", True, "false", GT),
    ("boolean", "false", "false", EQ),
    ("boolean", False, "FALSE", EQ),
]


@pytest.mark.parametrize(("type_name", "value", "text", "expected"), TYPED_CASES)
def test_every_comparison_of_every_type(
    type_name: str, value: object, text: str, expected: tuple[bool, ...]
) -> None:
    for comparison, want in zip(COMPARISONS, expected, strict=True):
        condition = _compare(_field("x"), comparison, _literal(text))
        got = matches(condition, {"x": value}, {"x": type_name})
        assert got is want, f"{value!r} {comparison} {text!r} as {type_name}"


@pytest.mark.parametrize(("type_name", "value", "text", "expected"), TYPED_CASES)
def test_a_literal_on_the_left_reads_the_other_way(
    type_name: str, value: object, text: str, expected: tuple[bool, ...]
) -> None:
    # "text OP value" is "value OP' text" with OP' mirrored: > for <, >= for <=.
    mirrored = ["EQUAL", "LESS_THAN", "LESS_EQUAL_THAN", "GREATER_THAN", "GREATER_EQUAL_THAN"]
    for comparison, want in zip(mirrored, expected, strict=True):
        condition = _compare(_literal(text), comparison, _field("x"))
        assert matches(condition, {"x": value}, {"x": type_name}) is want


INFERRED_CASES: list[tuple[object, str, tuple[bool, ...]]] = [
    (5, "10", LT),  # int: numeric
    ("5", "10", GT),  # str: text
    (True, "true", EQ),  # bool, not int
    (False, "true", LT),
    (Decimal("1.10"), "1.1", EQ),
    (1.5, "1.50", EQ),
    (dt.date(2024, 10, 15), "2024-10-14", GT),
    (dt.datetime(2024, 10, 15, 12, tzinfo=PLUS_2), "2024-10-15T10:00:00Z", EQ),  # not a date
    (dt.datetime(2024, 10, 15, 10), "2024-10-15T10:00:00Z", EQ),
]


@pytest.mark.parametrize(("value", "text", "expected"), INFERRED_CASES)
def test_without_a_schema_the_type_comes_from_the_row_value(
    value: object, text: str, expected: tuple[bool, ...]
) -> None:
    for comparison, want in zip(COMPARISONS, expected, strict=True):
        condition = _compare(_field("x"), comparison, _literal(text))
        assert matches(condition, {"x": value}) is want
        assert matches(condition, {"x": value}, {"other": "int"}) is want


def test_builders_give_the_same_answers() -> None:
    row = {"amount": Decimal("120.50"), "day": dt.date(2024, 10, 15), "country": "PL"}
    assert matches(field("amount") > 100, row)
    assert not matches(field("amount") > Decimal("120.5"), row)
    assert matches(field("amount") >= Decimal("120.5"), row)
    assert matches(field("day") == dt.date(2024, 10, 15), row)
    assert matches(field("day").between(dt.date(2024, 10, 1), dt.date(2024, 10, 31)), row)
    assert not matches(field("day") < dt.date(2024, 10, 15), row)
    assert matches(field("country").isin(["DE", "PL", "FR"]), row)
    assert not matches(field("country").isin(["DE", "FR"]), row)
    assert matches(field("country") != "DE", row)
    assert not matches(field("country") != "PL", row)
    assert matches(literal(100) < field("amount"), row)
    instant = dt.datetime(2024, 10, 15, 12, tzinfo=PLUS_2)
    assert matches(field("ts") == instant, {"ts": dt.datetime(2024, 10, 15, 10, tzinfo=UTC)})


def test_field_against_field() -> None:
    assert matches(field("a") < field("b"), {"a": 9, "b": 10})
    assert matches(field("a") > field("b"), {"a": "9", "b": "10"}), "strings compare as text"
    row = {"a": "9", "b": "10"}
    assert matches(field("a") < field("b"), row, {"a": "int"}), "b is read as a's type"
    assert matches(field("a") < field("b"), row, {"b": "bigint"}), "or as b's declared type"
    assert matches(field("a") == field("b"), {"a": dt.date(2024, 1, 2), "b": "2024-01-02"})
    assert matches(field("a") == field("b"), {"a": Decimal("1.0"), "b": 1})
    assert matches(field("a") >= field("b"), {"a": 2, "b": 2.0}, {"a": "double"})
    assert matches(field("a") == field("a"), {"a": math.nan}), "Spark: NaN equals NaN"
    assert not matches(field("a") < field("b"), {"a": None, "b": 1})
    assert not matches(field("a") < field("b"), {"a": 1, "b": None})
    assert not matches(field("a") == field("b"), {"a": None, "b": None}), "NULL = NULL is NULL"


def test_literal_against_literal_compares_text() -> None:
    assert matches(_compare(_literal("b"), "GREATER_THAN", _literal("a")), {})
    assert matches(_compare(_literal("10"), "LESS_THAN", _literal("9")), {})
    assert matches(_compare(_literal("x"), "EQUAL", _literal("x")), {})
    assert not matches(_compare(_literal("x"), "EQUAL", _literal("y")), {})


@pytest.mark.parametrize("comparison", COMPARISONS)
@pytest.mark.parametrize("schema", [None, {"x": "int"}, {"x": "string"}, {"x": "date"}])
def test_a_comparison_with_null_is_not_satisfied(
    comparison: str, schema: dict[str, str] | None
) -> None:
    text = "2024-10-15" if schema == {"x": "date"} else "1"
    condition = _compare(_field("x"), comparison, _literal(text))
    assert matches(condition, {"x": None}, schema) is False
    mirrored = _compare(_literal(text), comparison, _field("x"))
    assert matches(mirrored, {"x": None}, schema) is False


def test_nulls_inside_and_and_or() -> None:
    either = (field("x") == 1) | (field("y") == 2)
    both = (field("x") == 1) & (field("y") == 2)
    assert matches(either, {"x": None, "y": 2})
    assert not matches(either, {"x": None, "y": None})
    assert not matches(both, {"x": None, "y": 2})
    assert not matches(field("x") != 1, {"x": None}), "neither x < 1 nor x > 1 holds for NULL"


def test_nested_fields() -> None:
    row: dict[str, object] = {"address": {"city": "Kraków", "geo": {"lat": 50.06}}}
    assert matches(field("address.city") == "Kraków", row)
    assert not matches(field("address.city") == "Warszawa", row)
    assert matches(field("address.geo.lat") > 50, row)
    assert matches(field("address.geo.lat") > 50, row, {"address.geo.lat": "double"})
    both = {"address.city": "A", "address": {"city": "B"}}
    assert matches(field("address.city") == "A", both), "an exact key wins"
    assert not matches(field("address.city") == "B", both)
    assert matches(field("a.b.c") == 1, {"a": {"b.c": 1}}), "keys may hold dots"
    assert matches(field("a.b.c") == 1, {"a.b": {"c": 1}})
    assert not matches(field("address.city") == "A", {"address": None}), "NULL struct"
    typed = {"a": {"b": "10"}}
    assert matches(field("a.b") < "9", typed), "a string compares as text"
    assert not matches(field("a.b") < "9", typed, {"a.b": "int"})


def test_and_or_trees() -> None:
    for x, y, z in product([0, 1], repeat=3):
        row = {"x": x, "y": y, "z": z}
        a, b, c = x == 1, y == 1, z == 1
        assert matches((field("x") == 1) & (field("y") == 1), row) is (a and b)
        assert matches((field("x") == 1) | (field("y") == 1), row) is (a or b)
        nested = ((field("x") == 1) & (field("y") == 1)) | (field("z") == 1)
        assert matches(nested, row) is ((a and b) or c)
        other = (field("x") == 1) & ((field("y") == 1) | (field("z") == 1))
        assert matches(other, row) is (a and (b or c))
        as_json = _binary(
            _compare(_field("x"), "EQUAL", _literal("1")),
            "OR",
            _binary(
                _compare(_field("y"), "EQUAL", _literal("1")),
                "AND",
                _compare(_field("z"), "LESS_THAN", _literal("1")),
            ),
        )
        assert matches(as_json, row) is (a or (b and z < 1))


def test_partitions() -> None:
    condition = partitions(
        [{"day": "2024-10-15", "country": "PL"}, {"day": "2024-10-15", "country": "DE"}]
    )
    day = dt.date(2024, 10, 15)
    assert matches(condition, {"day": day, "country": "PL", "amount": 3})
    assert matches(condition, {"day": day, "country": "DE"})
    assert not matches(condition, {"day": day, "country": "FR"})
    assert not matches(condition, {"day": dt.date(2024, 10, 16), "country": "PL"})
    assert matches(condition, {"day": "2024-10-15", "country": "PL"})
    assert matches(condition, {"day": "2024-10-15", "country": "PL"}, {"day": "date"})


def test_the_null_partition() -> None:
    null_country = partitions(
        [partition({"country": None}, identifier="country=__HIVE_DEFAULT_PARTITION__")]
    )
    assert matches(null_country, {"country": None})
    assert not matches(null_country, {"country": "PL"})
    poland = partitions([{"country": "PL"}])
    assert not matches(poland, {"country": None})
    assert not matches(poland, {"country": None}, {"country": "string"})


@pytest.mark.parametrize(
    ("dimension", "value", "schema", "expected"),
    [
        ("5", 5, None, True),
        ("05", 5, None, True),
        ("05", 5, {"n": "int"}, True),
        ("05", "5", {"n": "int"}, True),
        ("05", "5", None, False),  # strings compare verbatim
        ("05", "5", {"n": "string"}, False),
        ("5", 6, None, False),
        ("5", "5.0", {"n": "double"}, True),
        ("12.50", Decimal("12.5"), None, True),
        ("12.50", Decimal("12.5"), {"n": "decimal(4,2)"}, True),
        ("true", True, None, True),
        ("false", True, {"n": "boolean"}, False),
        ("2024-10-15", dt.date(2024, 10, 15), None, True),
        ("2024-10-15T10:00:00Z", dt.datetime(2024, 10, 15, 12, tzinfo=PLUS_2), None, True),
        ("2024-10-15T10:00:00Z", dt.datetime(2024, 10, 15, 10), {"n": "timestamp"}, True),
    ],
)
def test_typed_partition_dimensions(
    dimension: str, value: object, schema: dict[str, str] | None, expected: bool
) -> None:
    condition = {"type": "partition", "partitions": [{"dimensions": {"n": dimension}}]}
    assert matches(condition, {"n": value}, schema) is expected


def test_partition_edge_cases() -> None:
    assert not matches(partitions([]), {"a": 1}), "no partition, no row"
    as_number = {"type": "partition", "partitions": [{"dimensions": {"n": 5}}]}
    assert matches(as_number, {"n": 5}), "a JSON number reads as its literal"
    no_dimension = {"type": "partition", "partitions": [{"dimensions": {}}]}
    assert matches(no_dimension, {"a": 1}), "the one partition of an unpartitioned table"


@pytest.mark.parametrize(
    ("locations", "path", "expected"),
    [
        (["s3://b/x"], "s3://b/x/part-0.parquet", True),
        (["s3://b/x"], "s3://b/x", True),
        (["s3://b/x"], "s3://b/xy", False),
        (["s3://b/x"], "s3://b/xy/part-0.parquet", False),
        (["s3://b/x"], "s3://b", False),
        (["s3://b/x/"], "s3://b/x/part-0.parquet", True),
        (["s3://b/x/"], "s3://b/x", True),
        (["s3://b/x"], "s3://b/x/", True),
        (["s3://b/x//"], "s3://b/x/y/z", True),
        (["s3://b/x"], "s3a://b/x/part-0", False),
        (["s3://b/a", "s3://b/x"], "s3://b/x/p", True),
        (["s3://b/a", "s3://b/c"], "s3://b/x/p", False),
        ([], "s3://b/x", False),
        (["file:///tmp/a"], "/tmp/a/part-0", True),
        (["file:/tmp/a"], "/tmp/a", True),
        (["/tmp/a"], "file:/tmp/a/b", True),
        (["/tmp/a"], "file:///tmp/a/", True),
        (["file://localhost/tmp/a"], "/tmp/a/b", True),
        (["file://fileserver/tmp/a"], "/tmp/a/b", False),
        (["file:///tmp/a"], "file:///tmp/ab", False),
        (["/"], "/tmp/a", True),
        (["file:///"], "/tmp/a", True),
        (["hdfs://nn:8020/warehouse/t"], "hdfs://nn:8020/warehouse/t/d=1/f", True),
        (["hdfs://nn:8020/warehouse/t"], "hdfs://nn:9000/warehouse/t/d=1/f", False),
    ],
)
def test_locations(locations: list[str], path: str, expected: bool) -> None:
    assert matches(location(locations), {}, path=path) is expected


def test_facets_and_json() -> None:
    condition = (field("country") == "PL") & (field("n") > 2)
    row = {"country": "PL", "n": 3}
    facet = input_facet(condition, producer=PRODUCER)
    assert matches(facet, row)
    assert not matches(facet, {"country": "PL", "n": 2})
    assert matches(output_facet(condition, producer=PRODUCER), row)
    assert matches(dump(facet), row)
    assert matches(dump(condition), row)
    written = output_facet(partitions([{"country": "PL"}]), producer=PRODUCER)
    assert matches(dump(written), row)


def test_the_documentation_examples_as_json() -> None:
    examples = {name: value["subset"] for name, value in docs_examples().items()}
    john = {"first_name": "John", "last_name": "Smith"}
    assert matches(examples["compare.json"], john)
    assert not matches(examples["compare.json"], {"first_name": "Jon"})
    assert matches(examples["binary.json"], john)
    assert not matches(examples["binary.json"], {"first_name": "John", "last_name": "Smyth"})
    day = {"business_date": dt.date(2024, 10, 15), "country": "DE"}
    assert matches(examples["partition.json"], day)
    assert not matches(examples["partition.json"], {**day, "country": "FR"})
    place = "s3://some/bucket/location2/part-00000.parquet"
    assert matches(examples["location.json"], {}, path=place)
    assert not matches(examples["location.json"], {}, path="s3://some/bucket/location4/p")


def test_a_missing_field_names_the_field_and_the_row_keys() -> None:
    with pytest.raises(ValueError, match=r"no field 'amount'.*'country', 'n'"):
        matches(field("amount") > 1, {"country": "PL", "n": 3})
    with pytest.raises(ValueError, match=r"no field 'address.zip'.*'address'"):
        matches(field("address.zip") == "1", {"address": {"city": "Kraków"}})
    with pytest.raises(ValueError, match=r"no field 'country'"):
        matches(partitions([{"country": "PL"}]), {"c": "PL"})
    wide = {f"c{i}": i for i in range(25)}
    with pytest.raises(ValueError, match=r"'c19' and 5 more"):
        matches(field("x") == 1, wide)


def test_location_without_path() -> None:
    message = r"a location condition needs the row's path: matches\(\.\.\., path=\.\.\.\)"
    with pytest.raises(ValueError, match=message):
        matches(location(["s3://b/x"]), {})
    with pytest.raises(ValueError, match=message):  # even where the other branch decides
        matches((field("a") == 1) | location(["s3://b/x"]), {"a": 1})


def test_what_this_version_cannot_evaluate() -> None:
    true = _compare(_field("a"), "EQUAL", _literal("1"))
    row = {"a": 1}
    with pytest.raises(ValueError, match=r"cannot evaluate the condition type 'regex' at \$"):
        matches({"type": "regex", "pattern": "a.*"}, row)
    with pytest.raises(ValueError, match=r"condition type 'regex' at \$\.right"):
        matches(_binary(true, "OR", {"type": "regex"}), row)
    with pytest.raises(ValueError, match=r"cannot evaluate the comparison 'NOT_EQUAL'"):
        matches(_compare(_field("a"), "NOT_EQUAL", _literal("2")), row)
    with pytest.raises(ValueError, match=r"cannot evaluate the comparison 'equal'"):
        matches(_compare(_field("a"), "equal", _literal("1")), row)
    with pytest.raises(ValueError, match=r"cannot evaluate the operator 'XOR'"):
        matches(_binary(true, "XOR", true), row)
    with pytest.raises(ValueError, match=r"cannot evaluate the expression type 'function'"):
        matches(_compare({"type": "function", "name": "upper"}, "EQUAL", _literal("A")), row)
    with pytest.raises(ValueError, match=r"has no 'type'"):
        matches({"left": true}, row)


@pytest.mark.parametrize(
    ("type_name", "text"),
    [
        ("int", "abc"),
        ("int", ""),
        ("int", "true"),
        ("double", "abc"),
        ("double", "nan"),
        ("double", "1,5"),
        ("decimal(10,2)", "12.5.0"),
        ("date", "2024-13-01"),
        ("date", "15.10.2024"),
        ("date", "2024-10-15T00:00:00Z"),
        ("timestamp", "2024-10-15"),
        ("timestamp", "2024-10-15T25:00:00Z"),
        ("timestamp", "2024-10-15T10:00:00.1234567Z"),
        ("timestamp", "yesterday"),
        ("boolean", "yes"),
        ("boolean", "1"),
    ],
)
def test_a_literal_not_of_its_column_type(type_name: str, text: str) -> None:
    condition = _compare(_field("x"), "EQUAL", _literal(text))
    with pytest.raises(ValueError, match=r"literal .* at \$\.right, compared with 'x'") as caught:
        matches(condition, {"x": None}, {"x": type_name})
    assert repr(text) in str(caught.value)
    assert repr(type_name) in str(caught.value)


def test_a_bad_literal_names_the_inferred_type() -> None:
    with pytest.raises(ValueError, match=r"'abc'.*'n'.*integer \(as the row's int value of 'n'\)"):
        matches(field("n") == "abc", {"n": 5})


@pytest.mark.parametrize(
    ("type_name", "value"),
    [
        ("int", "abc"),
        ("int", True),
        ("int", 1.5),
        ("double", "x"),
        ("decimal", math.inf),
        ("string", 5),
        ("date", dt.datetime(2024, 10, 15)),
        ("timestamp", dt.date(2024, 10, 15)),
        ("boolean", 1),
    ],
)
def test_a_row_value_not_of_its_column_type(type_name: str, value: object) -> None:
    with pytest.raises(ValueError, match=r"the row's value .* of the field 'x' is not a valid"):
        matches(
            _compare(_field("x"), "LESS_THAN", _field("y")),
            {"x": value, "y": None},
            {"x": type_name},
        )


def test_bad_partition_values_and_types() -> None:
    with pytest.raises(
        ValueError, match=r"partition value 'abc' at \$\.partitions\[0\]\.dimensions\.n"
    ):
        matches(partitions([{"n": "abc"}]), {"n": 1}, {"n": "int"})
    with pytest.raises(ValueError, match=r"partition value 'abc'"):
        matches(partitions([{"n": "abc"}]), {"n": None}, {"n": "int"})
    with pytest.raises(ValueError, match=r"must be a string or null"):
        matches({"type": "partition", "partitions": [{"dimensions": {"n": [1]}}]}, {"n": 1})
    with pytest.raises(ValueError, match=r"'dimensions' object at \$\.partitions\[0\]"):
        matches({"type": "partition", "partitions": [{"identifier": "x"}]}, {})
    with pytest.raises(ValueError, match=r"list of partitions"):
        matches({"type": "partition", "partitions": {"n": "1"}}, {})


def test_unknown_schema_types_and_row_types() -> None:
    with pytest.raises(ValueError, match=r"column 'x' of type 'array<int>'"):
        matches(field("x") == 1, {"x": 1}, {"x": "array<int>"})
    with pytest.raises(ValueError, match=r"column 'x' of type 'varchar\(10\)'"):
        matches(field("x") == "a", {"x": "a"}, {"x": "varchar(10)"})
    with pytest.raises(ValueError, match=r"its value \[1\] is a list"):
        matches(field("x") == 1, {"x": [1]})
    with pytest.raises(ValueError, match=r"its value b'a' is a bytes"):
        matches(partitions([{"x": "a"}]), {"x": b"a"})


def test_malformed_arguments() -> None:
    with pytest.raises(TypeError, match="takes a subset condition or facet, got str"):
        matches("a = 1", {})
    with pytest.raises(TypeError, match="got FieldRef"):
        matches(field("a"), {"a": 1})
    with pytest.raises(TypeError, match="row as a mapping, got list"):
        matches(field("a") == 1, [("a", 1)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="schema must map"):
        matches(field("a") == 1, {"a": 1}, ["int"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="path must be a string"):
        matches(location(["/a"]), {}, path=b"/a")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"facet map; pass the facet itself"):
        matches({"subset": dump(input_facet(field("a") == 1, producer=PRODUCER))}, {"a": 1})
    with pytest.raises(ValueError, match=r"literal at \$\.right\.value must be a string, got 5"):
        matches(_compare(_field("a"), "EQUAL", {"type": "literal", "value": 5}), {"a": 5})
    with pytest.raises(ValueError, match=r"field at \$\.left\.field must be a non-empty string"):
        matches(_compare(_field(""), "EQUAL", _literal("1")), {"a": 5})
    with pytest.raises(ValueError, match=r"expected a field or literal object at \$\.left"):
        matches(_compare("a", "EQUAL", _literal("1")), {"a": 5})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"expected a condition object at \$\.left"):
        matches(_binary(None, "AND", _compare(_field("a"), "EQUAL", _literal("1"))), {"a": 1})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"list of strings at \$\.locations"):
        matches({"type": "location", "locations": "s3://b/x"}, {}, path="s3://b/x")


OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _condition(name: str, symbol: str, value: object) -> Any:
    ref = field(name)
    built = {
        "==": ref.__eq__,
        "!=": ref.__ne__,
        "<": ref.__lt__,
        "<=": ref.__le__,
        ">": ref.__gt__,
        ">=": ref.__ge__,
    }
    return built[symbol](value)


@given(a=st.integers(), b=st.integers(), symbol=st.sampled_from(sorted(OPERATORS)))
def test_property_long_comparisons_agree_with_python(a: int, b: int, symbol: str) -> None:
    condition = _condition("x", symbol, b)
    assert matches(condition, {"x": a}, {"x": "long"}) is OPERATORS[symbol](a, b)
    assert matches(condition, {"x": str(a)}, {"x": "long"}) is OPERATORS[symbol](a, b)


@given(a=st.dates(), b=st.dates(), symbol=st.sampled_from(sorted(OPERATORS)))
def test_property_date_comparisons_agree_with_python(a: dt.date, b: dt.date, symbol: str) -> None:
    condition = _condition("x", symbol, b)
    assert matches(condition, {"x": a}, {"x": "date"}) is OPERATORS[symbol](a, b)


OFFSETS = st.sampled_from([UTC, PLUS_2, MINUS_5, dt.timezone(dt.timedelta(hours=5, minutes=45))])
INSTANTS = st.datetimes(
    min_value=dt.datetime(2, 1, 1), max_value=dt.datetime(9998, 12, 31), timezones=OFFSETS
)


@given(a=INSTANTS, b=INSTANTS, symbol=st.sampled_from(sorted(OPERATORS)))
def test_property_timestamp_comparisons_agree_with_python(
    a: dt.datetime, b: dt.datetime, symbol: str
) -> None:
    condition = _condition("x", symbol, b)
    assert matches(condition, {"x": a}, {"x": "timestamp"}) is OPERATORS[symbol](a, b)


@pytest.mark.parametrize(
    ("literal", "comparison", "value", "expected"),
    [
        ("1.5", "GREATER_THAN", 1, False),
        ("1.5", "GREATER_THAN", 2, True),
        ("1.5", "LESS_EQUAL_THAN", 1, True),
        ("1.5", "EQUAL", 1, False),
        ("1e3", "EQUAL", 1000, True),
        ("-0.5", "GREATER_EQUAL_THAN", 0, True),
    ],
)
def test_integral_columns_compare_exactly_with_fractional_literals(
    literal: str, comparison: str, value: int, expected: bool
) -> None:
    # SQL compares int_col > 1.5 exactly (1 is not > 1.5, 2 is); so does matches().
    condition = {
        "type": "compare",
        "left": {"type": "field", "field": "n"},
        "right": {"type": "literal", "value": literal},
        "comparison": comparison,
    }
    assert matches(condition, {"n": value}, {"n": "int"}) is expected
