"""Event times as one sortable text form: ``YYYY-MM-DDTHH:MM:SS.fffffffffZ`` in UTC.

Stored times compare as text in SQL, so every time is normalised to UTC with nine fractional
digits: ``2024-10-15T12:00:00+02:00`` and ``2024-10-15T10:00:00.000Z`` are one instant and one
string. Nanoseconds are kept, so two events a microsecond apart never tie.
"""

from __future__ import annotations

import datetime as _dt
import re

_ISO = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]{1,9})[0-9]*)?)?"
    r"(?:([Zz])|([+-])([0-9]{2}):?([0-9]{2}))?)?"
)


def normal_time(text: object) -> str | None:
    """``text`` (ISO 8601) as a UTC instant with nanoseconds, or None if it is not one.

    A time without an offset is taken as UTC; a date alone is its midnight.

    >>> normal_time("2024-10-15T12:00:00+02:00")
    '2024-10-15T10:00:00.000000000Z'
    >>> normal_time("2024-10-15")
    '2024-10-15T00:00:00.000000000Z'
    >>> print(normal_time("yesterday"))
    None
    """
    if not isinstance(text, str):
        return None
    found = _ISO.fullmatch(text.strip())
    if found is None:
        return None
    year, month, day, hour, minute, second, fraction, _z, sign, off_h, off_m = found.groups()
    try:
        moment = _dt.datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            tzinfo=_dt.timezone.utc,
        )
        if sign is not None:
            offset = _dt.timedelta(hours=int(off_h), minutes=int(off_m))
            moment -= offset if sign == "+" else -offset
    except (ValueError, OverflowError):
        return None
    nanoseconds = (fraction or "").ljust(9, "0")
    if sign is None and year >= "1000":  # the fields as written are the instant's (and valid)
        return (
            f"{year}-{month}-{day}T{hour or '00'}:{minute or '00'}:{second or '00'}.{nanoseconds}Z"
        )
    # %Y is not padded to four digits everywhere: the year is, so that times sort as text
    return f"{moment.year:04d}" + moment.strftime("-%m-%dT%H:%M:%S") + f".{nanoseconds}Z"


def shown_time(stored: str | None) -> str:
    """A stored time as people read it: no trailing zero fraction, ``-`` for none.

    >>> shown_time("2024-10-15T10:00:00.120000000Z")
    '2024-10-15T10:00:00.12Z'
    >>> shown_time("2024-10-15T10:00:00.000000000Z")
    '2024-10-15T10:00:00Z'
    """
    if stored is None:
        return "-"
    head, _, fraction = stored.rstrip("Z").partition(".")
    fraction = fraction.rstrip("0")
    return f"{head}.{fraction}Z" if fraction else f"{head}Z"
