"""Partitions from paths: the partition directories other producers put in names and locations.

openlineage-spark (since 1.39) trims a dataset's name to its table's root with OpenLineage's
trimmers and lists the untrimmed paths in a ``location`` condition; older versions (or trimming
switched off) name each partition directory as a dataset. This module reads both the way those
trimmers cut names, and says which partition a path is, so that ingest stores the partition:

- ``column=value``: a directory with exactly one ``=``, a key and a value that are not empty.
  Keys and values are unescaped as Hive escapes them (``%2F`` is ``/``, ``%3D`` is ``=``; a
  ``%`` not followed by two hexadecimal digits stays as it is), and ``__HIVE_DEFAULT_PARTITION__``
  is the null partition (Hive's and Spark's name for it). ``column=`` and ``=value`` are no
  partition Spark writes or reads: such a directory is not read.
- A day: ``yyyy-MM-dd``, ``yyyyMMdd``, or three directories ``yyyy/MM/dd``: column ``date``,
  value ``yyyy-MM-dd``. A month: ``yyyy-MM``, ``yyyyMM``, or ``yyyy/MM``: column ``month``,
  value ``yyyy-MM``. Only real dates are read (``2024-13-45``, ``2025-02-30`` are not).

A dataset named as a partition directory is cut to its table's root by OpenLineage's own
trimmers (:mod:`._trimmers`) and becomes a location of that table, read by the same rules, as
openlineage-spark 1.39 would have sent it. What the rules cannot read stays a location, which
the queries answer as "possible" (``/t/20250722T0901Z`` is a location of ``/t``); a name no
trimmer cuts stays a dataset. Everything here is pure and cheap to skip: the callers
only come here for a name or condition with the shape (:func:`may_be_partitioned`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from openlineage_subset.lineage.ingestion._trimmers import trimmed_name
from openlineage_subset.producer import NULL_PARTITION

__all__ = [
    "DATE_COLUMN",
    "MONTH_COLUMN",
    "Directories",
    "Grouped",
    "location_partition",
    "location_partitions",
    "may_be_partitioned",
    "read_accesses",
    "read_directories",
]

DATE_COLUMN = "date"
"""The column a day directory (``2024-11-03``, ``20241103``, ``2024/11/03``) is a partition of."""
MONTH_COLUMN = "month"
"""The column a month directory (``2024-11``, ``202411``, ``2024/11``) is a partition of."""

_DAY = re.compile(r"([0-9]{4})-?([0-9]{2})-?([0-9]{2})")
_MONTH = re.compile(r"([0-9]{4})-?([0-9]{2})")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


@dataclass(frozen=True, slots=True)
class Directories:
    """A partition read from directories."""

    dimensions: tuple[tuple[str, str | None], ...]
    """(column, value) of each directory, in the path's order; None: the null partition."""
    identifier: str
    """The directories as the path spells them (no leading or trailing slash)."""

    def as_json(self) -> dict[str, Any]:
        """The partition as a subset facet lists it."""
        return {"dimensions": dict(self.dimensions), "identifier": self.identifier}


def may_be_partitioned(name: str) -> bool:
    """Whether a name may end in partition directories: it holds ``=``, or its last directory
    starts with a digit (a date, a month). The one test every dataset pays; anything else is
    asked only when this says yes.

    >>> may_be_partitioned("/lake/raw/day=2024-11-03"), may_be_partitioned("/lake/sales")
    (True, False)
    >>> may_be_partitioned("/lake/2024/11/03"), may_be_partitioned("/lake/rolling7")
    (True, False)
    """
    if "=" in name:
        return True
    last = name.rstrip("/").rpartition("/")[2]
    return last[:1].isdigit()


