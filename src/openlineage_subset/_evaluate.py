"""``matches()``: whether a data row satisfies a subset condition (did this run read this row?).

Comparisons are typed: a literal is read as the type of the field it is compared with (from the
``schema`` argument, else from the Python type of the row's value), so ``'10' > '9'`` holds for a
``bigint`` column and not for a ``string`` one. ``None`` is SQL ``NULL``: a comparison with it is
not satisfied, as in a ``WHERE`` clause. Anything this version cannot evaluate (a condition type
of a newer spec, an unknown comparison or operator, a literal that is not of its column's type)
raises ``ValueError`` instead of guessing.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import operator
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Final, Literal

from openlineage_subset._builders import format_literal
from openlineage_subset._convert import dump
from openlineage_subset._nesting import check_nesting, stack_room

Kind = Literal["string", "integer", "float", "decimal", "date", "timestamp", "boolean"]

_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "EQUAL": operator.eq,
    "GREATER_THAN": operator.gt,
    "GREATER_EQUAL_THAN": operator.ge,
    "LESS_THAN": operator.lt,
    "LESS_EQUAL_THAN": operator.le,
}
_OPERATORS = ("AND", "OR")
_CONDITION_TYPES = ("compare", "binary", "partition", "location")

# Type names as Spark prints them: simpleString (``bigint``) and typeName (``long``).
_TYPE_NAMES: dict[str, Kind] = {
    "string": "string",
    "int": "integer",
    "integer": "integer",
    "long": "integer",
    "bigint": "integer",
    "short": "integer",
    "smallint": "integer",
    "byte": "integer",
    "tinyint": "integer",
    "float": "float",
    "double": "float",
    "decimal": "decimal",
    "date": "date",
    "timestamp": "timestamp",
    "timestamp_ntz": "timestamp",
    "boolean": "boolean",
}
_DECIMAL_TYPE = re.compile(r"decimal\(\s*[0-9]+\s*(,\s*[0-9]+\s*)?\)")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,6}))?)?"
    r"(?:(Z)|([+-])([0-9]{2}):?([0-9]{2}))?",
    re.IGNORECASE,
)
_EXPECTED: dict[Kind, str] = {
    "string": "a string",
    "integer": "a number in plain decimal, such as '42'",
    "float": "a number in plain decimal, such as '12.5'",
    "decimal": "a number in plain decimal, such as '12.50'",
    "date": "a date written YYYY-MM-DD, such as '2024-10-15'",
    "timestamp": "an ISO-8601 timestamp, such as '2024-10-15T10:00:00Z'",
    "boolean": "'true' or 'false'",
}
_SHOWN_KEYS = 20


def matches(
    condition: object,
    row: Mapping[str, object],
    schema: Mapping[str, str] | None = None,
    *,
    path: str | None = None,
) -> bool:
    """Whether ``row`` satisfies ``condition``: did the run that emitted it read (write) this row?

    ``condition`` is a condition or a subset facet (its ``inputCondition`` or
    ``outputCondition`` is used), as a model or as JSON. ``schema`` maps column names to Spark
    type names (``bigint``, ``decimal(10,2)``, ``date``, ``timestamp``, ...); a column it does
    not name takes its type from the row's value (``bool``, ``int``, ``float``, ``Decimal``,
    ``str``, ``datetime.date``, ``datetime.datetime``). Strings in the row are read as their
    column's type. Naive datetimes (in the row, or literals without an offset) are taken as UTC,
    and ``timestamp_ntz`` compares as if it were UTC. Floats follow Spark: NaN equals NaN and is
    greater than every other number.

    A field name finds the row key of that name, else walks nested mappings along its dots
    (``address.city``); a field of a ``None`` struct is ``None``. A comparison with ``None`` is
    not satisfied (SQL ``NULL``). Both sides of ``AND``/``OR`` and every partition are evaluated,
    so an error in one branch is not hidden by the other. A ``location`` condition needs
    ``path``, the file or object the row came from: it matches a location equal to it or a
    directory above it (``file:///tmp/a``, ``file:/tmp/a`` and ``/tmp/a`` are one path).

    Raises ``ValueError`` for what it cannot evaluate: a field the row does not have, a literal
    or value not of its column's type, an unknown condition type, comparison or operator; its
    subclass :class:`SubsetDocumentError` for a condition, row or schema nested more than 512
    levels deep or containing itself.

    >>> import datetime
    >>> from decimal import Decimal
    >>> from openlineage_subset import field, location
    >>> condition = (field("business_date") == "2024-10-15") & (field("amount") > 100)
    >>> row = {"business_date": datetime.date(2024, 10, 15), "amount": Decimal("120.50")}
    >>> matches(condition, row)
    True
    >>> matches(field("amount") > 100, {"amount": "99"}, {"amount": "bigint"})
    False
    >>> matches(field("amount") > 100, {"amount": None})
    False
    >>> matches(location(["s3://bucket/sales"]), {}, path="s3://bucket/sales/part-0.parquet")
    True
    """
    data, where, levels = _prepare("matches", condition, row, schema, path)
    with stack_room(levels):
        return _holds(data, _Row(row, schema or {}, path), where)


def partition_overlap(
    condition: object,
    dimensions: Mapping[str, str | None],
    schema: Mapping[str, str] | None = None,
    *,
    path: str | None = None,
) -> bool | None:
    """Whether a condition selects rows of a partition, knowing only the partition's values.

    ``dimensions`` are the partition columns' values as in the directory names (None for the
    null partition); every other column is unknown. True: the condition selects the
    partition's rows as far as those values decide (a ``location`` at or below ``path``, the
    partition's directory, selects some of them); False: it selects none of them; None: it
    depends on other columns, or on a ``location`` condition given no ``path``. ``AND`` and
    ``OR`` follow three-valued logic, so False is only ever said when no row can match.

    Values compare as ``schema`` types them; a column it does not name is typed from its value
    (an integer, a decimal number, an ISO date, else text). A literal that is not of its
    column's type gives None rather than a guess.

    >>> from openlineage_subset import field
    >>> day = {"business_date": "2024-10-15", "country": "DE"}
    >>> partition_overlap(field("business_date") >= "2024-10-01", day)
    True
    >>> partition_overlap((field("country") == "PL") & (field("amount") > 100), day)
    False
    >>> print(partition_overlap((field("country") == "DE") & (field("amount") > 100), day))
    None
    """
    data, where, levels = _prepare("partition_overlap", condition, dimensions, schema, path)
    types = {name: guessed_type(value) for name, value in dimensions.items()}
    types.update(schema or {})
    with stack_room(levels):
        return _overlap(data, _Row(dimensions, types, path), where)


def _prepare(
    caller: str,
    condition: object,
    row: object,
    schema: object,
    path: object,
) -> tuple[Mapping[str, Any], str, int]:
    """The condition's JSON (out of a facet if need be), where it is, and the nesting depth."""
    found = condition if isinstance(condition, Mapping) else dump(condition)
    if not isinstance(found, Mapping):
        raise TypeError(
            f"{caller}() takes a subset condition or facet, got {type(condition).__name__}"
        )
    data: Mapping[str, Any] = found
    if not isinstance(row, Mapping):
        raise TypeError(f"{caller}() takes the row as a mapping, got {type(row).__name__}")
    if schema is not None and not isinstance(schema, Mapping):
        raise TypeError(f"schema must map column names to type names, got {type(schema).__name__}")
    if path is not None and not isinstance(path, str):
        raise TypeError(f"path must be a string, got {type(path).__name__}")
    levels = max(
        check_nesting(data, "condition"),
        check_nesting(row, "row"),
        check_nesting(schema, "schema"),
    )
    where = "$"
    for key in ("inputCondition", "outputCondition"):
        if key in data:
            data, where = data[key], f"$.{key}"
            break
    else:
        if "type" not in data and "subset" in data:
            raise ValueError(
                f"this is a facet map; pass the facet itself: {caller}(obj['subset'], ...)"
            )
    return data, where, levels


