"""What every lineage query checks before it reads anything: the database it is given, the
partition asked about, ``since``, ``depth`` and ``limit`` (a count from 1 to
:data:`LARGEST_COUNT`, also when given as text); and :class:`LineageQueryError`, what a query
raises for a question it cannot answer as asked (:class:`UnknownPartitionColumnError`: a
partition column the dataset never had)."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence

from openlineage_subset.lineage.model import LineageQueryError, normal_time
from openlineage_subset.producer import NULL_PARTITION, clean_location

LARGEST_COUNT = 1_000_000_000
"""The largest ``depth`` or ``limit`` a query takes: more is no limit in practice, and a number
the database cannot hold (over 2**63 - 1) would be a failure of ours, not a refusal."""
_COUNT = f"a whole number from 1 to {LARGEST_COUNT}"


def checked_since(since: str | _dt.datetime | None) -> str | None:
    """``since`` as the database stores times (UTC), None for none; a naive datetime is UTC.

    >>> checked_since("2024-10-15")
    '2024-10-15T00:00:00.000000000Z'
    """
    if since is None:
        return None
    if isinstance(since, _dt.datetime):
        text = since.isoformat() if since.tzinfo else since.isoformat() + "Z"
    else:
        text = since
    found = normal_time(text)
    if found is None:
        raise LineageQueryError(
            f"since: {since!r} is not an ISO-8601 time; write it like 2024-10-15T10:00:00Z "
            "or 2024-10-15"
        )
    return found


def checked_location(location: str | None) -> str | None:
    """``location`` as events write locations (``file:/...`` for a local path, credentials and
    query string dropped), None for none.

    >>> checked_location("/lake/inbox/part-3.json"), checked_location("s3://b/in/x.json")
    ('file:/lake/inbox/part-3.json', 's3://b/in/x.json')
    """
    if location is None:
        return None
    if not isinstance(location, str) or not location.strip() or "\x00" in location:
        raise LineageQueryError(
            f"location: {location!r} is not a path; give a file or directory of the dataset, "
            "like /lake/inbox/part-3.json or s3://bucket/inbox/part-3.json"
        )
    try:
        return clean_location(location.strip())
    except ValueError as error:
        raise LineageQueryError(
            f"location: {location!r} cannot be read as a path: {error}"
        ) from None


def checked_count(name: str, value: int | None) -> int | None:
    """``value`` when it is None (no limit) or a whole number from 1 to :data:`LARGEST_COUNT`;
    ``name``: the argument, as the error names it.

    >>> checked_count("depth", 2)
    2
    >>> checked_count("limit", 10**20)
    Traceback (most recent call last):
    ...
    openlineage_subset.lineage.model._errors.LineageQueryError: limit must be a whole number \
from 1 to 1000000000, got 100000000000000000000
    """
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= LARGEST_COUNT
    ):
        raise LineageQueryError(f"{name} must be {_COUNT}, got {value!r}")
    return value


def count_from_text(name: str, text: str) -> int:
    """The count written ``text`` (ASCII digits, as a query parameter or an option gives it),
    checked as :func:`checked_count` checks it; ``name``: the argument, as the error names it.

    >>> count_from_text("limit", "50")
    50
    >>> count_from_text("depth", "\u0663")
    Traceback (most recent call last):
    ...
    openlineage_subset.lineage.model._errors.LineageQueryError: depth must be a whole number \
from 1 to 1000000000, got '\u0663'
    """
    # Digits only, and few of them: int() also reads '+1', ' 1', '1_000' and other scripts'
    # digits, and spends quadratic time on thousands of them.
    if not (text.isascii() and text.isdigit() and len(text) <= len(str(LARGEST_COUNT))):
        raise LineageQueryError(f"{name} must be {_COUNT}, got {text!r}")
    found = checked_count(name, int(text))
    assert found is not None
    return found


def checked_depth(depth: int | None) -> int | None:
    """``depth`` when it is None (no limit) or a whole number from 1 to :data:`LARGEST_COUNT`.

    >>> checked_depth(2)
    2
    """
    return checked_count("depth", depth)


def checked_partition(partition: Mapping[str, str | None] | None) -> dict[str, str | None] | None:
    """The partition asked about, column to value (None: the null partition, also written
    ``__HIVE_DEFAULT_PARTITION__`` as in directory names); None for the whole dataset.

    >>> checked_partition({"day": "2024-10-15", "country": "__HIVE_DEFAULT_PARTITION__"})
    {'day': '2024-10-15', 'country': None}
    """
    if partition is None:
        return None
    if not isinstance(partition, Mapping) or not partition:
        raise LineageQueryError(
            f"partition must map partition columns to values, such as {{'day': '2024-10-15'}}; "
            f"got {partition!r}"
        )
    values: dict[str, str | None] = {}
    for name, value in partition.items():
        if not isinstance(name, str) or not (value is None or isinstance(value, str)):
            raise LineageQueryError(
                f"partition values are strings as in directory names (None: the null "
                f"partition); got {name!r}: {value!r}"
            )
        values[name] = None if value == NULL_PARTITION else value
    return values


def partition_from_text(
    items: Sequence[str] | None, option: str = "--partition"
) -> dict[str, str] | None:
    """The partition given as ``COLUMN=VALUE`` items (a command-line option or a query
    parameter, named ``option`` in the error); None for none.

    A column given twice with two values is refused: a question is about one partition, and
    reading the last value alone would answer another question than the one asked.

    >>> partition_from_text(["day=2024-10-15", "country=PL"])
    {'day': '2024-10-15', 'country': 'PL'}
    >>> partition_from_text(["day=2024-10-15", "day=2024-10-16"])
    Traceback (most recent call last):
    ...
    openlineage_subset.lineage.model._errors.LineageQueryError: --partition gives day twice \
('2024-10-15' and '2024-10-16'): a question is about one partition; ask about each in turn
    """
    if not items:
        return None
    values: dict[str, str] = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise LineageQueryError(
                f"{option} takes COLUMN=VALUE, such as {option} day=2024-10-15; got {item!r}"
            )
        if values.get(name, value) != value:
            raise LineageQueryError(
                f"{option} gives {name} twice ({values[name]!r} and {value!r}): a question is "
                "about one partition; ask about each in turn"
            )
        values[name] = value
    return values
