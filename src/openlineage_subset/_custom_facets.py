"""This package's own facets, checked in an event where they stand: ``olsubset_partitionMapping``
(an output's, :mod:`._partition_mapping`) and ``olsubset_streamingBatch`` (a micro-batch run's,
written by the Spark capture). Each has its schema under ``schemas/custom/`` and generated
validators; a facet under the same key whose ``_schemaURL`` names another schema (another
producer's) is not checked.

>>> event = {"run": {"runId": "r", "facets": {"olsubset_streamingBatch": {
...     "_producer": "https://example.com/p", "_schemaURL": CUSTOM_FACETS[1].FACET_DEF_URL,
...     "queryId": "q", "batchId": 7}}}}
>>> for issue in custom_facet_issues(event):
...     print(issue)
$.run.facets.olsubset_streamingBatch: missing required property 'queryRunId'
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any, Literal

from openlineage_subset_generated._support import Issue
from openlineage_subset_generated.custom.partition_mapping import v1_0_0 as _partition_mapping
from openlineage_subset_generated.custom.streaming_batch import v1_0_0 as _streaming_batch

from openlineage_subset._issues import ValidationIssue, json_path

CUSTOM_FACETS: tuple[ModuleType, ...] = (_partition_mapping, _streaming_batch)
"""The generated modules of this package's facets (their key, schema and validators)."""
_PLACES: dict[str, tuple[str, str]] = {
    _partition_mapping.FACET_KEY: ("outputs", "outputFacets"),
    _streaming_batch.FACET_KEY: ("run", "facets"),
}
"""Where each facet stands in an event: under each output's ``outputFacets``, or the run's."""


def custom_facet_issues(
    event: Mapping[str, Any], *, strict: bool = False, only: str | None = None
) -> list[ValidationIssue]:
    """The issues of the event's facets of this package (of the one keyed ``only``, when
    given) whose ``_schemaURL`` names their schema, with paths from the event's root;
    ``strict`` adds the formats and a ``_schemaURL`` naming another definition of the file."""
    found: list[ValidationIssue] = []
    for schema in CUSTOM_FACETS:
        if only is not None and only != schema.FACET_KEY:
            continue
        for path, facet in _placed(event, schema.FACET_KEY):
            url = facet.get("_schemaURL")
            if not isinstance(url, str) or url.partition("#")[0] != schema.FACET_SCHEMA_URL:
                continue
            found += facet_issues(schema, facet, path, strict=strict)
            if strict and url != schema.FACET_DEF_URL:
                message = (
                    "names another definition of the facet's schema; expected "
                    f"{schema.FACET_DEF_URL}"
                )
                found.append(ValidationIssue(json_path((*path, "_schemaURL")), message, "strict"))
    return found


def facet_issues(
    schema: ModuleType, facet: object, prefix: tuple[str | int, ...], *, strict: bool
) -> list[ValidationIssue]:
    """The issues of ``facet`` under ``schema`` and, ``strict``, those of its formats (rule
    ``strict``), each once (a value that is no object fails each part of an ``allOf`` alike)."""
    lenient = list(dict.fromkeys(schema.validators.VALIDATORS[schema.FACET_NAME](facet)))
    issues = as_issues(lenient, prefix)
    if strict:
        known = set(lenient)
        extra = schema.strict_validators.VALIDATORS[schema.FACET_NAME](facet)
        issues += as_issues([i for i in dict.fromkeys(extra) if i not in known], prefix, "strict")
    return issues


def as_issues(
    found: list[Issue], prefix: tuple[str | int, ...], rule: Literal["schema", "strict"] = "schema"
) -> list[ValidationIssue]:
    """Generated validators' issues as :class:`ValidationIssue` with paths under ``prefix``."""
    return [ValidationIssue(json_path((*prefix, *path)), message, rule) for path, message in found]


def _placed(
    event: Mapping[str, Any], key: str
) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any]]]:
    """The facets keyed ``key`` where that facet stands in the event, with their paths."""
    outer, inner = _PLACES[key]
    if outer == "run":
        run = event.get("run")
        facets = run.get(inner) if isinstance(run, Mapping) else None
        facet = facets.get(key) if isinstance(facets, Mapping) else None
        if isinstance(facet, dict):
            yield ("run", inner, key), facet
        return
    datasets = event.get(outer)
    for index, dataset in enumerate(datasets if isinstance(datasets, list) else ()):
        facets = dataset.get(inner) if isinstance(dataset, Mapping) else None
        facet = facets.get(key) if isinstance(facets, Mapping) else None
        if isinstance(facet, dict):
            yield (outer, index, inner, key), facet