def guessed_type(value: str | None) -> str:
    """The type :func:`partition_overlap` reads a partition value as when no ``schema`` names
    its column: ``bigint``, ``decimal``, ``date`` (an ISO date that exists) or ``string``.
    The lineage queries and ingest type partition values by it too, so that their fast paths
    compare values as the evaluator does.

    >>> [guessed_type(v) for v in ("42", "-2.5e3", "2024-10-15", "2024-02-30", "DE", None)]
    ['bigint', 'decimal', 'date', 'string', 'string', 'string']
    """
    if value is None or not isinstance(value, str):
        return "string"
    if _INTEGER.fullmatch(value):
        return "bigint"
    if _NUMBER.fullmatch(value):
        return "decimal"
    if _DATE.fullmatch(value) and _to_date(value) is not None:
        return "date"
    return "string"


def _overlap(node: object, row: _Row, where: str) -> bool | None:
    if not isinstance(node, Mapping):
        return _holds(node, row, where)  # raises, naming what is wrong
    kind = node.get("type")
    overlap = _OVERLAPS.get(kind) if isinstance(kind, str) else None
    if overlap is None:
        return _holds(node, row, where)  # an unknown type: raises
    return overlap(node, row, where)


def _overlap_binary(node: Mapping[str, object], row: _Row, where: str) -> bool | None:
    operator_name = node.get("operator")
    if operator_name not in _OPERATORS:
        return _holds(node, row, where)  # raises, naming what is wrong
    left = _overlap(node.get("left"), row, f"{where}.left")
    right = _overlap(node.get("right"), row, f"{where}.right")
    if operator_name == "AND":
        return False if False in (left, right) else (True if left and right else None)
    return True if True in (left, right) else (False if left is right is False else None)


