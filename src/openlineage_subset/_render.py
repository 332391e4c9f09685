"""``render()``: a subset condition as readable, SQL-like text."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from openlineage_subset._convert import dump
from openlineage_subset._nesting import check_nesting, stack_room

_SYMBOLS = {
    "EQUAL": "=",
    "GREATER_THAN": ">",
    "GREATER_EQUAL_THAN": ">=",
    "LESS_THAN": "<",
    "LESS_EQUAL_THAN": "<=",
}
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?")


def render(condition: object) -> str:
    """A condition (model or JSON) as SQL-like text; a facet renders its condition.

    Numbers print bare, other literals in single quotes, fields with odd characters in
    backticks; a chain of one operator prints flat, mixed ``AND``/``OR`` with parentheses.
    Partitions print as ``PARTITION (k = 'v')``
    joined by ``OR``, locations as ``LOCATION IN (...)``. A condition type this version does not
    know prints as ``type(key=value, ...)``. A condition nested more than 512 levels deep or
    containing itself raises :class:`SubsetDocumentError`.

    >>> from openlineage_subset import field, location
    >>> country = field("country")
    >>> render((field("business_date") == "2024-10-15") & ((country == "PL") | (country == "DE")))
    "business_date = '2024-10-15' AND (country = 'PL' OR country = 'DE')"
    >>> render(location(["s3://bucket/a", "s3://bucket/b"]))
    "LOCATION IN ('s3://bucket/a', 's3://bucket/b')"
    """
    found = condition if isinstance(condition, Mapping) else dump(condition)
    if not isinstance(found, Mapping):
        raise TypeError(
            f"render() takes a subset condition or facet, got {type(condition).__name__}"
        )
    data: Mapping[str, Any] = found
    levels = check_nesting(data, "condition")
    for key in ("inputCondition", "outputCondition"):
        if key in data:
            data = data[key]
            break
    with stack_room(levels):
        return _render(data)[0]


def _render(node: Any) -> tuple[str, str | None]:
    """Text of a condition node, and the operator joining its top level (None for an atom)."""
    if not isinstance(node, Mapping):
        return json.dumps(node), None
    kind = node.get("type")
    if kind == "compare":
        symbol = _SYMBOLS.get(str(node.get("comparison")), f"{node.get('comparison')}")
        return f"{_operand(node.get('left'))} {symbol} {_operand(node.get('right'))}", None
    if kind == "binary":
        operator = str(node.get("operator"))
        parts = []
        for side in ("left", "right"):
            text, joined_by = _render(node.get(side))
            # Only a chain of one operator goes without parentheses: mixed AND/OR always gets
            # them, so that nobody needs to remember which binds tighter.
            parts.append(text if joined_by in (None, operator) else f"({text})")
        return f" {operator} ".join(parts), operator
    if kind == "location":
        locations = ", ".join(_quote(str(item)) for item in node.get("locations", []))
        return f"LOCATION IN ({locations})", None
    if kind == "partition":
        items = [_partition(item) for item in node.get("partitions", [])]
        if not items:
            return "NO PARTITION", None
        return " OR ".join(items), "OR" if len(items) > 1 else None
    arguments = ", ".join(f"{k}={json.dumps(v)}" for k, v in node.items() if k != "type")
    return f"{kind}({arguments})", None


def _operand(node: Any) -> str:
    if isinstance(node, Mapping) and node.get("type") == "field":
        return _name(str(node.get("field")))
    if isinstance(node, Mapping) and node.get("type") == "literal":
        value = str(node.get("value"))
        return value if _NUMBER.fullmatch(value) else _quote(value)
    return json.dumps(node)


def _partition(item: Any) -> str:
    # A dict most often: isinstance(item, dict) is decided without the ABC's check.
    dimensions = item.get("dimensions", {}) if isinstance(item, dict | Mapping) else {}
    parts = [dimension_text(key, value) for key, value in dimensions.items()]
    return f"PARTITION ({', '.join(parts)})"


def dimension_text(column: object, value: object) -> str:
    """One column of a listed partition as :func:`render` prints it.

    >>> dimension_text("day", "2024-10-15"), dimension_text("country", None)
    ("day = '2024-10-15'", 'country IS NULL')
    """
    if value is None:
        return f"{_name(str(column))} IS NULL"
    return f"{_name(str(column))} = {_quote(str(value))}"


@functools.lru_cache(maxsize=4096)
def _name(name: str) -> str:
    return name if _PLAIN_NAME.fullmatch(name) else "`" + name.replace("`", "``") + "`"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
