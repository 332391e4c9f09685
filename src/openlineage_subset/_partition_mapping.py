"""The custom output facet ``olsubset_partitionMapping``: how an output's partition columns
derive from an input's partition columns. Built, checked and applied here; its schema is
``schemas/custom/facets/1-0-0/PartitionMappingOutputDatasetFacet.json`` and its models and
validators are generated from it like the subset facet's.

Each mapping says: every row the run wrote into a partition of the output whose partition
column ``field`` has the value v was computed only from rows of the input dataset ``input``
whose partition column ``inputField`` has a value u such that applying ``steps`` in order to u
gives v (no steps: u == v). A consumer may so narrow which output partitions a bad input
partition affects to the ones it maps to (:func:`apply_steps` computes v from u).

>>> facet = partition_mapping_facet(
...     [{"field": "month", "input": {"namespace": "file", "name": "/lake/raw"},
...       "inputField": "day", "steps": [{"op": "dateFormat", "pattern": "yyyy-MM"}]}],
...     producer="https://example.com/monthly-sales")
>>> partition_mapping_issues(facet)
[]
>>> apply_steps("2024-10-02", facet["mappings"][0]["steps"])
'2024-10'
"""

from __future__ import annotations

import copy
import datetime as _dt
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from openlineage_subset_generated.custom.partition_mapping import v1_0_0 as _schema

from openlineage_subset._convert import JsonValue
from openlineage_subset._custom_facets import as_issues, custom_facet_issues, facet_issues
from openlineage_subset._issues import SubsetDocumentError, ValidationIssue

PARTITION_MAPPING_FACET: str = _schema.FACET_KEY
"""The facet's key under an output dataset's ``outputFacets``: ``olsubset_partitionMapping``."""
PARTITION_MAPPING_SCHEMA_URL: str = _schema.FACET_DEF_URL
"""The ``_schemaURL`` the facet carries: its definition in this repository's schema file."""

_STEP = "PartitionMappingStep"
_ISO_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_PATTERN_LETTERS = re.compile(r"yyyy|MM|dd")
_DATE_PARTS: dict[str, Callable[[_dt.date], int]] = {
    "year": lambda day: day.year,
    "month": lambda day: day.month,
    "dayOfMonth": lambda day: day.day,
}


def partition_mapping_facet(
    mappings: Sequence[Mapping[str, object]], *, producer: str
) -> dict[str, JsonValue]:
    """The ``olsubset_partitionMapping`` facet (the JSON that goes under ``outputFacets``) of
    ``mappings``, plain dicts with the schema's keys (``field``, ``input``, ``inputField``,
    ``steps``). It is checked against the schema: :class:`SubsetDocumentError` lists each
    problem with the JSONPath of the bad field. ``producer`` names what produced the facet (a
    URI, which ``validate --strict`` checks), as for :func:`output_facet`.

    >>> facet = partition_mapping_facet(
    ...     [{"field": "day", "input": {"namespace": "file", "name": "/lake/raw"},
    ...       "inputField": "day", "steps": [{"op": "dateAdd", "days": 1}]}],
    ...     producer="https://example.com/daily-sales")
    >>> sorted(facet)
    ['_producer', '_schemaURL', 'mappings']
    >>> partition_mapping_facet(
    ...     [{"field": "month", "input": {"namespace": "file", "name": "/lake/raw"},
    ...       "inputField": "day", "steps": [{"op": "dateFormat", "pattern": "MM/yyyy"}]}],
    ...     producer="https://example.com/daily-sales")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    openlineage_subset._issues.SubsetDocumentError: invalid partition mapping facet:
      $.mappings[0].steps[0].pattern: expected one of "yyyy", "yyyy-MM", ... got 'MM/yyyy'
    """
    if isinstance(mappings, (str, bytes)) or not isinstance(mappings, Sequence):
        raise TypeError(
            f"mappings must be a list of mapping dicts, got {type(mappings).__name__}: "
            'partition_mapping_facet([{"field": ..., "input": ..., "inputField": ..., '
            '"steps": [...]}], producer=...)'
        )
    if not isinstance(producer, str) or not producer:
        raise ValueError("producer must be a non-empty URI naming what produced the facet")
    facet: dict[str, Any] = {
        "_producer": producer,
        "_schemaURL": PARTITION_MAPPING_SCHEMA_URL,
        "mappings": [dict(item) if isinstance(item, Mapping) else item for item in mappings],
    }
    issues = facet_issues(_schema, facet, (), strict=False)
    if issues:
        raise SubsetDocumentError("invalid partition mapping facet", issues)
    return cast(dict[str, JsonValue], copy.deepcopy(facet))