def _overlap_compare(node: Mapping[str, object], row: _Row, where: str) -> bool | None:
    operands = [_operand(node.get(side), f"{where}.{side}") for side in ("left", "right")]
    if node.get("comparison") not in _COMPARISONS:
        return _holds(node, row, where)  # raises, naming what is wrong
    if any(side.is_field and side.text not in row.values for side in operands):
        return None  # a column other than the partition's
    try:
        return _compare(node, row, where)
    except ValueError:
        return None  # a literal not of the column's type: no guess


def _overlap_partition(node: Mapping[str, object], row: _Row, where: str) -> bool | None:
    items = node.get("partitions")
    if not isinstance(items, list):
        return _holds(node, row, where)  # raises, naming what is wrong
    found: list[bool | None] = []
    for index, item in enumerate(items):
        listed = item.get("dimensions") if isinstance(item, Mapping) else None
        if isinstance(listed, Mapping) and any(name not in row.values for name in listed):
            found.append(None)  # a finer partitioning than this partition's
            continue
        try:
            found.append(_in_partition(item, row, f"{where}.partitions[{index}]"))
        except ValueError:
            found.append(None)
    return True if True in found else (None if None in found else False)


def _overlap_location(node: Mapping[str, object], row: _Row, where: str) -> bool | None:
    if row.path is None:
        return None
    locations = node.get("locations")
    if not isinstance(locations, list) or not all(isinstance(i, str) for i in locations):
        return _holds(node, row, where)  # raises, naming what is wrong
    target = _normal_path(row.path)
    return any(
        _covers(place, target) or _covers(target, place) for place in map(_normal_path, locations)
    )


# How each condition type meets one partition: True, False, or None for "cannot tell".
_OVERLAPS: Final[Mapping[str, Callable[[Mapping[str, object], _Row, str], bool | None]]] = {
    "binary": _overlap_binary,
    "compare": _overlap_compare,
    "partition": _overlap_partition,
    "location": _overlap_location,
}


@dataclasses.dataclass(frozen=True)
class _Row:
    values: Mapping[str, object]
    schema: Mapping[str, str]
    path: str | None


@dataclasses.dataclass(frozen=True)
class _Column:
    """The type a field's values are compared as, and how to name it in an error."""

    kind: Kind
    described: str


