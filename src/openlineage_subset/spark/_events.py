"""OpenLineage run events for captured Spark actions, as plain JSON (pure functions)."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from openlineage_subset import __version__

CORE_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
PARENT_SCHEMA = "https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet"
ENGINE_SCHEMA = (
    "https://openlineage.io/spec/facets/1-1-1/ProcessingEngineRunFacet.json"
    "#/$defs/ProcessingEngineRunFacet"
)
ERROR_SCHEMA = (
    "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet"
)
_ACTIONS = {
    "collectToPython": "collect",
    "collectAsArrowToPython": "collect",
    "toPandas": "collect",
    "showString": "show",
    "file source write": "write",
    "command": "write",
}


@dataclass(frozen=True)
class JobRef:
    """A job and one of its runs: what a parent facet points at."""

    namespace: str
    name: str
    run_id: str


def timestamp(nanoseconds: int) -> str:
    """ISO-8601 in UTC with milliseconds and ``Z``.

    >>> timestamp(1_729_000_000_123_456_789)
    '2024-10-15T13:46:40.123Z'
    """
    moment = _dt.datetime.fromtimestamp(nanoseconds / 1e9, tz=_dt.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def job_name(app_name: str, action: str, datasets: Sequence[dict[str, Any]]) -> str:
    """``{app}.{action}.{main output or input}``, each part in snake case.

    The action is what Spark calls it (``count``, ``collect``, ``write``...); the last part is
    the first output's name, else the first input's (a table's name, a path's segments).

    >>> job_name("Daily Sales", "collectToPython", [{"namespace": "file", "name": "/lake/sales"}])
    'daily_sales.collect.lake_sales'
    """
    target = _snake(datasets[0]["name"]) if datasets else "nothing"
    return f"{_snake(app_name) or 'spark'}.{_snake(_ACTIONS.get(action, action))}.{target}"


def _snake(text: str) -> str:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    return re.sub(r"[^A-Za-z0-9]+", "_", spaced).strip("_").lower()


def parent_facet(parent: JobRef, producer: str) -> dict[str, Any]:
    return {
        "_producer": producer,
        "_schemaURL": PARENT_SCHEMA,
        "run": {"runId": parent.run_id},
        "job": {"namespace": parent.namespace, "name": parent.name},
    }


def engine_facet(spark_version: str, producer: str) -> dict[str, Any]:
    return {
        "_producer": producer,
        "_schemaURL": ENGINE_SCHEMA,
        "version": spark_version,
        "name": "spark",
        "openlineageAdapterVersion": __version__,
    }


def error_facet(message: str, stack_trace: str | None, producer: str) -> dict[str, Any]:
    facet = {
        "_producer": producer,
        "_schemaURL": ERROR_SCHEMA,
        "message": message,
        "programmingLanguage": "JAVA",
    }
    if stack_trace:
        facet["stackTrace"] = stack_trace
    return facet


def run_event(
    event_type: str,
    *,
    event_time: str,
    job: JobRef,
    producer: str,
    run_facets: dict[str, Any] | None = None,
    inputs: Sequence[dict[str, Any]] = (),
    outputs: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """A RunEvent as JSON."""
    run: dict[str, Any] = {"runId": job.run_id}
    if run_facets:
        run["facets"] = run_facets
    return {
        "eventType": event_type,
        "eventTime": event_time,
        "producer": producer,
        "schemaURL": CORE_SCHEMA,
        "run": run,
        "job": {"namespace": job.namespace, "name": job.name},
        "inputs": list(inputs),
        "outputs": list(outputs),
    }