def partition_mapping_issues(facet: object) -> list[str]:
    """The problems of an ``olsubset_partitionMapping`` facet under its schema, each as
    ``JSONPath: what``; empty when it is valid, for a consumer that must not raise. A step the
    schema does not know (another ``op``, a property more) is a problem: a consumer narrows
    nothing by a mapping it cannot read.

    >>> for problem in partition_mapping_issues({"_producer": "https://example.com/p",
    ...         "_schemaURL": PARTITION_MAPPING_SCHEMA_URL, "mappings": [{"field": "day"}]}):
    ...     print(problem)
    $.mappings[0]: missing required property 'input'
    $.mappings[0]: missing required property 'inputField'
    $.mappings[0]: missing required property 'steps'
    """
    if isinstance(facet, Mapping) and not isinstance(facet, dict):
        facet = dict(facet)
    return [str(issue) for issue in facet_issues(_schema, facet, (), strict=False)]


def partition_mapping_event_issues(
    event: Mapping[str, Any], *, strict: bool = False
) -> list[ValidationIssue]:
    """The issues of the ``olsubset_partitionMapping`` facets of an event's outputs whose
    ``_schemaURL`` names this facet's schema (another producer's facet under the same key is
    not checked), with paths from the event's root. ``ol-subset validate`` reports them beside
    :func:`validate`'s; ``strict`` adds the formats and a ``_schemaURL`` naming another
    definition of the file.

    >>> event = {"eventTime": "2024-10-15T10:00:00Z", "outputs": [{"namespace": "file",
    ...     "name": "/lake/monthly", "outputFacets": {PARTITION_MAPPING_FACET: {
    ...         "_producer": "https://example.com/p", "_schemaURL": PARTITION_MAPPING_SCHEMA_URL,
    ...         "mappings": []}}}]}
    >>> for issue in partition_mapping_event_issues(event):
    ...     print(issue)
    $.outputs[0].outputFacets.olsubset_partitionMapping.mappings: expected at least 1 item(s), ...
    """
    return custom_facet_issues(event, strict=strict, only=PARTITION_MAPPING_FACET)


def apply_steps(value: str, steps: Sequence[Mapping[str, object]]) -> str | None:
    """The text of an input partition value after ``steps``, in order: the output partition
    value a mapping gives it. None when a step needs a date and the text is not one
    (``yyyy-MM-dd``), or when the date leaves the years 1 to 9999. Steps that are not the
    schema's raise :class:`SubsetDocumentError` naming the bad one.

    - ``{"op": "dateAdd", "days": n}``: the date ``n`` days later (earlier when negative);
    - ``{"op": "year" | "month" | "dayOfMonth"}``: that part of the date as an integer, without
      zero padding, as Spark's ``month()`` writes a partition value (``10``, ``2``);
    - ``{"op": "dateFormat", "pattern": p}``: the date formatted with Spark's (Java's) pattern
      letters, ``yyyy`` the year, ``MM`` the month, ``dd`` the day, each zero padded.

    >>> apply_steps("2024-10-02", [{"op": "dateAdd", "days": 1}])
    '2024-10-03'
    >>> [apply_steps("2024-10-02", [{"op": op}]) for op in ("year", "month", "dayOfMonth")]
    ['2024', '10', '2']
    >>> [apply_steps("2024-10-02", [{"op": "dateFormat", "pattern": p}])
    ...  for p in ("yyyy", "yyyy-MM", "yyyyMM", "yyyy-MM-dd", "yyyyMMdd")]
    ['2024', '2024-10', '202410', '2024-10-02', '20241002']
    >>> apply_steps("2024-12-31", [{"op": "dateAdd", "days": 1}, {"op": "year"}])
    '2025'
    >>> apply_steps("2024-10-02", []), apply_steps("PL", [{"op": "year"}])
    ('2024-10-02', None)
    """
    issues = [
        ((index, *path), message)
        for index, step in enumerate(steps)
        for path, message in _schema.validators.VALIDATORS[_STEP](
            dict(step) if isinstance(step, Mapping) else step
        )
    ]
    if issues:
        raise SubsetDocumentError("invalid partition mapping steps", as_issues(issues, ()))
    text: str | None = value
    for step in steps:
        day = _iso_date(text)
        if day is None:
            return None
        text = _applied(day, step)
    return text


def _applied(day: _dt.date, step: Mapping[str, object]) -> str | None:
    """The text of one (valid) step on a date."""
    op = step["op"]
    if op == "dateAdd":
        try:
            return (day + _dt.timedelta(days=int(cast(float, step["days"])))).isoformat()
        except OverflowError:  # before 0001-01-01 or after 9999-12-31
            return None
    if op == "dateFormat":
        fields = {"yyyy": f"{day.year:04d}", "MM": f"{day.month:02d}", "dd": f"{day.day:02d}"}
        return _PATTERN_LETTERS.sub(lambda letters: fields[letters[0]], str(step["pattern"]))
    return str(_DATE_PARTS[str(op)](day))


def _iso_date(text: str | None) -> _dt.date | None:
    match = _ISO_DATE.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    try:
        return _dt.date(*(int(part) for part in match.groups()))
    except ValueError:  # 2024-02-30, month 13, year 0
        return None