def _holds(node: object, row: _Row, where: str) -> bool:
    if not isinstance(node, Mapping):
        raise ValueError(f"expected a condition object at {where}, got {type(node).__name__}")
    kind = node.get("type")
    if kind == "compare":
        return _compare(node, row, where)
    if kind == "binary":
        return _binary(node, row, where)
    if kind == "partition":
        return _partition(node, row, where)
    if kind == "location":
        return _location(node, row, where)
    if kind is None:
        raise ValueError(f"the condition at {where} has no 'type'")
    raise ValueError(
        f"cannot evaluate the condition type {kind!r} at {where}: this version knows "
        f"{', '.join(_CONDITION_TYPES)} (is the condition from a newer spec version?)"
    )


def _binary(node: Mapping[str, Any], row: _Row, where: str) -> bool:
    operator_name = node.get("operator")
    if operator_name not in _OPERATORS:
        raise ValueError(
            f"cannot evaluate the operator {operator_name!r} at {where}.operator: this version "
            f"knows {' and '.join(_OPERATORS)}"
        )
    left = _holds(node.get("left"), row, f"{where}.left")
    right = _holds(node.get("right"), row, f"{where}.right")
    return (left and right) if operator_name == "AND" else (left or right)


@dataclasses.dataclass(frozen=True)
class _Operand:
    is_field: bool
    text: str  # the field name, or the literal's value
    where: str


def _operand(node: object, where: str) -> _Operand:
    if isinstance(node, Mapping):
        kind = node.get("type")
        if kind == "field":
            name = node.get("field")
            if isinstance(name, str) and name:
                return _Operand(True, name, where)
            raise ValueError(f"the field at {where}.field must be a non-empty string, got {name!r}")
        if kind == "literal":
            value = node.get("value")
            if isinstance(value, str):
                return _Operand(False, value, where)
            raise ValueError(f"the literal at {where}.value must be a string, got {value!r}")
        raise ValueError(
            f"cannot evaluate the expression type {kind!r} at {where}: this version knows "
            "field and literal"
        )
    raise ValueError(f"expected a field or literal object at {where}, got {type(node).__name__}")


def _compare(node: Mapping[str, Any], row: _Row, where: str) -> bool:
    comparison = node.get("comparison")
    compare = _COMPARISONS.get(comparison) if isinstance(comparison, str) else None
    if compare is None:
        raise ValueError(
            f"cannot evaluate the comparison {comparison!r} at {where}.comparison: this version "
            f"knows {', '.join(_COMPARISONS)}"
        )
    left = _operand(node.get("left"), f"{where}.left")
    right = _operand(node.get("right"), f"{where}.right")
    if not left.is_field and not right.is_field:
        return compare(left.text, right.text)
    fields = [side for side in (left, right) if side.is_field]
    found = {side.where: _field_value(row, side.text, side.where) for side in fields}
    column = None
    for side in fields:
        if side.text in row.schema:
            column = _declared_column(row.schema, side.text)
            break
    else:
        for side in fields:
            if found[side.where] is not None:
                column = _inferred_column(found[side.where], side.text, side.where)
                break
    if column is None:
        return False  # every field is NULL, and nothing tells the type
    field_name = fields[0].text
    values = []
    for side in (left, right):
        if side.is_field:
            value = found[side.where]
            source = f"the row's value {value!r} of the field {side.text!r}"
            values.append(None if value is None else _convert(value, column, source))
        else:
            source = f"the literal {side.text!r} at {side.where}, compared with {field_name!r},"
            values.append(_convert(side.text, column, source))
    if values[0] is None or values[1] is None:
        return False
    return compare(values[0], values[1])


def _partition(node: Mapping[str, Any], row: _Row, where: str) -> bool:
    items = node.get("partitions")
    if not isinstance(items, list):
        raise ValueError(f"expected a list of partitions at {where}.partitions, got {items!r}")
    results = [_in_partition(item, row, f"{where}.partitions[{i}]") for i, item in enumerate(items)]
    return any(results)


