"""Support code shared by every generated spec version: base classes and validator helpers."""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

BINARY_CONDITION = "BinarySubsetCondition"
"""The generated class ``a & b`` builds; the generator checks that every version defines it."""
OPERATOR_PROPERTY = "operator"
OPERATOR_ENUM = "Operator"
"""The field of ``BINARY_CONDITION`` holding ``AND``/``OR``, and that field's generated enum."""

Issue = tuple[tuple[str | int, ...], str]
"""A validation problem: the path (keys and indexes) below the value checked, and a message."""
Check = Callable[[Any], list[Issue]]


@dataclasses.dataclass(kw_only=True)
class JsonObject:
    """Base of every generated class.

    ``additional_properties`` keeps the properties the schema does not name (facets allow any),
    so that parsing then dumping a document loses nothing.
    """

    SCHEMA_URL: ClassVar[str] = ""
    """Absolute URL of the schema definition this class was generated from."""
    JSON_NAMES: ClassVar[dict[str, str]] = {}
    """JSON property name of each attribute whose Python name differs (``producer`` ->
    ``_producer``)."""

    additional_properties: dict[str, Any] = dataclasses.field(default_factory=dict)


class InputSubsetFacet(JsonObject):
    """Base of the ``subset`` input facet of every spec version: ``isinstance(facet,
    InputSubsetFacet)`` holds whichever version built or parsed it."""

    producer: str
    schema_url: str
    input_condition: SubsetCondition


class OutputSubsetFacet(JsonObject):
    """Base of the ``subset`` output facet of every spec version (see ``InputSubsetFacet``)."""

    producer: str
    schema_url: str
    output_condition: SubsetCondition


class EventBase(JsonObject):
    """Base of the OpenLineage events (run, job, dataset) of every spec version."""

    event_time: str
    producer: str
    schema_url: str


class SubsetCondition(JsonObject):
    """Base of the subset conditions: ``a & b`` and ``a | b`` build a ``BINARY_CONDITION``."""

    def __and__(self, other: SubsetCondition) -> SubsetCondition:
        return _combine(self, other, "AND")

    def __or__(self, other: SubsetCondition) -> SubsetCondition:
        return _combine(self, other, "OR")

    def __bool__(self) -> bool:
        # `a or b` would silently keep one side, an unsound condition; refuse like numpy does.
        raise TypeError(
            "a subset condition has no truth value: combine conditions with & and | (not `and`, "
            "`or`, `not`), and write `lo < field(x) < hi` as (field(x) > lo) & (field(x) < hi)"
        )


def _combine(left: SubsetCondition, right: object, operator: str) -> SubsetCondition:
    if not isinstance(right, SubsetCondition):
        raise TypeError(
            f"{operator} combines two subset conditions, got {type(right).__name__}; build the "
            "other side with field(...), location(...) or partitions(...)"
        )
    module = sys.modules[type(left).__module__]
    if type(right).__module__ != module.__name__:
        raise TypeError(
            f"cannot combine conditions of two spec versions ({type(left).__module__} and "
            f"{type(right).__module__}); build both with the same version"
        )
    binary = getattr(module, BINARY_CONDITION)
    operator_enum = getattr(module, OPERATOR_ENUM)
    result: SubsetCondition = binary(
        left=left, right=right, **{OPERATOR_PROPERTY: operator_enum(operator)}
    )
    return result


def describe(value: Any) -> str:
    """A short description of a JSON value for error messages (``integer 5``, ``'abc'``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean " + ("true" if value else "false")
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {value!r}"
    if isinstance(value, str):
        return repr(value) if len(value) <= 60 else repr(value[:57]) + "..."
    if isinstance(value, list):
        return f"an array of {len(value)} item(s)"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def prefixed(key: str | int, issues: list[Issue]) -> list[Issue]:
    """``issues`` found below ``key``, with ``key`` put in front of their paths."""
    return [((key, *path), message) for path, message in issues]


def closest_branch(failures: Sequence[list[Issue]], labels: Sequence[str]) -> list[Issue]:
    """Report the alternative that came closest when none of ``oneOf``/``anyOf`` matched.

    Closest is the one whose deepest issue lies deepest (it matched the most of the document),
    then the one with fewest issues. When several tie with a single issue each at the same place,
    one issue names them all, so that "needs A or B" is not reported as "needs A".
    """

    def distance(issues: list[Issue]) -> tuple[int, int]:
        return -max(len(path) for path, _ in issues), len(issues)

    best = min(distance(issues) for issues in failures)
    tied = [i for i, issues in enumerate(failures) if distance(issues) == best]
    if len(tied) > 1 and best[1] == 1 and len({failures[i][0][0] for i in tied}) == 1:
        path = failures[tied[0]][0][0]
        reasons = "; ".join(f"as {labels[i]}: {failures[i][0][1]}" for i in tied)
        return [(path, f"matches none of {', '.join(labels)} ({reasons})")]
    chosen = tied[0]
    # Below the node the path tells which alternative was checked; at the node, say it.
    return [
        (path, f"{message} (as {labels[chosen]})" if not path else message)
        for path, message in failures[chosen]
    ]


def selected_extra(x: Any, branches: Sequence[tuple[Check, Check | None]]) -> list[Issue]:
    """The extra-rule issues of the branch of a ``oneOf`` that ``x`` matches under the schema
    alone; none when it matches no branch or several, which the schema's own issue reports.

    ``branches`` pairs the lenient check of each branch with the check of its extra rules (None
    without any). The extra rules go first: when they hold in every branch, which one the schema
    selects does not matter, and the lenient checks, a second walk of ``x``, are skipped.
    """
    found = [[] if extra is None else extra(x) for _, extra in branches]
    if not any(found):
        return []
    selected = [issues for (check, _), issues in zip(branches, found, strict=True) if not check(x)]
    return selected[0] if len(selected) == 1 else []


def json_equal(left: Any, right: Any) -> bool:
    """Equality as JSON Schema defines it: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left is right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            json_equal(a, b) for a, b in zip(left, right, strict=True)
        )
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    return type(left) is type(right) and bool(left == right)


# Used with fullmatch: ``$`` would also match before a final newline ("https://x\n").
_DATE_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))"
)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
_NOT_AN_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
"""A ``uri`` is ``_URI`` with every ``%`` starting an escape: checked in two runs over the string,
five times faster than a character or an escape at a time (most of what strict mode costs)."""
_DAYS_IN_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_date_time(value: str) -> bool:
    match = _DATE_TIME.fullmatch(value)
    if not match:
        return False
    year, month, day, hour, minute, second = (int(match[i]) for i in range(1, 7))
    if not (1 <= month <= 12 and 1 <= day <= _DAYS_IN_MONTH[month - 1]):
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if month == 2 and day == 29 and not leap:
        return False
    offset_ok = match[7] is None or (int(match[8]) <= 23 and int(match[9]) <= 59)
    return hour <= 23 and minute <= 59 and second <= 60 and offset_ok


def matches_format(fmt: str, value: str) -> bool:
    """Check the ``date-time`` (RFC 3339), ``uuid`` and ``uri`` (absolute RFC 3986) formats."""
    if fmt == "date-time":
        return _is_date_time(value)
    if fmt == "uuid":
        return _UUID.fullmatch(value) is not None
    if fmt == "uri":
        return _URI.fullmatch(value) is not None and _NOT_AN_ESCAPE.search(value) is None
    return True