def read_directories(path: str) -> Directories | None:
    """The partition directories a relative path is, all of it; None when one is not.

    >>> read_directories("day=2024-11-03/country=DE").dimensions
    (('day', '2024-11-03'), ('country', 'DE'))
    >>> read_directories("2024/11/03").dimensions
    (('date', '2024-11-03'),)
    >>> read_directories("2024-13-45") is None
    True
    """
    parts = path.strip("/").split("/")
    if parts == [""]:
        return None
    read = _tail(parts, 0)
    if read is None or read[0] != 0:
        return None
    return Directories(read[1], "/".join(parts))


def location_partition(namespace: str, name: str, location: str) -> Directories | None:
    """The partition of dataset (``namespace``, ``name``) that ``location`` is: a path under the
    dataset's root whose remaining directories are all partition directories; else None.

    A location is a name in the dataset's namespace (as openlineage-spark lists them), or a URI:
    the namespace and the name joined (``s3://bucket`` + ``key``), or ``file:`` + a path.

    >>> location_partition("s3://bucket", "raw", "s3://bucket/raw/day=2024-11-03").identifier
    'day=2024-11-03'
    >>> location_partition("file", "/lake/raw", "/lake/other/day=2024-11-03") is None
    True
    """
    place = location.rstrip("/")
    for root in _roots(namespace, name):
        if place.startswith(root) and place[len(root) : len(root) + 1] == "/":
            return read_directories(place[len(root) + 1 :])
    return None


def location_partitions(namespace: str, name: str, condition: Any) -> Any | None:
    """A ``location`` condition of dataset (``namespace``, ``name``) with its locations that are
    partitions of the dataset listed as partitions; None when it names none (it stays as it is).

    When every location is a partition, the result lists them: the access is known to cover
    those partitions and no other. Otherwise it is the ``OR`` of that list and a location
    condition of the rest: the store evaluates the list exactly and the rest as it evaluates
    any location (a partition it cannot tell is "possible"), and an ``OR`` holding a location
    is not a partition list only, so the access is never taken for one that lists all it covers.

    >>> location_partitions("file", "/r", {"type": "location", "locations": ["/r/d=1", "/x"]})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'type': 'binary', 'operator': 'OR', 'left': {'type': 'partition', 'partitions':
    [{'dimensions': {'d': '1'}, 'identifier': 'd=1'}]}, 'right': {'type': 'location',
    'locations': ['/x']}}
    """
    if not isinstance(condition, dict) or condition.get("type") != "location":
        return None
    locations = condition.get("locations")
    if not isinstance(locations, list) or not locations:
        return None
    found: list[Directories] = []
    left: list[Any] = []
    for location in locations:
        read = location_partition(namespace, name, location) if isinstance(location, str) else None
        if read is None:
            left.append(location)
        else:
            found.append(read)
    if not found:
        return None
    listed = _listed(found)
    if not left:
        return listed
    return {
        "type": "binary",
        "operator": "OR",
        "left": listed,
        "right": {**condition, "locations": left},
    }


@dataclass(frozen=True, slots=True)
class Grouped:
    """What reading an event's names and locations did: partition-directory names read."""

    names: tuple[tuple[str, str, str], ...]
    """(namespace, name, table root) of each dataset named as a partition directory."""


Slot = tuple[Any, str] | None
"""A dataset's condition and its canonical JSON; None: it has no subset facet."""

# Location conditions read before, by (namespace, name, canonical JSON): a run's START and
# COMPLETE, and the next job's read of what one wrote, list the same locations.
_READ: dict[tuple[str, str, str], Slot] = {}
_READ_MAX = 1024


