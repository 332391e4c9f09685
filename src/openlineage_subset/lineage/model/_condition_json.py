"""Conditions and partitions as JSON text with one spelling each: what the store keys them by,
and the partitions a condition lists anywhere in it."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from json.encoder import c_make_encoder  # type: ignore[attr-defined]
from json.encoder import encode_basestring as _string  # json.dumps of a str, non-ASCII kept
from typing import Any

from openlineage_subset import (
    guessed_type,
)


def dimensions_text(dimensions: Mapping[str, str | None]) -> str:
    """A partition's dimensions as ``partitions.dimensions`` holds them: canonical JSON.

    >>> dimensions_text({"day": "2024-10-15", "country": None})
    '{"country":null,"day":"2024-10-15"}'
    """
    return dimensions_columns_kinds(dimensions)[0]


def canonical(value: Any) -> str:
    """JSON text with sorted keys and no spaces: one spelling per value (of parsed JSON, or
    made from it: no value contains itself).

    >>> canonical({"b": 1, "a": [True, None]})
    '{"a":[true,null],"b":1}'
    """
    if _ENCODE is None:  # pragma: no cover - a Python without json's C encoder
        return _CANONICAL.encode(value)
    return "".join(_ENCODE(value, 0))


def any_of_json(conditions: list[Any]) -> Any:
    """One condition, or a balanced ``OR`` of several (JSON).

    >>> any_of_json([{"type": "location", "locations": ["a"]}])["type"]
    'location'
    >>> any_of_json([{"n": 1}, {"n": 2}, {"n": 3}])["right"]["operator"]
    'OR'
    """
    if len(conditions) == 1:
        return conditions[0]
    middle = len(conditions) // 2
    return {
        "type": "binary",
        "operator": "OR",
        "left": any_of_json(conditions[:middle]),
        "right": any_of_json(conditions[middle:]),
    }


def listed_partitions(
    condition: Any,
) -> tuple[list[tuple[Mapping[str, str | None], str | None]], bool]:
    """(dimensions, identifier) of each partition a condition lists, anywhere in it; and
    whether it only lists partitions: partition lists joined by OR, each partition's dimensions
    a non-empty object of string or null values (then it selects no other partition). The OR
    of conditions (:func:`any_of_json`) only lists partitions when each of them does.

    >>> listed_partitions({"type": "partition", "partitions": [
    ...     {"dimensions": {"day": "2024-10-15"}, "identifier": "day=2024-10-15"}]})
    ([({'day': '2024-10-15'}, 'day=2024-10-15')], True)
    >>> listed_partitions({"type": "binary", "operator": "AND", "left": {}, "right": {}})
    ([], False)
    """
    found: list[tuple[Mapping[str, str | None], str | None]] = []
    lists = True
    stack = [condition]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            lists = False
            continue
        kind = node.get("type")
        if kind == "binary":
            lists = lists and node.get("operator") == "OR"
            stack.extend((node.get("right"), node.get("left")))
            continue
        items = node.get("partitions")
        if kind != "partition" or not isinstance(items, list):
            lists = False
            continue
        for item in items:
            dimensions = item.get("dimensions") if isinstance(item, dict) else None
            if (
                not isinstance(dimensions, dict)
                or not dimensions
                or not all(value is None or isinstance(value, str) for value in dimensions.values())
            ):
                lists = False
                continue
            identifier = item.get("identifier")
            found.append((dimensions, identifier if isinstance(identifier, str) else None))
    return found, lists


def dimensions_columns_kinds(
    dimensions: Mapping[str, str | None],
) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    """A partition's canonical dimensions, columns (a canonical JSON array) and (column, kind)
    of each value."""
    names = ",".join(_string(name) for name in sorted(dimensions))
    text = ",".join(
        f"{_string(name)}:{'null' if value is None else _string(value)}"
        for name, value in sorted(dimensions.items())
    )
    kinds = tuple(
        (column, "null" if value is None else _kind(value)) for column, value in dimensions.items()
    )
    return "{" + text + "}", "[" + names + "]", kinds


# Checking for cycles costs a fifth of the encoding, and parsed JSON has none.
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, check_circular=False
)
# The C encoder _CANONICAL.encode makes at each call, made once (an event is encoded in a few
# pieces: the making was a third of a small piece's cost), from _CANONICAL's own settings in the
# order json.encoder.JSONEncoder.iterencode gives them, so the same text.
_ENCODE = (
    None
    if c_make_encoder is None
    else c_make_encoder(
        None,  # no check for cycles (markers)
        _CANONICAL.default,
        _string,
        _CANONICAL.indent,
        _CANONICAL.key_separator,
        _CANONICAL.item_separator,
        _CANONICAL.sort_keys,
        _CANONICAL.skipkeys,
        _CANONICAL.allow_nan,
    )
)


@functools.lru_cache(maxsize=65536)
def _kind(value: str) -> str:
    """How :func:`~openlineage_subset.partition_overlap` types a partition value."""
    return guessed_type(value)
