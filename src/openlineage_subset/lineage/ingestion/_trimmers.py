"""The table root OpenLineage's dataset name trimmers cut a name to (openlineage-java's
``DatasetReducer``, which openlineage-spark applies since 1.39), so that a dataset named as a
partition directory by an older producer joins the table a newer one names.

The rules, each cutting the last directory (or directories) while the name keeps one of its own,
applied again until none applies:

- a directory holding exactly one ``=`` (any key and value, even empty);
- a directory holding a date (``yyyy-MM-dd``, ``yyyyMMdd``, ``dd.MM.yyyy``) and nothing else but
  digits and the characters of a time (``20250722T0901Z``);
- a month: ``yyyyMM`` or ``yyyy-MM``;
- a date or month over directories: ``yyyy/MM/dd``, ``yyyy/MM``.

Dates are checked as those trimmers check them: a month from 1 to 12, a day from 1 to 31 (a
31 February is trimmed, as Java's lenient parse resolves it; :mod:`._directories` then reads
no partition from it, and it stays a location).
"""

from __future__ import annotations

import functools
import re

__all__ = ["trimmed_name"]

# a date somewhere in a directory: yyyy-MM-dd, dd.MM.yyyy, yyyyMMdd
_DATES = (
    re.compile(r"(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})"),
    re.compile(r"(?P<d>[0-9]{2})\.(?P<m>[0-9]{2})\.(?P<y>[0-9]{4})"),
    re.compile(r"(?P<y>[0-9]{4})(?P<m>[0-9]{2})(?P<d>[0-9]{2})"),
)
_MONTH = re.compile(r"[0-9]{4}-?[0-9]{2}")
_TIME_LEFTOVER = re.compile(r"[\s:.\-0-9]*")


@functools.lru_cache(maxsize=4096)  # a table's names come again in each run's events
def trimmed_name(name: str) -> str:
    """The name cut to its table's root by OpenLineage's trimmers (the name itself when none
    applies).

    >>> trimmed_name("/lake/raw/day=2024-11-03/country=DE/")
    '/lake/raw'
    >>> trimmed_name("/tmp/some/tested-path/20250721/20250722T901Z/key=value")
    '/tmp/some/tested-path'
    >>> trimmed_name("/tmp/2025/07/21"), trimmed_name("/2025/07"), trimmed_name("/tmp/a=b=c")
    ('/tmp', '/2025/07', '/tmp/a=b=c')
    """
    parts = name.rstrip("/").split("/")
    keep = 2 if parts[0] == "" else 1  # the directories the root keeps: one that is not empty
    end = len(parts)
    while end > keep:
        cut = _cut(parts, end, keep)
        if cut == end:
            break
        end = cut
    return name if end == len(parts) else "/".join(parts[:end])


def _cut(parts: list[str], end: int, keep: int) -> int:
    """Where the name ends once the trimmers cut what ends at ``end`` (``end``: nothing)."""
    last = parts[end - 1]
    if last.count("=") == 1 or _loose_date(last) or (_MONTH.fullmatch(last) and _month(last)):
        return end - 1
    if end - 2 >= keep and _is_month(parts[end - 2], last):
        return end - 2
    if end - 3 >= keep and _is_month(parts[end - 3], parts[end - 2]) and _is_day(last):
        return end - 3
    return end


def _loose_date(directory: str) -> bool:
    for pattern in _DATES:
        for found in pattern.finditer(directory):
            if _is_month(found["y"], found["m"]) and _is_day(found["d"]):
                rest = directory.replace(found.group(), "", 1)
                rest = rest.replace("T", "", 1).replace("Z", "", 1)
                return _TIME_LEFTOVER.fullmatch(rest) is not None
    return False


def _month(text: str) -> bool:
    digits = text.replace("-", "")
    return _is_month(digits[:4], digits[4:])


def _is_month(year: str, month: str) -> bool:
    return len(year) == 4 and year.isdigit() and len(month) == 2 and "01" <= month <= "12"


def _is_day(day: str) -> bool:
    return len(day) == 2 and "01" <= day <= "31"