def read_accesses(
    accesses: Sequence[tuple[str, str, str, Slot]],
    spell: Callable[[Any], str],
    *,
    group: bool,
) -> tuple[list[tuple[str, str, str, Slot]], Grouped]:
    """An event's accesses (namespace, name, direction, condition) with partitions read from
    paths: each location condition's locations that are partitions listed as such, and (when
    ``group``) each dataset named as a partition directory an access of its table.

    A name is cut to its table's root by OpenLineage's trimmers (:mod:`._trimmers`), and the
    name becomes a location of the table, read as above: the access is what openlineage-spark
    1.39 sends for it. Several of one table in one direction are one access, with one location
    condition listing them all (ANDed with its own condition, for a dataset that had one, and
    those ORed): the store keeps one access per run, dataset and direction, and an event
    stored again gives the same. ``spell``: the canonical JSON of a condition made here."""
    out: list[tuple[str, str, str, Slot]] = []
    merged: dict[tuple[str, str, str], int] = {}  # (namespace, root, direction): index in out
    pieces: dict[int, tuple[list[str], list[tuple[str, Any]]]] = {}
    names: list[tuple[str, str, str]] = []
    for namespace, name, direction, given in accesses:
        slot = given
        if slot is not None and slot[0].get("type") == "location":
            slot = _read_locations(namespace, name, slot, spell)
        root = trimmed_name(name) if group and may_be_partitioned(name) else name
        if root == name:
            out.append((namespace, name, direction, slot))
            continue
        names.append((namespace, name, root))
        key = (namespace, root, direction)
        at = merged.get(key)
        if at is None:
            merged[key] = at = len(out)
            out.append((namespace, root, direction, None))
            pieces[at] = ([], [])
        if slot is None:
            pieces[at][0].append(name)
        else:
            pieces[at][1].append((name, slot[0]))
    for at, (plain, others) in pieces.items():
        namespace, root, direction, _ = out[at]
        found = [_located(namespace, root, plain)] if plain else []
        found += [_both(_located(namespace, root, [name]), own) for name, own in others]
        condition = found[0]
        for item in found[1:]:
            condition = {"type": "binary", "operator": "OR", "left": condition, "right": item}
        out[at] = (namespace, root, direction, (condition, spell(condition)))
    return out, Grouped(tuple(names))


def _located(namespace: str, root: str, names: list[str]) -> Any:
    """The condition of a table's partition directories named as datasets: their partitions,
    or a location condition of those the rules cannot read."""
    located = {"type": "location", "locations": list(dict.fromkeys(names))}
    read = location_partitions(namespace, root, located)
    return located if read is None else read


def _read_locations(
    namespace: str, name: str, slot: tuple[Any, str], spell: Callable[[Any], str]
) -> tuple[Any, str]:
    key = (namespace, name, slot[1])
    found = _READ.get(key)
    if found is None:
        read = location_partitions(namespace, name, slot[0])
        found = slot if read is None else (read, spell(read))
        if len(_READ) >= _READ_MAX:
            _READ.clear()
        _READ[key] = found
    return found


def _both(left: Any, right: Any) -> Any:
    return {"type": "binary", "operator": "AND", "left": left, "right": right}


def _listed(partitions: Iterable[Directories]) -> dict[str, Any]:
    """A partition list of each distinct partition (by its dimensions)."""
    unique: dict[tuple[tuple[str, str | None], ...], Directories] = {}
    for partition in partitions:
        unique.setdefault(tuple(sorted(partition.dimensions, key=lambda item: item[0])), partition)
    return {"type": "partition", "partitions": [item.as_json() for item in unique.values()]}


def _roots(namespace: str, name: str) -> list[str]:
    """The spellings of a dataset's root a location may start with."""
    path = name.rstrip("/")
    if not path:
        return []
    roots = [path]
    if namespace == "file" and path.startswith("/"):
        roots += [f"file:{path}", f"file://{path}"]
    elif "://" in namespace:
        roots.append(f"{namespace.rstrip('/')}/{path.lstrip('/')}")
    return roots


