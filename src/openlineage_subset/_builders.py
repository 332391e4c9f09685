"""Builders that read like the condition they make: ``(field("a") == "x") & (field("b") > 3)``.

They build models of the newest spec version. Literal values are rendered to the strings the
schema carries: integers and decimals in plain decimal, booleans ``true``/``false``, dates
``YYYY-MM-DD``, timestamps ISO-8601 in UTC with ``Z``, strings verbatim.
"""

from __future__ import annotations

import datetime as _dt
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any, cast

from openlineage_subset_generated._support import (
    InputSubsetFacet,
    JsonObject,
    OutputSubsetFacet,
    SubsetCondition,
)
from openlineage_subset_generated.latest import (
    CompareSubsetCondition,
    Comparison,
    FieldBaseCompareExpression,
    LiteralCompareExpression,
    LocationSubsetCondition,
    Partition,
    PartitionSubsetCondition,
)

from openlineage_subset._convert import JsonValue
from openlineage_subset._versions import INPUT_FACET_DEF, OUTPUT_FACET_DEF


def format_literal(value: object) -> str:
    """The string a literal value is written as in a subset condition.

    >>> [format_literal(v) for v in (3, Decimal("1.50"), 1e-7, True, _dt.date(2024, 10, 15))]
    ['3', '1.50', '0.0000001', 'true', '2024-10-15']
    >>> warsaw_summer = _dt.timezone(_dt.timedelta(hours=2))
    >>> format_literal(_dt.datetime(2024, 10, 15, 12, 0, tzinfo=warsaw_summer))
    '2024-10-15T10:00:00Z'
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(
                f"{value!r} has no plain decimal form; a condition cannot compare with it"
            )
        return _plain_decimal(Decimal(repr(value)))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(
                f"{value!r} has no plain decimal form; a condition cannot compare with it"
            )
        return _plain_decimal(value)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(
                f"{value!r} has no time zone, so its instant is unknown; attach one "
                "(for example value.replace(tzinfo=datetime.timezone.utc))"
            )
        utc = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return utc.isoformat() + "Z"
    if isinstance(value, _dt.date):
        return value.isoformat()
    raise TypeError(
        f"cannot write a {type(value).__name__} as a condition literal; use str, int, float, "
        "Decimal, bool, datetime.date or an aware datetime.datetime"
    )


def _plain_decimal(value: Decimal) -> str:
    text = format(value, "f")
    return "0" if text in ("-0", "-0.0") else text


class FieldRef:
    """A dataset field in a condition; compare it to build a ``CompareSubsetCondition``.

    ``!=`` becomes ``a < v OR a > v`` (the schema has no "not equal"), ``isin`` a balanced OR of
    equalities, ``between`` an AND of two bounds. Comparing with another ``field(...)`` compares
    two fields.

    >>> from openlineage_subset import render
    >>> render(field("amount") != 0)
    'amount < 0 OR amount > 0'
    """

    __slots__ = ("name",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a field name must be a non-empty string, got {name!r}")
        self.name = name

    def __repr__(self) -> str:
        return f"field({self.name!r})"

    def _compare(self, other: object, comparison: str) -> CompareSubsetCondition:
        return CompareSubsetCondition(
            left=FieldBaseCompareExpression(field=self.name),
            right=_operand(other),
            comparison=Comparison(comparison),
        )

    def __eq__(self, other: object) -> CompareSubsetCondition:  # type: ignore[override]
        return self._compare(other, "EQUAL")

    def __ne__(self, other: object) -> SubsetCondition:  # type: ignore[override]
        return self._compare(other, "LESS_THAN") | self._compare(other, "GREATER_THAN")

    def __lt__(self, other: object) -> CompareSubsetCondition:
        return self._compare(other, "LESS_THAN")

    def __le__(self, other: object) -> CompareSubsetCondition:
        return self._compare(other, "LESS_EQUAL_THAN")

    def __gt__(self, other: object) -> CompareSubsetCondition:
        return self._compare(other, "GREATER_THAN")

    def __ge__(self, other: object) -> CompareSubsetCondition:
        return self._compare(other, "GREATER_EQUAL_THAN")

    def isin(self, values: Iterable[object]) -> SubsetCondition:
        """``field IN (values)`` as a balanced tree of ``OR`` (depth log2 n, not n).

        >>> from openlineage_subset import render
        >>> render(field("country").isin(["PL", "DE", "FR"]))
        "country = 'PL' OR country = 'DE' OR country = 'FR'"
        """
        if isinstance(values, (str, bytes)):
            raise TypeError("isin() takes a collection of values, not a single string")
        unique: dict[str, object] = {}
        for value in values:
            unique.setdefault(format_literal(value), value)
        if not unique:
            raise ValueError(
                "isin() needs at least one value: an empty IN matches no row, and no subset "
                "condition can say that"
            )
        return any_of([self == value for value in unique.values()])

    def between(self, low: object, high: object) -> SubsetCondition:
        """``low <= field <= high`` (both bounds included, as SQL ``BETWEEN``)."""
        return (self >= low) & (self <= high)


def field(name: str) -> FieldRef:
    """A reference to a dataset field (column; nested fields as a dotted path).

    >>> from openlineage_subset import render
    >>> render((field("business_date") == "2024-10-15") & field("country").isin(["PL", "DE"]))
    "business_date = '2024-10-15' AND (country = 'PL' OR country = 'DE')"
    """
    return FieldRef(name)


def literal(value: object) -> LiteralCompareExpression:
    """A literal operand, written by :func:`format_literal`, for use on either side of ``==``."""
    return LiteralCompareExpression(value=format_literal(value))


def _operand(value: object) -> FieldBaseCompareExpression | LiteralCompareExpression:
    if isinstance(value, FieldRef):
        return FieldBaseCompareExpression(field=value.name)
    if isinstance(value, (FieldBaseCompareExpression, LiteralCompareExpression)):
        return value
    return LiteralCompareExpression(value=format_literal(value))


def all_of(conditions: Iterable[SubsetCondition]) -> SubsetCondition:
    """Every condition holds: a balanced ``AND`` tree (one condition is returned as is)."""
    return _balanced(list(conditions), "AND")


def any_of(conditions: Iterable[SubsetCondition]) -> SubsetCondition:
    """At least one condition holds: a balanced ``OR`` tree (one condition is returned as is)."""
    return _balanced(list(conditions), "OR")


def _balanced(conditions: Sequence[SubsetCondition], operator: str) -> SubsetCondition:
    if not conditions:
        raise ValueError(f"{operator} needs at least one condition")
    for condition in conditions:
        if not isinstance(condition, SubsetCondition):
            raise TypeError(f"expected subset conditions, got {type(condition).__name__}")
    if len(conditions) == 1:
        return conditions[0]
    middle = len(conditions) // 2
    left = _balanced(conditions[:middle], operator)
    right = _balanced(conditions[middle:], operator)
    return left & right if operator == "AND" else left | right


def location(locations: Iterable[str]) -> LocationSubsetCondition:
    """A ``location`` condition: the directories, files or objects that were read or written.

    >>> from openlineage_subset import dump
    >>> dump(location(["s3://bucket/sales/2024/10/15"]))
    {'type': 'location', 'locations': ['s3://bucket/sales/2024/10/15']}
    """
    if isinstance(locations, str):
        raise TypeError("location() takes a list of locations, not a single string")
    items = list(locations)
    for item in items:
        if not isinstance(item, str) or not item:
            raise ValueError(f"a location must be a non-empty string, got {item!r}")
    return LocationSubsetCondition(locations=items)


def partition(dimensions: Mapping[str, object], identifier: str | None = None) -> Partition:
    """One partition: each partition column with its value (``None`` for the null partition).

    >>> from openlineage_subset import dump
    >>> dump(partition({"business_date": "2024-10-15", "country": "PL"}))
    {'dimensions': {'business_date': '2024-10-15', 'country': 'PL'}}
    """
    if not isinstance(dimensions, Mapping) or not dimensions:
        raise ValueError(f"a partition needs at least one dimension, got {dimensions!r}")
    values = {}
    for key, value in dimensions.items():
        if not isinstance(key, str):
            raise TypeError(f"a partition dimension name must be a string, got {key!r}")
        values[key] = None if value is None else format_literal(value)
    if identifier is not None and not isinstance(identifier, str):
        raise TypeError(f"a partition identifier must be a string, got {identifier!r}")
    return Partition(dimensions=values, identifier=identifier)


def partitions(items: Iterable[Mapping[str, object] | Partition]) -> PartitionSubsetCondition:
    """A ``partition`` condition from partitions or mappings of their dimensions.

    >>> from openlineage_subset import render
    >>> render(partitions([{"business_date": "2024-10-15", "country": "PL"}]))
    "PARTITION (business_date = '2024-10-15', country = 'PL')"
    """
    built = [item if isinstance(item, Partition) else partition(item) for item in items]
    return PartitionSubsetCondition(partitions=built)


def input_facet(
    condition: SubsetCondition, *, producer: str, **additional_properties: JsonValue
) -> InputSubsetFacet:
    """The ``subset`` facet of an input dataset, with the newest version's ``_schemaURL`` set.

    >>> facet = input_facet(location(["s3://bucket/a"]), producer="https://example.com/job")
    >>> facet.schema_url  # doctest: +ELLIPSIS
    'https://openlineage.io/spec/facets/.../BaseSubsetDatasetFacet.json#/$defs/InputSubsetInputDatasetFacet'
    >>> from openlineage_subset import spec
    >>> facet.schema_url == spec().facet_def_url("InputSubsetInputDatasetFacet")
    True
    """
    facet = _facet(condition, INPUT_FACET_DEF, "input_condition", producer, additional_properties)
    return cast(InputSubsetFacet, facet)


def output_facet(
    condition: SubsetCondition, *, producer: str, **additional_properties: JsonValue
) -> OutputSubsetFacet:
    """The ``subset`` facet of an output dataset, with its ``_schemaURL`` set."""
    facet = _facet(condition, OUTPUT_FACET_DEF, "output_condition", producer, additional_properties)
    return cast(OutputSubsetFacet, facet)


def _facet(
    condition: SubsetCondition,
    definition: str,
    attribute: str,
    producer: str,
    extra: dict[str, Any],
) -> JsonObject:
    """The facet class of the condition's own spec version, so the two always match."""
    if not isinstance(condition, SubsetCondition):
        raise TypeError(
            "a facet takes a subset condition (field(...) == ..., location(...), partitions(...)), "
            f"got {type(condition).__name__}"
        )
    if not isinstance(producer, str) or not producer:
        raise ValueError("producer must be a non-empty URI naming what produced the facet")
    facet_class = getattr(sys.modules[type(condition).__module__], definition)
    facet: JsonObject = facet_class(
        **{attribute: condition},
        producer=producer,
        schema_url=facet_class.SCHEMA_URL,
        additional_properties=extra,
    )
    return facet