def _in_partition(item: object, row: _Row, where: str) -> bool:
    dimensions = item.get("dimensions") if isinstance(item, Mapping) else None
    if not isinstance(dimensions, Mapping):
        raise ValueError(f"expected a partition with a 'dimensions' object at {where}")
    equal = []
    for name, expected in dimensions.items():
        at = f"{where}.dimensions.{name}"
        value = _field_value(row, name, at)
        if isinstance(expected, (Mapping, list)):
            raise ValueError(
                f"a partition value must be a string or null, got {expected!r} at {at}"
            )
        column = None
        if name in row.schema:
            column = _declared_column(row.schema, name)
        elif value is not None:
            column = _inferred_column(value, name, at)
        dimension = None
        if expected is not None and column is not None:
            text = format_literal(expected)  # a JSON number or boolean reads as its literal
            dimension = _convert(text, column, f"the partition value {text!r} at {at}")
        if dimension is None or column is None or value is None:
            equal.append(expected is None and value is None)
        else:
            source = f"the row's value {value!r} of the field {name!r}"
            equal.append(dimension == _convert(value, column, source))
    return all(equal)


def _location(node: Mapping[str, Any], row: _Row, where: str) -> bool:
    locations = node.get("locations")
    if not isinstance(locations, list) or not all(isinstance(item, str) for item in locations):
        raise ValueError(f"expected a list of strings at {where}.locations, got {locations!r}")
    if row.path is None:
        raise ValueError("a location condition needs the row's path: matches(..., path=...)")
    target = _normal_path(row.path)
    return any(_covers(_normal_path(item), target) for item in locations)


def _normal_path(text: str) -> str:
    """One spelling per place: no trailing slash, local files as a bare absolute path."""
    if text.startswith("file:"):
        rest = text[len("file:") :]
        if rest.startswith("//"):
            authority, slash, tail = rest[2:].partition("/")
            # file://host/share names another machine's file: only the local forms are a path.
            rest = slash + tail if authority in ("", "localhost") else text
        text = rest if rest.startswith("/") else text
    return text.rstrip("/") or "/"


def _covers(location: str, path: str) -> bool:
    """Whether ``path`` is ``location`` or lies under it at a ``/`` boundary."""
    prefix = location if location.endswith("/") else location + "/"
    return path == location or path.startswith(prefix)


def _field_value(row: _Row, name: str, where: str) -> object:
    found, value = _lookup(row.values, name)
    if not found:
        keys = [repr(key) for key in row.values]
        shown = ", ".join(keys[:_SHOWN_KEYS])
        if len(keys) > _SHOWN_KEYS:
            shown += f" and {len(keys) - _SHOWN_KEYS} more"
        raise ValueError(
            f"the row has no field {name!r} (named at {where}); its fields are: {shown or 'none'}."
            " Name a nested field by its dotted path, such as 'address.city'"
        )
    return value


def _lookup(values: Mapping[Any, Any], name: str) -> tuple[bool, object]:
    """(found, value) of a key, else of a dotted path through nested mappings."""
    if name in values:
        return True, values[name]
    dot = name.rfind(".")
    while dot > 0:  # the longest prefix first: keys may contain dots themselves
        head = name[:dot]
        if head in values:
            inner = values[head]
            if inner is None:
                return True, None  # a field of a NULL struct is NULL
            if isinstance(inner, Mapping):
                found, value = _lookup(inner, name[dot + 1 :])
                if found:
                    return True, value
        dot = name.rfind(".", 0, dot)
    return False, None


def _declared_column(schema: Mapping[str, str], name: str) -> _Column:
    type_name = schema[name]
    key = type_name.strip().lower() if isinstance(type_name, str) else ""
    kind = "decimal" if _DECIMAL_TYPE.fullmatch(key) else _TYPE_NAMES.get(key)
    if kind is None:
        raise ValueError(
            f"cannot compare the column {name!r} of type {type_name!r}: the schema's types can be "
            f"{', '.join(_TYPE_NAMES)} or decimal(p,s)"
        )
    return _Column(kind, repr(type_name))


