"""Spark filter expressions to subset conditions, soundly.

The one rule: an emitted condition must hold for every row the filter lets through (a superset
of the rows is acceptable, a subset never is). So inside AND a conjunct that cannot be expressed
is dropped; an OR with an inexpressible branch is dropped whole; NOT is pushed down where it can
be rewritten (``NOT a = 1`` becomes ``a < 1 OR a > 1``); IN becomes a balanced OR of equalities;
casts are looked through only when lossless. IS NULL, LIKE, functions of columns, UDFs and
subqueries are dropped; Spark's inferred ``isnotnull`` conjuncts are dropped silently.

Literals are written as the subset spec renders them: numbers in plain decimal, booleans
``true``/``false``, dates ``YYYY-MM-DD``, timestamps ISO-8601 in UTC with ``Z``.

:func:`redact_condition` keeps the values of chosen columns out of a condition by the same rule:
a comparison with a redacted column's value is removed as an inexpressible one is.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from typing import Any

from openlineage_subset import all_of, any_of, spec
from openlineage_subset.producer import unescape_path_name
from openlineage_subset.spark._trees import Node

_COMPARISONS = {
    "EqualTo": "EQUAL",
    "LessThan": "LESS_THAN",
    "LessThanOrEqual": "LESS_EQUAL_THAN",
    "GreaterThan": "GREATER_THAN",
    "GreaterThanOrEqual": "GREATER_EQUAL_THAN",
}
_MIRRORED = {
    "EQUAL": "EQUAL",
    "LESS_THAN": "GREATER_THAN",
    "LESS_EQUAL_THAN": "GREATER_EQUAL_THAN",
    "GREATER_THAN": "LESS_THAN",
    "GREATER_EQUAL_THAN": "LESS_EQUAL_THAN",
}
_NEGATED = {
    "LESS_THAN": "GREATER_EQUAL_THAN",
    "LESS_EQUAL_THAN": "GREATER_THAN",
    "GREATER_THAN": "LESS_EQUAL_THAN",
    "GREATER_EQUAL_THAN": "LESS_THAN",
}
_INTEGRAL_BITS = {"byte": 8, "short": 16, "integer": 32, "long": 64}
_DECIMAL = re.compile(r"decimal\((\d+),\s*(-?\d+)\)")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_DAY = _dt.date(1970, 1, 1)


def condition_from_filters(filters: Iterable[Node]) -> Any:
    """The condition that every row passing all ``filters`` (conjuncts) satisfies, or None.

    Top-level ``isnotnull`` conjuncts are dropped silently: Spark infers them beside every
    comparison and join key, and the spec has no IS NOT NULL. Inside an OR, where dropping
    would lose the whole OR, ``x IS NOT NULL`` is written with comparisons that exclude
    exactly the nulls (``x <= 0 OR x > 0``).

    >>> from openlineage_subset import render
    >>> from openlineage_subset.spark._trees import Node
    >>> amount = Node("AttributeReference", {"name": "amount", "dataType": "double"})
    >>> ten = Node("Literal", {"value": "10.0", "dataType": "double"})
    >>> gt = Node("GreaterThan", {"left": 0, "right": 1}, (amount, ten))
    >>> render(condition_from_filters([gt, Node("IsNotNull", {"child": 0}, (amount,))]))
    'amount > 10.0'
    """
    parts = [
        condition
        for condition in (_translate(f, negated=False) for f in filters if f.kind != "IsNotNull")
        if condition is not None
    ]
    return all_of(parts) if parts else None


def _translate(node: Node, *, negated: bool) -> Any:
    kind = node.kind
    if kind == "Not":
        return _translate(node.child("child"), negated=not negated)
    if kind in ("And", "Or"):
        return _junction(node, negated=negated)
    if kind in _COMPARISONS:
        return _comparison(node, _COMPARISONS[kind], negated)
    if kind == "EqualNullSafe" and not negated:
        return _null_safe_equal(node)
    if kind in ("In", "InSet"):
        return _membership(node, negated)
    name = _field_name(node) if kind == "AttributeReference" else None
    if name is not None and node.fields.get("dataType") == "boolean":
        return _compare(name, "EQUAL", "false" if negated else "true")
    if (kind == "IsNotNull" and not negated) or (kind == "IsNull" and negated):
        return _is_not_null(node.child("child"))
    return None


def _junction(node: Node, *, negated: bool) -> Any:
    """``And``/``Or`` (De Morgan's swap when negated). A conjunction keeps the sides that
    translate (a looser condition, still true of every row), a disjunction needs both."""
    left = _translate(node.child("left"), negated=negated)
    right = _translate(node.child("right"), negated=negated)
    if (node.kind == "And") != negated:
        parts = [part for part in (left, right) if part is not None]
        return all_of(parts) if parts else None
    return None if left is None or right is None else any_of([left, right])


_ORIGIN_BY_TYPE = {
    "date": "1970-01-01",
    "timestamp": "1970-01-01T00:00:00Z",
    "timestamp_ntz": "1970-01-01T00:00:00Z",
}


def _is_not_null(node: Node) -> Any:
    """``node IS NOT NULL`` in comparisons, which exclude exactly the nulls."""
    target = _not_null_target(node)
    if target is None:
        return None
    name, kind = _field_name(target), _field_type(target)
    if name is None or kind is None:
        return None
    if kind == "string":
        return _compare(name, "GREATER_EQUAL_THAN", "")
    if kind == "boolean":
        return any_of([_compare(name, "EQUAL", "true"), _compare(name, "EQUAL", "false")])
    origin = "0" if _numeric(kind) else _ORIGIN_BY_TYPE.get(kind)
    if origin is None:
        return None
    return any_of(
        [_compare(name, "LESS_EQUAL_THAN", origin), _compare(name, "GREATER_THAN", origin)]
    )


def _not_null_target(node: Node) -> Node | None:
    """The field whose nulls exactly make ``node`` null, when there is one.

    A field itself; or a null-intolerant test of one field against non-null literals (a
    comparison, IN, NOT of those), which is null exactly when the field is.
    """
    if _field_name(node) is not None:
        return node
    if node.kind == "Not":
        return _not_null_target(node.child("child"))
    if node.kind in _COMPARISONS:
        left, right = node.child("left"), node.child("right")
        if _field_name(left) is None:
            left, right = right, left
        literal = right.kind == "Literal" and right.fields.get("value") is not None
        return left if _field_name(left) is not None and literal else None
    if node.kind == "In":
        literals = node.child_list("list")
        subject = node.child("value")
        non_null = all(i.kind == "Literal" and i.fields.get("value") is not None for i in literals)
        return subject if literals and non_null and _field_name(subject) is not None else None
    return None


def _comparison(node: Node, comparison: str, negated: bool) -> Any:
    left, right = node.child("left"), node.child("right")
    if _field_name(left) is None and _field_name(right) is not None:
        left, right, comparison = right, left, _MIRRORED[comparison]
    name = _field_name(left)
    if name is None:
        return None
    other = _field_name(right)
    if other is not None:
        if _field_type(left) != _field_type(right) and not (
            _numeric(_field_type(left)) and _numeric(_field_type(right))
        ):
            return None
        return _negatable(name, comparison, other, negated, field_on_right=True)
    value = literal_text(right)
    if value is None or not _comparable(_field_type(left), right.fields.get("dataType")):
        return None
    return _negatable(name, comparison, value, negated)


def _negatable(
    name: str, comparison: str, operand: str, negated: bool, *, field_on_right: bool = False
) -> Any:
    if not negated:
        return _compare(name, comparison, operand, field_on_right=field_on_right)
    if comparison == "EQUAL":
        return any_of(
            [
                _compare(name, "LESS_THAN", operand, field_on_right=field_on_right),
                _compare(name, "GREATER_THAN", operand, field_on_right=field_on_right),
            ]
        )
    return _compare(name, _NEGATED[comparison], operand, field_on_right=field_on_right)


def _null_safe_equal(node: Node) -> Any:
    # a <=> v is a = v when v is not null; a <=> b holds for two nulls, which = cannot say.
    left, right = node.child("left"), node.child("right")
    if _field_name(left) is None:
        left, right = right, left
    name = _field_name(left)
    value = literal_text(right) if right.kind == "Literal" else None
    if (
        name is None
        or value is None
        or not _comparable(_field_type(left), right.fields.get("dataType"))
    ):
        return None
    return _compare(name, "EQUAL", value)


def _membership(node: Node, negated: bool) -> Any:
    subject = node.child("value") if node.kind == "In" else node.child("child")
    name = _field_name(subject)
    if name is None:
        return None
    if node.kind == "In":
        literals = node.child_list("list")
        if any(item.kind != "Literal" for item in literals):
            return None
        if any(item.fields.get("value") is None for item in literals):
            # x IN (.., NULL) adds nothing; x NOT IN (.., NULL) lets no row through.
            literals = [item for item in literals if item.fields.get("value") is not None]
            if negated:
                return None
        if not all(_comparable(_field_type(subject), i.fields.get("dataType")) for i in literals):
            return None
        texts = [literal_text(item) for item in literals]
    else:
        raw = node.exact.set_values
        if raw is None:
            return None
        texts = [internal_value_text(value, _field_type(subject)) for value in raw]
    if not texts or any(text is None for text in texts):
        return None
    unique = list(dict.fromkeys(t for t in texts if t is not None))
    if negated:
        return all_of([_negatable(name, "EQUAL", value, True) for value in unique])
    return any_of([_compare(name, "EQUAL", value) for value in unique])


def _compare(name: str, comparison: str, operand: str, *, field_on_right: bool = False) -> Any:
    models = spec().models
    right = (
        models.FieldBaseCompareExpression(field=operand)
        if field_on_right
        else models.LiteralCompareExpression(value=operand)
    )
    return models.CompareSubsetCondition(
        left=models.FieldBaseCompareExpression(field=name),
        right=right,
        comparison=models.Comparison(comparison),
    )


def _field_name(node: Node) -> str | None:
    """The dataset field an expression reads, seen through lossless casts; else None."""
    if node.kind == "AttributeReference":
        name = node.fields.get("name")
        return name if isinstance(name, str) and name else None
    if node.kind == "GetStructField":
        parent = _field_name(node.child("child"))
        name = node.fields.get("name")
        return f"{parent}.{name}" if parent and isinstance(name, str) and name else None
    if node.kind == "Cast" and _lossless(
        _field_type(node.child("child")), node.fields.get("dataType")
    ):
        return _field_name(node.child("child"))
    return None


def _field_type(node: Node) -> str | None:
    """The type of the field under an expression (below lossless casts)."""
    kind = _data_type(node)
    return kind if isinstance(kind, str) else None


def _data_type(node: Node) -> Any:
    """A node's Spark data type as JSON: a name (``"integer"``) or a struct object."""
    if node.kind == "Cast":
        return _data_type(node.child("child"))
    if node.kind == "GetStructField":
        parent = _data_type(node.child("child"))
        ordinal = node.fields.get("ordinal")
        fields = parent.get("fields") if isinstance(parent, dict) else None
        if isinstance(fields, list) and isinstance(ordinal, int) and 0 <= ordinal < len(fields):
            return fields[ordinal].get("type")
        return None
    return node.fields.get("dataType")


def _lossless(source: str | None, target: object) -> bool:
    """Whether casting ``source`` to ``target`` keeps every value distinct and in order."""
    if source is None or not isinstance(target, str):
        return False
    if source == target:
        return True
    if source in _INTEGRAL_BITS:
        return _integral_lossless(_INTEGRAL_BITS[source], target)
    if source == "float":
        return target == "double"
    source_decimal, target_decimal = _DECIMAL.fullmatch(source), _DECIMAL.fullmatch(target)
    if source_decimal and target_decimal:
        p1, s1 = int(source_decimal[1]), int(source_decimal[2])
        p2, s2 = int(target_decimal[1]), int(target_decimal[2])
        return s2 >= s1 and p2 - s2 >= p1 - s1
    return False


def _integral_lossless(bits: int, target: str) -> bool:
    """Whether casting an integer of ``bits`` bits to ``target`` keeps every value: a wide
    enough integer, a float whose mantissa holds it, or a decimal with the digits."""
    if target in _INTEGRAL_BITS:
        return _INTEGRAL_BITS[target] >= bits
    if target == "double":
        return bits <= 32
    if target == "float":
        return bits <= 16
    decimal = _DECIMAL.fullmatch(target)
    digits = {8: 3, 16: 5, 32: 10, 64: 19}[bits]
    return bool(decimal) and int(decimal[1]) - int(decimal[2]) >= digits  # type: ignore[index]


def _numeric(kind: str | None) -> bool:
    return kind is not None and (
        kind in _INTEGRAL_BITS or kind in ("float", "double") or bool(_DECIMAL.fullmatch(kind))
    )


def _comparable(field_type: str | None, literal_type: object) -> bool:
    """Whether a literal of ``literal_type`` compares with the field as its text would."""
    if not isinstance(literal_type, str) or field_type is None:
        return False
    if _numeric(field_type):
        return _numeric(literal_type)
    return field_type == literal_type


def literal_text(node: Node) -> str | None:
    """A literal's value as the subset spec writes it, or None when it has no faithful form.

    Timestamps need their exact value, read separately into ``node.exact.timestamp_micros``:
    the JSON prints them in the session time zone without an offset.
    """
    if node.kind != "Literal":
        return None
    value, kind = node.fields.get("value"), node.fields.get("dataType")
    if value is None or not isinstance(kind, str):
        return None
    if kind in ("timestamp", "timestamp_ntz"):
        micros = node.exact.timestamp_micros
        return None if micros is None else _timestamp_text(micros)
    return _text_of(str(value), kind)


def internal_value_text(value: str, kind: str | None) -> str | None:
    """A value as Spark stores it internally (as printed by the JVM), written per the spec.

    >>> internal_value_text("19737", "date"), internal_value_text("1704078000000000", "timestamp")
    ('2024-01-15', '2024-01-01T03:00:00Z')
    """
    if kind is None:
        return None
    if kind == "date":
        try:
            return (_EPOCH_DAY + _dt.timedelta(days=int(value))).isoformat()
        except (ValueError, OverflowError):
            return None
    if kind in ("timestamp", "timestamp_ntz"):
        try:
            return _timestamp_text(int(value))
        except ValueError:
            return None
    return _text_of(value, kind)


def _text_of(value: str, kind: str) -> str | None:
    if kind in _INTEGRAL_BITS:
        return value if re.fullmatch(r"-?\d+", value) else None
    if kind in ("float", "double") or _DECIMAL.fullmatch(kind):
        try:
            # A double prints as 1.0E-7; its shortest repr gives the plain 0.0000001.
            number = Decimal(repr(float(value))) if kind in ("float", "double") else Decimal(value)
        except (InvalidOperation, ValueError):
            return None
        if not number.is_finite():
            return None
        text = format(number, "f")
        return "0" if text in ("-0", "-0.0") else text
    if kind == "string":
        return value
    if kind == "boolean":
        return value if value in ("true", "false") else None
    if kind == "date":
        return value if _DATE.fullmatch(value) else None
    return None


def _timestamp_text(micros: int) -> str | None:
    try:
        moment = _EPOCH + _dt.timedelta(microseconds=micros)
    except OverflowError:
        return None
    return moment.replace(tzinfo=None).isoformat() + "Z"


def redact_condition(condition: Any, redacts: Callable[[str], bool]) -> Any:
    """``condition`` without the values of the columns ``redacts`` names, still sound; or None.

    Every row the condition held for, the redacted condition holds for (it may hold for more):

    - a comparison of a redacted column with a literal is removed as an inexpressible one is:
      an ``AND`` keeps its other side, an ``OR`` holding one goes whole; everything else keeps
      its place and shape. A comparison of two columns stays: it carries no value;
    - a partition list naming a redacted column, or a location list with a ``column=value``
      directory of one, cannot be cut down soundly (the values are in the paths too) and goes
      whole.

    None means no condition left (the whole dataset): the caller takes the next level, or
    gives no facet. A condition of a kind not known here goes whole too.

    >>> from openlineage_subset import field, render
    >>> ssn = lambda column: column == "ssn"
    >>> day, person = field("day") == "2024-10-15", field("ssn") == "123-45-6789"
    >>> render(redact_condition(day & person, ssn))
    "day = '2024-10-15'"
    >>> print(redact_condition(day | person, ssn))
    None
    """
    kind = getattr(condition, "type", None)
    if kind == "compare":
        sides = (condition.left, condition.right)
        literal = any(side.type == "literal" for side in sides)
        redacted = any(side.type == "field" and redacts(side.field) for side in sides)
        return None if literal and redacted else condition
    if kind == "binary":
        left = redact_condition(condition.left, redacts)
        right = redact_condition(condition.right, redacts)
        operator = getattr(condition.operator, "value", condition.operator)
        if operator == "AND" and (left is None or right is None):
            return right if left is None else left
        if operator not in ("AND", "OR") or left is None or right is None:
            return None
        if left is condition.left and right is condition.right:
            return condition
        return replace(condition, left=left, right=right)
    if kind == "partition":
        columns = {column for partition in condition.partitions for column in partition.dimensions}
        return None if any(redacts(column) for column in columns) else condition
    if kind == "location":
        held = any(_holds_value_of(location, redacts) for location in condition.locations)
        return None if held else condition
    return None


def _holds_value_of(location: str, redacts: Callable[[str], bool]) -> bool:
    """Whether a ``column=value`` directory of ``location`` is one of a redacted column."""
    for directory in location.split("/"):
        column, equals, value = directory.partition("=")
        if equals and column and value and redacts(unescape_path_name(column)):
            return True
    return False
