"""Dataset names and locations from the paths Spark prints, without Spark.

Spark and Hadoop print qualified paths (``file:/tmp/x``, ``s3a://bucket/key``,
``hdfs://namenode:8020/p``). This module turns them into what an OpenLineage event carries:

- :func:`clean_location`: the same location with credentials and secrets removed, normalised.
- :func:`dataset_identity`: the ``(namespace, name)`` of the OpenLineage naming spec.
- :func:`split_dataset_root`: a read of ``/sales/business_date=2024-10-15`` is a read of the
  dataset ``/sales``; the trimmed directories are returned next to the root.
- :func:`glob_root`: the directory above the first wildcard of a Hadoop glob.
- :func:`partition_dimensions`: ``key=value`` directories as Spark reads them.

Naming (https://openlineage.io/docs/spec/naming, as the OpenLineage Java client applies it, so
that names match those of other producers):

==========================================  ======================================  ==========
location                                    namespace                               name
==========================================  ======================================  ==========
``file:/p``, ``file:///p``, ``/p``          ``file``                                ``/p``
``file://host/p`` (remote file system)      ``file://host``                         ``/p``
``s3://b/k``, ``s3a://b/k``, ``s3n://b/k``  ``s3://b``                              ``k``
``gs://b/k``                                ``gs://b``                              ``k``
``abfs[s]://c@account.../k``                ``abfss://c@account...``                ``k``
``wasb[s]://c@account.../k``                ``wasbs://c@account...``                ``k``
``hdfs://namenode:8020/p``                  ``hdfs://namenode:8020``                ``/p``
``scheme://authority/p`` (dbfs, any other)  ``scheme://authority``                  ``/p``
``scheme:/p`` (``hdfs:/p``, ``dbfs:/p``)    ``scheme``                              ``/p``
==========================================  ======================================  ==========

Object stores name objects by key (no leading slash; the bucket root is ``/``); file systems by
absolute path. The non-TLS Azure schemes address the same data as the TLS ones and are named
after them. A path with no authority (``hdfs:/p``, Databricks' ``dbfs:/p``) has the bare scheme
as namespace: the spec's ``hdfs://{namenode}`` and ``dbfs://{workspace}`` need a host the path
does not carry, and the OpenLineage Java client names them the same way.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from openlineage_subset.producer._secrets import AZURE_SCHEMES, scrub_text, user_info_end

NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
"""The directory value Spark and Hive write for a null (or empty) partition value."""

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_OBJECT_STORE_NAMESPACE_SCHEMES = {
    "s3": "s3",
    "s3a": "s3",
    "s3n": "s3",
    "gs": "gs",
    "abfs": "abfss",
    "abfss": "abfss",
    "wasb": "wasbs",
    "wasbs": "wasbs",
}
_DUPLICATE_SLASHES = re.compile(r"/{2,}")
_GLOB_WILDCARDS = frozenset("*?[{")
_GLOB_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


class _ParsedLocation(NamedTuple):
    scheme: str
    authority: str | None
    path: str


def _first_of(text: str, characters: str, start: int = 0) -> int:
    positions = [text.find(c, start) for c in characters]
    return min((p for p in positions if p >= 0), default=len(text))


def _split(uri: str) -> _ParsedLocation:
    """Scheme, raw authority and raw rest (path, query, fragment) of a qualified location.

    The authority ends after the user information where ``user_info_end`` says (failing
    closed when an unencoded secret holds ``/``, ``?`` or ``#``), then at ``/``, ``?`` or ``#``.
    """
    if not isinstance(uri, str):
        raise TypeError(f"a location must be a string, got {type(uri).__name__}")
    if not uri:
        raise ValueError("a location must not be empty")
    match = _SCHEME.match(uri)
    if match is None:
        if not uri.startswith("/"):
            raise ValueError(
                f"{scrub_text(uri)!r} is a relative path; pass the qualified path Spark prints "
                "(for example 'file:/data/sales' or 's3a://bucket/sales')"
            )
        return _ParsedLocation("file", None, uri)
    scheme = match.group(1).lower()
    if len(scheme) == 1:
        raise ValueError(
            f"{scrub_text(uri)!r} looks like a Windows drive path; pass the qualified path "
            "Spark prints (for example 'file:/C:/data/sales')"
        )
    rest = uri[match.end() :]
    if not rest.startswith("//"):
        if rest and not rest.startswith("/"):
            raise ValueError(
                f"{scrub_text(uri)!r} has a relative path after '{scheme}:'; pass the qualified "
                f"path Spark prints (for example '{scheme}:/data/sales')"
            )
        return _ParsedLocation(scheme, None, rest)
    rest = rest[2:]
    end = _first_of(rest, "/?#", user_info_end(scheme, rest) + 1)
    return _ParsedLocation(scheme, rest[:end] or None, rest[end:])


def _clean_authority(scheme: str, authority: str | None) -> str | None:
    if authority is None:
        return None
    userinfo, at, host = authority.rpartition("@")
    if not at:
        return authority
    if scheme in AZURE_SCHEMES and userinfo and ":" not in userinfo:
        return f"{userinfo}@{host}"
    return host or None


def _clean(location: _ParsedLocation) -> _ParsedLocation:
    path = location.path[: _first_of(location.path, "?#")]
    authority = _clean_authority(location.scheme, location.authority)
    if location.scheme == "file" and authority is not None and authority.lower() == "localhost":
        authority = None
    path = _DUPLICATE_SLASHES.sub("/", "/" + path)
    if len(path) > 1:
        path = path.rstrip("/")
    return _ParsedLocation(location.scheme, authority, path)


def _format(location: _ParsedLocation) -> str:
    if location.authority is None:
        return f"{location.scheme}:{location.path}"
    return f"{location.scheme}://{location.authority}{location.path}"


def clean_location(uri: str) -> str:
    """The location safe to emit: no credentials, no query string, one normal form.

    Removes user information that holds a credential (anything but the ``container@`` of Azure
    locations), the query string and the fragment; writes local files as ``file:/abs/path``
    (as Hadoop prints them); collapses repeated slashes and removes a trailing one (the root
    keeps its ``/``). The scheme is lower-cased; percent-encoding is kept as given.

    An unencoded secret may hold ``/``, ``?`` or ``#``, which end a URI's authority early;
    where the user information ends is decided failing closed, by the rules of
    :func:`~openlineage_subset.producer._secrets.user_info_end`: on an object store any ``:``
    before the first ``/`` marks user information, which then runs past the next ``@``.

    A ``?`` is read as the start of a query string, so call :func:`glob_root` on a glob before
    cleaning it.

    >>> clean_location("s3a://AKIAEXAMPLE:wJalrXUtnFEMI@bucket/sales//2024/")
    's3a://bucket/sales/2024'
    >>> clean_location("s3a://AKIAEXAMPLE:/wJalr?XUtn#FEMI@bucket/sales")
    's3a://bucket/sales'
    >>> clean_location("https://host/data.csv?X-Amz-Signature=abc&X-Amz-Credential=def")
    'https://host/data.csv'
    >>> clean_location("abfss://container@account.dfs.core.windows.net/sales")
    'abfss://container@account.dfs.core.windows.net/sales'
    >>> [clean_location(p) for p in ("/tmp/x", "file:///tmp/x", "file://localhost/tmp/x/")]
    ['file:/tmp/x', 'file:/tmp/x', 'file:/tmp/x']
    """
    return _format(_clean(_split(uri)))


def dataset_identity(uri: str) -> tuple[str, str]:
    """The OpenLineage ``(namespace, name)`` of a location, per the table in the module docstring.

    >>> dataset_identity("s3a://bucket/warehouse/sales/")
    ('s3://bucket', 'warehouse/sales')
    >>> dataset_identity("file:/data/sales")
    ('file', '/data/sales')
    >>> dataset_identity("hdfs://namenode:8020/warehouse/sales")
    ('hdfs://namenode:8020', '/warehouse/sales')
    >>> dataset_identity("abfs://container@account.dfs.core.windows.net/sales")
    ('abfss://container@account.dfs.core.windows.net', 'sales')
    """
    location = _clean(_split(uri))
    if location.scheme == "file":
        namespace = "file" if location.authority is None else f"file://{location.authority}"
        return namespace, location.path
    store_scheme = _OBJECT_STORE_NAMESPACE_SCHEMES.get(location.scheme)
    if store_scheme is not None:
        if location.authority is None:
            raise ValueError(
                f"{_format(location)!r} names no bucket or container; an object store location "
                f"reads '{location.scheme}://bucket/key'"
            )
        return f"{store_scheme}://{location.authority}", location.path.lstrip("/") or "/"
    if location.authority is None:
        return location.scheme, location.path
    return f"{location.scheme}://{location.authority}", location.path


def dataset_label(namespace: str, name: str) -> str:
    """A dataset as a person reads it, the same in every output (``ol-subset show``, the
    lineage answers): a namespace that is a location (``scheme://authority``) and the name
    joined into one location; any other namespace as ``namespace:name``.

    >>> dataset_label("s3://bucket", "lake/sales"), dataset_label("file", "/tmp/lake/sales")
    ('s3://bucket/lake/sales', 'file:/tmp/lake/sales')
    >>> dataset_label("hdfs://namenode:8020", "/warehouse/sales")
    'hdfs://namenode:8020/warehouse/sales'
    """
    if "://" in namespace:
        return namespace.rstrip("/") + "/" + name.lstrip("/")
    return f"{namespace}:{name}"


@dataclass(frozen=True, kw_only=True)
class TrimRules:
    """Which trailing directories :func:`split_dataset_root` trims off a dataset root.

    The defaults are the OpenLineage Java client's default trimmers, so that dataset names
    agree with other producers:

    - ``key_value``: a Hive-style partition directory, one ``=`` with text on both sides
      (``country=PL``; Spark escapes any other ``=`` as ``%3D``).
    - ``dates``: a directory holding a calendar date as ``yyyy-MM-dd``, ``yyyyMMdd`` or
      ``dd.MM.yyyy``, optionally with a time (``2024-10-15``, ``20241015T1300Z``): once the date
      is removed only digits, ``T``, ``Z``, ``:``, ``.``, ``-`` and spaces may remain.
    - ``year_months``: a directory ``yyyy-MM`` or ``yyyyMM`` (``2024-10``, ``202410``).
    - ``date_directories``: the directories ``yyyy/MM/dd`` or ``yyyy/MM`` (``2024/10/15``).
    - ``extra_patterns``: regular expressions; a directory that one matches in full is trimmed.

    Month and day must make a real calendar date, written with two digits each. An hour
    directory after a date (``2024/10/15/13``) is not trimmed, as in OpenLineage; add a pattern
    for it if a layout needs it.

    >>> hours = TrimRules(extra_patterns=(r"hour_[0-9]{2}",))
    >>> split_dataset_root("file:/logs/app/2024/10/15/hour_13", hours)
    ('file:/logs/app', ('2024', '10', '15', 'hour_13'))
    """

    key_value: bool = True
    dates: bool = True
    year_months: bool = True
    date_directories: bool = True
    extra_patterns: tuple[str, ...] = ()
    _compiled: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.extra_patterns, str):
            raise TypeError(
                "extra_patterns takes a tuple of regular expressions, not a single string; "
                f"write extra_patterns=({self.extra_patterns!r},)"
            )
        patterns = tuple(self.extra_patterns)
        compiled = []
        for index, pattern in enumerate(patterns):
            if not isinstance(pattern, str):
                raise TypeError(
                    f"extra_patterns[{index}] must be a regular expression string, "
                    f"got {type(pattern).__name__}"
                )
            try:
                compiled.append(re.compile(pattern))
            except re.error as error:
                raise ValueError(
                    f"extra_patterns[{index}] {pattern!r} is not a valid regular expression: "
                    f"{error}"
                ) from None
        object.__setattr__(self, "extra_patterns", patterns)
        object.__setattr__(self, "_compiled", tuple(compiled))


DEFAULT_TRIM_RULES = TrimRules()
"""Every rule on, no extra pattern."""

_FULL_DATES = (
    # (pattern, group numbers of year, month, day)
    (re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})"), (1, 2, 3)),
    (re.compile(r"([0-9]{2})\.([0-9]{2})\.([0-9]{4})"), (3, 2, 1)),
    (re.compile(r"([0-9]{4})([0-9]{2})([0-9]{2})"), (1, 2, 3)),
)
_DATE_TIME_REMAINDER = re.compile(r"[0-9TZ:.\s-]*")
_YEAR_MONTH = re.compile(r"([0-9]{4})-?([0-9]{2})")
_YEAR = re.compile(r"[0-9]{4}")
_TWO_DIGITS = re.compile(r"[0-9]{2}")


def _is_calendar_date(year: int, month: int, day: int) -> bool:
    try:
        _dt.date(year, month, day)
    except ValueError:
        return False
    return True


def _is_date_segment(segment: str) -> bool:
    # Like OpenLineage's DateTrimmer, the first valid date found decides.
    for pattern, (year, month, day) in _FULL_DATES:
        for match in pattern.finditer(segment):
            if _is_calendar_date(int(match[year]), int(match[month]), int(match[day])):
                remainder = segment[: match.start()] + segment[match.end() :]
                return _DATE_TIME_REMAINDER.fullmatch(remainder) is not None
    return False


def _is_year_month_segment(segment: str) -> bool:
    match = _YEAR_MONTH.fullmatch(segment)
    return match is not None and _is_calendar_date(int(match[1]), int(match[2]), 1)


def _is_date_directories(segments: Sequence[str]) -> bool:
    year, month, *day = segments
    return (
        _YEAR.fullmatch(year) is not None
        and _TWO_DIGITS.fullmatch(month) is not None
        and all(_TWO_DIGITS.fullmatch(d) is not None for d in day)
        and _is_calendar_date(int(year), int(month), int(day[0]) if day else 1)
    )


def _is_key_value_segment(segment: str) -> bool:
    key, equals, value = segment.partition("=")
    return bool(equals) and bool(key) and bool(value) and "=" not in value


def _is_trimmable_segment(segment: str, rules: TrimRules) -> bool:
    return (
        (rules.key_value and _is_key_value_segment(segment))
        or (rules.dates and _is_date_segment(segment))
        or (rules.year_months and _is_year_month_segment(segment))
        or any(pattern.fullmatch(segment) for pattern in rules._compiled)
    )


def _trimmable_tail(segments: Sequence[str], rules: TrimRules) -> int:
    """How many trailing segments one rule trims, always leaving at least one segment."""
    if rules.date_directories:
        if len(segments) >= 4 and _is_date_directories(segments[-3:]):
            return 3
        if len(segments) >= 3 and _is_date_directories(segments[-2:]):
            return 2
    if len(segments) >= 2 and _is_trimmable_segment(segments[-1], rules):
        return 1
    return 0


def split_dataset_root(
    uri: str, rules: TrimRules = DEFAULT_TRIM_RULES
) -> tuple[str, tuple[str, ...]]:
    """The dataset root of a location and the trailing directories trimmed to reach it.

    Trims from the end, again and again, while a rule of ``rules`` matches (see
    :class:`TrimRules`), and never trims the first directory below the root of the file
    system or bucket. The root is a cleaned location (see :func:`clean_location`); the trimmed
    directories are returned as written (still escaped), in path order.

    >>> split_dataset_root("s3a://bucket/sales/business_date=2024-10-15/country=PL")
    ('s3a://bucket/sales', ('business_date=2024-10-15', 'country=PL'))
    >>> split_dataset_root("file:/logs/app/2024/10/15")
    ('file:/logs/app', ('2024', '10', '15'))
    >>> split_dataset_root("file:/logs/app/v2")
    ('file:/logs/app/v2', ())
    """
    location = _clean(_split(uri))
    segments = [segment for segment in location.path.split("/") if segment]
    end = len(segments)
    while trimmed := _trimmable_tail(segments[:end], rules):
        end -= trimmed
    root = location._replace(path="/" + "/".join(segments[:end]))
    return _format(root), tuple(segments[end:])


def _first_wildcard(path: str, uri: str) -> int | None:
    index = 0
    while index < len(path):
        character = path[index]
        if character == "\\":
            if index + 1 == len(path):
                raise ValueError(
                    f"{scrub_text(uri)!r} ends with a lone backslash, which escapes nothing; "
                    "write '\\\\' for a literal backslash"
                )
            index += 2
            continue
        if character in _GLOB_WILDCARDS:
            return index
        index += 1
    return None


def glob_root(uri: str) -> str | None:
    """The directory above the first wildcard of a Hadoop glob, or None if there is none.

    Wildcards are those of Hadoop globs: ``*``, ``?``, ``[...]`` and ``{a,b}`` (braces may span
    directories); a backslash makes the next character literal. The root is a cleaned location
    (see :func:`clean_location`), with its escapes removed, since it names real directories.
    It stops before any directory holding a ``?`` or ``#``, which a location cannot carry
    literally, so it always covers what the glob matches. Apply :func:`split_dataset_root` to
    the result to reach the dataset root.

    >>> glob_root("/sales/business_date=*/country=FR")
    'file:/sales'
    >>> glob_root("s3a://bucket/logs/2024/{09,10}/01")
    's3a://bucket/logs/2024'
    >>> glob_root("s3a://bucket/logs/2024/10/01") is None
    True
    """
    raw = _split(uri)
    wildcard = _first_wildcard(raw.path, uri)
    if wildcard is None:
        return None
    directories = []
    for segment in raw.path[: raw.path.rfind("/", 0, wildcard) + 1].split("/"):
        directory = _GLOB_ESCAPE.sub(r"\1", segment)
        if "?" in directory or "#" in directory:
            break
        if directory:
            directories.append(directory)
    return _format(_clean(raw._replace(path="/" + "/".join(directories))))


def _java_hex_digit(character: str) -> int:
    # Character.digit(c, 16): any Unicode decimal digit, ASCII or full-width Latin a-f.
    decimal = unicodedata.decimal(character, -1)
    if decimal >= 0:
        return decimal
    code = ord(character)
    if 0xFF21 <= code <= 0xFF5A:
        code -= 0xFEE0
    letter = chr(code).lower()
    return ord(letter) - ord("a") + 10 if "a" <= letter <= "f" else -1


def _java_parse_hex(text: str) -> int:
    # Integer.parseInt(text, 16) on two characters, with -1 where Java throws. A leading sign
    # is allowed: "%-0" decodes to U+0000 and "%-1" stays as written, as in Spark.
    sign, digits = 1, text
    if text[0] in "+-":
        sign, digits = (-1 if text[0] == "-" else 1), text[1:]
    value = 0
    for character in digits:
        digit = _java_hex_digit(character)
        if digit < 0:
            return -1
        value = value * 16 + digit
    return sign * value


def unescape_path_name(text: str) -> str:
    """A partition directory's column or value as Spark reads it (``%XX`` decoded).

    Spark's ``ExternalCatalogUtils.unescapePathName``, which decodes each ``%XX`` to the one
    character U+00XX (Spark escapes only ASCII, so this is never a UTF-8 byte of a longer
    character).

    >>> unescape_path_name("13%3A00"), unescape_path_name("100%25"), unescape_path_name("50%")
    ('13:00', '100%', '50%')
    """
    decoded = []
    index = 0
    while index < len(text):
        if text[index] == "%" and index + 2 < len(text):
            code = _java_parse_hex(text[index + 1 : index + 3])
            if code >= 0:
                decoded.append(chr(code))
                index += 3
                continue
        decoded.append(text[index])
        index += 1
    return "".join(decoded)


def partition_dimensions(segments: Sequence[str]) -> dict[str, str | None]:
    """Partition column values from ``key=value`` directories, as Spark reads them.

    Splits each directory at its first ``=``, unescapes column and value exactly as Spark does
    (``%3A`` is ``:``, ``%2F`` is ``/``, ``%25`` is ``%``), and maps the null partition
    ``__HIVE_DEFAULT_PARTITION__`` to None.

    >>> partition_dimensions(["business_date=2024-10-15", "ts=2024-10-15 13%3A00%3A00"])
    {'business_date': '2024-10-15', 'ts': '2024-10-15 13:00:00'}
    >>> partition_dimensions(["country=__HIVE_DEFAULT_PARTITION__"])
    {'country': None}
    """
    if isinstance(segments, str):
        raise TypeError(
            "partition_dimensions() takes a sequence of directories such as "
            "['business_date=2024-10-15', 'country=PL'], not a single string; split it on '/'"
        )
    dimensions: dict[str, str | None] = {}
    for segment in segments:
        if "/" in segment:
            raise ValueError(
                f"{segment!r} holds more than one directory; split it on '/' and pass each one"
            )
        raw_column, equals, raw_value = segment.partition("=")
        if not equals:
            raise ValueError(
                f"{segment!r} is not a partition directory: it has no '=' (expected "
                "column=value); leave non-partition directories out"
            )
        column = unescape_path_name(raw_column)
        if not column:
            raise ValueError(f"partition directory {segment!r} has an empty column name")
        if not raw_value:
            raise ValueError(
                f"partition directory {segment!r} has an empty value; Spark writes an empty or "
                f"null value as {NULL_PARTITION}"
            )
        if column in dimensions:
            raise ValueError(
                f"partition column {column!r} appears twice (again in {segment!r}); "
                "pass the directories of one partition path"
            )
        dimensions[column] = None if raw_value == NULL_PARTITION else unescape_path_name(raw_value)
    return dimensions


_PATH_ESCAPED = frozenset("\"#%'*/:=?\\\x7f{[]^")
"""What Spark escapes as ``%XX`` in a partition directory name (besides control characters)."""


def _escape_path_name(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _PATH_ESCAPED or ord(c) < 0x20 else c for c in text)


def partition_path(columns: Sequence[str], values: Mapping[str, str | None]) -> str:
    """The partition path Spark writes for ``values`` (``k=v/k2=v2``), columns in table order.

    The inverse of :func:`partition_dimensions`: ``%XX`` escapes, None as the null partition.

    >>> partition_path(["day", "country"], {"country": "A/B", "day": "2024-10-15"})
    'day=2024-10-15/country=A%2FB'
    >>> partition_path(["country"], {"country": None})
    'country=__HIVE_DEFAULT_PARTITION__'
    """
    return "/".join(
        f"{_escape_path_name(column)}="
        + (NULL_PARTITION if values[column] is None else _escape_path_name(str(values[column])))
        for column in columns
    )