def _inferred_column(value: object, name: str, where: str) -> _Column:
    kind: Kind
    if isinstance(value, bool):  # before int: a bool is an int in Python
        kind = "boolean"
    elif isinstance(value, int):
        kind = "integer"
    elif isinstance(value, float):
        kind = "float"
    elif isinstance(value, Decimal):
        kind = "decimal"
    elif isinstance(value, _dt.datetime):  # before date: a datetime is a date in Python
        kind = "timestamp"
    elif isinstance(value, _dt.date):
        kind = "date"
    elif isinstance(value, str):
        kind = "string"
    else:
        raise ValueError(
            f"cannot compare the field {name!r} (at {where}): its value {value!r} is a "
            f"{type(value).__name__}; rows hold str, int, float, Decimal, bool, datetime.date, "
            "datetime.datetime or None"
        )
    return _Column(kind, f"{kind} (as the row's {type(value).__name__} value of {name!r})")


def _convert(value: object, column: _Column, source: str) -> Any:
    """``value`` as its column's type, ready to compare; ``source`` names it in an error."""
    converted = _CONVERTERS[column.kind](value)
    if converted is None:
        raise ValueError(
            f"{source} is not a valid {column.described}: expected {_EXPECTED[column.kind]}"
        )
    return converted


def _to_string(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _to_integer(value: object) -> int | Decimal | None:
    if isinstance(value, str):
        if _INTEGER.fullmatch(value):
            return int(value)
        # A fractional literal compares exactly, as SQL compares int_col > 1.5.
        number = Decimal(value) if _NUMBER.fullmatch(value) else None
        if number is None or not number.is_finite():
            return None
        return int(number) if number == int(number) else number
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, (float, Decimal)) and _finite(value) and value == int(value):
        return int(value)
    return None


def _finite(value: float | Decimal) -> bool:
    return value.is_finite() if isinstance(value, Decimal) else math.isfinite(value)


def _to_float(value: object) -> tuple[bool, float] | None:
    """A key ordering floats as Spark does: NaN equals NaN and sorts above every number."""
    if isinstance(value, str):
        if not _NUMBER.fullmatch(value):
            return None
        number = float(value)
    elif isinstance(value, Decimal) and value.is_nan():
        number = math.nan  # float() refuses a signalling NaN
    elif isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        number = float(value)
    else:
        return None
    return (True, 0.0) if math.isnan(number) else (False, number)


def _to_decimal(value: object) -> Decimal | None:
    if isinstance(value, str):
        return Decimal(value) if _NUMBER.fullmatch(value) else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float) and _finite(value):
        return Decimal(repr(value))  # the shortest repr: 0.1 is 0.1, not its binary expansion
    if isinstance(value, Decimal) and value.is_finite():
        return value
    return None


def _to_date(value: object) -> _dt.date | None:
    if isinstance(value, str):
        found = _DATE.fullmatch(value)
        if found is None:
            return None
        try:
            return _dt.date(*(int(part) for part in found.groups()))
        except ValueError:
            return None
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return value
    return None


def _to_timestamp(value: object) -> _dt.datetime | None:
    if isinstance(value, _dt.datetime):
        return value if value.utcoffset() is not None else value.replace(tzinfo=_dt.timezone.utc)
    if not isinstance(value, str):
        return None
    found = _TIMESTAMP.fullmatch(value)
    if found is None:
        return None
    year, month, day, hour, minute, second, fraction, _z, sign, off_h, off_m = found.groups()
    zone = _dt.timezone.utc
    try:
        if sign is not None:
            offset = _dt.timedelta(hours=int(off_h), minutes=int(off_m))
            zone = _dt.timezone(-offset if sign == "-" else offset)
        return _dt.datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second or 0),
            int((fraction or "").ljust(6, "0")),
            tzinfo=zone,
        )
    except ValueError:
        return None


def _to_boolean(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


_CONVERTERS: dict[Kind, Callable[[object], Any]] = {
    "string": _to_string,
    "integer": _to_integer,
    "float": _to_float,
    "decimal": _to_decimal,
    "date": _to_date,
    "timestamp": _to_timestamp,
    "boolean": _to_boolean,
}