def _tail(parts: Sequence[str], keep: int) -> tuple[int, tuple[tuple[str, str | None], ...]] | None:
    """Where the partition directories at the end of ``parts`` start (never before ``keep``),
    and their (column, value) in order; None when a column repeats (no partition has two
    values of one column: such a path is not read). Dates in three (``yyyy/MM/dd``) or two
    (``yyyy/MM``) directories are tried before one directory."""
    end = len(parts)
    found: list[tuple[str, str | None]] = []
    while end > keep:
        read = _last(parts, end, keep)
        if read is None:
            break
        end, dimension = read
        found.append(dimension)
    columns = [column for column, _ in found]
    if len(set(columns)) != len(columns):
        return None
    return end, tuple(reversed(found))


def _last(parts: Sequence[str], end: int, keep: int) -> tuple[int, tuple[str, str | None]] | None:
    """The partition directory (or directories, for a date) ending at ``end``, and where it
    starts; None when ``parts[end - 1]`` ends none."""
    last = parts[end - 1]
    if "=" in last:
        return _key_value(last, end)
    if not last.isdigit():
        if _DAY.fullmatch(last) and (day := _day(last)) is not None:
            return end - 1, (DATE_COLUMN, day)
        if _MONTH.fullmatch(last) and (month := _month(last)) is not None:
            return end - 1, (MONTH_COLUMN, month)
        return None
    return _digits(parts, end, keep)


def _digits(parts: Sequence[str], end: int, keep: int) -> tuple[int, tuple[str, str]] | None:
    """:func:`_last` of a directory of digits only: ``yyyy/MM/dd``, ``yyyy/MM``, ``yyyyMMdd``,
    ``yyyyMM``, in that order."""
    last = parts[end - 1]
    if len(last) == 2 and end - 3 >= keep and len(parts[end - 3]) == 4:
        day = _day(f"{parts[end - 3]}{parts[end - 2]}{last}")
        if day is not None and len(parts[end - 2]) == 2:
            return end - 3, (DATE_COLUMN, day)
    if len(last) == 2 and end - 2 >= keep and len(parts[end - 2]) == 4:
        month = _month(f"{parts[end - 2]}{last}")
        if month is not None:
            return end - 2, (MONTH_COLUMN, month)
    if len(last) == 8 and (day := _day(last)) is not None:
        return end - 1, (DATE_COLUMN, day)
    if len(last) == 6 and (month := _month(last)) is not None:
        return end - 1, (MONTH_COLUMN, month)
    return None


def _key_value(directory: str, end: int) -> tuple[int, tuple[str, str | None]] | None:
    key, _, value = directory.partition("=")
    if not key or not value or "=" in value:
        return None  # "=v", "k=", "a=b=c": no partition Spark or Hive writes
    column = _unescaped(key)
    return end - 1, (column, None if value == NULL_PARTITION else _unescaped(value))


def _unescaped(text: str) -> str:
    """Hive's unescaping of a path name: ``%XX`` (two hexadecimal digits) is that character."""
    if "%" not in text:
        return text
    return _ESCAPE.sub(lambda found: chr(int(found.group(1), 16)), text)


def _day(text: str) -> str | None:
    """``yyyy-MM-dd`` of a real day spelled ``yyyy-MM-dd`` or ``yyyyMMdd``; else None."""
    digits = text.replace("-", "")
    if len(digits) != 8 or not digits.isdigit() or len(text) not in (8, 10):
        return None
    if len(text) == 10 and (text[4] != "-" or text[7] != "-"):
        return None
    try:
        day = dt.date(int(digits[:4]), int(digits[4:6]), int(digits[6:]))
    except ValueError:
        return None
    return day.isoformat()


def _month(text: str) -> str | None:
    """``yyyy-MM`` of a real month spelled ``yyyy-MM`` or ``yyyyMM``; else None."""
    digits = text.replace("-", "")
    if len(digits) != 6 or not digits.isdigit() or len(text) not in (6, 7):
        return None
    if len(text) == 7 and text[4] != "-":
        return None
    year, month = int(digits[:4]), int(digits[4:])
    if not 1 <= month <= 12 or year < 1:
        return None
    return f"{digits[:4]}-{digits[4:]}"
